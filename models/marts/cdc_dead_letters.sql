{#- Every landed message a staging model could not decode (grain: one quarantined landing).
    Incremental (append): a run reads the int_quarantine rows built since its last run and appends
    them; rows never change once written. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
) }}

{%- set new_rows = cdc_built_since(ref('int_quarantine')) %}
{%- do cdc_skip_write_when_nothing_new(new_rows.rows) %}

{% set meaning_cases = [] %}
{% for code, meaning in cdc_error_codes().items() %}
    {% do meaning_cases.append(
        "when '" ~ code ~ "' then " ~ dbt.string_literal(dbt.escape_single_quotes(meaning))
    ) %}
{% endfor %}

with quarantine as (
    select * from {{ ref('int_quarantine') }}
    where {{ new_rows.predicate }}
)

select
    event_id,
    source_name as feed,
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
    delivery_number > 1 as is_redelivery,
    {{ cdc_built_at() }} as built_at
from quarantine
