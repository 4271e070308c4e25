{#- Maxwell's daemon JSON (MySQL binlog -> Kafka) -> the staged contract (docs/dialects/maxwell_json.md).
    One change per message. Rows: insert / update / delete / bootstrap-insert with `data` (the whole row;
    for delete the deleted row) and, on update, `old` (the changed columns' previous values). DDL
    (output_ddl): table-* / database-* with `sql` and `def`. Maxwell sends no column types: values are
    kept as sent, JSON columns and SETs (embedded JSON) as JSON text. -#}
with
{{ cdc_json_documents(source('landing', 'maxwell_json')) }},

message_fields as (
    select
        *,
        lower({{ cdc_json_text("message['type']") }}) as maxwell_type,
        {{ cdc_json_text("message['database']") }} as database_text,
        {{ cdc_json_text("message['table']") }} as table_text,
        {{ cdc_json_text("message['ts']") }} as ts_text,
        {{ cdc_json_text("message['xid']") }} as xid_text,
        {{ cdc_json_text("message['xoffset']") }} as xoffset_text,
        {{ cdc_json_text("message['position']") }} as position_text,
        {{ cdc_json_text("message['gtid']") }} as gtid_text,
        {{ cdc_json_text("message['sql']") }} as sql_text,
        message['data'] as data_json,
        {{ cdc_json_object("message['data']") }} as data_struct,
        message['old'] as old_json,
        {{ cdc_json_object("message['old']") }} as old_struct,
        message['primary_key_columns'] as key_columns_json,
        try_variant_get(message['primary_key_columns'], '$', 'array<string>') as message_key_columns,
        try_variant_get(message['def'], '$["primary-key"]', 'array<string>') as ddl_key_columns,
        {{ cdc_json_nested_name([
            ('type', "message['type']"), ('database', "message['database']"), ('table', "message['table']")
        ]) }} as nested_name,
        cast(key as string) as key_text
    from json_documents
),

classified as (
    select
        *,
        case maxwell_type
            when 'insert' then 'INSERT'
            when 'update' then 'UPDATE'
            when 'delete' then 'DELETE'
            when 'bootstrap-insert' then 'SNAPSHOT'
        end as row_op,
        maxwell_type in (
            'table-create', 'table-alter', 'table-drop', 'database-create', 'database-alter', 'database-drop'
        ) as is_ddl,
        maxwell_type in ('bootstrap-start', 'bootstrap-complete') as is_bootstrap_marker,
        maxwell_type like 'table-%' as names_table,
        {#- Rows carry `ts` in seconds; DDL (DDLMap) in milliseconds, as in the dataformat page's samples. -#}
        
        case when ts_text rlike '^-?[0-9]{1,15}$' then cast(ts_text as bigint) end as ts_number,
        regexp_extract(position_text, '^(.*):([0-9]{1,18})$', 1) as binlog_file,
        try_cast(regexp_extract(position_text, '^(.*):([0-9]{1,18})$', 2) as bigint) as binlog_offset,
        case when xoffset_text rlike '^[0-9]{1,9}$' then cast(xoffset_text as bigint) end as xoffset_number
    from message_fields
),

keyed_by_kafka as (
    {#- The Kafka key names the key columns when the value does not (output_primary_key_columns off):
        the hash form `{"database":..,"table":..,"pk.<col>":..}` in key order (from_json keeps the
        text's order; a variant would sort the names), the array form `["db","table",[{"<col>":..}]]`.
        Maxwell lower-cases the names there: each is matched back to the row's spelling. A key
        without `pk.` names (`_uuid`: the table has no key) names no column. -#}
    select
        *,
        case
            when row_op is null then cast(null as array<string>)
            when key_text rlike '^\\s*\\{'
                then transform(
                        filter(map_keys(from_json(key_text, 'map<string, string>')), k -> startswith(k, 'pk.')),
                        k -> substr(k, 4)
                    )
            when key_text rlike '^\\s*\\['
                then transform(
                        try_variant_get(try_parse_json(key_text), '$[2]', 'array<map<string, variant>>'),
                        pk -> map_keys(pk)[0]
                    )
        end as kafka_key_names
    from classified
),

key_columns as (
    select
        *,
        case
            when message_key_columns is not null then message_key_columns
            when size(kafka_key_names) > 0
                then transform(
                        kafka_key_names,
                        k -> coalesce(element_at(filter(map_keys(data_struct), c -> lower(c) = lower(k)), 1), k)
                    )
            when is_ddl and names_table then ddl_key_columns
        end as found_key_columns
    from keyed_by_kafka
),

images as (
    {#- update: `data` is the whole row after, `old` the previous values of the columns that changed,
        so the row before is `data` with `old` laid over it (the dataformat page's data.merge(old)). -#}
    select
        *,
        case
            when row_op = 'UPDATE' and old_struct is null then data_struct
            when row_op = 'UPDATE'
                then map_concat(map_filter(data_struct, (c, v) -> not map_contains_key(old_struct, c)), old_struct)
            when row_op = 'DELETE' then data_struct
        end as before_columns,
        case when row_op in ('INSERT', 'UPDATE', 'SNAPSHOT') then data_struct end as after_columns,
        coalesce(array_join(filter(map_keys(old_struct), c -> not map_contains_key(data_struct, c)), ', '), '')
            as old_only_columns,
        coalesce(
            {{ cdc_nested_columns('data_struct') }} != '' or {{ cdc_nested_columns('old_struct') }} != '', false
        ) as has_nested
    from key_columns
),

as_sent as (
    {#- JSON columns and SETs arrive as embedded JSON. Their text comes from a parse of the value as
        sent, not of exact_document (whose every number is a string): compact, keys sorted,
        numbers as Spark's variant writes them (docs/dialects/maxwell_json.md). -#}
    select
        *,
        case when has_nested then {{ cdc_json_object("try_parse_json(value_text)") }} end as sent_message
    from images
),

image_values as (
    select
        *,
        {{ maxwell_image_values('before_columns', "sent_message['data']", "sent_message['old']") }}
            as before_values,
        {{ maxwell_image_values('after_columns', "sent_message['data']", "sent_message['data']") }}
            as after_values
    from as_sent
),

checked as (
    {#- The first reason, in this order, makes the message a quarantine row. -#}
    select
        *,
        case
            {{ cdc_document_errors('code') }}
            when not {{ cdc_json_present("message['type']") }} then 'missing_field'
            when nested_name is not null then 'wrong_shape'
            when row_op is null and not is_ddl and not is_bootstrap_marker then 'unknown_op'
            when coalesce(database_text, '') = '' then 'missing_field'
            when (row_op is not null or names_table or is_bootstrap_marker) and coalesce(table_text, '') = ''
                then 'missing_field'
            when ts_text is null then 'missing_field'
            when ts_number is null then 'invalid_timestamp'
            when row_op is not null and not {{ cdc_json_present('data_json') }} then 'missing_field'
            when row_op is not null and data_struct is null then 'wrong_shape'
            when row_op is not null and {{ cdc_json_present('old_json') }} and old_struct is null then 'wrong_shape'
            when is_ddl and sql_text is null then 'missing_field'
            when position_text is not null and binlog_offset is null then 'wrong_shape'
            when xoffset_text is not null and xoffset_number is null then 'wrong_shape'
            when {{ cdc_json_present('key_columns_json') }} and message_key_columns is null then 'wrong_shape'
            when row_op is not null and old_only_columns != '' then 'invalid_value'
            when has_nested and sent_message is null then 'invalid_value'
        end as pre_error_code,
        case
            {{ cdc_document_errors('detail') }}
            when not {{ cdc_json_present("message['type']") }} then 'type is missing'
            when nested_name is not null then concat(nested_name, ' is a JSON object/array, not a name')
            when row_op is null and not is_ddl and not is_bootstrap_marker
                then concat('type ', maxwell_type, ' is not a Maxwell row, DDL or bootstrap type')
            when coalesce(database_text, '') = '' then 'database is missing'
            when (row_op is not null or names_table or is_bootstrap_marker) and coalesce(table_text, '') = ''
                then concat('table is missing for type ', maxwell_type)
            when ts_text is null then 'ts is missing'
            when ts_number is null then concat('ts ', ts_text, ' is not epoch seconds (rows) or milliseconds (DDL)')
            when row_op is not null and not {{ cdc_json_present('data_json') }}
                then concat('data is missing for type ', maxwell_type)
            when row_op is not null and data_struct is null then 'data is not a JSON object'
            when row_op is not null and {{ cdc_json_present('old_json') }} and old_struct is null
                then 'old is not a JSON object'
            when is_ddl and sql_text is null then concat('sql is missing for DDL type ', maxwell_type)
            when position_text is not null and binlog_offset is null
                then concat('position ', position_text, ' is not binlog-file:offset')
            when xoffset_text is not null and xoffset_number is null
                then concat('xoffset ', xoffset_text, ' is not a row offset')
            when {{ cdc_json_present('key_columns_json') }} and message_key_columns is null
                then 'primary_key_columns is not an array of column names'
            when row_op is not null and old_only_columns != ''
                then concat('old names columns that data does not have: ', old_only_columns)
            when has_nested and sent_message is null
                then 'embedded JSON values cannot be read back from the value as sent'
        end as pre_error_detail
    from image_values
),

canonical as (
    select
        *,
        {{ cdc_checked_image('maxwell_json', 'before_values') }} as before_image,
        {{ cdc_checked_image('maxwell_json', 'after_values') }} as after_image
    from checked
),

decoded as (
    select
        *,
        pre_error_code as error_code,
        pre_error_detail as error_detail,
        case
            when row_op is not null then 'ROW'
            when is_ddl then 'DDL'
            when is_bootstrap_marker then 'OTHER'
        end as event_kind,
        case
            when row_op is not null then row_op
            when is_ddl then {{ cdc_ddl_op('sql_text') }}
            else upper(maxwell_type)
        end as op,
        'mysql' as source_db_type,
        cast(null as string) as tenant_name,
        database_text as database_name,
        cast(null as string) as schema_name,  -- noqa: RF04
        nullif(table_text, '') as table_name,  -- noqa: RF04
        coalesce(found_key_columns, cast(array() as array<string>)) as primary_key_columns,
        case
            when coalesce(size(found_key_columns), 0) = 0 then 'none'
            when is_ddl then 'ddl'
            else 'message'
        end as primary_key_source,
        case
            when row_op is not null
                then {{ cdc_primary_key('found_key_columns', "before_image['values']", "after_image['values']") }}
        end as primary_key,
        before_image['values'] as before,  -- noqa: RF04
        after_image['values'] as after,  -- noqa: RF04
        case when before_image['values'] is not null then false end as before_is_partial,
        case when after_image['values'] is not null then false end as after_is_partial,
        cast(null as map<string, string>) as column_source_types,  -- noqa: LT01
        case when row_op is not null then {{ cdc_map_union("before_image['types']", "after_image['types']") }} end
            as column_types,
        case when is_ddl then timestamp_millis(ts_number) else timestamp_seconds(ts_number) end as event_ts,
        case when is_ddl then 'ms' else 's' end as event_ts_precision,
        cast(null as timestamp) as emitted_ts,
        coalesce(position_text, gtid_text) as source_position,
        xid_text as transaction_id,
        {#- Binlog file index * 2^32 + offset, then the row's place in its transaction: Maxwell gives
            the rows of one binlog event one position, numbers them with xoffset and leaves xoffset
            off the transaction's last row (commit: true), which sorts after the others. -#}
        
        case
            when binlog_offset is not null
                then (
                    cast(try_cast(regexp_extract(binlog_file, '([0-9]+)$', 1) as bigint) as decimal(30, 0))
                    * 4294967296 + binlog_offset
                ) * 1000000000 + coalesce(xoffset_number, 999999999)
        end as position_number,
        case when is_ddl then sql_text end as ddl_statement,
        0 as row_index,
        sha2(value, 256) as natural_id
    from canonical
),

{{ cdc_staged_select('maxwell_json', 'decoded') }}
