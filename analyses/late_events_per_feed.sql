{#-
    Late events per feed (grain: one feed of one dialect).
    Only events that change a table count (cdc_change_events with event_kind ROW or DDL); their
    `landed_at` is the event's first landing (a redelivery does not make an event late) and their
    `sequence` is the source order of the table's changes.
    An event E is late when another event of the same table (feed, dialect, tenant, database,
    schema, table) with a strictly greater `sequence` has a strictly earlier `landed_at`: E
    landed in a later load than a change that follows it at the source. Its lateness is E's
    landed_at minus the earliest landed_at of the events that follow it. Events of one load share
    landed_at, so the order of messages inside a load never makes an event late.
-#}
with change_events as (
    select * from {{ ref('cdc_change_events') }}
),

table_events as (
    select
        feed,
        dialect,
        named_struct(
            'tenant_name', tenant_name,
            'database_name', database_name,
            'schema_name', schema_name,
            'table_name', table_name
        ) as source_table,
        sequence,
        event_id,
        event_ts,
        landed_at
    from change_events
    where event_kind in ('ROW', 'DDL')
),

landings_per_sequence as (
    select
        feed,
        dialect,
        source_table,
        sequence,
        min(landed_at) as first_landed_at
    from table_events
    group by all
),

first_landing_after as (
    select
        *,
        min(first_landed_at) over (
            partition by feed, dialect, source_table
            order by sequence
            rows between 1 following and unbounded following
        ) as followers_first_landed_at
    from landings_per_sequence
),

events_with_followers as (
    select
        table_events.*,
        first_landing_after.followers_first_landed_at
    from table_events
    inner join first_landing_after using (feed, dialect, source_table, sequence)
),

judged_events as (
    select
        *,
        coalesce(landed_at > followers_first_landed_at, false) as is_late,
        (unix_micros(landed_at) - unix_micros(followers_first_landed_at)) / 1000000.0 as lateness_seconds
    from events_with_followers
)

select
    feed,
    dialect,
    count(*) as table_events,
    count_if(is_late) as late_events,
    count_if(is_late) / count(*) as late_share,
    count(distinct case when is_late then source_table end) as tables_with_late_events,
    max(case when is_late then lateness_seconds end) as max_lateness_seconds,
    min(case when is_late then event_ts end) as first_late_event_ts,
    max(case when is_late then event_ts end) as last_late_event_ts
from judged_events
group by all
