{#- The canonical change events of every feed (grain: one distinct row change or non-row event). -#}
with change_events as (
    select * from {{ ref('int_change_events') }}
)

select
    {%- for column in cdc_change_event_column_names() %}
    {{ column }}{{ ',' if not loop.last }}
    {%- endfor %}
from change_events
