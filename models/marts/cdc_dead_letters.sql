{#- Every landed message a staging model could not decode (grain: one quarantined landing). -#}
{%- set error_codes = cdc_error_codes() %}

with quarantine as (
    select * from {{ ref('int_quarantine') }}
)

select
    event_id,
    source_name,
    dialect,
    landing_topic,
    landing_partition,
    landing_offset,
    landing_timestamp,
    landed_at,
    row_index,
    error_code,
    case error_code
        {%- for code, meaning in error_codes.items() %}
        when '{{ code }}' then {{ dbt.string_literal(dbt.escape_single_quotes(meaning)) }}
        {%- endfor %}
    end as error_meaning,
    error_detail,
    raw_value,
    raw_value_text,
    raw_value_base64,
    delivery_number,
    delivery_number > 1 as is_redelivery
from quarantine
