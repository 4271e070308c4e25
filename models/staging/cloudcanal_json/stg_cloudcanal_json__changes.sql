{#- CloudCanal JSON (spec 000) -> the staged contract (docs/dialects/cloudcanal_json.md).
    One message holds one action on one table: `data` rows (DELETE: the deleted rows, or `before`
    when `data` is empty) with the UPDATE's previous images in the parallel `before` list; DDL
    (`isDdl`) and TRANSACTIONEND entries are single non-row events. Reads the new landing rows
    (cdc_landing_import) and nothing else: each value is read, checked and decoded once, on its own,
    in the JVM (cdc_cloudcanal_rows, src/cdc_unify/java/cdcunify/CloudCanalRows.java), numbers with
    their exact digits. -#}
{%- set dialect = 'cloudcanal_json' -%}

with

{{ cdc_landing_import(source('landing', 'cloudcanal_json')) }},

messages as (
    select
        *,
        {#- A re-send by CloudCanal keeps its id: the message text without sendTs. -#}
        sha2(regexp_replace(cast(value as string), '"sendTs"\\s*:\\s*-?[0-9]+', ''), 256) as natural_id,
        {#- One row per row of `data` (or of `before`), one per DDL or TRANSACTIONEND; ONE quarantine
            row (row_index 0) for a message with any unreadable part. -#}
        cdc_cloudcanal_rows(value, {{ cdc_string_literal(var('source_time_zone')) }}) as cloudcanal_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('messages', 'cloudcanal_rows', ['natural_id']) }}
),

decoded as (
    {#- The staged columns CloudCanal does not send or the JVM function leaves to SQL. -#}
    select
        *,
        {#- A DDL's statement names its op (the shared classification); without one, the action does. -#}
        case
            when event_kind = 'DDL' and message_op is null then {{ cdc_ddl_op('ddl_statement') }}
            else message_op
        end as op,
        case
            when event_kind = 'ROW' then {{ cdc_primary_key('primary_key_columns', 'before', 'after') }}
        end as primary_key,
        timestamp_micros(event_ts_micros) as event_ts,
        'ms' as event_ts_precision,
        timestamp_micros(emitted_ts_micros) as emitted_ts,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        cast(null as string) as source_position,
        cast(null as string) as transaction_id,
        cast(null as decimal(30, 0)) as position_number
    from staged_rows
),

{{ cdc_staged_select(dialect, 'decoded') }}
