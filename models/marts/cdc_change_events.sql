{#- The canonical change events of every feed (grain: one distinct row change or non-row event). -#}
with change_events as (
    select * from {{ ref('int_change_events') }}
)

select {{ cdc_change_event_column_names() | join(', ') }}
from change_events
