{#-
    OceanBase OMS "Dataworks" JSON, version 2.0 (spec 003) -> the staged contract.  One message =
    one event.  docs/dialects/oms_dataworks_json.md.
-#}
with

landing as (
    select * from {{ source('landing', 'oms_dataworks_json') }}
    {{ cdc_new_landing_rows() }}
),

texts as (
    select
        feed,
        topic,
        `partition`,
        `offset`,
        `timestamp`,
        landed_at,
        value,
        case when is_valid_utf8(cast(value as string)) then cast(value as string) end as text
    from landing
),

-- Spark's JSON readers turn numbers into doubles (12.50 -> 12.5, 1E+3 -> 1000.0) and refuse numbers
-- longer than 1000 characters (Jackson's limit; the OMS samples hold 1 100-digit decimals): every
-- number outside a string becomes a string of its exact digits before the text is parsed at all.
exact_text as (
    select
        *,
        {{ cdc_exact_json('text') }} as exact_json
    from texts
),

documents as (
    select
        *,
        try_parse_json(exact_json) as document
    from exact_text
),

json_checked as (
    select
        *,
        document is not null as is_json,
        json_object_keys(exact_json) is not null as is_object,
        {{ cdc_json_nested_name([
            ('schema.source.dbName', "try_variant_get(document, '$.schema.source.dbName', 'variant')"),
            ('schema.source.schema', "try_variant_get(document, '$.schema.source.schema', 'variant')"),
            ('schema.source.table', "try_variant_get(document, '$.schema.source.table', 'variant')")
        ]) }} as nested_name
    from documents
),

parsed as (
    select
        *,
        from_json(
            case when is_object then exact_json end,
            'struct<
                version: string,
                schema: struct<
                    source: struct<dbType: string, dbVersion: string, dbName: string, schema: string, table: string>,
                    column: array<struct<name: string, type: string>>,
                    pk: array<string>
                >,
                payload: struct<
                    before: struct<data: map<string, string>>,
                    after: struct<data: map<string, string>>,
                    op: string,
                    timestamp: struct<eventTime: string, systemTime: string, checkpointTime: string>,
                    ddl: struct<text: string>,
                    scn: string
                >
            >'
        ) as msg
    from json_checked
),

-- The op names of spec 003's Dataworks 2.0 format (case-sensitive) and what each is in the staged contract.
op_names as (
    select *
    from values
        ('INSERT', 'ROW', 'INSERT'),
        ('UPDATE', 'ROW', 'UPDATE'),
        ('DELETE', 'ROW', 'DELETE'),
        ('HEARTBEAT', 'HEARTBEAT', 'HEARTBEAT'),
        ('TRANSACTION_BEGIN', 'TRANSACTION', 'BEGIN'),
        ('TRANSACTION_END', 'TRANSACTION', 'COMMIT'),
        ('GTID', 'TRANSACTION', 'GTID'),
        ('XACOMMIT', 'TRANSACTION', 'XACOMMIT'),
        ('XAROLLBACK', 'TRANSACTION', 'XAROLLBACK'),
        ('CREATE', 'DDL', 'CREATE'),
        ('ALTER', 'DDL', 'ALTER'),
        ('ERASE', 'DDL', 'DROP'),
        ('QUERY', 'DDL', 'QUERY'),
        ('TRUNCATE', 'DDL', 'TRUNCATE'),
        ('RENAME', 'DDL', 'RENAME'),
        ('CINDEX', 'DDL', 'CREATE_INDEX'),
        ('DINDEX', 'DDL', 'DROP_INDEX')
            as ops (raw_op, op_kind, staged_op)
),

with_ops as (
    select
        parsed.*,
        op_names.op_kind,
        op_names.staged_op
    from parsed
    left join op_names on parsed.msg['payload']['op'] = op_names.raw_op
),

fields as (
    select
        *,
        msg['payload']['op'] as raw_op,
        msg['payload']['before']['data'] as before_values,
        msg['payload']['after']['data'] as after_values,
        -- `scn` is an increasing id; the samples send the text "null" when there is none.
        nullif(msg['payload']['scn'], 'null') as scn,
        -- Epoch milliseconds a timestamp can hold (0001-01-01 .. 9999-12-31).
        case
            when
                try_cast(msg['payload']['timestamp']['eventTime'] as bigint)
                between -62135596800000 and 253402300799999
                then try_cast(msg['payload']['timestamp']['eventTime'] as bigint)
        end as event_ms,
        case
            when
                try_cast(msg['payload']['timestamp']['systemTime'] as bigint)
                between -62135596800000 and 253402300799999
                then try_cast(msg['payload']['timestamp']['systemTime'] as bigint)
        end as system_ms,
        -- Column name -> declared type, the first declaration of a name winning.
        map_from_entries(
            filter(
                transform(msg['schema']['column'], c -> struct(c['name'] as name, c['type'] as type)),
                (c, i) -> c['name'] is not null
                and array_position(transform(msg['schema']['column'], x -> x['name']), c['name']) = i + 1
            )
        ) as source_types
    from with_ops
),

checked as (
    select
        *,
        case
            when value is null then null
            when text is null then named_struct('code', 'invalid_utf8', 'detail', 'the value is not UTF-8 text')
            when not is_json then named_struct('code', 'invalid_json', 'detail', 'the value is not valid JSON')
            when not is_object then named_struct('code', 'wrong_shape', 'detail', 'the value is not a JSON object')
            when msg['payload'] is null and get_json_object(exact_json, '$.payload') is null
                then named_struct('code', 'missing_field', 'detail', 'payload is absent or null')
            when msg['payload'] is null then named_struct('code', 'wrong_shape', 'detail', 'payload is not an object')
            when raw_op is null then named_struct('code', 'missing_field', 'detail', 'payload.op is absent or null')
            when op_kind is null
                then named_struct(
                        'code', 'unknown_op', 'detail', concat('payload.op ', raw_op, ' is not a Dataworks 2.0 op')
                    )
            when msg['payload']['timestamp']['eventTime'] is null
                then named_struct('code', 'missing_field', 'detail', 'payload.timestamp.eventTime is absent or null')
            when event_ms is null
                then named_struct(
                        'code',
                        'invalid_timestamp',
                        'detail',
                        concat(
                            'payload.timestamp.eventTime ', msg['payload']['timestamp']['eventTime'], ' is not epoch ms'
                        )
                    )
            when get_json_object(exact_json, '$.schema.column') is not null and msg['schema']['column'] is null
                then named_struct('code', 'wrong_shape', 'detail', 'schema.column is not a list of {name, type}')
            when nested_name is not null
                then named_struct(
                        'code', 'wrong_shape', 'detail', concat(nested_name, ' is a JSON object/array, not a name')
                    )
            when
                op_kind = 'ROW'
                and (msg['schema']['source']['dbName'] is null or msg['schema']['source']['table'] is null)
                then named_struct('code', 'missing_field', 'detail', 'schema.source.dbName/table is absent')
            when op_kind = 'DDL' and msg['payload']['ddl']['text'] is null
                then named_struct('code', 'missing_field', 'detail', concat(raw_op, ' without payload.ddl.text'))
            when
                op_kind = 'ROW' and before_values is null
                and get_json_object(exact_json, '$.payload.before') is not null
                then named_struct('code', 'wrong_shape', 'detail', 'payload.before is not {"data": {...}}')
            when
                op_kind = 'ROW' and after_values is null
                and get_json_object(exact_json, '$.payload.after') is not null
                then named_struct('code', 'wrong_shape', 'detail', 'payload.after is not {"data": {...}}')
            when raw_op in ('INSERT', 'UPDATE') and after_values is null
                then named_struct('code', 'missing_field', 'detail', concat(raw_op, ' without payload.after'))
            when raw_op = 'DELETE' and before_values is null
                then named_struct('code', 'missing_field', 'detail', concat(raw_op, ' without payload.before'))
        end as message_error
    from fields
),

images as (
    select
        *,
        {{ cdc_canonical_image(
            'oms_dataworks_json',
            "case when message_error is null and op_kind = 'ROW' then before_values end",
            'source_types'
        ) }} as before_image,
        -- A DDL event gets the declared types of the table after the DDL through an empty image.
        {{ cdc_canonical_image(
            'oms_dataworks_json',
            "case when message_error is null and op_kind = 'ROW' then after_values "
            ~ "when message_error is null and op_kind = 'DDL' and source_types is not null "
            ~ "then cast(map() as map<string, string>) end",
            'source_types'
        ) }} as after_image
    from checked
),

events as (
    select
        *,
        case
            when value is null then 'tombstone'
            when message_error is not null or before_image['error'] is not null or after_image['error'] is not null
                then 'quarantined'
            else 'decoded'
        end as message_status,
        coalesce(
            message_error['code'],
            case when before_image['error'] is not null or after_image['error'] is not null then 'invalid_value' end
        ) as error_code,
        coalesce(
            message_error['detail'],
            concat_ws('; ', 'before: ' || before_image['error'], 'after: ' || after_image['error'])
        ) as error_text,
        staged_op as event_op,
        coalesce(array_distinct(filter(msg['schema']['pk'], c -> c is not null)), array()) as key_columns,
        {#- The event's millisecond, then the scn within it: OMS sends scn "null" on some messages,
            and a message without a position must not sort before every message with one. An scn
            of more than 16 digits orders only by time. -#}
        cast(event_ms as decimal(38, 0)) * 10000000000000000
        + coalesce(case when scn rlike '^[0-9]{1,16}$' then cast(scn as decimal(38, 0)) end, 9999999999999999)
            as position_number,
        timestamp_millis(event_ms) as event_time,
        case
            when scn is not null then concat(scn, '|', raw_op)
            -- Without an scn: the content without the emission time.
            else sha2(regexp_replace(text, '"systemTime"\\s*:\\s*-?[0-9]+', ''), 256)
        end as content_id
    from images
),

staged as (
    select
        case
            when message_status = 'tombstone'
                then {{ cdc_event_id(
                    'feed', "'oms_dataworks_json'", "concat_ws(':', 'tombstone', topic, `partition`, `offset`)", '0'
                ) }}
            when message_status = 'quarantined'
                then {{ cdc_event_id('feed', "'oms_dataworks_json'", 'sha2(value, 256)', '0') }}
            else {{ cdc_event_id('feed', "'oms_dataworks_json'", 'content_id', '0') }}
        end as event_id,
        feed as source_name,
        'oms_dataworks_json' as dialect,
        topic as landing_topic,
        `partition` as landing_partition,
        `offset` as landing_offset,
        `timestamp` as landing_timestamp,
        landed_at,
        0 as row_index,
        message_status,
        case when message_status = 'decoded' then op_kind end as event_kind,
        case when message_status = 'decoded' then event_op end as op,
        case when message_status = 'decoded' then lower(msg['schema']['source']['dbType']) end as source_db_type,
        cast(null as string) as tenant_name,
        case when message_status = 'decoded' then msg['schema']['source']['dbName'] end as database_name,
        case when message_status = 'decoded' then msg['schema']['source']['schema'] end as schema_name,
        case when message_status = 'decoded' then msg['schema']['source']['table'] end as table_name,
        case when message_status = 'decoded' then key_columns end as primary_key_columns,
        case
            when message_status = 'decoded' then if(size(key_columns) > 0, 'message', 'none')
        end as primary_key_source,
        case
            when message_status = 'decoded' and op_kind = 'ROW'
                then {{ cdc_primary_key('key_columns', "before_image['values']", "after_image['values']") }}
        end as primary_key,
        case when message_status = 'decoded' and op_kind = 'ROW' then before_image['values'] end as before,
        case when message_status = 'decoded' and op_kind = 'ROW' then after_image['values'] end as after,
        case when message_status = 'decoded' and op_kind = 'ROW' then false end as before_is_partial,
        case when message_status = 'decoded' and op_kind = 'ROW' then false end as after_is_partial,
        case when message_status = 'decoded' and op_kind in ('ROW', 'DDL') then source_types end as column_source_types,
        case
            when message_status = 'decoded' and op_kind in ('ROW', 'DDL')
                then
                    case
                        when before_image['types'] is null then after_image['types']
                        when after_image['types'] is null then before_image['types']
                        else map_zip_with(before_image['types'], after_image['types'], (k, b, a) -> coalesce(a, b))
                    end
        end as column_types,
        case when message_status = 'decoded' then event_time end as event_ts,
        case when message_status = 'decoded' then 'ms' end as event_ts_precision,
        case when message_status = 'decoded' then timestamp_millis(system_ms) end as emitted_ts,
        case when message_status = 'decoded' then scn end as source_position,
        cast(null as string) as transaction_id,
        {{ cdc_sequence(
            "case when message_status = 'decoded' then position_number end",
            "case when message_status = 'decoded' then event_time end",
            '`offset`',
            '0'
        ) }} as sequence,
        case
            when message_status = 'decoded' and op_kind = 'DDL' then msg['payload']['ddl']['text']
        end as ddl_statement,
        case when message_status = 'quarantined' then error_code end as error_code,
        case when message_status = 'quarantined' then error_text end as error_detail,
        case when message_status = 'quarantined' then value end as raw_value
    from events
)

select * from staged
