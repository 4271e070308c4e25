{#- Tencent CKafka connector "official format one" (spec 002) -> the staged contract
    (docs/dialects/ckafka_json.md).  DML is format one (TYPE I/U/D, NEW_VALUES/OLD_VALUES, binlog
    position, TIME as a wall clock in var source_time_zone); DDL arrives in Canal shape on the same topic.
    Format one names no key: var ckafka_primary_keys ('db.table' -> [columns]) wins, else the CREATE
    TABLE of the table on the feed that governs the event's second, else none. -#}
{%- set primary_keys_json = tojson(var('ckafka_primary_keys')) -%}
{%- set source_tz = var('source_time_zone') -%}

with
{{ cdc_json_documents(source('landing', 'ckafka_json')) }},

message_fields as (
    {#- Format one spells its fields in upper case, the Canal-shaped DDL in lower case. -#}
    select
        *,
        map_contains_key(message, 'TYPE') as is_format_one,
        map_contains_key(message, 'type') as is_canal,
        {{ cdc_json_text("message['TYPE']") }} as type_code,
        {{ cdc_json_text("message['DATABASE']") }} as dml_database,
        {{ cdc_json_text("message['TABLE']") }} as dml_table,
        {{ cdc_json_text("message['TIME']") }} as time_text,
        {{ cdc_json_text("message['BINLOG_NAME']") }} as binlog_name,
        {{ cdc_json_text("message['BINLOG_POS']") }} as binlog_pos,
        nullif({{ cdc_json_text("message['GLOBAL_ID']") }}, '') as global_id,
        message['NEW_VALUES'] as new_json,
        message['OLD_VALUES'] as old_json,
        try_variant_get(message['NEW_VALUES'], '$', 'map<string, variant>') as new_struct,
        try_variant_get(message['OLD_VALUES'], '$', 'map<string, variant>') as old_struct,
        {{ cdc_json_text("message['type']") }} as canal_type,
        lower({{ cdc_json_text("message['isDdl']") }}) as is_ddl_text,
        {{ cdc_json_text("message['database']") }} as ddl_database,
        {{ cdc_json_text("message['table']") }} as ddl_table,
        {{ cdc_json_text("message['sql']") }} as sql_text,
        {{ cdc_json_text("message['es']") }} as es_text,
        {{ cdc_json_text("message['ts']") }} as ts_text,
        case
            when map_contains_key(message, 'TYPE')
                then {{ cdc_json_nested_name([('DATABASE', "message['DATABASE']"), ('TABLE', "message['TABLE']")]) }}
            else {{ cdc_json_nested_name([('database', "message['database']"), ('table', "message['table']")]) }}
        end as nested_name
    from json_documents
),

classified as (
    select
        *,
        {#- the spec's field table writes insert as `l`, its sample as `I`: both are INSERT -#}
        case
            when is_format_one and type_code in ('I', 'l') then 'INSERT'
            when is_format_one and type_code = 'U' then 'UPDATE'
            when is_format_one and type_code = 'D' then 'DELETE'
        end as row_op,
        case
            when
                not is_format_one and is_canal
                and {{ canal_event_kind('canal_type', 'is_ddl_text') }} = 'DDL'
                then {{ canal_op('canal_type') }}
        end as ddl_op,
        {{ canal_epoch_unit('es_text') }} as es_unit,
        {{ canal_epoch_unit('ts_text') }} as ts_unit,
        case
            when time_text rlike '^[0-9]{14}$'
                then to_utc_timestamp(
                        try_to_timestamp(time_text, 'yyyyMMddHHmmss'), '{{ source_tz | replace("'", "") }}'
                    )
        end as time_ts,
        try_cast(regexp_extract(binlog_name, '([0-9]+)$', 1) as bigint) as binlog_file_index,
        {{ cdc_nested_columns('new_struct') }} as new_nested,
        {{ cdc_nested_columns('old_struct') }} as old_nested
    from message_fields
),

timed as (
    select
        *,
        row_op in ('INSERT', 'UPDATE') as needs_new,
        row_op in ('UPDATE', 'DELETE') as needs_old,
        {{ canal_epoch_timestamp('es_text', 'es_unit') }} as es_timestamp,
        {{ canal_epoch_timestamp('ts_text', 'ts_unit') }} as ts_timestamp
    from classified
),

checked as (
    {#- The first reason, in this order, makes the message a quarantine row. -#}
    select
        *,
        case
            {{ cdc_document_errors('code') }}
            when not is_format_one and not is_canal then 'missing_field'
            when is_format_one and not {{ cdc_json_present("message['TYPE']") }} then 'missing_field'
            when is_format_one and row_op is null then 'unknown_op'
            when is_format_one and nested_name is not null then 'wrong_shape'
            when is_format_one and coalesce(dml_database, '') = '' then 'missing_field'
            when is_format_one and coalesce(dml_table, '') = '' then 'missing_field'
            when is_format_one and time_text is null then 'missing_field'
            when is_format_one and time_ts is null then 'invalid_timestamp'
            when needs_new and not {{ cdc_json_present('new_json') }} then 'missing_field'
            when needs_new and new_struct is null then 'wrong_shape'
            when needs_old and not {{ cdc_json_present('old_json') }} then 'missing_field'
            when needs_old and old_struct is null then 'wrong_shape'
            when is_format_one and binlog_pos is not null and not binlog_pos rlike '^[0-9]{1,18}$' then 'wrong_shape'
            when needs_new and new_nested != '' then 'invalid_value'
            when needs_old and old_nested != '' then 'invalid_value'
            when not is_format_one and not {{ cdc_json_present("message['type']") }} then 'missing_field'
            when not is_format_one and ddl_op is null then 'unknown_op'
            when not is_format_one and nested_name is not null then 'wrong_shape'
            when not is_format_one and sql_text is null then 'missing_field'
            when not is_format_one and es_text is null then 'missing_field'
            when not is_format_one and es_timestamp is null then 'invalid_timestamp'
            when not is_format_one and ts_text is not null and ts_timestamp is null then 'invalid_timestamp'
        end as pre_error_code,
        case
            {{ cdc_document_errors('detail') }}
            when not is_format_one and not is_canal
                then 'neither TYPE (format one DML) nor type (Canal-shaped DDL) is present'
            when is_format_one and not {{ cdc_json_present("message['TYPE']") }} then 'TYPE is null'
            when is_format_one and row_op is null then concat('TYPE ', type_code, ' is not I, U or D')
            when is_format_one and nested_name is not null
                then concat(nested_name, ' is a JSON object/array, not a name')
            when is_format_one and coalesce(dml_database, '') = '' then 'DATABASE is missing'
            when is_format_one and coalesce(dml_table, '') = '' then 'TABLE is missing'
            when is_format_one and time_text is null then 'TIME is missing'
            when is_format_one and time_ts is null then concat('TIME ', time_text, ' is not yyyyMMddHHmmss')
            when needs_new and not {{ cdc_json_present('new_json') }}
                then concat('NEW_VALUES is missing for TYPE ', type_code)
            when needs_new and new_struct is null then 'NEW_VALUES is not a JSON object'
            when needs_old and not {{ cdc_json_present('old_json') }}
                then concat('OLD_VALUES is missing for TYPE ', type_code)
            when needs_old and old_struct is null then 'OLD_VALUES is not a JSON object'
            when is_format_one and binlog_pos is not null and not binlog_pos rlike '^[0-9]{1,18}$'
                then concat('BINLOG_POS ', binlog_pos, ' is not a binlog offset')
            when needs_new and new_nested != ''
                then concat('NEW_VALUES values are JSON objects/arrays, not column values: ', new_nested)
            when needs_old and old_nested != ''
                then concat('OLD_VALUES values are JSON objects/arrays, not column values: ', old_nested)
            when not is_format_one and not {{ cdc_json_present("message['type']") }} then 'type is null'
            when not is_format_one and ddl_op is null
                then concat('type ', canal_type, ' is not a Canal DDL type (format one carries the DML)')
            when not is_format_one and nested_name is not null
                then concat(nested_name, ' is a JSON object/array, not a name')
            when not is_format_one and sql_text is null then concat('sql is missing for DDL type ', canal_type)
            when not is_format_one and es_text is null then 'es (execution time) is missing'
            when not is_format_one and es_timestamp is null
                then concat('es ', es_text, ' is not epoch seconds/milliseconds')
            when not is_format_one and ts_text is not null and ts_timestamp is null
                then concat('ts ', ts_text, ' is not epoch seconds/milliseconds')
        end as pre_error_detail
    from timed
),

canonical as (
    select
        *,
        {{ cdc_checked_image('ckafka_json', cdc_image_values('old_struct'), needed='needs_old') }} as before_image,
        {{ cdc_checked_image('ckafka_json', cdc_image_values('new_struct'), needed='needs_new') }} as after_image
    from checked
),

decoded as (
    select
        *,
        {{ cdc_message_error('code') }} as error_code,
        {{ cdc_message_error('detail', 'OLD_VALUES', 'NEW_VALUES') }} as error_detail,
        case when row_op is not null then 'ROW' when ddl_op is not null then 'DDL' end as event_kind,
        coalesce(row_op, ddl_op) as op,
        'mysql' as source_db_type,
        cast(null as string) as tenant_name,
        nullif(case when is_format_one then dml_database else ddl_database end, '') as database_name,
        cast(null as string) as schema_name,
        nullif(case when is_format_one then dml_table else ddl_table end, '') as table_name,
        before_image.values as before,
        after_image.values as after,
        case when before_image.values is not null then false end as before_is_partial,
        case when after_image.values is not null then false end as after_is_partial,
        cast(null as map<string, string>) as column_source_types,
        case when row_op is not null then {{ cdc_map_union('before_image.types', 'after_image.types') }} end
            as column_types,
        case when is_format_one then time_ts else es_timestamp end as event_ts,
        case when is_format_one then 's' else es_unit end as event_ts_precision,
        case when not is_format_one then ts_timestamp end as emitted_ts,
        case
            when is_format_one and binlog_name is not null and binlog_pos is not null
                then concat(binlog_name, ':', binlog_pos)
        end as source_position,
        case when is_format_one then global_id end as transaction_id,
        {#- The event's second, then its binlog position (file index * 2^32 + offset) within that
            second: DDL arrives in Canal shape without a binlog position, and a TRUNCATE must still
            sort between the DML before and after it. Within one second a DDL sorts after the DML. -#}
        cast(unix_seconds(event_ts) as decimal(38, 0)) * 10000000000000000
        + coalesce(
            case
                when is_format_one
                    then try_add(try_multiply(binlog_file_index, 4294967296), try_cast(binlog_pos as bigint))
            end,
            9999999999999999
        ) as position_number,
        case when ddl_op is not null then sql_text end as ddl_statement,
        case when ddl_op = 'CREATE' then {{ canal_create_table_primary_key('sql_text') }} end as created_key,
        cast(0 as int) as row_index,
        sha2(value, 256) as natural_id
    from canonical
),

new_creates as (
    {#- This run's CREATE TABLE statements, a few per table. The text test is exact, not a guess: a
        CREATE's `type` is the bytes CREATE or a JSON escape. The optimizer moves it below the JSON
        parse, so this branch parses only the few messages that pass it, not every message twice. -#}
    select
        feed,
        database_name,
        table_name,
        unix_seconds(event_ts) as create_second,
        `partition` as landing_partition,
        `offset` as landing_offset,
        ddl_statement,
        created_key
    from decoded
    where
        (contains(value_text, 'CREATE') or contains(value_text, '\\u'))
        {#- pre_error_code: a DDL message has no image, so no image error either -#}
        and pre_error_code is null
        and created_key is not null
),

{% if is_incremental() %}
    staged_creates as (
        {#- On an incremental run, the CREATE TABLE statements staged earlier. -#}
        select
            source_name as feed,
            database_name,
            table_name,
            unix_seconds(event_ts) as create_second,
            landing_partition,
            landing_offset,
            ddl_statement,
            {{ canal_create_table_primary_key('ddl_statement') }} as created_key
        from {{ this }}
        where op = 'CREATE' and error_code is null
    ),
{% endif %}

table_creates as (
    {#- Each table's CREATEs in time order: its second (format one's TIME has no more), then its place
        in the topic. -#}
    select
        feed,
        database_name,
        table_name,
        array_sort(
            collect_list(struct(create_second, landing_partition, landing_offset, ddl_statement, created_key))
        ) as creates
    from (
        select * from new_creates
        {%- if is_incremental() %}
            union all
            select * from staged_creates
            where created_key is not null
        {%- endif %}
    ) as creates
    group by feed, database_name, table_name
),

key_sources as (
    {#- A broadcast join: the wide rows stay where they are, no shuffle or sort of them. -#}
    select /*+ broadcast(table_creates) */
        decoded.*,
        element_at(
            from_json(
                '{{ primary_keys_json | replace("\\", "\\\\") | replace("'", "\\'") }}',
                'map<string, array<string>>'
            ),
            concat(decoded.database_name, '.', decoded.table_name)
        ) as configured_key,
        {#- A CREATE keys itself; any other event takes the latest CREATE of its table at or before its
            second (a CREATE in the same second counts as earlier), else the table's first CREATE: a
            row stamped before it (a snapshot read's placeholder TIME) is still a row of that table. -#}
        coalesce(
            decoded.created_key,
            aggregate(
                table_creates.creates,
                table_creates.creates[0],
                (governing, c) -> case when c.create_second <= unix_seconds(decoded.event_ts) then c else governing end
            ).created_key
        ) as ddl_key
    from decoded
    left join table_creates
        on
            decoded.feed = table_creates.feed
            and decoded.database_name = table_creates.database_name
            and decoded.table_name = table_creates.table_name
),

keyed as (
    select
        *,
        coalesce(configured_key, ddl_key, cast(array() as array<string>)) as primary_key_columns,
        case
            when size(coalesce(configured_key, ddl_key)) > 0 and configured_key is not null then 'config'
            when size(coalesce(configured_key, ddl_key)) > 0 then 'ddl'
            else 'none'
        end as primary_key_source,
        case
            when row_op is not null
                then {{ cdc_primary_key('coalesce(configured_key, ddl_key)', 'before', 'after') }}
        end as primary_key
    from key_sources
),

{{ cdc_staged_select('ckafka_json', 'keyed') }}
