{#- OceanBase OMS dialects (spec 003): the steps stg_oms_default_json__changes and
    stg_oms_default_ext_json__changes share (oms_default_staged_rows); what every JSON dialect
    shares is in macros/staging.sql.
    docs/dialects/oms_*.md explain the choices. -#}

{% macro oms_default_staged_rows(dialect) -%}
    {#- The steps of the two OMS Default models after `landing` (cdc_landing_import): `records`
        (each value read, checked and decoded once in the JVM by cdc_oms_default_rows,
        src/cdc_unify/java/cdcunify/OmsDefaultRows.java, which reads OMS Default JSON's
        `__light_type` column types in the extended form), `staged_rows` (its one row) and
        `decoded` (a DDL's op from its statement, the key, the record time and position). Every
        value is decided on its own: no window, no shuffle. -#}
records as (
    select
        *,
        cdc_oms_default_rows('{{ dialect }}', value, {{ cdc_string_literal(var('source_time_zone')) }})
            as oms_default_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('records', 'oms_default_rows') }}
),

decoded as (
    select
        *,
        -- a DDL record's statement names its op (the shared classification)
        case when event_kind = 'DDL' then {{ cdc_ddl_op('ddl_statement') }} else message_op end as op,
        {{ cdc_primary_key('primary_key_columns', 'cast(null as map<string, string>)', 'key_image') }} as primary_key,
        cast(null as string) as schema_name,
        timestamp_micros(event_ts_micros) as event_ts,
        cast(null as timestamp) as emitted_ts,
        cast(position_digits as decimal(30, 0)) as position_number
    from staged_rows
)
{%- endmacro %}
