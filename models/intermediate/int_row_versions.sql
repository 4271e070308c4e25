{#-
    SCD2 versions of every source row (grain: one version of one row identity), stored as builds;
    cdc_row_history shows the live ones.
    - valid_from is the source commit time of the change that made the version (event_ts; the
      emission time, then the broker time capped by the row's next known commit time, only where
      a dialect sends no commit time), never the run time. It never decreases along a row's
      sequence order, so intervals cannot invert when a source clock steps back.
    - Several changes of one row at the same instant leave only the last one (by sequence): the
      source state at that instant.
    - A change that leaves the row as it was (same values, same deleted flag) makes no version; a
      column that is null and a column the row does not carry count as the same.
    - A DELETE or TRUNCATE ends the live version and starts a tombstone version (is_deleted,
      row_values = the deleted row) that lasts until the row is inserted again.
    - valid_to is the next version's valid_from: intervals are half-open, without gaps or
      overlaps, and the last version of each row is current (valid_to null).
    Reads the live rows of int_row_changes (of each identity its newest build, macro
    cdc_live_rows). Incremental, append and resolve, as int_row_changes: a run rebuilds the
    versions of the identities int_row_changes rebuilt since this model last wrote (its builds with
    a newer built_at: a build holds every row of its identity, or one vacancy row for an identity
    left without rows) and appends them, every version of each such identity stamped with the
    run's built_at, or one vacancy row (version_id null) for an identity left without versions. An
    identity's live versions are those of its newest build (config live_rows; cdc_row_history is
    the view of them). Rows live in key_bucket partitions split in build_tier base and delta; a run
    compacts the buckets whose delta has grown to var cdc_compact_share of their base
    (cdc_buckets_to_compact, cdc_appended_builds). What it reads: the rows of int_row_changes with
    a newer built_at (a constant filter the Parquet scan applies: earlier builds are in earlier
    files, which it skips) and the rows of the buckets it compacts; never the versions it keeps.
    So a run writes the versions of the identities it rebuilds, not the buckets they fall in. A
    run with nothing new learns it from the newest built_at kept with int_row_changes' table (no
    data file read; cdc_built_nothing_since) and reads and writes nothing else. Every window
    partitions by table_key and unit_identity first (the identity of a row key), so the whole
    chain, the live-build filter included, shuffles the rows once; and every window orders them by
    row_key and the change order (sequence, sub_order, event_id), so the chain sorts them once
    (docs/benchmarks.md, "One sort in int_row_versions"); the write distributes them
    again by key_bucket (config write_distributed_by), so that it adds one file to each bucket it
    writes, not one per task.
-#}
{{ config(**cdc_appended_builds_config(cdc_row_version_builds())) }}
{%- do cdc_check_row_buckets() %}

