{#- OceanBase OMS DefaultExtendColumnType JSON (spec 003) -> the staged contract
    (docs/dialects/oms_default_ext_json.md): Default JSON whose `__light_type` (never a column)
    declares each image's column types, which the staged rows carry as column_source_types. Reads
    the new landing rows (cdc_landing_import) and nothing else: each value is read, checked and
    decoded once, on its own, in the JVM (oms_default_staged_rows, macros/oms.sql), shared with
    stg_oms_default_json__changes. -#}
with
{{ cdc_landing_import(source('landing', 'oms_default_ext_json')) }},

-- records, staged_rows, decoded: each value's staged row from cdc_oms_default_rows, with its op, key and times
{{ oms_default_staged_rows('oms_default_ext_json') }},

{{ cdc_staged_select('oms_default_ext_json', 'decoded') }}
