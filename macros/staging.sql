{#- Shared expressions of the staged contract (docs/staged-contract.md). -#}

{% macro cdc_event_id(source_name, dialect, natural_id, row_index) -%}
    {#- Same message content -> same id on every run and at any offset. -#}
    sha2(concat_ws('|', {{ source_name }}, {{ dialect }}, {{ natural_id }}, cast({{ row_index }} as string)), 256)
{%- endmacro %}

{% macro cdc_sequence(position_number, event_ts, landing_offset, row_index) -%}
    {#- Fixed-width text, so string order = (position, event time, landing offset, row) order. A
        position of 31 to 38 digits (a DataWorks sequenceId may have them; no real position comes
        near) is ':', its length and its digits: ':' sorts after every digit, so it sorts after every
        shorter position and by value among its own, where cutting it to 30 digits did neither. -#}
    concat_ws(
        '.',
        case
            when {{ position_number }} >= 1000000000000000000000000000000
                then concat(
                    ':', cast(length(cast({{ position_number }} as string)) as string), cast({{ position_number }} as string)
                )
            else lpad(coalesce(cast({{ position_number }} as string), '0'), 30, '0')
        end,
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

{#- ---------------------------------------------------------------- the JSON staging models' shared steps -#}

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
    {#- The body of a staging model's `staged_rows` CTE over a message function (cdc_<dialect>_rows,
        src/cdc_unify/jvm.py FUNCTIONS): one row per staged row in
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
    {#- One step before the final select, not one per derived column: a CTE whose column the next
        step reads more than once stays a projection of its own, and interpreted execution (the
        build's, "Queries interpreted, not compiled" in docs/benchmarks.md) copies every column of the
        wide row at each one (docs/benchmarks.md, "The staged select in two projections"). The no-feed
        test is repeated where it is read instead, a comparison per read. -#}
    {%- set no_feed = source_name ~ ' = ' ~ cdc_string_literal(cdc_no_feed()) -%}
    {%- set names_no_feed = '(' ~ no_feed ~ ' and value is not null)' -%}
staged_status as (
    select
        *,
        case
            when value is null then 'tombstone'
            when {{ names_no_feed }} or error_code is not null then 'quarantined'
            else 'decoded'
        end as message_status
    from {{ relation }}
    -- one row per landed message, as for any quarantined one (its row_index 0)
    where not {{ names_no_feed }} or row_index = 0
)

select
    {%- set message_id -%}
        case message_status
            when 'decoded' then natural_id
            when 'quarantined' then sha2(value, 256)
            else concat_ws(':', 'tombstone', topic, cast(`partition` as string), cast(`offset` as string))
        end
    {%- endset %}
    {{ cdc_event_id(source_name, "'" ~ dialect ~ "'", message_id, 'row_index') }} as event_id,
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
    case
        when message_status = 'quarantined' and {{ names_no_feed }} then 'no_feed'
        when message_status = 'quarantined' then error_code
    end as error_code,
    case
        when message_status = 'quarantined' and {{ names_no_feed }}
            then 'the landing row names no feed (column feed is null or empty)'
        when message_status = 'quarantined' then error_detail
    end as error_detail,
    case when message_status = 'quarantined' then value end as raw_value,
    {{ cdc_built_at() }} as built_at
from staged_status
{%- endmacro %}
