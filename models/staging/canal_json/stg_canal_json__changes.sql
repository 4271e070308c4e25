{#- Alibaba Canal FlatMessage JSON, incl. CloudCanal's flavour (specs 004, 000) -> the staged contract
    (docs/dialects/canal_json.md). A value is one FlatMessage or a JSON array of them; every data[i]
    is one staged row, row_index counting rows across the whole value; a value with any unreadable
    part is ONE quarantine row (row_index 0). Its steps (macros/canal.sql) are shared with
    stg_oms_canal_json__changes, which differs only in its value decoder
    (cdc_unify.canonicalizers.canal_json here). -#}
with
{{ cdc_landing_import(source('landing', 'canal_json')) }},

-- canal_values, value_checked, messages, message_fields, classified, timed, message_checked:
-- one row per FlatMessage of a value, with its fields and the first error of the message or value
{{ canal_checked_messages() }},

-- row_images, exploded_rows, numbered, images, row_values, canonical, checked,
-- one_row_per_failed_value, decoded, keyed: one row per data[i], numbered across the value, its
-- images through the value decoder, and the staged columns
{{ canal_staged_rows('canal_json') }},

{{ cdc_staged_select('canal_json', 'keyed') }}
