{#- Oracle GoldenGate for Big Data, JSON formatter, operation modeled -> the staged contract
    (docs/dialects/ogg_json.md). One operation per message: `table`, `op_type`, `op_ts`, `current_ts`,
    `pos`, optional `primary_keys` / `tokens`, and `before` / `after` images. -#}
with
{{ cdc_json_documents(source('landing', 'ogg_json')) }},

records as (
    select
        *,
        message['before'] as before_json,
        {{ cdc_json_object("message['before']") }} as before_struct,
        message['after'] as after_json,
        {{ cdc_json_object("message['after']") }} as after_struct,
        message['primary_keys'] as primary_keys_json,
        try_variant_get(message['primary_keys'], '$', 'array<string>') as primary_keys
    from json_documents
),

metadata as (
    select
        *,
        {{ cdc_json_text("message['op_type']") }} as op_code,
        {{ cdc_json_text("message['table']") }} as qualified_table,
        {{ cdc_json_text("message['op_ts']") }} as op_ts_text,
        {{ cdc_json_text("message['current_ts']") }} as current_ts_text,
        {{ cdc_json_text("message['pos']") }} as pos,
        {{ cdc_json_nested_name([
            ('op_type', "message['op_type']"),
            ('table', "message['table']"),
            ('op_ts', "message['op_ts']"),
            ('current_ts', "message['current_ts']"),
            ('pos', "message['pos']"),
        ]) }} as nested_name,
        {{ ogg_missing_flags('before_struct') }} as before_missing,
        {{ ogg_missing_flags('after_struct') }} as after_missing
    from records
),

operations as (
    {#- op_type: the formatter's default one-letter keys, or the full names a configuration may set. -#}
    select
        *,
        case op_code
            when 'I' then 'INSERT' when 'INSERT' then 'INSERT'
            when 'U' then 'UPDATE' when 'UPDATE' then 'UPDATE'
            when 'D' then 'DELETE' when 'DELETE' then 'DELETE'
            when 'T' then 'TRUNCATE' when 'TRUNCATE' then 'TRUNCATE'
        end as row_op,
        split(qualified_table, '[.]') as name_parts,
        {{ ogg_image_columns('before_struct', 'before_missing') }} as before_columns,
        {{ ogg_image_columns('after_struct', 'after_missing') }} as after_columns,
        {{ ogg_wall_clock_utc('op_ts_text') }} as change_ts,
        {{ ogg_wall_clock_utc('current_ts_text') }} as formatted_ts,
        case when pos rlike '^[0-9]{1,30}$' then cast(pos as decimal(30, 0)) end as pos_number
    from metadata
),

images as (
    {#- Insert: after only; delete: before only; truncate: neither; update: both, `before` absent when
        the source logs no before images. -#}
    select
        *,
        case when row_op in ('UPDATE', 'DELETE') then before_columns end as before_image_columns,
        case when row_op in ('INSERT', 'UPDATE') then after_columns end as after_image_columns
    from operations
),

image_values as (
    select
        *,
        {{ cdc_image_values('before_image_columns') }} as before_values,
        {{ cdc_image_values('after_image_columns') }} as after_values,
        {{ cdc_nested_columns('before_image_columns') }} as before_nested,
        {{ cdc_nested_columns('after_image_columns') }} as after_nested
    from images
),

checked as (
    {#- The first reason, in this order, makes the message a quarantine row. -#}
    select
        *,
        case
            {{ cdc_document_errors('code') }}
            when nested_name is not null then 'wrong_shape'
            when not {{ cdc_json_present("message['op_type']") }} then 'missing_field'
            when row_op is null then 'unknown_op'
            when coalesce(qualified_table, '') = '' then 'missing_field'
            when size(name_parts) > 3 or array_contains(name_parts, '') then 'wrong_shape'
            when row_op in ('INSERT', 'UPDATE') and not {{ cdc_json_present('after_json') }} then 'missing_field'
            when row_op in ('INSERT', 'UPDATE') and after_struct is null then 'wrong_shape'
            when row_op = 'DELETE' and not {{ cdc_json_present('before_json') }} then 'missing_field'
            when row_op in ('UPDATE', 'DELETE') and {{ cdc_json_present('before_json') }} and before_struct is null
                then 'wrong_shape'
            when {{ cdc_json_present('primary_keys_json') }} and primary_keys is null then 'wrong_shape'
            when op_ts_text is not null and change_ts is null then 'invalid_timestamp'
            when current_ts_text is not null and formatted_ts is null then 'invalid_timestamp'
            when pos is not null and pos_number is null then 'wrong_shape'
            when before_nested != '' or after_nested != '' then 'invalid_value'
        end as pre_error_code,
        case
            {{ cdc_document_errors('detail') }}
            when nested_name is not null then concat(nested_name, ' is a JSON object or array, not a scalar')
            when not {{ cdc_json_present("message['op_type']") }} then 'op_type is missing'
            when row_op is null then concat('op_type ', op_code, ' is not I, U, D, T or their full names')
            when coalesce(qualified_table, '') = '' then 'table is missing'
            when size(name_parts) > 3 or array_contains(name_parts, '')
                then concat('table ', qualified_table, ' is not [CATALOG.][SCHEMA.]TABLE')
            when row_op in ('INSERT', 'UPDATE') and not {{ cdc_json_present('after_json') }}
                then concat('after is missing for op_type ', op_code)
            when row_op in ('INSERT', 'UPDATE') and after_struct is null then 'after is not an object'
            when row_op = 'DELETE' and not {{ cdc_json_present('before_json') }}
                then concat('before is missing for op_type ', op_code)
            when row_op in ('UPDATE', 'DELETE') and {{ cdc_json_present('before_json') }} and before_struct is null
                then 'before is not an object'
            when {{ cdc_json_present('primary_keys_json') }} and primary_keys is null
                then 'primary_keys is not an array of column names'
            when op_ts_text is not null and change_ts is null
                then concat('op_ts ', op_ts_text, ' is not YYYY-MM-DD HH:MM:SS[.ffffff]')
            when current_ts_text is not null and formatted_ts is null
                then concat('current_ts ', current_ts_text, ' is not YYYY-MM-DD[T]HH:MM:SS[.ffffff]')
            when pos is not null and pos_number is null then concat('pos ', pos, ' is not a trail position (digits)')
            when before_nested != ''
                then concat('before values are JSON objects/arrays, not column values: ', before_nested)
            when after_nested != ''
                then concat('after values are JSON objects/arrays, not column values: ', after_nested)
        end as pre_error_detail
    from image_values
),

canonical as (
    select
        *,
        {{ cdc_checked_image('ogg_json', 'before_values') }} as before_image,
        {{ cdc_checked_image('ogg_json', 'after_values') }} as after_image
    from checked
),

decoded as (
    select
        *,
        {{ cdc_message_error('code') }} as error_code,
        {{ cdc_message_error('detail') }} as error_detail,
        case when row_op = 'TRUNCATE' then 'DDL' else 'ROW' end as event_kind,
        row_op as op,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        {#- CATALOG.SCHEMA.TABLE, SCHEMA.TABLE (a MySQL source's schema is its database) or TABLE -#}
        case when size(name_parts) >= 2 then name_parts[0] end as database_name,
        case when size(name_parts) = 3 then name_parts[1] end as schema_name,  -- noqa: RF04
        element_at(name_parts, -1) as table_name,  -- noqa: RF04
        coalesce(primary_keys, cast(array() as array<string>)) as primary_key_columns,
        {#- `[]` (a keyless table) names no key, like an absent primary_keys -#}
        case when size(primary_keys) > 0 then 'message' else 'none' end as primary_key_source,
        case
            when row_op != 'TRUNCATE'
                then {{ cdc_primary_key('primary_keys', "before_image['values']", "after_image['values']") }}
        end as primary_key,
        before_image['values'] as before,  -- noqa: RF04
        after_image['values'] as after,  -- noqa: RF04
        {#- A column flagged _isMissing makes its image partial. Nothing else marks a compressed update:
            its after image is always taken as partial (folding a complete one onto the row changes
            nothing), its before image when it has fewer columns than the after image (keys only). #}
        case
            when before_image_columns is not null
                then
                    size(before_missing) > 0
                    or (
                        row_op = 'UPDATE' and after_image_columns is not null
                        and size(array_except(map_keys(after_image_columns), map_keys(before_image_columns))) > 0
                    )
        end as before_is_partial,
        case
            when after_image_columns is not null then size(after_missing) > 0 or row_op = 'UPDATE'
        end as after_is_partial,
        cast(null as map<string, string>) as column_source_types,  -- noqa: LT01
        {{ cdc_map_union("before_image['types']", "after_image['types']") }} as column_types,
        change_ts as event_ts,
        case when change_ts is not null then {{ ogg_precision('op_ts_text') }} end as event_ts_precision,
        formatted_ts as emitted_ts,
        pos as source_position,
        cast(null as string) as transaction_id,
        pos_number as position_number,
        cast(null as string) as ddl_statement,
        0 as row_index,
        {#- current_ts is when the formatter ran: a replay of the trail gives the same operation another one -#}
        sha2(
            to_json(transform_values(map_filter(message, (k, v) -> k != 'current_ts'), (k, v) -> cast(v as string))),
            256
        ) as natural_id
    from canonical
),

{{ cdc_staged_select('ogg_json', 'decoded') }}
