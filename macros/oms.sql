{#- OceanBase OMS dialects (spec 003): the two steps stg_oms_default_json__changes and
    stg_oms_default_ext_json__changes share (oms_default_records and oms_default_staged_rows, each
    rendering CTEs; the models write the step between, how an image declares its types), and a wall-clock reader stg_oms_shareplex_json__changes uses too; what every JSON dialect shares is in macros/staging.sql.
    docs/dialects/oms_*.md explain the choices. -#}

{% macro oms_wall_clock_utc(text) -%}
    {#- A wall-clock `YYYY-MM-DDTHH:mm:ss` in the source time zone (dbt var source_time_zone) as a UTC
        timestamp; null when the text has another form. -#}
    case
        when {{ text }} rlike '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$'
            then to_utc_timestamp(
                try_to_timestamp(replace({{ text }}, 'T', ' '), 'yyyy-MM-dd HH:mm:ss'), '{{ var("source_time_zone") }}'
            )
    end
{%- endmacro %}

{% macro oms_default_records() -%}
    {#- CTEs `records` (recordType, allMetaData, prevStruct, postStruct of json_documents.message) and
        `metadata` (the row op and the allMetaData fields) of OMS Default JSON and its extended form. -#}
records as (
    select
        *,
        {{ cdc_json_text("message['recordType']") }} as record_type,
        message['allMetaData'] as meta_json,
        {{ cdc_json_object("message['allMetaData']") }} as meta,
        message['prevStruct'] as prev_json,
        message['postStruct'] as post_json,
        {{ cdc_json_object("message['prevStruct']") }} as prev_struct,
        {{ cdc_json_object("message['postStruct']") }} as post_struct
    from json_documents
),

metadata as (
    select
        *,
        case record_type
            when 'INSERT' then 'INSERT'
            when 'UPDATE' then 'UPDATE'
            when 'DELETE' then 'DELETE'
            when 'ROW' then 'SNAPSHOT'
        end as row_op,
        record_type in ('UPDATE', 'DELETE') as needs_before,
        record_type in ('INSERT', 'UPDATE', 'ROW') as needs_after,
        {{ cdc_json_text("meta['db']") }} as db,
        {{ cdc_json_text("meta['table_name']") }} as meta_table_name,
        {{ cdc_json_nested_name([('allMetaData.db', "meta['db']"), ('allMetaData.table_name', "meta['table_name']")]) }}
            as nested_name,
        {{ cdc_json_text("meta['dbType']") }} as db_type,
        {{ cdc_json_text("meta['record_primary_key']") }} as record_primary_key,
        {{ cdc_json_text("meta['record_primary_value']") }} as record_primary_value,
        {{ cdc_json_text("meta['checkpoint']") }} as checkpoint,
        {{ cdc_json_text("meta['timestamp']") }} as timestamp_text,
        {{ cdc_json_text("meta['storeDataSequence']") }} as store_sequence,
        {{ cdc_json_text("meta['uniqueId']") }} as unique_id
    from records
)
{%- endmacro %}

{% macro oms_default_staged_rows(dialect, column_source_types) -%}
    {#- The second step of the two OMS Default models, over a `light_types` CTE the model writes
        (prev_columns / post_columns and the types they declare, prev_source_types /
        post_source_types, null for plain Default JSON). CTEs `images` (image values, the record's
        time, position and tenant), `checked` (the message's first error in the contract's codes:
        pre_error_code / pre_error_detail), `canonical` (before_image, after_image through
        cdc_canonical_image), `decoded` (the staged columns), `key_images` and `keyed` (the key's
        values from the images, record_primary_value filling a key column an image lacks;
        primary_key). `column_source_types`: SQL (map<string, string>), the declared types the
        staged rows carry. -#}
images as (
    select
        *,
        {{ cdc_image_values('prev_columns') }} as prev_values,
        {{ cdc_image_values('post_columns') }} as post_values,
        {{ cdc_nested_columns('prev_columns') }} as prev_nested,
        {{ cdc_nested_columns('post_columns') }} as post_nested,
        coalesce(
            {{ cdc_json_text("post_struct['ddl']") }},
            {{ cdc_json_text("prev_struct['ddl']") }}
        ) as ddl_text,
        case
            when timestamp_text rlike '^-?[0-9]{1,12}$' then timestamp_seconds(cast(timestamp_text as bigint))
        end as record_ts,
        case
            when store_sequence rlike '^[0-9]{1,30}$' then cast(store_sequence as decimal(30, 0))
        end as store_sequence_number,
        {# OceanBase sends `{tenant}.{database}`; other sources, and a db without a dot, have no tenant #}
        coalesce(db_type rlike '^(?i)(OB_|OCEANBASE)' and db rlike '^[^.]+[.].', false) as db_has_tenant,
        split(record_primary_key, '\u0001') as key_names_sent,
        split(record_primary_value, '\u0001') as key_values_sent
    from light_types
),

checked as (
    {#- The first reason, in this order, makes the message a quarantine row. -#}
    select
        *,
        case
            {{ cdc_document_errors('code') }}
            when not {{ cdc_json_present("message['recordType']") }} then 'missing_field'
            when record_type not in ('INSERT', 'UPDATE', 'DELETE', 'ROW', 'DDL', 'HEARTBEAT') then 'unknown_op'
            when not {{ cdc_json_present('meta_json') }} then 'missing_field'
            when meta is null then 'wrong_shape'
            when nested_name is not null then 'wrong_shape'
            when row_op is not null and coalesce(db, '') = '' then 'missing_field'
            when row_op is not null and coalesce(meta_table_name, '') = '' then 'missing_field'
            when needs_before and not {{ cdc_json_present('prev_json') }} then 'missing_field'
            when needs_before and prev_struct is null then 'wrong_shape'
            when needs_after and not {{ cdc_json_present('post_json') }} then 'missing_field'
            when needs_after and post_struct is null then 'wrong_shape'
            when record_type = 'DDL' and ddl_text is null then 'missing_field'
            when {{ cdc_json_present('prev_light_json') }}
                and (prev_source_types is null or exists(map_values(prev_source_types), t -> t is null))
                then 'wrong_shape'
            when {{ cdc_json_present('post_light_json') }}
                and (post_source_types is null or exists(map_values(post_source_types), t -> t is null))
                then 'wrong_shape'
            when timestamp_text is not null and record_ts is null then 'invalid_timestamp'
            when store_sequence is not null and store_sequence_number is null then 'wrong_shape'
            when needs_before and prev_nested != '' then 'invalid_value'
            when needs_after and post_nested != '' then 'invalid_value'
        end as pre_error_code,
        case
            {{ cdc_document_errors('detail') }}
            when not {{ cdc_json_present("message['recordType']") }} then 'recordType is missing'
            when record_type not in ('INSERT', 'UPDATE', 'DELETE', 'ROW', 'DDL', 'HEARTBEAT')
                then concat('recordType ', record_type, ' is not INSERT, UPDATE, DELETE, ROW, DDL or HEARTBEAT')
            when not {{ cdc_json_present('meta_json') }} then 'allMetaData is missing'
            when meta is null then 'allMetaData is not an object'
            when nested_name is not null then concat(nested_name, ' is a JSON object/array, not a name')
            when row_op is not null and coalesce(db, '') = '' then 'allMetaData.db is missing'
            when row_op is not null and coalesce(meta_table_name, '') = '' then 'allMetaData.table_name is missing'
            when needs_before and not {{ cdc_json_present('prev_json') }}
                then concat('prevStruct is missing for ', record_type)
            when needs_before and prev_struct is null then 'prevStruct is not an object'
            when needs_after and not {{ cdc_json_present('post_json') }}
                then concat('postStruct is missing for ', record_type)
            when needs_after and post_struct is null then 'postStruct is not an object'
            when record_type = 'DDL' and ddl_text is null then 'the DDL record has no "ddl" statement'
            when {{ cdc_json_present('prev_light_json') }}
                and (prev_source_types is null or exists(map_values(prev_source_types), t -> t is null))
                then 'prevStruct.__light_type is not {column: {"schemaType": type}}'
            when {{ cdc_json_present('post_light_json') }}
                and (post_source_types is null or exists(map_values(post_source_types), t -> t is null))
                then 'postStruct.__light_type is not {column: {"schemaType": type}}'
            when timestamp_text is not null and record_ts is null
                then concat('allMetaData.timestamp ', timestamp_text, ' is not epoch seconds')
            when store_sequence is not null and store_sequence_number is null
                then concat('allMetaData.storeDataSequence ', store_sequence, ' is not a non-negative integer')
            when needs_before and prev_nested != ''
                then concat('prevStruct values are JSON objects/arrays, not column values: ', prev_nested)
            when needs_after and post_nested != ''
                then concat('postStruct values are JSON objects/arrays, not column values: ', post_nested)
        end as pre_error_detail
    from images
),

canonical as (
    select
        *,
        {{ cdc_checked_image(dialect, 'prev_values', 'prev_source_types', needed='needs_before') }} as before_image,
        {{ cdc_checked_image(dialect, 'post_values', 'post_source_types', needed='needs_after') }} as after_image
    from checked
),

decoded as (
    select
        *,
        {{ cdc_message_error('code') }} as error_code,
        {{ cdc_message_error('detail', 'prevStruct', 'postStruct') }} as error_detail,
        case
            when row_op is not null then 'ROW'
            when record_type = 'DDL' then 'DDL'
            when record_type = 'HEARTBEAT' then 'HEARTBEAT'
        end as event_kind,
        coalesce(row_op, case when record_type = 'DDL' then {{ cdc_ddl_op('ddl_text') }} end, record_type) as op,
        lower(db_type) as source_db_type,
        case when db_has_tenant then substring_index(db, '.', 1) end as tenant_name,
        case when db_has_tenant then substr(db, instr(db, '.') + 1) else db end as database_name,
        cast(null as string) as schema_name,
        meta_table_name as table_name,
        coalesce(
            array_distinct(filter(key_names_sent, name -> name != '')), cast(array() as array<string>)
        ) as primary_key_columns,
        case when size(filter(key_names_sent, name -> name != '')) > 0 then 'message' else 'none' end
            as primary_key_source,
        before_image['values'] as before,
        after_image['values'] as after,
        case when row_op is not null then false end as before_is_partial,
        case when row_op is not null then false end as after_is_partial,
        case when row_op is not null then {{ cdc_map_union("before_image['types']", "after_image['types']") }} end
            as column_types,
        record_ts as event_ts,
        case when record_ts is not null then 's' end as event_ts_precision,
        cast(null as timestamp) as emitted_ts,
        coalesce(store_sequence, checkpoint) as source_position,
        unique_id as transaction_id,
        store_sequence_number as position_number,
        case when record_type = 'DDL' then ddl_text end as ddl_statement,
        cast(0 as int) as row_index,
        sha2(
            concat_ws(
                '\u0001',
                coalesce(record_type, ''),
                coalesce(cast(prev_json as string), ''),
                coalesce(cast(post_json as string), ''),
                {# checkpoint is OMS's progress when it wrote the message, not part of the change #}
                coalesce(
                    to_json(
                        transform_values(map_filter(meta, (k, v) -> k != 'checkpoint'), (k, v) -> cast(v as string))
                    ),
                    ''
                )
            ),
            256
        ) as natural_id,
        {{ column_source_types }} as column_source_types
    from canonical
),

key_images as (
    -- Key values come from the images; record_primary_value fills a key column an image lacks.
    select
        *,
        map_from_entries(
            transform(
                primary_key_columns,
                name -> struct(
                    name,
                    coalesce(
                        after[name],
                        before[name],
                        case
                            when array_position(key_names_sent, name) > 0
                                then try_element_at(key_values_sent, cast(array_position(key_names_sent, name) as int))
                        end
                    )
                )
            )
        ) as key_image
    from decoded
),

keyed as (
    select
        *,
        {{ cdc_primary_key('primary_key_columns', 'cast(null as map<string, string>)', 'key_image') }} as primary_key
    from key_images
)
{%- endmacro %}
