{#-
    One row per change applied to one row identity, with the row's full folded image after it.
    docs/semantics.md explains every rule; in short:
    - Row identity: the primary key (JSON array of key values) when the event names key columns;
      otherwise the full row image: sha-256 of the image plus an occurrence number, so identical
      rows of a keyless table stay distinct (a change that leaves an image ends its oldest copy).
    - Each row event leaves an identity (UPDATE, DELETE: -1) and/or reaches one (INSERT,
      SNAPSHOT, UPDATE: +1). An UPDATE that stays on its identity is one upsert (0); one that
      moves (primary key changed, keyless image changed) deletes the old identity and starts the
      new one.
    - TRUNCATE deletes every identity of the table that is live at the truncate's sequence.
    - Folding: within a row's life each column takes the value of the latest change that carried
      it, after image first, then before image; a full image replaces the row. A column absent
      from a partial image keeps its previous value; an explicit null sets null. The fold is a
      per-(identity, column) "last value that was present" window over the changes in sequence
      order: linear in changes x columns, unlike re-merging every prefix of a row's changes
      (quadratic for frequently updated rows). A full image starts a new stretch of the fold, so a
      stretch of one change (most, where images are full) takes its image whole, with no
      per-column work, and a stretch of a few changes (fewer than var cdc_fold_cells_from) merges
      its images in order, exact and bounded for so few.
    Incremental, append and resolve: an identity's rows depend on its own units and its table's
    truncates alone. A run takes the events int_change_events built since this model last wrote
    (built_at after the newest of its rows: new events, and the events of split-update pair keys it
    rebuilt), recomputes only the identities those events touch (now or when built) and every
    identity of a table a new truncate cuts, and appends them: every row of each recomputed
    identity, stamped with the run's built_at, or, for an identity no unit reaches any more, one
    vacancy row (action_id null; table_key, unit_identity and key_bucket set). The rows stored
    before stay as written. An identity's live rows are those of its newest build, vacancy rows
    excluded (macro cdc_live_rows): cdc_row_history reads them so, and so do the data tests
    (config live_rows). So a run writes what it recomputes, never the rows it keeps. Rows live in
    key_bucket partitions, each split in build_tier base (its live rows as the last compaction
    left them) and delta (the builds appended since, config appended_partitions): a run compacts
    the buckets whose delta has grown to var cdc_compact_share of their base (macro
    cdc_buckets_to_compact), writing their live rows as a new base that replaces the bucket whole
    (config replaced_partition_depth), so superseded builds and small files stay bounded and each
    appended row is rewritten a bounded number of times. A write is distributed by key_bucket
    (config write_distributed_by), so it adds one file to each bucket it writes, not one per task.
    What it reads: the truncates (int_change_events' partition event_slice=truncate, a few rows;
    the op of every event for a table built before that partition existed, cdc_truncates_of), the
    built_at, event id and op columns of all events and the identity columns of
    its own rows (narrow; superseded builds included, which only adds identities to recompute),
    the changed events (a built_at filter the Parquet scan applies), the images of the stored
    events on recomputed identities (a join over every event: the one wide read of the event
    history left), and the rows of the buckets it compacts. A run with nothing new counts the
    events built since (a filter on a constant built_at) and reads and writes nothing else. The
    live rows are the full refresh's, late events included (docs/semantics.md). The key sets that
    select among its stored rows (changed events, changed identities) are broadcast below
    cdc_broadcast_key_limit, and the per-table ones (changed tables, truncates) always, so the
    stored rows are filtered where they are read instead of shuffled to meet the keys (two
    shuffles of every stored unit, 147 MiB each on mixed:1M, before).
    Every CTE is read once where possible (self-joins replaced by windows): Spark inlines CTEs
    that are read several times, and a plan that repeats its inputs grows with every reuse. The one
    exception is segment_columns, read by the segments of one change, of a few and of many: the
    plan reads the shuffled rows beneath it three times (the shuffle itself is reused) and repeats
    its window, which costs less than sorting every change through the fold's regroup. The windows share
    one partitioning (row_partition below): two shuffles of the wide rows where there were three
    (docs/benchmarks.md, "One shuffle fewer in the fold"); and the segments are numbered in the
    sort that orders a row's changes, before the truncates' deletes join them, so the changes are
    not sorted again with those (docs/benchmarks.md, "One sort in int_row_versions").
-#}
{{ config(**cdc_appended_builds_config(cdc_row_change_builds())) }}
{%- do cdc_check_row_buckets() %}

{#- The events int_change_events built since this model last wrote (changed_events below): the
    other key sets grow with them. None: `false`, and the run writes nothing. -#}
{%- set changed = cdc_built_since(ref('int_change_events')) %}
{%- do cdc_skip_write_when_nothing_new(changed.rows) %}
{%- set broadcast = cdc_may_broadcast(changed.rows) %}
{#- The key_bucket partitions this run compacts: rewrites as their live rows alone (build_tier
    base), its new builds there included. -#}
{%- set compacted = cdc_buckets_to_compact() if changed.rows != 0 else [] %}
{%- set built_since = changed.predicate %}
{%- set change_order = 'sequence, sub_order, event_id' %}
{#- What a change row says besides its folded image; every step carries these columns. -#}
{%- set action_attributes = [
    'key_bucket', 'table_key', 'unit_identity', 'row_key', 'is_keyed', 'source_name', 'dialect',
    'tenant_name', 'database_name', 'schema_name', 'table_name', 'primary_key_columns', 'event_id', 'op',
    'sequence', 'sub_order', 'event_ts', 'emitted_ts', 'landing_timestamp', 'change_kind', 'starts_row',
] %}
{#- The model's columns (built rows and, incrementally, vacancy rows). -#}
{%- set output_columns = [
    'action_id', 'table_key', 'source_name', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name',
    'primary_key_columns', 'row_key', 'row_identity', 'event_id', 'op', 'change_kind', 'starts_row', 'sequence',
    'sub_order', 'segment', 'event_ts', 'emitted_ts', 'landing_timestamp', 'row_values', 'row_values_json',
    'is_deleted', 'unit_identity', 'key_bucket',
] %}
{#- The columns every window below partitions by, first: one shuffle, by (table_key, identity) before
    the copies are counted, places every row of an identity in one task, and a partitioning by these
    columns (a row_key names its identity: the key itself, or the image hash with its occurrence)
    needs no other. They stay columns of their own where the truncates' deletes are spawned, so that
    Spark still knows the rows' partitioning after it. -#}
{%- set row_partition = ['table_key', 'unit_identity', 'row_key'] %}
{#- What a truncate's spawned delete takes from the truncate event itself. -#}
{%- set truncate_attributes = [
    'event_id', 'op', 'sequence', 'event_ts', 'emitted_ts', 'landing_timestamp',
] %}

with events as (
    select
        *,
        {{ cdc_table_key() }} as table_key,
        -- SharePlex names no key columns but identifies the row (meta.rowid): its primary_key
        coalesce(size(primary_key_columns), 0) > 0 or primary_key is not null as is_keyed
    from {{ ref('int_change_events') }}
    where
        (event_kind = 'ROW' and op in ('INSERT', 'SNAPSHOT', 'UPDATE', 'UPDATE_AFTER', 'DELETE'))
        or op = 'TRUNCATE'
),

-- The truncates, from their own partition of int_change_events where it has one (cdc_truncates_of):
-- a few rows, where finding them by op reads that column of every stored event.
truncate_events as (
    select
        {{ cdc_table_key() }} as table_key,
        sequence,
        event_id,
        op,
        event_ts,
        emitted_ts,
        landing_timestamp
    from {{ ref('int_change_events') }}
    where {{ cdc_truncates_of(ref('int_change_events')) }}
),

-- Truncates cut a table's history into epochs: epoch n = after the table's n-th truncate.
-- A table has few truncates: they travel as one small array per table.
table_truncates as (
    select
        table_key,
        array_sort(collect_list(named_struct(
            'sequence', sequence, 'event_id', event_id, 'op', op, 'event_ts', event_ts,
            'emitted_ts', emitted_ts, 'landing_timestamp', landing_timestamp
        ))) as truncates
    from truncate_events
    group by table_key
),

{% if is_incremental() %}
    -- The stored rows: which identity each unit of which event reached or left when built.
    stored_units as (
        select
            table_key,
            unit_identity,
            event_id
        from {{ this }}
    ),

    -- Events int_change_events built since this model last wrote: new events and the pair events
    -- it rebuilt (a split update paired or re-ranked), found by the constant built_at filter, which
    -- the Parquet scan applies (files written before are skipped), not by a join over every event.
    -- A BEFORE half a paired update absorbs never had units (UPDATE_BEFORE is no row op here), so
    -- its going changes no stored row.
    changed_event_rows as (
        select * from events
        where {{ built_since }}
    ),

    changed_events as (
        select event_id from changed_event_rows
    ),

    -- A new truncate changes the epochs of every identity of its table.
    changed_tables as (
        select distinct table_key
        from changed_event_rows
        where op = 'TRUNCATE'
    ),

    {{ cdc_row_units('changed_event_rows', 'of_changed_events') }},

    -- An identity's rows depend on its units and its table's truncates alone: the identities a
    -- changed event reaches or leaves now or did when built, and every identity of a table whose
    -- truncates changed, are recomputed (to nothing when no unit reaches them any more).
    changed_identities as (
        select
            table_key,
            identity
        from units_of_changed_events
        union
        select {{ cdc_broadcast_keys(['changed_events'], broadcast) }}
            stored_units.table_key,
            stored_units.unit_identity as identity
        from stored_units
        left semi join changed_events on stored_units.event_id = changed_events.event_id
        union
        -- Tables, so few that they are always broadcast.
        select {{ cdc_broadcast_keys(['changed_tables'], true) }}
            stored_units.table_key,
            stored_units.unit_identity as identity
        from stored_units
        left semi join changed_tables on stored_units.table_key = changed_tables.table_key
    ),

    -- Every event with a unit on a changed identity: the changed events, and the unchanged events
    -- of the identity's stored rows (an unchanged event has the units it was built with).
    needed_events as (
        select event_id from changed_events
        union
        select {{ cdc_broadcast_keys(['changed_identities'], broadcast) }} stored_units.event_id
        from stored_units
        left semi join changed_identities
            on
                stored_units.table_key = changed_identities.table_key
                and stored_units.unit_identity = changed_identities.identity
    ),

    {{ cdc_row_units('events', 'of_needed_events', event_ids='needed_events', broadcast=broadcast) }},

    units_to_build as (
        select {{ cdc_broadcast_keys(['changed_identities'], broadcast) }} units_of_needed_events.*
        from units_of_needed_events
        left semi join changed_identities
            on
                units_of_needed_events.table_key = changed_identities.table_key
                and units_of_needed_events.identity = changed_identities.identity
    ),

{% else %}
    {{ cdc_row_units('events', 'of_all_events') }},

    units_to_build as (
        select * from units_of_all_events
    ),
{% endif %}

-- Each unit with its table's truncates (its epoch).
-- (A table's truncates: few tables, always broadcast.)
epoch_units as (
    select {{ cdc_broadcast_keys(['table_truncates'], true) }}
        units_to_build.*,
        coalesce(table_truncates.truncates, array()) as truncates,
        size(filter(coalesce(table_truncates.truncates, array()), t -> t.sequence <= units_to_build.sequence))
            as epoch
    from units_to_build
    left join table_truncates on units_to_build.table_key = table_truncates.table_key
),

counted_units as (
    select
        *,
        identity as unit_identity,
        count_if(unit_sign = 1) over copy_order as copies_added,
        count_if(unit_sign = -1) over copy_order as copies_removed
    -- The shuffle every window below partitions by (row_partition above).
    from (select * from epoch_units distribute by table_key, identity) as units_of_identities
    window copy_order as (
        partition by table_key, identity, epoch
        order by sequence, sub_order, event_id
        rows between unbounded preceding and current row
    )
),

-- Identical copies of a keyless row are numbered in the order they appeared; a change that
-- leaves such an image ends the oldest open copy (first in, first out), as the source's
-- "delete one of several identical rows" cannot say which copy it meant. An update that keeps
-- the image (unit 0) stays on the oldest copy. A keyed row's identity is its key.
identified_units as (
    select
        *,
        case
            when is_keyed then identity
            else to_json(named_struct(
                    'row_image_sha256', identity,
                    'occurrence', case
                        when unit_sign = 1 then copies_added
                        when unit_sign = -1 then copies_removed
                        else copies_removed + 1
                    end
                ))
        end as row_key
    from counted_units
),

classified_units as (
    select
        *,
        case when unit_sign >= 0 then 'upsert' else 'delete' end as change_kind,
        unit_sign = 1 as starts_row,
        case when unit_sign >= 0 then after end as applied_after,
        unit_sign >= 0 and after is not null and not coalesce(after_is_partial, false) as after_is_full
    from identified_units
),

-- A full image (is_partial false or unknown) is the whole row: it replaces the fold instead of
-- merging into it, so a column dropped at the source leaves the row. A full after image makes
-- the before image irrelevant.
row_actions as (
    select
        *,
        case when after_is_full then null else before end as applied_before,
        starts_row
        or after_is_full
        or (not after_is_full and before is not null and not coalesce(before_is_partial, false)) as resets_fold,
        lead(epoch) over row_changes as next_epoch
    from classified_units
    window row_changes as (partition by {{ row_partition | join(', ') }} order by {{ change_order }})
),

-- A row live at the end of its epoch is deleted by the truncate that closes the epoch: the
-- last change of each (row, epoch) that is an upsert spawns that delete.
spawning_actions as (
    select
        *,
        change_kind = 'upsert'
        and (next_epoch is null or next_epoch > epoch)
        and size(truncates) > epoch as spawns_delete
    from row_actions
),

-- The same order as row_changes: Spark sorts the changes once for both windows.
preceded_actions as (
    select
        *,
        lag(change_kind) over row_changes as previous_change_kind,
        lag(spawns_delete) over row_changes as previous_spawns_delete
    from spawning_actions
    window row_changes as (partition by {{ row_partition | join(', ') }} order by {{ change_order }})
),

-- A segment is one stretch of a row's life that folds independently: it starts where an image
-- resets the fold or the row comes back after a delete, its own or the one a truncate spawned
-- after the change before it (spawning_actions). Numbered here, before the spawned deletes are
-- added, in the order the windows above sorted the changes in: a spawned delete stays in the
-- segment of the change that spawned it, so no sort of the changes and spawned deletes together
-- is needed.
segmented_actions as (
    select
        *,
        sum(
            case
                when
                    resets_fold
                    or previous_change_kind = 'delete'
                    or previous_spawns_delete
                    then 1
                else 0
            end
        ) over (
            partition by {{ row_partition | join(', ') }}
            order by {{ change_order }}
            rows between unbounded preceding and current row
        ) as segment
    from preceded_actions
),

-- Each change, and the delete it spawns.
action_candidates as (
    select
        {{ row_partition | join(', ') }},
        array(
            named_struct(
                {%- for column in action_attributes if column not in row_partition %}
                    '{{ column }}', {{ column }},
                {%- endfor %}
                'applied_before', applied_before,
                'applied_after', applied_after,
                'segment', segment
            ),
            case
                when spawns_delete
                    then named_struct(
                            {%- for column in action_attributes if column not in row_partition %}
                                {%- if column in truncate_attributes %}
                                    '{{ column }}', truncates[epoch].{{ column }},
                                {%- elif column == 'sub_order' %}
                                    'sub_order', 0,
                                {%- elif column == 'change_kind' %}
                                    'change_kind', 'delete',
                                {%- elif column == 'starts_row' %}
                                    'starts_row', false,
                                {%- else %}
                                    '{{ column }}', {{ column }},
                                {%- endif %}
                            {%- endfor %}
                            'applied_before', cast(null as map<string, string>),
                            'applied_after', cast(null as map<string, string>),
                            'segment', segment
                        )
            end
        ) as candidates
    from segmented_actions
),

all_actions as (
    select {{ row_partition | join(', ') }}, action.*
    from action_candidates
        lateral view inline(filter(candidates, candidate -> candidate is not null)) action
),

segment_columns as (
    select
        *,
        array_distinct(flatten(collect_list(array_union(
            map_keys(coalesce(applied_before, map())),
            map_keys(coalesce(applied_after, map()))
        )) over segment_changes)) as column_names,
        count(*) over segment_changes as changes_in_segment
    -- A shuffle Spark would not need: the rows of one change and those of several read the windows'
    -- result from it, where without it each would run every window above again (mixed:1M, warm: 35 s
    -- with it, 41-42 s without it, 37 s with the three shuffles before).
    from (select * from all_actions distribute by {{ row_partition | join(', ') }}) as segments_of_rows
    -- Ordered, though its frame is the whole segment: the sort it makes is the one short_segment_rows'
    -- window needs, which then sorts nothing again.
    window segment_changes as (
        partition by {{ row_partition | join(', ') }}, segment
        order by {{ change_order }}
        rows between unbounded preceding and unbounded following
    )
),

-- A segment of one change, which is what a change with a full image makes (most of them), folds
-- nothing: its row is its after image over its before image, taken whole. It goes around the cells,
-- the fold and the regroup below (the regroup sorts every row it takes: a third of this model's
-- time in a full build when every change went through it).
single_change_rows as (
    select
        {{ action_attributes | join(', ') }},
        segment,
        map_from_entries(array_sort(map_entries({{ cdc_overlay('applied_before', 'applied_after') }}))) as row_values
    from segment_columns
    where changes_in_segment = 1
),

-- A segment of a few changes (var cdc_fold_cells_from: fewer than that many) folds by merging its
-- changes' images in order, each over the row before it: for every column, the latest change that
-- carried it wins, as in the cells' fold below. Each change collects the segment's changes up to it,
-- work that grows with the square of the segment's length, so only short segments reach that window
-- (the filter comes first and keeps or drops a segment whole) and a longer one goes through the cells;
-- a short one skips their explode and regroup (docs/benchmarks.md, "short stretches of partial
-- images").
short_segment_rows as (
    select
        {{ action_attributes | join(', ') }},
        segment,
        map_from_entries(array_sort(map_entries(aggregate(
            transform(segment_so_far, change -> {{ cdc_overlay('change.applied_before', 'change.applied_after') }}),
            cast(map() as map<string, string>),
            (row_so_far, image) -> {{ cdc_overlay('row_so_far', 'image') }}
        )))) as row_values
    from (
        select
            *,
            collect_list(named_struct('applied_before', applied_before, 'applied_after', applied_after)) over (
                partition by {{ row_partition | join(', ') }}, segment
                order by {{ change_order }}
                rows between unbounded preceding and current row
            ) as segment_so_far
        from segment_columns
        where changes_in_segment > 1 and changes_in_segment < {{ var('cdc_fold_cells_from') }}
    ) as short_segments
),

-- One cell per change and column of a segment of many changes (a change carrying no column keeps
-- one empty cell).
cells as (
    select
        *,
        case
            when map_contains_key(coalesce(applied_after, map()), column_name)
                then named_struct('value', applied_after[column_name])
            when map_contains_key(coalesce(applied_before, map()), column_name)
                then named_struct('value', applied_before[column_name])
        end as carried_value
    from segment_columns
        lateral view explode_outer(column_names) carried as column_name
    where changes_in_segment > 1 and changes_in_segment >= {{ var('cdc_fold_cells_from') }}
),

folded_cells as (
    select
        {{ action_attributes | join(', ') }},
        segment,
        column_name,
        last(carried_value, true) over (
            partition by {{ row_partition | join(', ') }}, segment, column_name
            order by {{ change_order }}
            rows between unbounded preceding and current row
        ) as folded_value
    from cells
),

folded_rows as (
    select * from single_change_rows
    union all
    select * from short_segment_rows
    union all
    select
        {{ action_attributes | join(', ') }},
        segment,
        map_from_entries(array_sort(collect_list(
            case when folded_value is not null then struct(column_name, folded_value.value) end
        ))) as row_values
    from folded_cells
    group by {{ action_attributes | join(', ') }}, segment
),

built_rows as (
    select
        sha2(concat_ws('|', table_key, row_key, event_id), 256) as action_id,
        table_key,
        source_name,
        dialect,
        tenant_name,
        database_name,
        schema_name,
        table_name,
        primary_key_columns,
        row_key,
        case when is_keyed then 'primary_key' else 'row_image' end as row_identity,
        event_id,
        op,
        change_kind,
        starts_row,
        sequence,
        sub_order,
        segment,
        event_ts,
        emitted_ts,
        landing_timestamp,
        row_values,
        -- row_values is built with its keys sorted (both branches of folded_rows), so its JSON is
        -- cdc_map_json's without sorting it again (about 1 s of a full build at mixed:1M).
        to_json(row_values) as row_values_json,
        change_kind = 'delete' as is_deleted,
        unit_identity,
        key_bucket
    from folded_rows
)

{% if is_incremental() %}
    {{ cdc_appended_builds('built_rows', 'changed_identities', output_columns, compacted, cdc_row_change_builds()) }}
{% else %}
    select {{ output_columns | join(', ') }}, {{ cdc_built_at() }} as built_at, 'base' as build_tier
    from built_rows
{% endif %}
