{% macro dataworks_staged_rows(dialect) -%}
    {#- The steps of the DataWorks family's models (stg_dataworks_json__changes: spec 001's DataWorks
        JSON; stg_oms_dataworks_json__changes: spec 003's OMS Dataworks 2.0) after `landing`
        (cdc_landing_import): `messages` (each value read, checked and decoded once in the JVM by
        cdc_dataworks_rows, src/cdc_unify/java/cdcunify/DataWorksRows.java, which holds what each
        dialect names and does its own way: field names, op names, split or whole updates, position),
        `staged_rows` (its one row) and `decoded` (its times, key and natural id). Every value is
        decided on its own: no window, no shuffle. -#}
messages as (
    select
        *,
        cdc_dataworks_rows('{{ dialect }}', value, {{ cdc_string_literal(var('source_time_zone')) }}) as dataworks_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('messages', 'dataworks_rows') }}
),

decoded as (
    select
        *,
        -- a message without a position (a heartbeat) is named by its content without the emission time
        coalesce(
            position_id,
            sha2(regexp_replace(cast(value as string), '"systemTime"\\s*:\\s*-?[0-9]+', ''), 256)
        ) as natural_id,
        cast(position_digits as decimal(38, 0)) as position_number,
        case
            when event_kind = 'ROW' then {{ cdc_primary_key('primary_key_columns', 'before', 'after') }}
        end as primary_key,
        timestamp_micros(event_ts_micros) as event_ts,
        'ms' as event_ts_precision,
        timestamp_micros(emitted_ts_micros) as emitted_ts,
        cast(null as string) as tenant_name,
        cast(null as string) as transaction_id
    from staged_rows
)
{%- endmacro %}
