{#- The live rows of every source table now: the current, not deleted versions of cdc_row_history. -#}
with row_history as (
    select * from {{ ref('cdc_row_history') }}
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
    valid_from as last_changed_at,
    op as last_op,
    event_id as last_event_id,
    version_id,
    built_at
from row_history
where is_current and not is_deleted
