{#- The DataWorks family (spec 001's DataWorks JSON and spec 003's OMS Dataworks 2.0): steps shared by
    stg_dataworks_json__changes and stg_oms_dataworks_json__changes.  The dialects name the same
    fields differently; each model passes its names as `names`, a dict with the keys
      columns (the declared column list in `schema`), image (the values map in `payload.before` /
      `payload.after`), schema, table (the names in `schema.source`), key (the key list in `schema`)
      and ops (what an unknown op is said not to be).
    docs/dialects/dataworks_json.md and oms_dataworks_json.md explain the choices. -#}

{% macro dataworks_epoch_ms(text) -%}
    {#- Epoch milliseconds a timestamp can hold (0001-01-01 .. 9999-12-31); null for anything else. -#}
    case
        when try_cast({{ text }} as bigint) between -62135596800000 and 253402300799999
            then try_cast({{ text }} as bigint)
    end
{%- endmacro %}

{% macro dataworks_op_names(own_ops) -%}
    {#- The op table (case-sensitive names): (raw_op, op_kind, staged_op, needs_before, needs_after),
        the dialect's `own_ops` (tuples in that order) first, then the ops both dialects send. -#}
    {%- set shared_ops = [
        ('INSERT', 'ROW', 'INSERT', false, true),
        ('DELETE', 'ROW', 'DELETE', true, false),
        ('TRANSACTION_BEGIN', 'TRANSACTION', 'BEGIN', false, false),
        ('TRANSACTION_END', 'TRANSACTION', 'COMMIT', false, false),
        ('GTID', 'TRANSACTION', 'GTID', false, false),
        ('XACOMMIT', 'TRANSACTION', 'XACOMMIT', false, false),
        ('XAROLLBACK', 'TRANSACTION', 'XAROLLBACK', false, false),
        ('CREATE', 'DDL', 'CREATE', false, false),
        ('ALTER', 'DDL', 'ALTER', false, false),
        ('ERASE', 'DDL', 'DROP', false, false),
        ('QUERY', 'DDL', 'QUERY', false, false),
        ('TRUNCATE', 'DDL', 'TRUNCATE', false, false),
        ('RENAME', 'DDL', 'RENAME', false, false),
        ('CINDEX', 'DDL', 'CREATE_INDEX', false, false),
        ('DINDEX', 'DDL', 'DROP_INDEX', false, false),
    ] -%}
    select *
    from values
    {%- for op in own_ops + shared_ops %}
        ('{{ op[0] }}', '{{ op[1] }}', '{{ op[2] }}', {{ op[3] | lower }}, {{ op[4] | lower }}){{ ',' if not loop.last }}
    {%- endfor %}
            as ops (raw_op, op_kind, staged_op, needs_before, needs_after)
{%- endmacro %}

{% macro dataworks_fields(names) -%}
    {#- The fields of `msg` (the parsed message) under the family's names (macro dataworks_checked_images). -#}
    msg['payload']['op'] as raw_op,
    msg['schema']['source']['{{ names.schema }}'] as schema_text,
    msg['schema']['source']['{{ names.table }}'] as table_text,
    msg['payload']['before']['{{ names.image }}'] as before_values,
    msg['payload']['after']['{{ names.image }}'] as after_values,
    coalesce(array_distinct(filter(msg['schema']['{{ names.key }}'], c -> c is not null)), array()) as key_columns,
    {%- if names.sequence %}
    nullif(msg['payload']['{{ names.sequence }}'], 'null') as sequence_id,
    {%- else %}
    cast(null as string) as sequence_id,
    {%- endif %}
    {#- The samples send the text "null" for a message without scn. #}
    nullif(msg['payload']['scn'], 'null') as scn,
    {{ dataworks_epoch_ms("msg['payload']['timestamp']['eventTime']") }} as event_ms,
    {{ dataworks_epoch_ms("msg['payload']['timestamp']['systemTime']") }} as system_ms,
    {#- Column name -> declared type, the first declaration of a name winning. -#}
    map_from_entries(
        filter(
            transform(msg['schema']['{{ names.columns }}'], c -> struct(c['name'] as name, c['type'] as type)),
            (c, i) -> c['name'] is not null
            and array_position(transform(msg['schema']['{{ names.columns }}'], x -> x['name']), c['name']) = i + 1
        )
    ) as source_types,
    {{ cdc_json_nested_name([
        ('schema.source.dbName', "try_variant_get(exact_document, '$.schema.source.dbName', 'variant')"),
        ('schema.source.' ~ names.schema, "try_variant_get(exact_document, '$.schema.source." ~ names.schema ~ "', 'variant')"),
        ('schema.source.' ~ names.table, "try_variant_get(exact_document, '$.schema.source." ~ names.table ~ "', 'variant')")
    ]) }} as nested_name
{%- endmacro %}

{% macro dataworks_message_error(names) -%}
    {#- The first reason, in this order, the message cannot be staged: named_struct(code, detail), null
        when there is none.  Reads the columns of cdc_json_documents, dataworks_fields and the op
        table (op_kind, needs_before, needs_after). -#}
    case
        when value is null then null
        when not is_utf8 then named_struct('code', 'invalid_utf8', 'detail', 'the value is not UTF-8 text')
        when not is_json then named_struct('code', 'invalid_json', 'detail', 'the value is not valid JSON')
        when message is null then named_struct('code', 'wrong_shape', 'detail', 'the value is not a JSON object')
        when msg['payload'] is null and get_json_object(exact_text, '$.payload') is null
            then named_struct('code', 'missing_field', 'detail', 'payload is absent or null')
        when msg['payload'] is null then named_struct('code', 'wrong_shape', 'detail', 'payload is not an object')
        when raw_op is null then named_struct('code', 'missing_field', 'detail', 'payload.op is absent or null')
        when op_kind is null
            then named_struct(
                    'code', 'unknown_op', 'detail', concat('payload.op ', raw_op, ' is not a {{ names.ops }} op')
                )
        when msg['payload']['timestamp']['eventTime'] is null
            then named_struct('code', 'missing_field', 'detail', 'payload.timestamp.eventTime is absent or null')
        when event_ms is null
            then named_struct(
                    'code',
                    'invalid_timestamp',
                    'detail',
                    concat('payload.timestamp.eventTime ', msg['payload']['timestamp']['eventTime'], ' is not epoch ms')
                )
        when
            get_json_object(exact_text, '$.schema.{{ names.columns }}') is not null
            and msg['schema']['{{ names.columns }}'] is null
            then named_struct(
                    'code', 'wrong_shape', 'detail', 'schema.{{ names.columns }} is not a list of {name, type}'
                )
        when nested_name is not null
            then named_struct('code', 'wrong_shape', 'detail', concat(nested_name, ' is a JSON object/array, not a name'))
        when op_kind = 'ROW' and (msg['schema']['source']['dbName'] is null or table_text is null)
            then named_struct('code', 'missing_field', 'detail', 'schema.source.dbName/{{ names.table }} is absent')
        when op_kind = 'DDL' and msg['payload']['ddl']['text'] is null
            then named_struct('code', 'missing_field', 'detail', concat(raw_op, ' without payload.ddl.text'))
    {%- for image in ('before', 'after') %}
        when
            op_kind = 'ROW' and {{ image }}_values is null
            and get_json_object(exact_text, '$.payload.{{ image }}') is not null
            then named_struct(
                    'code', 'wrong_shape', 'detail', 'payload.{{ image }} is not {"{{ names.image }}": {...}}'
                )
    {%- endfor %}
        when needs_after and after_values is null
            then named_struct('code', 'missing_field', 'detail', concat(raw_op, ' without payload.after'))
        when needs_before and before_values is null
            then named_struct('code', 'missing_field', 'detail', concat(raw_op, ' without payload.before'))
    end
{%- endmacro %}

{% macro dataworks_checked_images(dialect, names, message_schema) -%}
    {#- The CTEs from json_documents (cdc_json_documents) and op_names (dataworks_op_names) to the
        images: `exact_texts` (exact_text: cdc_exact_json of a JSON object's text), `parsed` (msg:
        the JSON object read with from_json as `message_schema`), `fields`
        (msg's fields under the family's names, with the op table's columns), `checked`
        (message_error) and `images` (before_image and after_image: cdc_canonical_image's
        struct<values, types, error> of a message without error; a DDL event gets the declared
        types of the table after the DDL through an empty after image). -#}
exact_texts as (
    -- what Spark's text JSON readers read: the text with its numbers as strings of their digits
    select
        *,
        case when message is not null then {{ cdc_exact_json('value_text') }} end as exact_text
    from json_documents
),

parsed as (
    select
        *,
        from_json(exact_text, '{{ message_schema }}') as msg
    from exact_texts
),

fields as (
    select
        parsed.*,
        op_names.op_kind,
        op_names.staged_op,
        op_names.needs_before,
        op_names.needs_after,
        {{ dataworks_fields(names) }}
    from parsed
    left join op_names on parsed.msg['payload']['op'] = op_names.raw_op
),

checked as (
    select
        *,
        {{ dataworks_message_error(names) }} as message_error
    from fields
),

images as (
    select
        *,
        {{ cdc_canonical_image(
            dialect,
            "case when message_error is null and op_kind = 'ROW' then before_values end",
            'source_types'
        ) }} as before_image,
        {{ cdc_canonical_image(
            dialect,
            "case when message_error is null and op_kind = 'ROW' then after_values "
            ~ "when message_error is null and op_kind = 'DDL' and source_types is not null "
            ~ "then cast(map() as map<string, string>) end",
            'source_types'
        ) }} as after_image
    from checked
)
{%- endmacro %}

{% macro dataworks_natural_id(position) -%}
    {#- What names the message's change: its `position` and op; without one (heartbeats), its content
        without the emission time. -#}
    case
        when {{ position }} is not null then concat({{ position }}, '|', raw_op)
        else sha2(regexp_replace(value_text, '"systemTime"\\s*:\\s*-?[0-9]+', ''), 256)
    end
{%- endmacro %}

{% macro dataworks_staged_columns() -%}
    {#- The staged columns both dialects fill alike (cdc_staged_select nulls them unless the message
        is decoded); the model adds op, position_number, source_position and natural_id. -#}
    coalesce(
        message_error['code'],
        case when before_image['error'] is not null or after_image['error'] is not null then 'invalid_value' end
    ) as error_code,
    coalesce(
        message_error['detail'],
        concat_ws('; ', 'before: ' || before_image['error'], 'after: ' || after_image['error'])
    ) as error_detail,
    0 as row_index,
    op_kind as event_kind,
    lower(msg['schema']['source']['dbType']) as source_db_type,
    cast(null as string) as tenant_name,
    msg['schema']['source']['dbName'] as database_name,
    schema_text as schema_name,
    table_text as table_name,
    key_columns as primary_key_columns,
    if(size(key_columns) > 0, 'message', 'none') as primary_key_source,
    case
        when op_kind = 'ROW' then {{ cdc_primary_key('key_columns', "before_image['values']", "after_image['values']") }}
    end as primary_key,
    case when op_kind = 'ROW' then before_image['values'] end as before,
    case when op_kind = 'ROW' then after_image['values'] end as after,
    case when op_kind = 'ROW' then false end as before_is_partial,
    case when op_kind = 'ROW' then false end as after_is_partial,
    case when op_kind in ('ROW', 'DDL') then source_types end as column_source_types,
    case
        when op_kind in ('ROW', 'DDL')
            then
                case
                    when before_image['types'] is null then after_image['types']
                    when after_image['types'] is null then before_image['types']
                    else map_zip_with(before_image['types'], after_image['types'], (k, b, a) -> coalesce(a, b))
                end
    end as column_types,
    timestamp_millis(event_ms) as event_ts,
    'ms' as event_ts_precision,
    timestamp_millis(system_ms) as emitted_ts,
    cast(null as string) as transaction_id,
    case when op_kind = 'DDL' then msg['payload']['ddl']['text'] end as ddl_statement
{%- endmacro %}
