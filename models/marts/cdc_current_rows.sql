{#-
    The live rows of every source table now (grain: one existing row): the current, not deleted
    versions of cdc_row_history. A view of the live rows of int_current_rows, which stores them as
    builds (a run appends the current row of each identity it rebuilt), so no run rewrites the
    rows it keeps. What a query reads: the table_key, unit_identity and built_at of the appended
    builds newer than the rows it selects (cdc_stored_live_rows: an anti join, bounded by var
    cdc_compact_share of the compacted ones; none for a data test of the last run's rows) and the
    current rows it selects, its filters applied by the Parquet scan: one row per live source row,
    not the history.
-#}
{{ config(materialized='view', shows_live_builds=true) }}

with current_row_builds as (
    select * from {{ ref('int_current_rows') }}
),

live_rows as (
    {{ cdc_stored_live_rows('current_row_builds', cdc_row_version_builds()) }}
)

select
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
    last_changed_at,
    last_op,
    last_event_id,
    version_id,
    built_at
from live_rows
