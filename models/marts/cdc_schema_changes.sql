{#- DDL history of every feed (grain: one DDL event), in source order per table.
    Incremental (append): a run reads the DDL events of int_change_events first landed after what
    it has taken in of their feed (the later of its newest DDL's landing and how far it read
    int_change_events, kept with its table: macro cdc_held_watermarks) and appends them; with no
    new event, its count of new DDL names no feed. A DDL event's row never changes after it first
    lands (a redelivery only raises its delivery count, which is not here), and a late DDL is a
    new row whose sequence places it in source order. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
) }}

{#- The newest landing this model holds per feed (incremental runs). -#}
{% set held = cdc_held_watermarks(
    held_feed_column='feed', new_rows_of=ref('int_change_events'), new_rows_where="event_kind = 'DDL'"
) %}
{% do cdc_skip_write_when_nothing_new(held.new_rows if held is not none else none) %}

with ddl_events as (
    select * from {{ ref('int_change_events') }}
    where event_kind = 'DDL' and {{ cdc_landed_after_held(held) }}
)

select
    event_id,
    source_name as feed,
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
    landed_at,
    {{ cdc_built_at() }} as built_at
from ddl_events
