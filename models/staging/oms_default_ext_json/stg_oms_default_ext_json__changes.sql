{#- OceanBase OMS DefaultExtendColumnType JSON (spec 003) -> the staged contract
    (docs/dialects/oms_default_ext_json.md): Default JSON whose `__light_type` types the values.
    The SQL is shared with stg_oms_default_json__changes: macros/oms.sql, oms_default_changes. -#}
{{ oms_default_changes(source('landing', 'oms_default_ext_json'), 'oms_default_ext_json', extended=true) }}
