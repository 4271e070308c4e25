{#-
    Every staged row of every dialect (message_status decoded, quarantined or tombstone), one
    contract. Columns are selected by name in contract order, so `union all` (positional) lines
    up even if a staging model orders its columns differently. built_at passes through: the run
    that staged the row.
-#}
{{ config(materialized='view') }}

{% set dialects = cdc_dialects() %}
{% set contract_columns = [] %}
{% set empty_columns = [] %}
{% for name, type in cdc_staged_columns() %}
    {% do contract_columns.append('cast(' ~ name ~ ' as ' ~ type ~ ') as ' ~ name) %}
    {% do empty_columns.append('cast(null as ' ~ type ~ ') as ' ~ name) %}
{% endfor %}
{% do contract_columns.append('built_at') %}
{% do empty_columns.append('cast(null as timestamp) as built_at') %}

{% for dialect in dialects %}
    {% if not loop.first %}
        union all
    {% endif %}
    select {{ contract_columns | join(', ') }}
    from {{ ref('stg_' ~ dialect ~ '__changes') }}
{% endfor %}

{% if dialects | length == 0 %}
    {#- No dialect configured: an empty relation of the contract's shape keeps every downstream model valid. #}
    select {{ empty_columns | join(', ') }}
    where false
{% endif %}
