{#-
    Every removal of a row and when it happened (grain: one tombstone version of cdc_row_history).
    A row is removed by a DELETE, by a TRUNCATE of its table, or by an UPDATE that moved it to
    another key (op UPDATE on the old key). deleted_at is the source commit time of that change;
    reinserted_at is when the same key (or, for a table without a key, the same row image) came
    back, null while the row is still gone. deleted_values is the row as it was when removed.
-#}
with row_history as (
    select * from {{ ref('cdc_row_history') }}
),

versions as (
    select
        *,
        lag(valid_from) over (
            partition by feed, tenant_name, database_name, schema_name, table_name, primary_key
            order by version_number
        ) as previous_version_from
    from row_history
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
    valid_from as deleted_at,
    op as deleted_by_op,
    event_id as deleted_by_event_id,
    row_values as deleted_values,
    previous_version_from as last_version_from,
    valid_to as reinserted_at,
    is_current as is_still_deleted
from versions
where is_deleted
