{#-
    Every staged row a staging model could not decode, with everything needed to investigate it:
    landing coordinates, error code and detail, the raw value as it arrived (also as text and
    base64), and which landing of the same message it is (redeliveries of a bad message repeat).
-#}
{{ config(materialized='view') }}

with quarantined as (
    select *
    from {{ ref('int_staged_events') }}
    where message_status = 'quarantined'
)

select
    {% for name, type in cdc_staged_columns() %}
        {{ name }},
    {% endfor %}
    make_valid_utf8(cast(raw_value as string)) as raw_value_text,
    base64(raw_value) as raw_value_base64,
    row_number() over (
        partition by event_id
        order by landed_at, landing_timestamp, landing_topic, landing_partition, landing_offset, row_index
    ) as delivery_number
from quarantined
