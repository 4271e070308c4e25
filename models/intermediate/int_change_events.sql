{#-
    The canonical change events: one row per distinct row change or non-row event.
    - Only decoded staged rows (quarantine and tombstones are counted elsewhere).
    - De-duplicated on event_id: a redelivered message (any offset, any run) counts once; the
      earliest landing is kept (int_staged_events marks every later one is_redelivery). How often
      an event landed is not stored here: cdc_change_events counts its redeliveries when read, so
      a redelivery changes no stored event.
    - Split updates paired: the n-th UPDATE_BEFORE and the n-th UPDATE_AFTER of the same
      table and source_position become one UPDATE (identity and coordinates of the AFTER
      half, before image of the BEFORE half). A half whose partner has not landed stays an
      event with its own op, so nothing disappears while it waits.
    Images stay as the message sent them here; int_row_changes folds them into full rows.
    Layout and incremental runs: an event that is no split update's half never changes once
    built, so it lives in partition `event_slice=final`, to which a run appends the first
    deliveries it finds and which it never rewrites (config appended_partitions); a TRUNCATE in
    `event_slice=truncate`, appended the same way, so that int_row_changes reads a table's
    truncates from their few rows instead of the op of every stored event (the table property
    of cdc_truncate_slice_property says the table was built whole so). The events made
    of split halves (paired updates and halves still waiting) depend on every half of their pair
    key, so they live in `event_slice=pair_<n>` partitions (n: a hash of the pair key modulo var
    cdc_row_buckets); a run that lands a half rebuilds, from all their staged rows, the events of
    the pair keys it touches and overwrites the pair partitions they fall in, keeping the other
    stored events there, in one file per pair partition.
    What it reads: the staged rows landed since what it has taken in of each feed (the later of its
    newest event's landing and how far it read: constant watermarks, cdc_held_watermarks, which the
    Parquet scan applies); only when those hold split halves, the staged split halves
    (int_staged_events' partition is_split_half=true, a few percent of the staged rows) to find
    every half of their pair keys, and the stored events of the pair partitions it overwrites. A
    redelivered half touches no pair. A run with nothing new reads and writes nothing (where
    int_staged_events keeps its newest landing per feed, it does not even count).
-#}
{%- set table_properties = cdc_row_buckets_layout() %}
{%- do table_properties.update(cdc_truncate_slice_property()) %}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['event_slice'],
    appended_partitions=['event_slice=final', 'event_slice=truncate'],
    on_schema_change='fail',
    tblproperties=table_properties,
) }}
{%- do cdc_check_row_buckets() %}

