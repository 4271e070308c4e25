{#-
    Every staged row a staging model could not decode, with everything needed to investigate it:
    landing coordinates, error code and detail, the raw value as it arrived (also as text and
    base64), and which landing of the same message it is (redeliveries of a bad message repeat).
    Incremental (append): a run reads the quarantined staged rows landed since what it has taken
    in of their feed (the later of its newest row's landing and how far it read int_staged_events,
    kept with its table: macro cdc_held_watermarks), and, to number redeliveries, how often each
    of their event ids is already held; it appends the new rows. Rows never change once written.
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
) }}

{#- The staged rows this model keeps; the newest landing of them it holds per feed (incremental
    runs); nothing new: no write. -#}
{% set kept = "message_status = 'quarantined'" %}
{% set held = cdc_held_staged_rows(kept) %}

with quarantined as (
    select *
    from {{ ref('int_staged_events') }}
    where {{ kept }} and {{ cdc_landed_after_held(held) }}
),

held_deliveries as (
    {%- if is_incremental() %}
        select
            held.event_id,
            count(*) as deliveries
        from {{ this }} as held
        left semi join quarantined on held.event_id = quarantined.event_id
        group by held.event_id
    {%- else %}
        select
            cast(null as string) as event_id,
            cast(null as bigint) as deliveries
        where false
    {%- endif %}
),

numbered as (
    select
        quarantined.*,
        coalesce(held_deliveries.deliveries, 0) + row_number() over (
            partition by quarantined.event_id
            order by
                quarantined.landed_at, quarantined.landing_timestamp, quarantined.landing_topic,
                quarantined.landing_partition, quarantined.landing_offset, quarantined.row_index
        ) as delivery_number
    from quarantined
    left join held_deliveries on quarantined.event_id = held_deliveries.event_id
)

select
    {% for name, type in cdc_staged_columns() %}
        {{ name }},
    {% endfor %}
    make_valid_utf8(cast(raw_value as string)) as raw_value_text,
    base64(raw_value) as raw_value_base64,
    delivery_number,
    {{ cdc_built_at() }} as built_at
from numbered
