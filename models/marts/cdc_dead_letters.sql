{#- Every landed message a staging model could not decode (grain: one quarantined landing). -#}
{% set meaning_cases = [] %}
{% for code, meaning in cdc_error_codes().items() %}
    {% do meaning_cases.append(
        "when '" ~ code ~ "' then " ~ dbt.string_literal(dbt.escape_single_quotes(meaning))
    ) %}
{% endfor %}

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
    case error_code {{ meaning_cases | join(' ') }} end as error_meaning,
    error_detail,
    raw_value,
    raw_value_text,
    raw_value_base64,
    delivery_number,
    delivery_number > 1 as is_redelivery
from quarantine
