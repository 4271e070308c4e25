{#-
    SCD2 history of every source row (grain: one version of one row identity): the live versions
    of int_row_versions, which says how a version is made (docs/semantics.md). So
    `valid_from <= T and (valid_to > T or valid_to is null) and not is_deleted` is the source
    table at instant T.
    A view: int_row_versions appends a build of each identity a run rebuilds, so a stored table of
    the live versions would be rewritten whole by every run. What a query reads: the compacted
    versions (build_tier base) less the identities with a newer build, and the builds appended
    since their bucket was last compacted (build_tier delta), of which each identity's newest
    counts. The delta is bounded by var cdc_compact_share of the base, so a query costs about a
    scan of the versions plus a narrow join, never a window over all of them.
-#}
{{ config(materialized='view') }}

{%- set live = cdc_row_version_builds() %}
{%- set output_columns = [
    'version_id', 'feed', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name',
    'primary_key_columns', 'primary_key', 'row_identity', 'row_values', 'row_values_json', 'valid_from', 'valid_to',
    'is_current', 'is_deleted', 'version_number', 'op', 'event_id', 'sequence', 'key_bucket', 'built_at',
] %}

with row_version_builds as (
    select * from {{ ref('int_row_versions') }}
),

-- Builds appended since their bucket was last compacted.
appended_builds as (
    select * from row_version_builds
    where build_tier = 'delta'
),

-- An identity with an appended build: its compacted versions are superseded.
rebuilt_identities as (
    select distinct
        table_key,
        unit_identity
    from appended_builds
),

-- A compaction leaves one build per identity: its versions are live unless rebuilt since.
compacted_versions as (
    select row_version_builds.*
    from row_version_builds
    left anti join rebuilt_identities
        on
            row_version_builds.table_key = rebuilt_identities.table_key
            and row_version_builds.unit_identity = rebuilt_identities.unit_identity
    where row_version_builds.build_tier = 'base' and row_version_builds.{{ live.present }} is not null
),

appended_versions as (
    {{ cdc_live_rows('appended_builds', live, output_columns) }}
),

live_versions as (
    select {{ output_columns | join(', ') }} from compacted_versions
    union all
    select {{ output_columns | join(', ') }} from appended_versions
)

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
    valid_from,
    valid_to,
    is_current,
    is_deleted,
    version_number,
    op,
    event_id,
    sequence,
    key_bucket,
    built_at
from live_versions
