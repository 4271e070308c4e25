{#-
    The canonical change events: one row per distinct row change or non-row event.
    - Only decoded staged rows (quarantine and tombstones are counted elsewhere).
    - De-duplicated on event_id: a redelivered message (any offset, any run) counts once;
      the earliest landing is kept, delivery_count says how often it landed.
    - Split updates paired: the n-th UPDATE_BEFORE and the n-th UPDATE_AFTER of the same
      table and source_position become one UPDATE (identity and coordinates of the AFTER
      half, before image of the BEFORE half). A half whose partner has not landed stays an
      event with its own op, so nothing disappears while it waits.
    Images stay as the message sent them here; int_row_changes folds them into full rows.
    Incremental: an event's row depends on the deliveries of its event id and, for a split
    update's half, on the other halves of its pair key alone. A run finds the rows landed since the
    last one (per feed: landed_at after the newest this model holds), rebuilds from all their
    staged rows only the events sharing an event id or a pair key with them, and keeps every
    other stored event. Rows live in `event_bucket` partitions (a hash of the event id or of the
    pair key, so redeliveries and both halves of a pair share one); the partitions the new rows
    fall in are overwritten with the rebuilt events plus the stored events kept there.
    What it reads: the staged rows landed since (constant watermarks, cdc_held_watermarks, which
    the scan applies), every staged row to find the deliveries of the events it rebuilds (a join
    on event id and pair key: the scan reads every staged row, so this read still grows with the
    history, docs/benchmarks.md "What reaching the targets takes"), and the stored events of the
    partitions it overwrites. A run with nothing new counts the staged rows landed since and reads
    and writes nothing else.
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['event_bucket'],
    on_schema_change='fail',
) }}

