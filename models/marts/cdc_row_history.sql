{#-
    SCD2 history of every source row (grain: one version of one row identity): the live versions
    of int_row_versions, which says how a version is made (docs/semantics.md). So
    `valid_from <= T and (valid_to > T or valid_to is null) and not is_deleted` is the source
    table at instant T.
    A view: int_row_versions appends a build of each identity a run rebuilds, so a stored table of
    the live versions would be rewritten whole by every run. Which build of an identity is live
    comes from an anti join with the narrow columns of the appended builds (cdc_stored_live_rows).
    What a query reads: the table_key, unit_identity and built_at of the appended builds newer
    than the rows it selects (bounded by var cdc_compact_share of the compacted ones; none for a
    data test of the last run's rows), and the versions it selects, its filters (e.g. a data
    test's built_at, an analyst's table_name) applied by the Parquet scan, as no window stands
    between them and the table.
-#}
{{ config(materialized='view', shows_live_builds=true) }}

with row_version_builds as (
    select * from {{ ref('int_row_versions') }}
),

live_versions as (
    {{ cdc_stored_live_rows('row_version_builds', cdc_row_version_builds()) }}
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
