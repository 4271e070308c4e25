{#-
    SCD2 history of every source row (grain: one version of one row identity).
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
    So `valid_from <= T and (valid_to > T or valid_to is null) and not is_deleted` is the source
    table at instant T.
    Incremental like int_row_changes: a run rebuilds the rows whose input fingerprint
    (int_row_changes.identity_fingerprint) differs from the one their versions were built from,
    and drops rows int_row_changes no longer has; the `key_bucket` partitions they fall in are
    overwritten with those versions plus the stored versions of every other row there.
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['key_bucket'],
    on_schema_change='fail',
) }}

{%- set output_columns = [
    'version_id', 'feed', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name',
    'primary_key_columns', 'primary_key', 'row_identity', 'row_values', 'row_values_json', 'valid_from', 'valid_to',
    'is_current', 'is_deleted', 'version_number', 'op', 'event_id', 'sequence', 'identity_fingerprint', 'key_bucket',
] %}

with all_row_changes as (
    select * from {{ ref('int_row_changes') }}
),

{% if is_incremental() %}
    stored_versions as (
        select
            *,
            {{ cdc_table_key('feed') }} as table_key
        from {{ this }}
    ),

    row_inputs as (
        select distinct
            table_key,
            row_key,
            key_bucket,
            identity_fingerprint
        from all_row_changes
    ),

    built_inputs as (
        select distinct
            table_key,
            primary_key as row_key,
            key_bucket,
            identity_fingerprint
        from stored_versions
    ),

    -- Rows whose inputs changed, and rows int_row_changes no longer has (rebuilt to nothing).
    changed_rows as (
        {{ cdc_changed_keys(
            'row_inputs', 'built_inputs', ['table_key', 'row_key', 'key_bucket'], 'identity_fingerprint'
        ) }}
    ),

    row_changes as (
        select all_row_changes.*
        from all_row_changes
        left semi join changed_rows
            on all_row_changes.table_key = changed_rows.table_key and all_row_changes.row_key = changed_rows.row_key
    ),

    -- A partition is overwritten whole: it keeps the stored versions of the rows not rebuilt.
    kept_versions as (
        select stored_versions.*
        from stored_versions
        left semi join changed_rows on stored_versions.key_bucket = changed_rows.key_bucket
        left anti join changed_rows as rebuilt
            on stored_versions.table_key = rebuilt.table_key and stored_versions.primary_key = rebuilt.row_key
    ),
{% else %}
    row_changes as (
        select * from all_row_changes
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
            partition by table_key, row_key
            order by sequence, sub_order, event_id
            rows between 1 following and unbounded following
        ) as next_known_ts
    from row_changes
),

timed as (
    select
        *,
        max(coalesce(known_ts, least(landing_timestamp, next_known_ts), landing_timestamp)) over (
            partition by table_key, row_key
            order by sequence, sub_order, event_id
            rows between unbounded preceding and current row
        ) as effective_ts
    from known_times
),

ranked_in_instant as (
    select
        *,
        row_number() over (
            partition by table_key, row_key, effective_ts
            order by sequence desc, sub_order desc, event_id desc
        ) as recency_in_instant
    from timed
),

instant_states as (
    select
        *,
        case
            when is_deleted then 'deleted'
            else {{ cdc_map_json('map_filter(row_values, (k, v) -> v is not null)') }}
        end as state_signature
    from ranked_in_instant
    where recency_in_instant = 1
),

compared_states as (
    select
        *,
        lag(state_signature) over (partition by table_key, row_key order by effective_ts) as previous_signature
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
        lead(effective_ts) over (partition by table_key, row_key order by effective_ts) as next_valid_from,
        row_number() over (partition by table_key, row_key order by effective_ts) as version_number
    from state_changes
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
        identity_fingerprint,
        key_bucket
    from versions
)

{{ cdc_built_and_kept('built_versions', 'kept_versions', output_columns) }}
