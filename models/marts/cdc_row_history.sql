{#-
    SCD2 history of every source row (grain: one version of one row identity): the live versions
    of int_row_versions, which says how a version is made (docs/semantics.md). So
    `valid_from <= T and (valid_to > T or valid_to is null) and not is_deleted` is the source
    table at instant T.
    A view: int_row_versions appends a build of each identity a run rebuilds, so a stored table of
    the live versions would be rewritten whole by every run. Which build of an identity is live
    comes from one narrow aggregate: the newest built_at of each identity among the builds
    appended since its bucket was last compacted (build_tier delta; a compaction leaves one build
    per identity in base, older than any appended one). A compacted version is live when its
    identity has no appended build, an appended one when its build is that newest. What a query
    reads: the table_key, unit_identity and built_at of the appended builds (bounded by var
    cdc_compact_share of the compacted ones), and the versions it selects, its filters (e.g. a
    data test's built_at, an analyst's table_name) applied by the Parquet scan, as no window
    stands between them and the table.
-#}
{{ config(materialized='view') }}

{%- set live = cdc_row_version_builds() %}

with row_version_builds as (
    select * from {{ ref('int_row_versions') }}
),

-- Each identity's newest appended build.
newest_appended_builds as (
    select
        table_key,
        unit_identity,
        max(built_at) as built_at
    from row_version_builds
    where build_tier = 'delta'
    group by table_key, unit_identity
),

live_versions as (
    select row_version_builds.*
    from row_version_builds
    left join newest_appended_builds
        on
            row_version_builds.table_key = newest_appended_builds.table_key
            and row_version_builds.unit_identity = newest_appended_builds.unit_identity
    where
        row_version_builds.{{ live.present }} is not null
        and case
            when row_version_builds.build_tier = 'base' then newest_appended_builds.built_at is null
            else row_version_builds.built_at = newest_appended_builds.built_at
        end
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
