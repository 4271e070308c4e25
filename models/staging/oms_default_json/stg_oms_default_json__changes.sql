{#- OceanBase OMS Default JSON (spec 003) -> the staged contract (docs/dialects/oms_default_json.md).
    The SQL is shared with stg_oms_default_ext_json__changes: macros/oms.sql, oms_default_changes. -#}
{{ oms_default_changes(source('landing', 'oms_default_json'), 'oms_default_json', extended=false) }}
