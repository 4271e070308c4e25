{#- The canonical change events of every feed (grain: one distinct row change or non-row event).
    A view: the columns of int_change_events as they are (source_name named feed, as in every
    mart), so a run does not copy the largest table (an incremental int_change_events rewrites its
    partitions, a copy would rewrite all). -#}
{{ config(materialized='view') }}

{% set columns = [] %}
{% for column in cdc_change_event_column_names() %}
    {% do columns.append('source_name as feed' if column == 'source_name' else column) %}
{% endfor %}

with change_events as (
    select * from {{ ref('int_change_events') }}
)

select {{ columns | join(', ') }}, built_at
from change_events
