{#- DDL history of every feed (grain: one DDL event), in source order per table. -#}
with ddl_events as (
    select * from {{ ref('int_change_events') }}
    where event_kind = 'DDL'
)

select
    event_id,
    source_name,
    dialect,
    source_db_type,
    tenant_name,
    database_name,
    schema_name,
    table_name,
    op as ddl_kind,
    ddl_statement,
    primary_key_columns,
    primary_key_source,
    column_source_types,
    column_types,
    event_ts,
    event_ts_precision,
    emitted_ts,
    source_position,
    transaction_id,
    sequence,
    landing_topic,
    landing_partition,
    landing_offset,
    row_index,
    landed_at
from ddl_events
