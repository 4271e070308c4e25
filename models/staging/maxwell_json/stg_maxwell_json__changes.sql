{#- Maxwell's daemon JSON (MySQL binlog -> Kafka) -> the staged contract (docs/dialects/maxwell_json.md).
    One change per message. Rows: insert / update / delete / bootstrap-insert with `data` (the whole row;
    for delete the deleted row) and, on update, `old` (the changed columns' previous values). DDL
    (output_ddl): table-* / database-* with `sql` and `def`. Reads the new landing rows
    (cdc_landing_import) and nothing else: each value and its Kafka key are read, checked and decoded
    once, on their own, in the JVM (cdc_maxwell_rows, src/cdc_unify/java/cdcunify/MaxwellRows.java).
    Maxwell sends no column types: values are kept as sent, JSON columns and SETs (embedded JSON) as
    JSON text. -#}
with
{{ cdc_landing_import(source('landing', 'maxwell_json')) }},

changes as (
    select
        *,
        cdc_maxwell_rows(value, key) as maxwell_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('changes', 'maxwell_rows') }}
),

decoded as (
    {#- The staged columns Maxwell does not send or the JVM function leaves to SQL. -#}
    select
        *,
        -- a DDL's statement names its op (the shared classification)
        case when event_kind = 'DDL' then {{ cdc_ddl_op('ddl_statement') }} else message_op end as op,
        case
            when event_kind = 'ROW' then {{ cdc_primary_key('primary_key_columns', 'before', 'after') }}
        end as primary_key,
        'mysql' as source_db_type,
        cast(null as string) as tenant_name,
        cast(null as string) as schema_name,
        cast(null as map<string, string>) as column_source_types,
        timestamp_micros(event_ts_micros) as event_ts,
        cast(null as timestamp) as emitted_ts,
        cast(position_digits as decimal(38, 0)) as position_number,
        sha2(value, 256) as natural_id
    from staged_rows
),

{{ cdc_staged_select('maxwell_json', 'decoded') }}
