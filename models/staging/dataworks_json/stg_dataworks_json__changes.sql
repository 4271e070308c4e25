{#- DataWorks "sync whole database to Kafka" JSON, versions 0.0.1 / 1.0.0 (spec 001) -> the staged
    contract (docs/dialects/dataworks_json.md). One message = one event. Reads the new landing rows
    (cdc_landing_import) and nothing else: each value is read, checked and decoded once, on its own,
    in the JVM (dataworks_staged_rows, macros/dataworks.sql), shared with
    stg_oms_dataworks_json__changes; spec 001's own field and op names, split updates and
    sequenceId / scn position are DataWorksRows' `dataworks_json`. -#}
with
{{ cdc_landing_import(source('landing', 'dataworks_json')) }},

-- messages, staged_rows, decoded: each value's staged row from cdc_dataworks_rows, with its times and key
{{ dataworks_staged_rows('dataworks_json') }},

{{ cdc_staged_select('dataworks_json', 'decoded') }}
