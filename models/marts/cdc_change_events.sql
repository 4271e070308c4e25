{#- The canonical change events of every feed (grain: one distinct row change or non-row event).
    A view: the columns of int_change_events as they are (source_name named feed, as in every
    mart), so a run does not copy the largest table. delivery_count is counted here, when the view
    is read, from int_redeliveries (one row per later delivery of a decoded event: few rows, so a
    read of delivery_count does not scan every staged row): stored with the event, every
    redelivery would rewrite an event an earlier run appended (docs/semantics.md).
    What it reads: a run reads no row (a view, kept while its parents only gain rows); a query reads
    the int_change_events columns it names and, when it names delivery_count, the event ids of
    int_redeliveries. -#}
{{ config(materialized='view') }}

{% set columns = [] %}
{% for column in cdc_change_event_column_names() %}
    {% if column == 'source_name' %}
        {% do columns.append('change_events.source_name as feed') %}
    {% elif column == 'delivery_count' %}
        {% do columns.append('1 + coalesce(redeliveries.redeliveries, 0) as delivery_count') %}
    {% else %}
        {% do columns.append('change_events.' ~ column) %}
    {% endif %}
{% endfor %}

with change_events as (
    select * from {{ ref('int_change_events') }}
),

later_deliveries as (
    select * from {{ ref('int_redeliveries') }}
),

redeliveries as (
    select
        event_id,
        count(*) as redeliveries
    from later_deliveries
    group by event_id
)

select
    {{ columns | join(',\n    ') }},
    change_events.built_at
from change_events
left join redeliveries on change_events.event_id = redeliveries.event_id
