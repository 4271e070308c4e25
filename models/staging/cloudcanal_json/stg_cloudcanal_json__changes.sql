{#- CloudCanal JSON (spec 000) -> the staged contract (docs/dialects/cloudcanal_json.md).
    One message holds one action on one table: `data` rows (DELETE: the deleted rows, or `before`
    when `data` is empty) with the UPDATE's previous images in the parallel `before` list; DDL
    (`isDdl`) and TRANSACTIONEND entries are single non-row events.  Numbers are read through
    cdc_exact_variant (cdc_json_documents, macros/staging.sql) so values keep their exact digits. -#}
{%- set dialect = 'cloudcanal_json' -%}
{%- set empty_map = 'cast(map() as map<string, string>)' -%}

with

{{ cdc_json_documents(source('landing', 'cloudcanal_json')) }},

fields as (
    {#- Every field as text (numbers are strings of their exact digits) or as its typed shape;
        a typed shape is null when the field is absent or has the wrong JSON type. -#}
    select
        *,
        try_variant_get(message['action'], '$', 'string') as action,
        coalesce(try_variant_get(message['entryType'], '$', 'string'), 'ROWDATA') as entry_type,
        {#- Only a JSON boolean: try_variant_get would also read the text "no" (or "1") as one. -#}
        case when schema_of_variant(message['isDdl']) = 'BOOLEAN' then variant_get(message['isDdl'], '$', 'boolean') end
            as is_ddl_flag,
        nullif(try_variant_get(message['db'], '$', 'string'), '') as db,
        nullif(try_variant_get(message['schema'], '$', 'string'), '') as schema_text,
        nullif(try_variant_get(message['table'], '$', 'string'), '') as table_text,
        {{ cdc_json_nested_name([
            ('db', "message['db']"), ('schema', "message['schema']"), ('table', "message['table']")
        ]) }} as nested_name,
        nullif(trim(try_variant_get(message['sql'], '$', 'string')), '') as sql_text,
        try_variant_get(message['execTs'], '$', 'string') as exec_ts_text,
        try_variant_get(message['sendTs'], '$', 'string') as send_ts_text,
        try_variant_get(message['data'], '$', 'array<map<string, variant>>') as data_rows,
        try_variant_get(message['before'], '$', 'array<map<string, variant>>') as before_rows,
        try_variant_get(message['dbValType'], '$', 'map<string, string>') as db_val_type,
        try_variant_get(message['jdbcType'], '$', 'map<string, string>') as jdbc_type,
        try_variant_get(message['pks'], '$', 'array<string>') as pks,
        try_variant_get(message['tableChanges'], '$', 'map<string, variant>') as table_changes,
        try_variant_get(message['tableChanges'], '$.table.columns', 'array<map<string, string>>') as ddl_columns,
        try_variant_get(
            message['tableChanges'], '$.table.primaryKeyColumnNames', 'array<string>'
        ) as ddl_primary_key,
        {{ cdc_json_present("message['data']") }} as has_data,
        {{ cdc_json_present("message['before']") }} as has_before,
        {{ cdc_json_present("message['dbValType']") }} as has_db_val_type,
        {{ cdc_json_present("message['jdbcType']") }} as has_jdbc_type,
        {{ cdc_json_present("message['pks']") }} as has_pks,
        {{ cdc_json_present("message['isDdl']") }} as has_is_ddl,
        {{ cdc_json_present("message['tableChanges']") }} as has_table_changes,
        {{ cdc_json_present("try_variant_get(message['tableChanges'], '$.table.columns', 'variant')") }}
            as has_ddl_columns
    from json_documents
),

classified as (
    select
        *,
        coalesce(is_ddl_flag, false) as is_ddl,
        coalesce(size(data_rows), 0) as data_count,
        coalesce(size(before_rows), 0) as before_count,
        try_cast(case when exec_ts_text rlike '^-?[0-9]{1,16}$' then exec_ts_text end as bigint) as exec_ms,
        try_cast(case when send_ts_text rlike '^-?[0-9]{1,16}$' then send_ts_text end as bigint) as send_ms,
        transform(coalesce(ddl_columns, array()), c -> c['name']) as ddl_column_names,
        {#- tableChanges columns in `position` order (the list order where a position is missing). -#}
        transform(
            array_sort(
                transform(
                    coalesce(ddl_columns, array()),
                    (c, i) -> struct(coalesce(try_cast(c['position'] as int), i) as pos, i as idx)
                )
            ),
            s -> ddl_columns[s.idx]
        ) as ddl_columns_sorted
    from fields
),

checked as (
    {#- The first reason the message cannot be staged, if any (one quarantine row per message). -#}
    select
        *,
        case
            {{ cdc_document_errors('code') }}
            {#- isDdl and the names first: `described` names these two, the other shape errors share one detail -#}
            when has_is_ddl and is_ddl_flag is null then 'wrong_shape'
            when nested_name is not null then 'wrong_shape'
            when has_data and (data_rows is null or exists(data_rows, r -> r is null)) then 'wrong_shape'
            when has_before and (before_rows is null or exists(before_rows, r -> r is null)) then 'wrong_shape'
            when has_db_val_type and db_val_type is null then 'wrong_shape'
            when has_jdbc_type and jdbc_type is null then 'wrong_shape'
            when has_pks and (pks is null or exists(pks, k -> k is null)) then 'wrong_shape'
            when has_table_changes and table_changes is null then 'wrong_shape'
            when has_ddl_columns and (
                    ddl_columns is null
                    or exists(ddl_columns, c -> c is null)
                    or exists(ddl_column_names, n -> n is null)
                    or size(array_distinct(ddl_column_names)) != size(ddl_column_names)
                ) then 'wrong_shape'
            when entry_type not in ('ROWDATA', 'TRANSACTIONEND') then 'unknown_op'
            when exec_ts_text is null then 'missing_field'
            when exec_ms is null or abs(exec_ms) >= 253402300800000 then 'invalid_timestamp'
            when send_ts_text is not null and (send_ms is null or abs(send_ms) >= 253402300800000)
                then 'invalid_timestamp'
            when entry_type = 'TRANSACTIONEND' or is_ddl then null
            when action is null then 'missing_field'
            when action not in ('INSERT', 'UPDATE', 'DELETE') then 'unknown_op'
            when table_text is null then 'missing_field'
            when data_count = 0 and not (action = 'DELETE' and before_count > 0) then 'missing_field'
            when action = 'UPDATE' and before_count not in (0, data_count) then 'wrong_shape'
        end as shape_error
    from classified
),

described as (
    select
        *,
        case shape_error
            when 'invalid_utf8' then 'the value is not UTF-8 text'
            when 'invalid_json' then 'the value is not JSON (or repeats a key)'
            when 'wrong_shape'
                then
                    case
                        when has_is_ddl and is_ddl_flag is null
                            then concat('isDdl ', to_json(message['isDdl']), ' is not a JSON boolean')
                        when nested_name is not null
                            then concat(nested_name, ' is a JSON object/array, not a name')
                        else
                            'not a CloudCanal message: the value must be a JSON object whose data/before are lists'
                            || ' of objects (before as long as data), dbValType/jdbcType objects, pks a list of names'
                            || ' and tableChanges.table.columns distinct named columns'
                    end
            when 'unknown_op'
                then
                    concat(
                        'entryType ', entry_type, ' / action ', coalesce(action, 'null'),
                        ' is not a CloudCanal operation'
                    )
            when 'missing_field'
                then
                    case
                        when exec_ts_text is null then 'execTs is missing'
                        when action is null then 'action is missing'
                        when table_text is null then 'table is missing'
                        else concat(action, ' carries no rows in data')
                    end
            when 'invalid_timestamp' then
                concat(
                    'execTs/sendTs must be epoch milliseconds: ', coalesce(exec_ts_text, ''), ' / ',
                    coalesce(send_ts_text, '')
                )
        end as shape_detail,
        case
            when entry_type = 'TRANSACTIONEND' then 'TRANSACTION'
            when is_ddl then 'DDL'
            else 'ROW'
        end as event_kind,
        {#- The columns' declared types: dbValType, else `jdbc:<code>` from jdbcType. -#}
        map_concat(
            map_filter(
                transform_values(coalesce(jdbc_type, {{ empty_map }}), (c, t) -> concat('jdbc:', t)),
                (c, t) -> not map_contains_key(coalesce(db_val_type, {{ empty_map }}), c)
            ),
            coalesce(db_val_type, {{ empty_map }})
        ) as message_source_types,
        sha2(regexp_replace(value_text, '"sendTs"\\s*:\\s*-?[0-9]+', ''), 256) as natural_id
    from checked
),

exploded as (
    {#- One row per data row for DML (DELETE: per `before` row when `data` is empty); one row for DDL,
        TRANSACTIONEND, tombstones and undecodable messages. -#}
    select
        d.*,
        coalesce(r.row_index, 0) as row_index,
        r.row_image
    from described as d
        lateral view outer posexplode(
            case
                when d.shape_error is null and d.value is not null and d.event_kind = 'ROW'
                    then case when d.data_count > 0 then d.data_rows else d.before_rows end
            end
        ) r as row_index, row_image
),

images as (
    select
        *,
        case
            when event_kind = 'ROW' and action != 'DELETE'
                then transform_values(row_image, (c, v) -> try_variant_get(v, '$', 'string'))
        end as after_values,
        case
            when event_kind = 'ROW' and action = 'UPDATE'
                then transform_values(
                        try_element_at(before_rows, row_index + 1), (c, v) -> try_variant_get(v, '$', 'string')
                    )
            when event_kind = 'ROW' and action = 'DELETE'
                then transform_values(row_image, (c, v) -> try_variant_get(v, '$', 'string'))
        end as before_values,
        case
            when event_kind = 'DDL' and has_ddl_columns
                then map_from_arrays(
                        transform(ddl_columns_sorted, c -> c['name']),
                        transform(
                            ddl_columns_sorted,
                            c -> coalesce(c['typeExpression'], c['typeName'], concat('jdbc:', c['jdbcType']), '')
                        )
                    )
            else message_source_types
        end as source_types
    from exploded
),

canonical as (
    select
        *,
        case when event_kind = 'ROW' and after_values is not null
                then {{ cdc_canonical_image(dialect, 'after_values', 'source_types') }}
        end as after_image,
        case when event_kind = 'ROW' and before_values is not null
                then {{ cdc_canonical_image(dialect, 'before_values', 'source_types') }}
        end as before_image,
        case when event_kind = 'DDL'
                then {{ cdc_canonical_image(dialect, empty_map, 'source_types') }}
        end as ddl_image
    from images
),

message_errors as (
    {#- A value no row of the message can read quarantines the whole message, once. -#}
    select
        *,
        coalesce(
            shape_error,
            max(case when coalesce(after_image['error'], before_image['error']) is not null then 'invalid_value' end)
                over (partition by record_id)
        ) as error_code,
        coalesce(
            shape_detail,
            max(concat('row ', cast(row_index as string), ': ', coalesce(after_image['error'], before_image['error'])))
                over (partition by record_id)
        ) as error_detail
    from canonical
),

staged as (
    select
        *,
        case
            when event_kind = 'TRANSACTION' then 'TRANSACTIONEND'
            when event_kind = 'ROW' then action
            when sql_text is not null then {{ cdc_ddl_op('sql_text') }}
            when upper(action) in ('CREATE', 'ALTER', 'DROP', 'RENAME', 'TRUNCATE', 'CREATE_INDEX', 'DROP_INDEX')
                then upper(action)
            else 'QUERY'
        end as staged_op,
        case
            when event_kind = 'DDL' and size(ddl_primary_key) > 0 then array_distinct(ddl_primary_key)
            else array_distinct(filter(coalesce(pks, array()), k -> k != ''))
        end as key_columns,
        case
            when event_kind = 'DDL' and size(ddl_primary_key) > 0 then 'ddl'
            when size(filter(coalesce(pks, array()), k -> k != '')) > 0 then 'message'
            else 'none'
        end as key_source,
        coalesce(after_image['types'], before_image['types'], ddl_image['types']) as value_types
    from message_errors
    where value is null or error_code is null or row_index = 0
),

decoded as (
    {#- The staged columns (cdc_staged_select nulls them unless the message is decoded). -#}
    select
        *,
        staged_op as op,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        db as database_name,
        schema_text as schema_name,
        table_text as table_name,
        key_columns as primary_key_columns,
        key_source as primary_key_source,
        case
            when event_kind = 'ROW'
                then {{ cdc_primary_key('key_columns', "before_image['values']", "after_image['values']") }}
        end as primary_key,
        before_image['values'] as before,
        after_image['values'] as after,
        case
            when event_kind = 'ROW'
                then coalesce(
                        exists(map_keys(after_image['values']), c -> not map_contains_key(before_image['values'], c)),
                        false
                    )
        end as before_is_partial,
        case
            when event_kind = 'ROW'
                then coalesce(
                        exists(map_keys(before_image['values']), c -> not map_contains_key(after_image['values'], c)),
                        false
                    )
        end as after_is_partial,
        case when event_kind != 'TRANSACTION' then source_types end as column_source_types,
        case when event_kind != 'TRANSACTION' then value_types end as column_types,
        timestamp_millis(exec_ms) as event_ts,
        'ms' as event_ts_precision,
        timestamp_millis(send_ms) as emitted_ts,
        cast(null as string) as source_position,
        cast(null as string) as transaction_id,
        cast(null as decimal(30, 0)) as position_number,
        case when event_kind = 'DDL' then sql_text end as ddl_statement
    from staged
),

{{ cdc_staged_select(dialect, 'decoded') }}
