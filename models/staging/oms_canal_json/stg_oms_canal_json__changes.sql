{#- OceanBase OMS Canal JSON (spec 003) -> the staged contract (docs/dialects/oms_canal_json.md).
    Canal's FlatMessage shape (the steps of macros/canal.sql, shared with stg_canal_json__changes),
    OMS's value conventions (JSON numbers, base64 bytes, epoch-second timestamps): its value decoder
    is cdc_unify.canonicalizers.oms_canal_json. -#}
with
{{ cdc_landing_import(source('landing', 'oms_canal_json')) }},

-- canal_values, value_checked, messages, message_fields, classified, timed, message_checked:
-- one row per FlatMessage of a value, with its fields and the first error of the message or value
{{ canal_checked_messages() }},

-- row_images, exploded_rows, numbered, images, row_values, canonical, checked,
-- one_row_per_failed_value, decoded, keyed: one row per data[i], numbered across the value, its
-- images through the value decoder, and the staged columns
{{ canal_staged_rows('oms_canal_json') }},

{{ cdc_staged_select('oms_canal_json', 'keyed') }}
