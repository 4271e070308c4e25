{#- OceanBase OMS "Dataworks" JSON, version 2.0 (spec 003) -> the staged contract
    (docs/dialects/oms_dataworks_json.md). One message = one event. Reads the new landing rows
    (cdc_landing_import) and nothing else: each value is read, checked and decoded once, on its own,
    in the JVM (dataworks_staged_rows, macros/dataworks.sql), shared with
    stg_dataworks_json__changes; Dataworks 2.0's own field and op names, whole updates and
    event time + scn position are DataWorksRows' `oms_dataworks_json`. -#}
with
{{ cdc_landing_import(source('landing', 'oms_dataworks_json')) }},

-- messages, staged_rows, decoded: each value's staged row from cdc_dataworks_rows, with its times and key
{{ dataworks_staged_rows('oms_dataworks_json') }},

{{ cdc_staged_select('oms_dataworks_json', 'decoded') }}
