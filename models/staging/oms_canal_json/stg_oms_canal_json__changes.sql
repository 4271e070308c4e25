{#- OceanBase OMS Canal JSON (spec 003) -> the staged contract (docs/dialects/oms_canal_json.md).
    Canal's FlatMessage shape (canal_staged_rows of macros/canal.sql, shared with
    stg_canal_json__changes), OMS's value conventions (JSON numbers, base64 bytes, epoch-second
    timestamps): its value decoder is cdc_unify.canonicalizers.oms_canal_json. Reads the new landing
    rows (cdc_landing_import) and nothing else. -#}
with
{{ cdc_landing_import(source('landing', 'oms_canal_json')) }},

-- flat_messages, staged_rows, keyed: each value's staged rows from cdc_canal_rows, one row each,
-- with their times and key
{{ canal_staged_rows('oms_canal_json') }},

{{ cdc_staged_select('oms_canal_json', 'keyed') }}
