{#- OceanBase OMS Default JSON (spec 003) -> the staged contract (docs/dialects/oms_default_json.md).
    One record per message. The steps it shares with stg_oms_default_ext_json__changes are macros
    (macros/oms.sql); its own step is `light_types`: Default JSON declares no column types, so the
    images are the structs as sent and every value is kept as sent. -#}
with
{{ cdc_json_documents(source('landing', 'oms_default_json')) }},

-- records, metadata: the recordType and allMetaData fields, the images
{{ oms_default_records() }},

light_types as (
    select
        *,
        cast(null as variant) as prev_light_json,
        cast(null as variant) as post_light_json,
        cast(null as map<string, string>) as prev_source_types,
        cast(null as map<string, string>) as post_source_types,
        prev_struct as prev_columns,
        post_struct as post_columns
    from metadata
),

-- images, checked, canonical, decoded, key_images, keyed: the message's first error, the images
-- through the value decoder, the staged columns
{{ oms_default_staged_rows('oms_default_json', column_source_types='cast(null as map<string, string>)') }},

{{ cdc_staged_select('oms_default_json', 'keyed') }}
