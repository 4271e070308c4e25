{#- OceanBase OMS SharePlex JSON (spec 003) -> the staged contract (docs/dialects/oms_shareplex_json.md).
    One row change per message; no key column names exist, the row identity is `meta.rowid`. Reads
    the new landing rows (cdc_landing_import) and nothing else: each value is read, checked and
    decoded once, on its own, in the JVM (cdc_shareplex_rows,
    src/cdc_unify/java/cdcunify/SharePlexRows.java); SharePlex sends no column types, so every value
    is kept as sent. -#}
with
{{ cdc_landing_import(source('landing', 'oms_shareplex_json')) }},

changes as (
    select
        *,
        cdc_shareplex_rows(value, {{ cdc_string_literal(var('source_time_zone')) }}) as shareplex_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('changes', 'shareplex_rows') }}
),

decoded as (
    {#- The staged columns SharePlex does not send or the JVM function leaves to SQL. -#}
    select
        *,
        cast(array() as array<string>) as primary_key_columns,
        'none' as primary_key_source,
        -- the key is the rowid's value part, split on \u0001, in the JSON-array form of
        -- cdc_primary_key, so it compares with the same row's other events
        case when rowid_key != '' then to_json(split(rowid_key, '\u0001')) end as primary_key,
        timestamp_micros(event_ts_micros) as event_ts,
        timestamp_micros(emitted_ts_micros) as emitted_ts,
        cast(position_digits as decimal(30, 0)) as position_number,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        cast(null as string) as schema_name,
        cast(null as map<string, string>) as column_source_types,
        cast(null as string) as ddl_statement
    from staged_rows
),

{{ cdc_staged_select('oms_shareplex_json', 'decoded') }}
