{#-
    Freshness and reconciliation per feed (grain: one feed of one dialect).
    Every landed message is classified once: quarantined, tombstone, row (a decoded message
    with at least one row event) or non_row (decoded, only DDL / heartbeat / transaction /
    other events); landed_messages must equal their sum (test messages_reconciled). Event
    counts are of distinct events (after de-duplication and split-update pairing, as in
    int_change_events): every decoded message event counts once however often it landed, and the
    two halves of a split update count once when paired (n-th UPDATE_BEFORE with n-th
    UPDATE_AFTER of a table and source position, so a pair key with b before and a after halves
    holds min(b, a) pairs). Lag is landed_at - event_ts of an event's first landing, over every
    event except UPDATE_BEFORE halves (a paired one is its update's time; an unpaired one has its
    count in unpaired_split_halves): exact count, sum, min and max, and the percentiles read from a
    histogram of log-spaced lag buckets, 1% wide (lag_histogram, docs/analysts.md): exact to
    within 1% of the lag, and mergeable, so an incremental run adds to it. Nothing here depends on
    the run time, so re-running on unchanged input gives the same table.
    Incremental (insert_overwrite, one partition per feed): a run reads the landing rows and the staged
    rows landed since the newest it holds for the feed (last_landed_at, staged_until), takes their
    decoded events' first deliveries (int_staged_events marks every later one is_redelivery), looks
    up the split-update halves of the pair keys new halves join, and adds what is new to the row it
    holds for each such feed: counts and sums add up, times by min/max, histograms bucket by bucket.
    What it reads: when it starts, the feed and landed_at columns of every landing and staged row,
    to count the new ones per feed (cdc_held_watermarks); then the new landing and staged rows of
    the feeds that have any (constant watermarks the Parquet scan applies), every landing table
    in one aggregate, the new staged rows in two (per landed record, with the deliveries; the new
    events); the pair-key columns of the staged split halves (int_staged_events'
    partition is_split_half=true), in one scan filtered by the new pair keys (broadcast,
    cdc_may_broadcast: nothing of the history is shuffled); the partitions it holds for the feeds
    it rewrites (a constant filter). The new events are scanned and aggregated once (event_groups):
    one chain reads every figure from that aggregate, per lag bucket and then per feed, with the
    feed's new lag histogram, which the merge adds to the held one bucket by bucket. A run with
    nothing landed or staged since counts that and runs nothing else.
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['feed'],
    on_schema_change='fail',
) }}