{% set columns = cdc_change_event_column_names() %}
{#- The staged rows landed since the newest this model holds, per feed (the new_rows CTE below). -#}
{% set held = cdc_held_watermarks(new_rows_of=ref('int_staged_events')) %}
{% set new_rows = held.get('new_rows') if held is not none else none %}
{% do cdc_skip_write_when_nothing_new(new_rows) %}
{% set broadcast = cdc_may_broadcast(new_rows) %}
{% set pair_key = [
    'source_name', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name', 'source_position',
] %}
{#- Columns of a paired update: the AFTER half's, with the BEFORE half's before image and types. -#}
{% set paired = 'halves_in_pair = 2' %}
{% set canonical_columns = [] %}
{% for column in columns %}
    {% if column == 'op' %}
        {% do canonical_columns.append("case when " ~ paired ~ " then 'UPDATE' else op end as op") %}
    {% elif column in ('before', 'before_is_partial') %}
        {% do canonical_columns.append(
            'case when ' ~ paired ~ ' then before_half.' ~ column ~ ' else ' ~ column ~ ' end as ' ~ column
        ) %}
    {% elif column in ('column_source_types', 'column_types') %}
        {% do canonical_columns.append(
            'case when ' ~ paired ~ ' then ' ~ cdc_overlay('before_half.' ~ column, column)
            ~ ' else ' ~ column ~ ' end as ' ~ column
        ) %}
    {% elif column == 'split_before_event_id' %}
        {% do canonical_columns.append(
            'case when ' ~ paired ~ ' then before_half.event_id end as split_before_event_id'
        ) %}
    {% else %}
        {% do canonical_columns.append(column) %}
    {% endif %}
{% endfor %}
{#- The pairing group of a row: a split half's pair key; any other row is a group of its own (its event id). -#}
{% set pair_group = pair_key + ['case when pair_hash is null then event_id end'] %}

{% set stored_pair_key = [] %}
{% for column in pair_key %}
    {% do stored_pair_key.append('stored.' ~ column) %}
{% endfor %}

with decoded as (
    select
        *,
        pmod(coalesce(pair_hash, xxhash64(event_id)), {{ cdc_row_buckets() }}) as event_bucket
    from (
        select
            *,
            -- A split update's half. A 64-bit hash names its pair key: a collision only means one
            -- more pair rebuilt by an incremental run.
            case
                when op in ('UPDATE_BEFORE', 'UPDATE_AFTER') and source_position is not null
                    then xxhash64({{ pair_key | join(', ') }})
            end as pair_hash
        from {{ ref('int_staged_events') }}
        where message_status = 'decoded'
    ) as staged
),

{% if is_incremental() %}
    new_rows as (
        select
            event_id,
            event_bucket,
            pair_hash
        from decoded
        where {{ cdc_landed_after_held(held) }}
    ),

    new_event_ids as (
        select distinct event_id from new_rows
    ),

    new_pair_hashes as (
        select distinct pair_hash from new_rows
        where pair_hash is not null
    ),

    events_to_build as (
        select {{ cdc_broadcast_keys(['new_event_ids', 'new_pair_hashes'], broadcast) }} decoded.*
        from decoded
        left join new_event_ids on decoded.event_id = new_event_ids.event_id
        left join new_pair_hashes on decoded.pair_hash = new_pair_hashes.pair_hash
        where new_event_ids.event_id is not null or new_pair_hashes.pair_hash is not null
    ),

    -- A partition is overwritten whole: it keeps the stored events no new row shares a key with.
    touched_buckets as (
        select distinct event_bucket from new_rows
    ),

    kept_events as (
        select {{ cdc_broadcast_keys(['touched_buckets', 'new_event_ids', 'new_pair_hashes'], broadcast) }} stored.*
        from {{ this }} as stored
        left semi join touched_buckets on stored.event_bucket = touched_buckets.event_bucket
        left anti join new_event_ids on stored.event_id = new_event_ids.event_id
        left anti join new_pair_hashes
            on
                (stored.op in ('UPDATE_BEFORE', 'UPDATE_AFTER') or stored.split_before_event_id is not null)
                and stored.source_position is not null
                and xxhash64({{ stored_pair_key | join(', ') }}) = new_pair_hashes.pair_hash
    ),
{% else %}
    events_to_build as (
        select * from decoded
    ),
{% endif %}

deliveries as (
    select
        *,
        row_number() over (
            partition by event_id
            order by landed_at, landing_timestamp, landing_topic, landing_partition, landing_offset, row_index
        ) as delivery_rank,
        count(*) over (partition by event_id) as delivery_count
    from events_to_build
),

first_deliveries as (
    select * from deliveries
    where delivery_rank = 1
    -- One shuffle for both pairing windows below: each partitions by a superset of these keys.
    distribute by {{ pair_group | join(', ') }}
),

-- The n-th UPDATE_BEFORE and the n-th UPDATE_AFTER of a pair key (by sequence) are one update.
ranked_halves as (
    select
        *,
        case
            when pair_hash is not null
                then row_number() over (
                        partition by {{ pair_group | join(', ') }}, op
                        order by sequence, event_id
                    )
        end as half_rank
    from first_deliveries
),

-- Windows instead of a self-join: the staged rows are read and numbered once.
pair_halves as (
    select
        *,
        count(half_rank) over (partition by {{ pair_group | join(', ') }}, half_rank) as halves_in_pair,
        first(
            case
                when op = 'UPDATE_BEFORE'
                    then named_struct(
                            'event_id', event_id,
                            'before', before,
                            'before_is_partial', before_is_partial,
                            'column_source_types', column_source_types,
                            'column_types', column_types
                        )
            end,
            true
        ) over (partition by {{ pair_group | join(', ') }}, half_rank) as before_half
    from ranked_halves
),

canonical_events as (
    select
        {{ canonical_columns | join(',\n        ') }},
        event_bucket
    from pair_halves
    -- A paired BEFORE half lives on in its update.
    where not ({{ paired }} and op = 'UPDATE_BEFORE')
)

{{ cdc_built_and_kept('canonical_events', 'kept_events', columns + ['event_bucket']) }}