{#- delivery_count is counted when cdc_change_events is read. -#}
{% set columns = cdc_change_event_column_names() | reject('equalto', 'delivery_count') | list %}
{#- The staged rows landed since what this model has taken in of their feed (the new_rows CTE
    below): it keeps decoded first deliveries alone, so the later of its newest event's landing and
    how far it read int_staged_events (kept with its table), or a feed whose last load brought only
    redeliveries, quarantined rows or tombstones would be read again by every run. -#}
{% set held = cdc_held_watermarks(new_rows_of=ref('int_staged_events'), new_rows_where="message_status = 'decoded'") %}
{% set new_rows = held.get('new_rows') if held is not none else none %}
{% do cdc_skip_write_when_nothing_new(new_rows) %}
{% set broadcast = cdc_may_broadcast(new_rows) %}
{% set pair_key = cdc_pair_key_columns() %}
{#- Columns of an event of split halves: a paired update takes the AFTER half's, with the BEFORE
    half's before image and types; a waiting half keeps its own. Any other event: as staged. -#}
{% set paired = 'halves_in_pair = 2' %}
{% set pair_columns = [] %}
{% set single_columns = [] %}
{% for column in columns %}
    {% if column == 'op' %}
        {% do pair_columns.append("case when " ~ paired ~ " then 'UPDATE' else op end as op") %}
    {% elif column in ('before', 'before_is_partial') %}
        {% do pair_columns.append(
            'case when ' ~ paired ~ ' then before_half.' ~ column ~ ' else ' ~ column ~ ' end as ' ~ column
        ) %}
    {% elif column in ('column_source_types', 'column_types') %}
        {% do pair_columns.append(
            'case when ' ~ paired ~ ' then ' ~ cdc_overlay('before_half.' ~ column, column)
            ~ ' else ' ~ column ~ ' end as ' ~ column
        ) %}
    {% elif column == 'split_before_event_id' %}
        {% do pair_columns.append(
            'case when ' ~ paired ~ ' then before_half.event_id end as split_before_event_id'
        ) %}
    {% else %}
        {% do pair_columns.append(column) %}
    {% endif %}
    {% do single_columns.append(
        'cast(null as string) as split_before_event_id' if column == 'split_before_event_id' else column
    ) %}
{% endfor %}

{% set stored_pair_key = [] %}
{% for column in pair_key %}
    {% do stored_pair_key.append('stored.' ~ column) %}
{% endfor %}

with decoded as (
    select
        *,
        case
            when pair_hash is not null then concat('pair_', pmod(pair_hash, {{ cdc_row_buckets() }}))
            when op = 'TRUNCATE' then 'truncate'
            else 'final'
        end as event_slice
    from (
        select
            *,
            -- A split update's half. A 64-bit hash names its pair key: a collision only means one
            -- more pair rebuilt by an incremental run.
            case when is_split_half then xxhash64({{ pair_key | join(', ') }}) end as pair_hash
        from {{ ref('int_staged_events') }}
        where message_status = 'decoded'
    ) as staged
),

{% if is_incremental() %}
    new_rows as (
        select * from decoded
        where {{ cdc_landed_after_held(held) }}
    ),

    -- A redelivered half changes no pair: its first delivery was paired when it landed.
    new_pair_hashes as (
        select distinct pair_hash from new_rows
        where pair_hash is not null and not is_redelivery
    ),

    -- A new event that is no split half is built from its own row; a pair key a new half joins
    -- is rebuilt from every half it has (read from int_staged_events' partition of split halves).
    events_to_build as (
        select * from new_rows
        where pair_hash is null
        union all
        select {{ cdc_broadcast_keys(['new_pair_hashes'], broadcast) }} decoded.*
        from decoded
        left semi join new_pair_hashes on decoded.pair_hash = new_pair_hashes.pair_hash
        where decoded.is_split_half
    ),

    -- A pair partition is overwritten whole: it keeps the stored events of the pair keys no new
    -- row has a half of.
    touched_slices as (
        select distinct event_slice from new_rows
        where pair_hash is not null and not is_redelivery
    ),

    kept_events as (
        select {{ cdc_broadcast_keys(['touched_slices', 'new_pair_hashes'], broadcast) }} stored.*
        from {{ this }} as stored
        left semi join touched_slices on stored.event_slice = touched_slices.event_slice
        left anti join new_pair_hashes
            on xxhash64({{ stored_pair_key | join(', ') }}) = new_pair_hashes.pair_hash
    ),
{% else %}
    events_to_build as (
        select * from decoded
    ),
{% endif %}

first_deliveries as (
    select * from events_to_build
    where not is_redelivery
),

single_events as (
    select
        {{ single_columns | join(',\n        ') }},
        event_slice
    from first_deliveries
    where pair_hash is null
),

-- The n-th UPDATE_BEFORE and the n-th UPDATE_AFTER of a pair key (by sequence) are one update.
ranked_halves as (
    select
        *,
        row_number() over (
            partition by {{ pair_key | join(', ') }}, op
            order by sequence, event_id
        ) as half_rank
    -- One shuffle for both pairing windows: each partitions by a superset of these keys. (A
    -- `distribute by` in this select would shuffle its output, after the window, a second time.)
    from (
        select * from first_deliveries
        where pair_hash is not null
        distribute by {{ pair_key | join(', ') }}
    ) as halves
),

-- Windows instead of a self-join: the halves are read and numbered once.
pair_halves as (
    select
        *,
        count(*) over (partition by {{ pair_key | join(', ') }}, half_rank) as halves_in_pair,
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
        ) over (partition by {{ pair_key | join(', ') }}, half_rank) as before_half
    from ranked_halves
),

pair_events as (
    select
        {{ pair_columns | join(',\n        ') }},
        event_slice
    from pair_halves
    -- A paired BEFORE half lives on in its update.
    where not ({{ paired }} and op = 'UPDATE_BEFORE')
),

-- The events of the pair partitions (built and kept), distributed by partition so that one task
-- writes each: every task of a write adds a file to each partition it has rows for, and every later
-- scan of the table lists and opens them (at mixed:1M, 64 pair partitions of 3 small files each
-- took about 1.5 s of the 5.6-5.8 s a scan of every event's images took). The final partition's
-- events are appended as they come, unshuffled.
pair_slices as (
    {{ cdc_built_and_kept('pair_events', 'kept_events', columns + ['event_slice']) }}
    distribute by event_slice
)

select {{ columns | join(', ') }}, event_slice, {{ cdc_built_at() }} as built_at
from single_events
union all
select {{ columns | join(', ') }}, event_slice, built_at
from pair_slices
