{#- Oracle GoldenGate for Big Data, JSON formatter, operation modeled -> the staged contract
    (docs/dialects/ogg_json.md). One operation per message: `table`, `op_type`, `op_ts`, `current_ts`,
    `pos`, optional `primary_keys` / `tokens`, and `before` / `after` images. Reads the new landing
    rows (cdc_landing_import) and nothing else: each value is read, checked and decoded once, on
    its own, in the JVM (cdc_ogg_rows, src/cdc_unify/java/cdcunify/OggRows.java); GoldenGate sends
    no column types, so every value is kept as sent. -#}
with
{{ cdc_landing_import(source('landing', 'ogg_json')) }},

operations as (
    select
        *,
        cdc_ogg_rows(value, {{ cdc_string_literal(var('source_time_zone')) }}) as ogg_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('operations', 'ogg_rows') }}
),

decoded as (
    {#- The staged columns GoldenGate does not send or the JVM function leaves to SQL. -#}
    select
        *,
        case
            when op != 'TRUNCATE' then {{ cdc_primary_key('primary_key_columns', 'before', 'after') }}
        end as primary_key,
        timestamp_micros(event_ts_micros) as event_ts,
        timestamp_micros(emitted_ts_micros) as emitted_ts,
        cast(position_digits as decimal(30, 0)) as position_number,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        cast(null as map<string, string>) as column_source_types,
        cast(null as string) as transaction_id,
        cast(null as string) as ddl_statement
    from staged_rows
),

{{ cdc_staged_select('ogg_json', 'decoded') }}
