{#-
    How far each feed is behind (grain: one feed of one dialect), from cdc_feed_health.
    source_seen_up_to: the latest source time the feed has delivered, a change's commit time or a
    heartbeat (a heartbeat says the source was alive and had nothing more to send).
    staleness_seconds: analysis_now minus source_seen_up_to, how old the freshest news is;
    seconds_since_last_landing: analysis_now minus the last landing of any message.
    landing_lag_*: landed_at - event_ts of the feed's events (how long an event took to land).
    vars:
        analysis_now: the instant to measure staleness at, e.g. '2024-06-01 12:00:00' (UTC);
            default: the current time.
-#}
{% set now = var('analysis_now', none) %}
{% set now_instant = 'current_timestamp()' if now is none
    else 'cast(' ~ dbt.string_literal(dbt.escape_single_quotes(now)) ~ ' as timestamp)' %}

with feed_health as (
    select * from {{ ref('cdc_feed_health') }}
),

instant as (
    select {{ now_instant }} as measured_at
),

freshness as (
    select
        instant.measured_at,
        feed_health.*,
        greatest(feed_health.last_event_ts, feed_health.last_heartbeat_ts) as source_seen_up_to
    from feed_health
    cross join instant
)

select
    measured_at,
    feed,
    dialect,
    last_event_ts,
    last_heartbeat_ts,
    source_seen_up_to,
    last_landed_at,
    (unix_micros(measured_at) - unix_micros(source_seen_up_to)) / 1000000.0 as staleness_seconds,
    (unix_micros(measured_at) - unix_micros(last_landed_at)) / 1000000.0 as seconds_since_last_landing,
    lag_seconds_min as landing_lag_seconds_min,
    lag_seconds_avg as landing_lag_seconds_avg,
    lag_seconds_p50 as landing_lag_seconds_p50,
    lag_seconds_p95 as landing_lag_seconds_p95,
    lag_seconds_max as landing_lag_seconds_max,
    distinct_events,
    unpaired_split_halves
from freshness
