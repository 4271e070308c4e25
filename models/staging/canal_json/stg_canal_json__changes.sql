{#- Alibaba Canal FlatMessage JSON (spec 004) -> the staged contract (docs/dialects/canal_json.md).
    A value is one FlatMessage or a JSON array of them; every data[i] is one staged row, row_index
    counting rows across the whole value; a value with any unreadable part is ONE quarantine row
    (row_index 0). Reads the new landing rows (cdc_landing_import) and nothing else: each value is
    read, checked and decoded once, on its own, in the JVM (canal_staged_rows, macros/canal.sql),
    shared with stg_oms_canal_json__changes, which differs only in its value decoder
    (cdc_unify.canonicalizers.canal_json here). -#}
with
{{ cdc_landing_import(source('landing', 'canal_json')) }},

-- flat_messages, staged_rows, keyed: each value's staged rows from cdc_canal_rows, one row each,
-- with their times and key
{{ canal_staged_rows('canal_json') }},

{{ cdc_staged_select('canal_json', 'keyed') }}