{#- Columns merged by addition, and those kept as the minimum / maximum of held and new values. -#}
{% set summed = [
    'landed_messages', 'staged_messages', 'row_messages', 'non_row_messages', 'quarantined_messages',
    'tombstone_messages', 'unclassified_messages', 'message_events', 'redelivered_events', 'insert_events',
    'unsplit_update_events', 'delete_events', 'snapshot_events', 'truncate_events', 'split_before_halves',
    'split_after_halves', 'paired_split_updates', 'ddl_events', 'heartbeat_events', 'transaction_events',
    'other_events', 'lag_events', 'lag_micros_sum',
] %}
{% set minimum = ['first_event_ts', 'lag_seconds_min'] %}
{% set maximum = ['last_event_ts', 'last_heartbeat_ts', 'last_landed_at', 'staged_until', 'lag_seconds_max'] %}
{#- Each feed's lag histogram merges bucket by bucket (cdc_merged_histogram). -#}
{% set merged_columns = summed + minimum + maximum + ['lag_histogram'] %}
{#- event_groups' figures as they add up per bucket and per feed: (function, column). -#}
{% set event_figures = [
    ('sum', 'message_events'), ('sum', 'insert_events'), ('sum', 'unsplit_update_events'), ('sum', 'delete_events'),
    ('sum', 'snapshot_events'), ('sum', 'truncate_events'), ('sum', 'split_before_halves'),
    ('sum', 'split_after_halves'), ('sum', 'ddl_events'), ('sum', 'heartbeat_events'), ('sum', 'transaction_events'),
    ('sum', 'other_events'), ('sum', 'lag_events'), ('sum', 'lag_micros_sum'),
    ('min', 'first_event_ts'), ('max', 'last_event_ts'), ('max', 'last_heartbeat_ts'),
] %}
{% set pair_key = cdc_pair_key_columns() %}
{#- A new event's group in event_groups: its feed, lag bucket and (split-update halves) pair key. -#}
{% set event_group = pair_key[:2] + ['held_until', 'bucket'] + pair_key[2:] + ['is_split_half'] %}
{#- A lag's bucket: 0 below a millisecond, else +-(1 + floor(log_1.01(|lag| / 1 ms))). -#}
{% set lag_bucket = "case when abs(lag_micros) < 1000 then 0 else cast(sign(lag_micros) * "
    ~ "(1 + floor(ln(abs(lag_micros) / 1000.0) / ln(1.01))) as int) end" %}

{#- The newest landing and the newest staged landing this model holds per feed (incremental runs),
    with the feeds that landed or staged rows since. -#}
{% set landings = [] %}
{% set landing_tables = [] %}
{% for dialect in cdc_dialects() %}
    {% do landing_tables.append(source('landing', dialect)) %}
    {% do landings.append("select feed, '" ~ dialect ~ "' as dialect, landed_at from " ~ landing_tables[-1]) %}
{% endfor %}
{% set every_landing = '(' ~ (landings | join(' union all ') if landings else
    'select cast(null as string) as feed, cast(null as string) as dialect, cast(null as timestamp) as landed_at '
    ~ 'where false') ~ ') as landings' %}
{% set held_landings = cdc_held_watermarks(
    'feed', 'last_landed_at', new_rows_of=every_landing, feed_column='feed', union_of=landing_tables
) %}
{% set held_stagings = cdc_held_watermarks('feed', 'staged_until', new_rows_of=ref('int_staged_events')) %}
{#- Nothing landed or staged since the last run: no query, no write. -#}
{% do cdc_skip_write_when_nothing_new([
    held_landings.new_rows if held_landings is not none else none,
    held_stagings.new_rows if held_stagings is not none else none,
]) %}
{% set broadcast = cdc_may_broadcast(held_stagings.new_rows if held_stagings is not none else none) %}
{#- The feeds with new landings or staged rows, as a constant filter (partition pruning) where the
    run knows them. -#}
{% set touched_filter = cdc_feeds_with_new_rows([held_landings, held_stagings], 'held.feed') %}


-- The new landings of every dialect's landing table, counted in one aggregate (one shuffle).
-- A landing row without a feed counts under cdc_no_feed(), where staging quarantines it.
with landed as (
    select
        {{ cdc_feed_of_landing() }} as feed,
        dialect,
        count(*) as landed_messages,
        max(landed_at) as last_landed_at
    from {{ every_landing }}
    where {{ cdc_landed_after_held(held_landings, 'feed') }}
    group by {{ cdc_feed_of_landing() }}, dialect
),

staged as (
    select * from {{ ref('int_staged_events') }}
),

decoded as (
    select * from staged
    where message_status = 'decoded'
),

new_staged as (
    select
        *,
        {{ cdc_held_until(held_stagings) }} as held_until
    from staged
    where {{ cdc_landed_after_held(held_stagings) }}
),

staged_messages as (
    {#- One row per place a message landed. Every landing record stages exactly one row with
        row_index 0, so those rows count the records; records that share coordinates and load (one
        load holding two exports of a Kafka partition) are classified together, and identical ones
        (a redelivery) are each counted. A load is read whole by one run, so a group is too. -#}
    select
        source_name,
        dialect,
        max(landed_at) as staged_until,
        count_if(row_index = 0) as records,
        count_if(row_index = 0 and message_status = 'quarantined') as quarantined_records,
        count_if(row_index = 0 and message_status = 'tombstone') as tombstone_records,
        count_if(row_index = 0 and message_status = 'decoded') as decoded_records,
        count_if(message_status = 'decoded') as decoded_rows,
        bool_or(message_status = 'decoded' and event_kind = 'ROW') as has_row_event
    from new_staged
    group by source_name, dialect, landing_topic, landing_partition, landing_offset, landed_at
),

message_counts as (
    select
        source_name as feed,
        dialect,
        max(staged_until) as staged_until,
        sum(records) as staged_messages,
        sum(case when has_row_event then decoded_records else 0 end) as row_messages,
        sum(case when has_row_event then 0 else decoded_records end) as non_row_messages,
        sum(quarantined_records) as quarantined_messages,
        sum(tombstone_records) as tombstone_messages,
        sum(records - quarantined_records - tombstone_records - decoded_records) as unclassified_messages,
        -- Every delivery of a decoded event: event_stats takes the new events off, the rest are this
        -- run's redeliveries. Counted here, so the new staged rows are not scanned once more for it.
        sum(decoded_rows) as redelivered_events
    from staged_messages
    group by source_name, dialect
),

new_deliveries as (
    select * from new_staged
    where message_status = 'decoded'
),

-- The events this model has not counted: first deliveries of event ids no earlier load delivered.
new_events as (
    select
        *,
        case when op <> 'UPDATE_BEFORE' then unix_micros(landed_at) - unix_micros(event_ts) end as lag_micros
    from new_deliveries
    where not is_redelivery
),

-- Each new event's group: its feed, lag bucket and, for a split-update half, its pair key. The
-- pair key is null for every other event, so those group by feed and bucket alone. The groups are
-- computed here, not in event_groups: a group by there would name new_events' own columns of the
-- same names and group every event by its source position.
event_keys as (
    select
        source_name,
        dialect,
        held_until,
        {{ lag_bucket }} as bucket,
        {%- for column in pair_key[2:] %}
            case when is_split_half then {{ column }} end as {{ column }},
        {%- endfor %}
        is_split_half,
        event_kind,
        op,
        event_ts,
        emitted_ts,
        lag_micros
    from new_events
),

-- The new events counted once per group: every figure below is read from this one aggregate.
event_groups as (
    select
        {{ event_group | join(', ') }},
        count(*) as message_events,
        count_if(event_kind = 'ROW' and op = 'INSERT') as insert_events,
        count_if(event_kind = 'ROW' and op = 'UPDATE') as unsplit_update_events,
        count_if(event_kind = 'ROW' and op = 'DELETE') as delete_events,
        count_if(event_kind = 'ROW' and op = 'SNAPSHOT') as snapshot_events,
        count_if(op = 'TRUNCATE') as truncate_events,
        count_if(op = 'UPDATE_BEFORE') as split_before_halves,
        count_if(op = 'UPDATE_AFTER') as split_after_halves,
        count_if(event_kind = 'DDL') as ddl_events,
        count_if(event_kind = 'HEARTBEAT') as heartbeat_events,
        count_if(event_kind = 'TRANSACTION') as transaction_events,
        count_if(event_kind = 'OTHER') as other_events,
        min(case when event_kind in ('ROW', 'DDL') and op <> 'UPDATE_BEFORE' then event_ts end) as first_event_ts,
        max(case when event_kind in ('ROW', 'DDL') and op <> 'UPDATE_BEFORE' then event_ts end) as last_event_ts,
        max(case when event_kind = 'HEARTBEAT' then coalesce(event_ts, emitted_ts) end) as last_heartbeat_ts,
        count(lag_micros) as lag_events,
        sum(cast(lag_micros as decimal(38, 0))) as lag_micros_sum,
        min(lag_micros) as lag_micros_min,
        max(lag_micros) as lag_micros_max
    from event_keys
    group by {{ event_group | join(', ') }}
),

-- The new events per feed and lag bucket: one row of event_groups' figures per bucket.
event_buckets as (
    select
        source_name,
        dialect,
        bucket,
        {%- for function, column in event_figures %}
            {{ function }}({{ column }}) as {{ column }},
        {%- endfor %}
        min(lag_micros_min) as lag_micros_min,
        max(lag_micros_max) as lag_micros_max
    from event_groups
    group by source_name, dialect, bucket
),

-- The new events per feed, their lag histogram among them: the one reader of event_groups' figures,
-- so the new events are scanned and aggregated once (two readers would each plan their own scan).
event_stats as (
    select
        source_name as feed,
        dialect,
        {%- for function, column in event_figures %}
            {{ function }}({{ column }}) as {{ column }},
        {%- endfor %}
        cast(min(lag_micros_min) / 1000000.0 as decimal(25, 6)) as lag_seconds_min,
        cast(max(lag_micros_max) / 1000000.0 as decimal(25, 6)) as lag_seconds_max,
        -- This run's redeliveries are its deliveries less its new events: message_counts adds the
        -- deliveries, the new events are taken off here.
        -sum(message_events) as redelivered_events,
        case
            when count_if(lag_events > 0) > 0
                then map_from_entries(collect_list(case when lag_events > 0 then struct(bucket, lag_events) end))
        end as lag_histogram
    from event_buckets
    group by source_name, dialect
),

-- Pair keys that new split-update halves join, with every half of them ever delivered.
new_pair_keys as (
    select distinct {{ pair_key | join(', ') }}, held_until
    from event_groups
    where is_split_half
),

pair_halves as (
    select {{ cdc_broadcast_keys(['new_pair_keys'], broadcast) }}
        {%- for column in pair_key %}
            decoded.{{ column }},
        {%- endfor %}
        new_pair_keys.held_until,
        decoded.event_id,
        decoded.op,
        min(decoded.landed_at) as first_landed_at
    from decoded
    inner join new_pair_keys
        on
    {%- for column in pair_key %}
            decoded.{{ column }} <=> new_pair_keys.{{ column }}{{ ' and' if not loop.last }}
    {%- endfor %}
    -- int_staged_events' partition of split halves: the rest of the staged rows is not read.
    where decoded.is_split_half
    group by
        {% for column in pair_key %}decoded.{{ column }},
        {% endfor %}new_pair_keys.held_until,
        decoded.event_id,
        decoded.op
),

pair_counts as (
    select
        source_name as feed,
        dialect,
        least(count_if(op = 'UPDATE_BEFORE'), count_if(op = 'UPDATE_AFTER'))
        - least(
            count_if(op = 'UPDATE_BEFORE' and first_landed_at <= held_until),
            count_if(op = 'UPDATE_AFTER' and first_landed_at <= held_until)
        ) as paired_split_updates
    from pair_halves
    group by {{ pair_key | join(', ') }}
),

pair_totals as (
    select
        feed,
        dialect,
        sum(paired_split_updates) as paired_split_updates
    from pair_counts
    group by feed, dialect
),

{% if is_incremental() %}
    -- Only the feeds with new landings are merged and rewritten; the others keep their partitions.
    {%- if touched_filter is none %}
        touched_feeds as (
            select feed from landed
            union
            select feed from message_counts
        ),
    {%- endif %}

    held as (
        select held.*
        from {{ this }} as held
        {%- if touched_filter is not none %}
        where {{ touched_filter }}
        {%- else %}
        left semi join touched_feeds on held.feed = touched_feeds.feed
        {%- endif %}
    ),

    held_state as (
        select
            *,
            update_events - paired_split_updates as unsplit_update_events
        from held
    ),
{% endif %}

parts as (
    {{ cdc_merge_part('landed', ['landed_messages', 'last_landed_at'], merged_columns) }}
    union all
    {{ cdc_merge_part('message_counts', [
        'staged_until', 'staged_messages', 'row_messages', 'non_row_messages', 'quarantined_messages',
        'tombstone_messages', 'unclassified_messages', 'redelivered_events',
    ], merged_columns) }}
    union all
    {{ cdc_merge_part('event_stats', [
        'redelivered_events', 'message_events', 'insert_events', 'unsplit_update_events', 'delete_events',
        'snapshot_events', 'truncate_events', 'split_before_halves', 'split_after_halves', 'ddl_events',
        'heartbeat_events', 'transaction_events', 'other_events', 'first_event_ts', 'last_event_ts',
        'last_heartbeat_ts', 'lag_events', 'lag_micros_sum', 'lag_seconds_min', 'lag_seconds_max', 'lag_histogram',
    ], merged_columns) }}
    union all
    {{ cdc_merge_part('pair_totals', ['paired_split_updates'], merged_columns) }}
    {%- if is_incremental() %}
        union all
        {{ cdc_merge_part('held_state', merged_columns, merged_columns) }}
    {%- endif %}
),

merged as (
    select
        feed,
        dialect,
        {%- for column in summed %}
            coalesce(sum({{ column }}), 0) as {{ column }},
        {%- endfor %}
        {%- for column in minimum %}
            min({{ column }}) as {{ column }},
        {%- endfor %}
        {%- for column in maximum %}
            max({{ column }}) as {{ column }},
        {%- endfor %}
        {{ cdc_merged_histogram('lag_histogram') }} as lag_histogram
    from parts
    group by feed, dialect
),

-- The value a percentile reads from the histogram: the bucket holding the event of that rank
-- (nearest rank), at its geometric middle, within the exact min and max.
percentiles as (
    select
        *,
        transform(
            array(0.5, 0.95),
            fraction -> aggregate(
                array_sort(map_entries(lag_histogram)),
                named_struct('seen', cast(0 as bigint), 'bucket', cast(null as int)),
                (found, entry) -> named_struct(
                    'seen', found.seen + entry.value,
                    'bucket', coalesce(
                        found.bucket,
                        case
                            when
                                found.seen + entry.value >= greatest(ceil(fraction * lag_events), 1)
                                then entry.key
                        end
                    )
                ),
                found -> found.bucket
            )
        ) as percentile_buckets
    from merged
)

select
    dialect,
    landed_messages,
    staged_messages,
    row_messages,
    non_row_messages,
    quarantined_messages,
    tombstone_messages,
    unclassified_messages,
    landed_messages - (row_messages + non_row_messages + quarantined_messages + tombstone_messages)
        as unreconciled_messages,
    message_events - paired_split_updates as distinct_events,
    redelivered_events,
    insert_events,
    unsplit_update_events + paired_split_updates as update_events,
    delete_events,
    snapshot_events,
    truncate_events,
    split_before_halves + split_after_halves - 2 * paired_split_updates as unpaired_split_halves,
    ddl_events,
    heartbeat_events,
    transaction_events,
    other_events,
    first_event_ts,
    last_event_ts,
    last_heartbeat_ts,
    last_landed_at,
    lag_seconds_min,
    cast(lag_micros_sum / nullif(lag_events, 0) / 1000000.0 as double) as lag_seconds_avg,
    {%- for name, index in [('lag_seconds_p50', 0), ('lag_seconds_p95', 1)] %}
        least(
            cast(lag_seconds_max as double),
            greatest(
                cast(lag_seconds_min as double),
                sign(percentile_buckets[{{ index }}]) * 0.001 * pow(1.01, abs(percentile_buckets[{{ index }}]) - 0.5)
            )
        ) as {{ name }},
    {%- endfor %}
    lag_seconds_max,
    message_events,
    split_before_halves,
    split_after_halves,
    paired_split_updates,
    lag_events,
    lag_micros_sum,
    lag_histogram,
    staged_until,
    {{ cdc_built_at() }} as built_at,
    feed
from percentiles
