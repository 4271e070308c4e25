{#-
    Row changes per day, table and op (grain: one op of one table on one day).
    Counted from cdc_row_history, where every version is one change of one row: an INSERT, an
    UPDATE that changed something, a DELETE, a SNAPSHOT row, ... Redeliveries and updates that
    change nothing make no version, so they are not counted; a TRUNCATE counts once per row it
    removed, and a key-changing UPDATE twice (the old key removed, the new key started).
    removed_rows counts the changes that ended a row (tombstone versions).
    vars:
        analysis_time_zone: IANA zone whose calendar days are counted (default 'UTC').
-#}
{% set time_zone = var('analysis_time_zone', 'UTC') %}

with row_history as (
    select * from {{ ref('cdc_row_history') }}
)

select
    to_date(
        from_utc_timestamp(valid_from, {{ dbt.string_literal(dbt.escape_single_quotes(time_zone)) }})
    ) as change_date,
    feed,
    dialect,
    tenant_name,
    database_name,
    schema_name,
    table_name,
    op,
    count(*) as changed_rows,
    count(distinct primary_key) as distinct_rows,
    count_if(is_deleted) as removed_rows
from row_history
group by all
