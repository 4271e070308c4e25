{#- OceanBase OMS SharePlex JSON (spec 003) -> the staged contract (docs/dialects/oms_shareplex_json.md).
    One row change per message; no key column names exist, the row identity is `meta.rowid`. -#}
with
{{ cdc_json_documents(source('landing', 'oms_shareplex_json')) }},

records as (
    select
        *,
        message['meta'] as meta_json,
        {{ cdc_json_object("message['meta']") }} as meta,
        message['data'] as data_json,
        {{ cdc_json_object("message['data']") }} as data_struct,
        message['key'] as key_json,
        {{ cdc_json_object("message['key']") }} as key_struct
    from json_documents
),

metadata as (
    select
        *,
        {{ cdc_json_text("meta['op']") }} as op_code,
        {{ cdc_json_text("meta['table']") }} as qualified_table,
        {{ cdc_json_text("meta['rowid']") }} as row_id,
        {{ cdc_json_text("meta['time']") }} as time_text,
        {{ cdc_json_text("meta['posttime']") }} as posttime_text,
        {{ cdc_json_text("meta['trans']") }} as trans,
        {{ cdc_json_text("meta['scn']") }} as scn
    from records
),

images as (
    {#- ins: data is the new row; del: data is the old row; upd: data holds the changed columns only
        and key the whole old row. -#}
    select
        *,
        case op_code when 'ins' then 'INSERT' when 'upd' then 'UPDATE' when 'del' then 'DELETE' end as row_op,
        case op_code when 'del' then data_struct when 'upd' then key_struct end as before_columns,
        case op_code when 'ins' then data_struct when 'upd' then data_struct end as after_columns,
        {{ oms_wall_clock_utc('time_text') }} as change_ts,
        {{ oms_wall_clock_utc('posttime_text') }} as posted_ts,
        case when scn rlike '^[0-9]{1,30}$' then cast(scn as decimal(30, 0)) end as scn_number,
        coalesce(startswith(row_id, concat(qualified_table, '-')), false) as rowid_names_table,
        substr(row_id, length(qualified_table) + 2) as rowid_key
    from metadata
),

image_values as (
    select
        *,
        {{ cdc_image_values('before_columns') }} as before_values,
        {{ cdc_image_values('after_columns') }} as after_values,
        {{ cdc_nested_columns('data_struct') }} as data_nested,
        {{ cdc_nested_columns('key_struct') }} as key_nested
    from images
),

checked as (
    {#- The first reason, in this order, makes the message a quarantine row. -#}
    select
        *,
        case
            {{ cdc_document_errors('code') }}
            when not {{ cdc_json_present('meta_json') }} then 'missing_field'
            when meta is null then 'wrong_shape'
            when not {{ cdc_json_present("meta['op']") }} then 'missing_field'
            when row_op is null then 'unknown_op'
            when coalesce(qualified_table, '') = '' then 'missing_field'
            when row_id is null then 'missing_field'
            when not rowid_names_table then 'wrong_shape'
            when not {{ cdc_json_present('data_json') }} then 'missing_field'
            when data_struct is null then 'wrong_shape'
            when op_code = 'upd' and not {{ cdc_json_present('key_json') }} then 'missing_field'
            when op_code = 'upd' and key_struct is null then 'wrong_shape'
            when time_text is not null and change_ts is null then 'invalid_timestamp'
            when posttime_text is not null and posted_ts is null then 'invalid_timestamp'
            when scn is not null and scn_number is null then 'wrong_shape'
            when data_nested != '' then 'invalid_value'
            when op_code = 'upd' and key_nested != '' then 'invalid_value'
        end as pre_error_code,
        case
            {{ cdc_document_errors('detail') }}
            when not {{ cdc_json_present('meta_json') }} then 'meta is missing'
            when meta is null then 'meta is not an object'
            when not {{ cdc_json_present("meta['op']") }} then 'meta.op is missing'
            when row_op is null then concat('meta.op ', op_code, ' is not ins, upd or del')
            when coalesce(qualified_table, '') = '' then 'meta.table is missing'
            when row_id is null then 'meta.rowid is missing'
            when not rowid_names_table
                then concat('meta.rowid ', row_id, ' does not start with meta.table ', qualified_table, '-')
            when not {{ cdc_json_present('data_json') }} then 'data is missing'
            when data_struct is null then 'data is not an object'
            when op_code = 'upd' and not {{ cdc_json_present('key_json') }}
                then 'key (the before image) is missing for upd'
            when op_code = 'upd' and key_struct is null then 'key is not an object'
            when time_text is not null and change_ts is null
                then concat('meta.time ', time_text, ' is not YYYY-MM-DDTHH:mm:ss')
            when posttime_text is not null and posted_ts is null
                then concat('meta.posttime ', posttime_text, ' is not YYYY-MM-DDTHH:mm:ss')
            when scn is not null and scn_number is null then concat('meta.scn ', scn, ' is not a non-negative integer')
            when data_nested != '' then concat('data values are JSON objects/arrays, not column values: ', data_nested)
            when op_code = 'upd' and key_nested != ''
                then concat('key values are JSON objects/arrays, not column values: ', key_nested)
        end as pre_error_detail
    from image_values
),

canonical as (
    select
        *,
        {{ cdc_checked_image('oms_shareplex_json', 'before_values') }} as before_image,
        {{ cdc_checked_image('oms_shareplex_json', 'after_values') }} as after_image
    from checked
),

decoded as (
    select
        *,
        {{ cdc_message_error('code') }} as error_code,
        {{ cdc_message_error('detail') }} as error_detail,
        'ROW' as event_kind,
        row_op as op,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        case when qualified_table like '%.%' then substring_index(qualified_table, '.', 1) end as database_name,
        cast(null as string) as schema_name,  -- noqa: RF04
        case
            when qualified_table like '%.%' then substr(qualified_table, instr(qualified_table, '.') + 1)
            else qualified_table
        end as table_name,  -- noqa: RF04
        {# SharePlex names no key columns: the key is the rowid's value part, split on \u0001, in the
            JSON-array form of cdc_primary_key, so it compares with the same row's other events #}
        cast(array() as array<string>) as primary_key_columns,
        'none' as primary_key_source,
        case when rowid_key != '' then to_json(split(rowid_key, '\u0001')) end as primary_key,
        before_image['values'] as before,  -- noqa: RF04
        after_image['values'] as after,  -- noqa: RF04
        false as before_is_partial,
        op_code = 'upd' as after_is_partial,
        cast(null as map<string, string>) as column_source_types,  -- noqa: LT01
        {{ cdc_map_union("before_image['types']", "after_image['types']") }} as column_types,
        change_ts as event_ts,
        case when change_ts is not null then 's' end as event_ts_precision,
        posted_ts as emitted_ts,
        scn as source_position,
        trans as transaction_id,
        scn_number as position_number,
        cast(null as string) as ddl_statement,
        0 as row_index,
        sha2(
            concat_ws(
                '\u0001',
                coalesce(cast(data_json as string), ''),
                coalesce(cast(key_json as string), ''),
                {#- posttime is when OMS wrote the message, not part of the change -#}
                coalesce(
                    to_json(transform_values(map_filter(meta, (k, v) -> k != 'posttime'), (k, v) -> cast(v as string))),
                    ''
                )
            ),
            256
        ) as natural_id
    from canonical
),

{{ cdc_staged_select('oms_shareplex_json', 'decoded') }}
