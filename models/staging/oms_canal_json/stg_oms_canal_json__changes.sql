{#- OceanBase OMS Canal JSON (spec 003) -> the staged contract (docs/dialects/oms_canal_json.md).
    Canal's FlatMessage shape, OMS's value conventions (JSON numbers, base64 bytes, epoch-second
    timestamps: cdc_unify.decoders.oms_canal_json).  SQL: macros/canal.sql, canal_flat_message_changes. -#}
{{ canal_flat_message_changes(source('landing', 'oms_canal_json'), 'oms_canal_json') }}
