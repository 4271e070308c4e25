{#- OceanBase OMS DefaultExtendColumnType JSON (spec 003) -> the staged contract
    (docs/dialects/oms_default_ext_json.md): Default JSON whose `__light_type` types the values.
    The steps it shares with stg_oms_default_json__changes are macros (macros/oms.sql); its own step
    is `light_types`: reading `__light_type` (never a column) and the declared types it gives, which
    the staged rows carry as column_source_types. -#}
with
{{ cdc_json_documents(source('landing', 'oms_default_ext_json')) }},

-- records, metadata: the recordType and allMetaData fields, the images
{{ oms_default_records() }},

light_types as (
    {#- `__light_type` per image, {column: {"schemaType": T}} -> column -> T (T null: not that shape). -#}
    select
        *,
        prev_struct['__light_type'] as prev_light_json,
        post_struct['__light_type'] as post_light_json,
        transform_values(
            {{ cdc_json_object("prev_struct['__light_type']") }},
            (col, declared) -> try_variant_get(declared, '$.schemaType', 'string')
        ) as prev_source_types,
        transform_values(
            {{ cdc_json_object("post_struct['__light_type']") }},
            (col, declared) -> try_variant_get(declared, '$.schemaType', 'string')
        ) as post_source_types,
        map_filter(prev_struct, (col, val) -> col != '__light_type') as prev_columns,
        map_filter(post_struct, (col, val) -> col != '__light_type') as post_columns
    from metadata
),

-- images, checked, canonical, decoded, key_images, keyed: the message's first error, the images
-- through the value decoder, the staged columns
{%- set declared_types = cdc_map_union('prev_source_types', 'post_source_types') %}
{{ oms_default_staged_rows(
    'oms_default_ext_json', column_source_types='case when row_op is not null then ' ~ declared_types ~ ' end'
) }},

{{ cdc_staged_select('oms_default_ext_json', 'keyed') }}
