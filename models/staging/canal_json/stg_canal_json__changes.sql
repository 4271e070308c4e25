{#- Alibaba Canal FlatMessage JSON, incl. CloudCanal's flavour (specs 004, 000) -> the staged contract
    (docs/dialects/canal_json.md).  The SQL is shared with stg_oms_canal_json__changes:
    macros/canal.sql, canal_flat_message_changes. -#}
{{ canal_flat_message_changes(source('landing', 'canal_json'), 'canal_json') }}