{#- The rows int_row_changes rebuilt since this model last wrote; with none, `false` and the run
    writes nothing. -#}
{%- set rebuilt = cdc_built_since(ref('int_row_changes')) %}
{%- do cdc_skip_write_when_nothing_new(rebuilt.rows) %}
{%- set built_since = rebuilt.predicate %}
{#- The key_bucket partitions this run compacts (cdc_appended_builds). -#}
{%- set compacted = cdc_buckets_to_compact() if rebuilt.rows != 0 else [] %}
{#- Every window below partitions by the row and orders by its change order: one sort of the rows,
    made by the live-build window (cdc_live_rows' sorted_by: the row key after the identity, then
    the change order). -#}
{%- set row_partition = ['table_key', 'unit_identity', 'row_key'] %}
{%- set change_order = ['sequence', 'sub_order', 'event_id'] %}
{%- set row_window = 'partition by ' ~ row_partition | join(', ') ~ ' order by ' ~ change_order | join(', ') %}
{%- set live_order = ['row_key'] + change_order %}
{#- What a version takes from the row changes it is made of. -#}
{%- set row_change_columns = [
    'table_key', 'unit_identity', 'key_bucket', 'source_name', 'dialect', 'tenant_name', 'database_name',
    'schema_name', 'table_name', 'primary_key_columns', 'row_key', 'row_identity', 'event_id', 'op', 'sequence',
    'sub_order', 'event_ts', 'emitted_ts', 'landing_timestamp', 'is_deleted', 'row_values', 'row_values_json',
] %}
{%- set output_columns = [
    'version_id', 'feed', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name',
    'primary_key_columns', 'primary_key', 'row_identity', 'row_values', 'row_values_json', 'valid_from', 'valid_to',
    'is_current', 'is_deleted', 'version_number', 'op', 'event_id', 'sequence', 'table_key', 'unit_identity',
    'key_bucket',
] %}

with row_change_builds as (
    select * from {{ ref('int_row_changes') }}
),

{% if is_incremental() %}
    -- Every row of a rebuilt identity is new (int_row_changes appends an identity's build whole),
    -- so the built_at filter finds them: the Parquet scan applies it, skipping earlier builds'
    -- files, instead of a join over every stored row.
    row_changes as (
        {{ cdc_live_rows(
            'row_change_builds', cdc_row_change_builds(), row_change_columns, built_since, live_order
        ) }}
    ),

    -- The identities int_row_changes rebuilt since this model last wrote, vacated ones included (a
    -- keyless identity is an image's hash, shared by its numbered copies): each gets a new build.
    rebuilt_identities as (
        {{ cdc_rebuilt_identities('row_change_builds', built_since) }}
    ),
{% else %}
    row_changes as (
        {{ cdc_live_rows('row_change_builds', cdc_row_change_builds(), row_change_columns, sorted_by=live_order) }}
    ),
{% endif %}

-- A change without a commit time (e.g. a full-load row of a dialect that sends none) takes the
-- broker time, but never later than the next change of the row whose commit time is known:
-- a late-landing snapshot row must not push the row's later, well-timed versions forward.
known_times as (
    select
        *,
        coalesce(event_ts, emitted_ts) as known_ts,
        min(coalesce(event_ts, emitted_ts)) over (
            {{ row_window }}
            rows between 1 following and unbounded following
        ) as next_known_ts
    from row_changes
),

timed as (
    select
        *,
        max(coalesce(known_ts, least(landing_timestamp, next_known_ts), landing_timestamp)) over (
            {{ row_window }}
            rows between unbounded preceding and current row
        ) as effective_ts
    from known_times
),

-- effective_ts never decreases along a row's change order, so the changes of one instant are
-- consecutive in it: the last of them is the one whose next change is of a later instant, or none.
-- (next_instant is a struct, so that no next change and a next change without a time differ.)
next_instants as (
    select
        *,
        lead(named_struct('ts', effective_ts)) over (
            {{ row_window }}
        ) as next_instant
    from timed
),

instant_states as (
    select
        *,
        case
            when is_deleted then 'deleted'
            -- row_values_json is row_values as JSON, keys sorted: where no value is null it is the signature
            when not exists(map_values(row_values), v -> v is null) then row_values_json
            else {{ cdc_map_json('map_filter(row_values, (k, v) -> v is not null)') }}
        end as state_signature
    from next_instants
    where next_instant is null or not (next_instant.ts <=> effective_ts)
),

-- One change per instant is left, so the change order is the order of their instants.
compared_states as (
    select
        *,
        lag(state_signature) over ({{ row_window }}) as previous_signature
    from instant_states
),

state_changes as (
    select *
    from compared_states
    where not (previous_signature <=> state_signature)
),

versions as (
    select
        *,
        lead(effective_ts) over row_versions as next_valid_from,
        row_number() over row_versions as version_number
    from state_changes
    window row_versions as ({{ row_window }})
),

built_versions as (
    select
        sha2(concat_ws('|', table_key, row_key, cast(version_number as string)), 256) as version_id,
        source_name as feed,
        dialect,
        tenant_name,
        database_name,
        schema_name,
        table_name,
        primary_key_columns,
        row_key as primary_key,
        row_identity,
        row_values,
        row_values_json,
        effective_ts as valid_from,
        next_valid_from as valid_to,
        next_valid_from is null as is_current,
        is_deleted,
        version_number,
        op,
        event_id,
        sequence,
        table_key,
        unit_identity,
        key_bucket
    from versions
)

{% if is_incremental() %}
    {{ cdc_appended_builds(
        'built_versions', 'rebuilt_identities', output_columns, compacted, cdc_row_version_builds()
    ) }}
{% else %}
    select {{ output_columns | join(', ') }}, {{ cdc_built_at() }} as built_at, 'base' as build_tier
    from built_versions
{% endif %}
