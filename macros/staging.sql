{#- Shared expressions of the staged contract (docs/staged-contract.md). -#}

{% macro cdc_event_id(source_name, dialect, natural_id, row_index) -%}
    {#- Same message content -> same id on every run and at any offset. -#}
    sha2(concat_ws('|', {{ source_name }}, {{ dialect }}, {{ natural_id }}, cast({{ row_index }} as string)), 256)
{%- endmacro %}

{% macro cdc_sequence(position_number, event_ts, landing_offset, row_index) -%}
    {#- Fixed-width text, so string order = (position, event time, landing offset, row) order. -#}
    concat_ws(
        '.',
        lpad(coalesce(cast({{ position_number }} as string), '0'), 30, '0'),
        lpad(coalesce(cast(unix_micros({{ event_ts }}) as string), '0'), 20, '0'),
        lpad(cast({{ landing_offset }} as string), 20, '0'),
        lpad(cast({{ row_index }} as string), 6, '0')
    )
{%- endmacro %}

{% macro cdc_primary_key(pk_columns, before, after) -%}
    {#- JSON array of the key's canonical texts in key order; null for a table without a key. -#}
    case
        when coalesce(size({{ pk_columns }}), 0) > 0
            then to_json(transform({{ pk_columns }}, c -> coalesce({{ after }}[c], {{ before }}[c])))
    end
{%- endmacro %}

{% macro cdc_canonical_image(dialect, values, source_types) -%}
    {#- An image in canonical text: struct<values, types, error>, for the SQL staging models of the
        dialects that send no column types (CKafka format one, SharePlex, Maxwell): every value kept as
        sent and typed `string` (docs/staged-contract.md), as a decoder would change nothing. The
        dialects that declare types decode their images in their message function
        (cdcunify.CanonicalImage, called from src/cdc_unify/java/cdcunify/*Rows.java). -#}
    {%- if dialect not in ('ckafka_json', 'oms_shareplex_json', 'maxwell_json') %}
        {{- exceptions.raise_compiler_error(
            "cdc_canonical_image: " ~ dialect ~ " is staged by a JVM message function, which decodes its images"
        ) }}
    {%- endif %}
    transform(
        array({{ values }}),
        image -> named_struct(
            'values', image,
            'types', transform_values(image, (column_name, column_value) -> 'string'),
            'error', cast(null as string)
        )
    )[0]
{%- endmacro %}

{% macro cdc_new_landing_rows(relation) -%}
    {#- The `where` clause of a staging model's landing import: on an incremental run, only the loads
        of each feed landed after the newest one of that feed this model has staged. One writer per
        feed stamps every load later than its last (the loader and the ingestion job of
        docs/landing.md do), and every landed message leaves at least one staged row, so nothing is
        skipped or staged twice; feeds written concurrently do not hide each other's loads.
        The watermarks are read when the run starts and written as constants (cdc_held_watermarks):
        the Parquet scan then skips the files of older loads instead of reading every landed value
        (a correlated subquery was planned as a sort-merge join that shuffled every landed value to
        one task per feed; an uncorrelated one still read them all before the filter). With no new
        landing, the run writes nothing (cdc_skip_write_when_nothing_new). -#}
    {#- On a full build: kept with the table it writes (cdc_keep_newest), for the first incremental run. #}
    {%- set held = cdc_held_watermarks('source_name', 'landed_at', new_rows_of=relation, feed_column='feed') %}
    {%- if is_incremental() %}
        {{- cdc_skip_write_when_nothing_new(held.new_rows) }}
    where {{ cdc_landed_after_held(held, 'feed') }}
    {%- endif %}
{%- endmacro %}

{#- ---------------------------------------------------------------- JSON messages (SQL staging models) -#}

{% macro cdc_landing_import(relation) -%}
    {#- The import CTE `landing` of a staging model: the landing rows of `relation` its run stages
        (cdc_new_landing_rows). Every model decodes each landing record on its own, so nothing
        here identifies a record beyond its columns (docs/staged-contract.md). -#}
landing as (
    select
        feed,
        topic,
        `partition`,
        `offset`,
        `timestamp`,
        key,
        value,
        landed_at
    from {{ relation }}
    {{ cdc_new_landing_rows(relation) }}
)
{%- endmacro %}

{% macro cdc_message_rows(relation, rows_column, kept=[]) -%}
    {#- The body of a staging model's `staged_rows` CTE over a message function (cdc_canal_rows,
        cdc_cloudcanal_rows, cdc_dataworks_rows, cdc_oms_default_rows): one row per staged row in
        `rows_column` of `relation`, with its landing columns and the columns `kept`. -#}
    select
    {%- for column in ['feed', 'topic', '`partition`', '`offset`', '`timestamp`', 'value', 'landed_at'] + kept %}
        {{ relation }}.{{ column }},
    {%- endfor %}
        staged_row.*
    from {{ relation }}
    -- explode_outer, though every function returns at least one row for every value: over an inner
    -- explode Spark adds a filter `size(...) > 0` that calls the function a second time
    lateral view explode_outer({{ rows_column }}) exploded as staged_row
{%- endmacro %}

{% macro cdc_json_documents(relation, object_column='message') -%}
    {#- Import CTEs of the JSON staging models: `landing` (cdc_landing_import), `texts` (value_text,
        is_utf8), `documents` (exact_document: the value as a variant whose numbers are strings of
        their exact digits, read in the JVM by cdc_exact_variant, src/cdc_unify/java; null when it is
        not UTF-8 or not JSON) and `json_documents` (is_json, and `object_column`: the top-level
        JSON object as map<string,variant>, null for anything else). Spark's own JSON readers
        (from_json, get_json_object, parse_json) turn 9.99E-308 into a double and 12.50 into 12.5,
        and refuse numbers of more than 1,000 characters: the exact digits are the contract. -#}

    {{ cdc_landing_import(relation) }},

texts as (
    select
        *,
        cast(value as string) as value_text,
        is_valid_utf8(cast(value as string)) as is_utf8
    from landing
),

documents as (
    select
        *,
        case when is_utf8 then cdc_exact_variant(value) end as exact_document
    from texts
),

json_documents as (
    select
        *,
        exact_document is not null as is_json,
        {{ cdc_json_object('exact_document') }} as {{ object_column }}
    from documents
)
{%- endmacro %}

{% macro cdc_document_errors(part) -%}
    {#- The first arms of a JSON staging model's quarantine `case` (cdc_json_documents' columns): no
        error for a tombstone, then what stops the value being a JSON object at all. `part` is
        'code' (the error code) or 'detail' (its text); the model's own checks follow. -#}
    {%- set arms = [
        ('value is null', none, none),
        ('not is_utf8', 'invalid_utf8', 'the value is not valid UTF-8'),
        ('not is_json', 'invalid_json', 'the value is not valid JSON (RFC 8259; duplicate keys are rejected too)'),
        ('message is null', 'wrong_shape', 'the JSON value is not an object'),
    ] %}
    {%- for condition, code, detail in arms %}
        when {{ condition }} then {{ "null" if code is none else "'" ~ (code if part == 'code' else detail) ~ "'" }}
    {%- endfor %}
{%- endmacro %}

{% macro cdc_checked_image(dialect, values, source_types='cast(null as map<string, string>)', needed=none) -%}
    {#- cdc_canonical_image of a message the model's `checked` step passed (pre_error_code null): a
        quarantined message's images are never decoded, so a decoder sees only the shapes the checks
        let through, and its own error can only come second (cdc_message_error). -#}
    {%- set passed = 'pre_error_code is null' ~ (' and ' ~ needed if needed is not none else '') %}
    {{ cdc_canonical_image(dialect, 'case when ' ~ passed ~ ' then ' ~ values ~ ' end', source_types) }}
{%- endmacro %}

{% macro cdc_message_error(part, before_label='before image', after_label='after image') -%}
    {#- The message's error: the first failed check (pre_error_code / pre_error_detail), else an image
        the decoder could not read (before_image / after_image of cdc_checked_image), before first. -#}
    {%- if part not in ('code', 'detail') -%}
        {{ exceptions.raise_compiler_error("cdc_message_error: part is 'code' or 'detail', not " ~ part) }}
    {%- endif %}
    {%- if part == 'code' %}
    coalesce(
        pre_error_code,
        case when before_image['error'] is not null or after_image['error'] is not null then 'invalid_value' end
    )
    {%- else %}
    coalesce(
        pre_error_detail,
        concat('{{ before_label }}: ', before_image['error']),
        concat('{{ after_label }}: ', after_image['error'])
    )
    {%- endif %}
{%- endmacro %}

{% macro cdc_json_present(variant) -%}
    {#- The field is in the message and not JSON null. -#}
    ({{ variant }} is not null and not is_variant_null({{ variant }}))
{%- endmacro %}

{% macro cdc_json_text(variant) -%}
    {#- A scalar field as text (numbers are already strings of their exact digits; objects as JSON text). -#}
    try_variant_get({{ variant }}, '$', 'string')
{%- endmacro %}

{% macro cdc_json_is_nested(variant) -%}
    {#- The field is a JSON object or array: not a name, code or value, though cdc_json_text reads it as text. -#}
    coalesce(substr(schema_of_variant({{ variant }}), 1, 5) in ('OBJEC', 'ARRAY'), false)
{%- endmacro %}

{% macro cdc_json_nested_name(fields) -%}
    {#- The first of `fields` (a list of (field name, variant) pairs: the name fields of a message) that is
        a JSON object or array, null when none is: cdc_json_text would read `["t"]` as a table named
        `["t"]`, so the message is wrong_shape. -#}
    case
    {%- for name, variant in fields %}
        when {{ cdc_json_is_nested(variant) }} then '{{ name }}'
    {%- endfor %}
    end
{%- endmacro %}

{% macro cdc_json_object(variant) -%}
    {#- A JSON object as map<string,variant>; null for anything else. -#}
    try_variant_get({{ variant }}, '$', 'map<string, variant>')
{%- endmacro %}

{% macro cdc_image_values(image) -%}
    {#- An image (map<string,variant>) as column -> exact text; JSON null stays SQL NULL. -#}
    transform_values({{ image }}, (col, val) -> try_variant_get(val, '$', 'string'))
{%- endmacro %}

{% macro cdc_nested_columns(image) -%}
    {#- Columns whose value is a JSON object or array, comma-separated: row images hold scalars only. -#}
    array_join(
        map_keys(map_filter({{ image }}, (col, val) -> {{ cdc_json_is_nested('val') }})),
        ', '
    )
{%- endmacro %}

{% macro cdc_map_union(first, second) -%}
    {#- Both maps, `second` winning on a shared key (map_concat fails on duplicate keys). -#}
    map_concat(
        map_filter(
            coalesce({{ first }}, cast(map() as map<string, string>)),
            (col, val) -> not map_contains_key(coalesce({{ second }}, cast(map() as map<string, string>)), col)
        ),
        coalesce({{ second }}, cast(map() as map<string, string>))
    )
{%- endmacro %}

{% macro cdc_ddl_op(statement) -%}
    {#- The staged DDL op of a statement, from its leading keywords (blanks and comments skipped);
        `transform` over a one-element array names the normalised head once. Its Python twin,
        src/cdc_unify/message_decoders/_ddl.py, must agree on tests/fixtures/ddl_statements.json. -#}
    transform(
        array(lower(regexp_replace({{ statement }}, '^(?s)(\\s|/\\*.*?\\*/|--[^\\n]*\\n|#[^\\n]*\\n)*', ''))),
        head -> case
            when head rlike '^create\\s+(unique\\s+|fulltext\\s+|spatial\\s+)?index\\b' then 'CREATE_INDEX'
            when head rlike '^drop\\s+index\\b' then 'DROP_INDEX'
            when head rlike '^(rename\\s+table\\b|alter\\s+table\\s+\\S+\\s+rename\\s+(to|as)\\b)' then 'RENAME'
            when head rlike '^create\\b' then 'CREATE'
            when head rlike '^alter\\b' then 'ALTER'
            when head rlike '^drop\\b' then 'DROP'
            when head rlike '^truncate\\b' then 'TRUNCATE'
            else 'QUERY'
        end
    )[0]
{%- endmacro %}

{% macro cdc_staged_select(dialect, relation) -%}
    {#- The final select of a SQL staging model: the staged contract (docs/staged-contract.md) from
        `relation`, which holds the landing columns, row_index, error_code / error_detail (null when
        decoded), natural_id, position_number and every decoded column.  Decoded columns are nulled
        on tombstones and quarantined messages; a quarantined message is named by its bytes, a
        tombstone by its place in the topic. Last, built_at: the run that staged the row.
        A landing row that names no feed (feed null or empty: the loader refuses both, another writer
        may not) is staged under feed cdc_no_feed() as one quarantined row (error_code no_feed),
        whatever its value decodes to: its rows would join no feed's history, and a null feed no
        watermark holds, so every run would stage it again (docs/landing.md). -#}
    {%- set source_name = cdc_feed_of_landing() -%}
    {#- The decoded columns: the contract's columns from event_kind to transaction_id (cdc_staged_columns). -#}
    {%- set staged = cdc_staged_columns() -%}
    {%- set names = staged | map(attribute=0) | list -%}
    {%- set decoded_columns = staged[names.index('event_kind'):names.index('transaction_id') + 1] -%}
feed_checked as (
    select
        *,
        {{ source_name }} = {{ cdc_string_literal(cdc_no_feed()) }} and value is not null as names_no_feed
    from {{ relation }}
),

with_status as (
    select
        *,
        case
            when value is null then 'tombstone'
            when names_no_feed or error_code is not null then 'quarantined'
            else 'decoded'
        end as message_status,
        case when names_no_feed then 'no_feed' else error_code end as staged_error_code,
        case
            when names_no_feed then 'the landing row names no feed (column feed is null or empty)'
            else error_detail
        end as staged_error_detail
    from feed_checked
    -- one row per landed message, as for any quarantined one (its row_index 0)
    where not names_no_feed or row_index = 0
),

identified as (
    select
        *,
        case message_status
            when 'decoded' then natural_id
            when 'quarantined' then sha2(value, 256)
            else concat_ws(':', 'tombstone', topic, cast(`partition` as string), cast(`offset` as string))
        end as message_id
    from with_status
)

select
    {{ cdc_event_id(source_name, "'" ~ dialect ~ "'", 'message_id', 'row_index') }} as event_id,
    {{ source_name }} as source_name,
    '{{ dialect }}' as dialect,
    topic as landing_topic,
    `partition` as landing_partition,
    `offset` as landing_offset,
    `timestamp` as landing_timestamp,
    landed_at,
    cast(row_index as int) as row_index,
    message_status,
    {%- for name, data_type in decoded_columns %}
    cast(case when message_status = 'decoded' then {{ name }} end as {{ data_type }}) as {{ name }},
    {%- endfor %}
    {{ cdc_sequence(
        "case when message_status = 'decoded' then position_number end",
        "case when message_status = 'decoded' then event_ts end",
        '`offset`',
        'row_index'
    ) }} as sequence,
    case when message_status = 'decoded' then ddl_statement end as ddl_statement,
    case when message_status = 'quarantined' then staged_error_code end as error_code,
    case when message_status = 'quarantined' then staged_error_detail end as error_detail,
    case when message_status = 'quarantined' then value end as raw_value,
    {{ cdc_built_at() }} as built_at
from identified
{%- endmacro %}
