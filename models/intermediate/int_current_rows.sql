{#-
    The live rows of every source table (grain: one existing row identity), stored as builds:
    of each identity int_row_versions rebuilt, its current version when that is not a tombstone.
    cdc_current_rows is the view of the live ones (cdc_stored_live_rows). A current row is a
    row's last version, so it changes only when the row's versions are rebuilt: an incremental
    run reads the versions int_row_versions built since this model last wrote (a constant
    built_at filter the Parquet scan applies, skipping earlier builds' files) and appends, for
    each identity they rebuilt, its current row, or one vacancy row (version_id null) when the
    row is deleted or has no version left. Rows live in key_bucket partitions split in build_tier
    base and delta, compacted as int_row_versions' (cdc_buckets_to_compact, cdc_appended_builds):
    a run reads and writes the rows of the identities it rebuilds and of the buckets it compacts,
    never the current rows it keeps. A run with nothing new learns it from the newest built_at
    kept with int_row_versions' table (no data file read; cdc_built_nothing_since) and reads and
    writes nothing else. A full build reads the live versions of int_row_versions
    as cdc_row_history does (cdc_stored_live_rows), without a window over the history.
-#}
{{ config(**cdc_appended_builds_config(cdc_row_version_builds())) }}
{%- do cdc_check_row_buckets() %}

{#- The versions int_row_versions rebuilt since this model last wrote; with none, `false` and the
    run writes nothing. -#}
{%- set rebuilt = cdc_built_since(ref('int_row_versions')) %}
{%- do cdc_skip_write_when_nothing_new(rebuilt.rows) %}
{%- set built_since = rebuilt.predicate %}
{#- The key_bucket partitions this run compacts (cdc_appended_builds). -#}
{%- set compacted = cdc_buckets_to_compact() if rebuilt.rows != 0 else [] %}
{%- set version_columns = [
    'version_id', 'feed', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name',
    'primary_key_columns', 'primary_key', 'row_identity', 'row_values', 'row_values_json', 'valid_from', 'op',
    'event_id', 'is_current', 'is_deleted', 'table_key', 'unit_identity', 'key_bucket',
] %}
{%- set output_columns = [
    'version_id', 'feed', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name',
    'primary_key_columns', 'primary_key', 'row_identity', 'row_values', 'row_values_json', 'last_changed_at',
    'last_op', 'last_event_id', 'table_key', 'unit_identity', 'key_bucket',
] %}

with row_version_builds as (
    select * from {{ ref('int_row_versions') }}
),

{% if is_incremental() %}
    -- An identity's build holds all its versions, so the versions built since are those of the
    -- identities rebuilt since; of an identity rebuilt twice, the newer build's.
    row_versions as (
        {{ cdc_live_rows('row_version_builds', cdc_row_version_builds(), version_columns, built_since) }}
    ),

    -- Each rebuilt identity gets a new build, a vacancy row if it has no live row now.
    rebuilt_identities as (
        {{ cdc_rebuilt_identities('row_version_builds', built_since) }}
    ),
{% else %}
    row_versions as (
        {{ cdc_stored_live_rows('row_version_builds', cdc_row_version_builds()) }}
    ),
{% endif %}

current_rows as (
    select
        version_id,
        feed,
        dialect,
        tenant_name,
        database_name,
        schema_name,
        table_name,
        primary_key_columns,
        primary_key,
        row_identity,
        row_values,
        row_values_json,
        valid_from as last_changed_at,
        op as last_op,
        event_id as last_event_id,
        table_key,
        unit_identity,
        key_bucket
    from row_versions
    where is_current and not is_deleted
)

{% if is_incremental() %}
    {{ cdc_appended_builds(
        'current_rows', 'rebuilt_identities', output_columns, compacted, cdc_row_version_builds()
    ) }}
{% else %}
    select {{ output_columns | join(', ') }}, {{ cdc_built_at() }} as built_at, 'base' as build_tier
    from current_rows
{% endif %}
