{#-
    The columns of every source table over time: one row per (table, column, source type,
    canonical type) with when it was first and last seen, from the types that row events carry
    (column_source_types / column_types), the columns their images carry, and DDL events that
    describe the table. A retyped column (ALTER ... MODIFY) gets a new row; is_latest_type marks
    the type most recently seen. The table's primary key (latest event that names key columns)
    is attached to every row with where it came from.
-#}
{{ config(materialized='table') }}

with described_events as (
    select
        *,
        {{ cdc_table_key() }} as table_key
    from {{ ref('int_change_events') }}
    where event_kind in ('ROW', 'DDL') and table_name is not null
),

column_sightings as (
    select
        described_events.table_key,
        described_events.source_name,
        described_events.dialect,
        described_events.tenant_name,
        described_events.database_name,
        described_events.schema_name,
        described_events.table_name,
        seen.column_name,
        described_events.column_source_types[seen.column_name] as column_source_type,
        described_events.column_types[seen.column_name] as column_type,
        described_events.event_kind,
        described_events.event_id,
        described_events.sequence,
        described_events.event_ts
    from described_events
        lateral view explode(array_distinct(concat(
            map_keys(coalesce(column_types, map())),
            map_keys(coalesce(column_source_types, map())),
            map_keys(coalesce(before, map())),
            map_keys(coalesce(after, map()))
        ))) seen as column_name
),

type_versions as (
    select
        table_key,
        column_name,
        column_source_type,
        column_type,
        any_value(source_name) as source_name,
        any_value(dialect) as dialect,
        any_value(tenant_name) as tenant_name,
        any_value(database_name) as database_name,
        any_value(schema_name) as schema_name,
        any_value(table_name) as table_name,
        min(sequence) as first_seen_sequence,
        max(sequence) as last_seen_sequence,
        min_by(event_ts, sequence) as first_seen_ts,
        max_by(event_ts, sequence) as last_seen_ts,
        min_by(event_id, sequence) as first_seen_event_id,
        max_by(event_id, sequence) as last_seen_event_id,
        count(*) as event_count,
        bool_or(event_kind = 'DDL') as seen_in_ddl,
        bool_or(event_kind = 'ROW') as seen_in_rows
    from column_sightings
    group by table_key, column_name, column_source_type, column_type
),

table_keys as (
    select
        table_key,
        max_by(primary_key_columns, sequence) as primary_key_columns,
        max_by(primary_key_source, sequence) as primary_key_source,
        max(sequence) as primary_key_sequence
    from described_events
    where coalesce(size(primary_key_columns), 0) > 0
    group by table_key
)

select
    type_versions.source_name,
    type_versions.dialect,
    type_versions.tenant_name,
    type_versions.database_name,
    type_versions.schema_name,
    type_versions.table_name,
    type_versions.column_name,
    type_versions.column_source_type,
    type_versions.column_type,
    type_versions.first_seen_sequence,
    type_versions.last_seen_sequence,
    type_versions.first_seen_ts,
    type_versions.last_seen_ts,
    type_versions.first_seen_event_id,
    type_versions.last_seen_event_id,
    type_versions.event_count,
    type_versions.seen_in_ddl,
    type_versions.seen_in_rows,
    row_number() over (
        partition by type_versions.table_key, type_versions.column_name
        order by
            type_versions.last_seen_sequence desc, type_versions.first_seen_sequence desc,
            type_versions.column_source_type asc, type_versions.column_type asc
    ) = 1 as is_latest_type,
    table_keys.primary_key_columns,
    table_keys.primary_key_source,
    nullif(array_position(table_keys.primary_key_columns, type_versions.column_name), 0) as primary_key_ordinal,
    type_versions.table_key
from type_versions
left join table_keys on type_versions.table_key = table_keys.table_key
