{#-
    The columns of every source table over time: one row per (table, column, source type,
    canonical type) with when it was first and last seen, from the types that row events carry
    (column_source_types / column_types), the columns their images carry, and DDL events that
    describe the table. A retyped column (ALTER ... MODIFY) gets a new row; is_latest_type marks
    the type most recently seen. The table's primary key (latest event that names key columns)
    is attached to every row with where it came from. Events at the same sequence (one transaction
    of a dialect without per-row positions) are told apart by event id, so reruns agree.
-#}
{{ config(materialized='table') }}

{#- The columns naming a source table: one value per table_key. -#}
{% set table_columns = ['source_name', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name'] %}

with described_events as (
    select
        *,
        {{ cdc_table_key() }} as table_key
    from {{ ref('int_change_events') }}
    where event_kind in ('ROW', 'DDL') and table_name is not null
),

event_columns as (
    select
        *,
        array_sort(array_distinct(concat(
            map_keys(coalesce(column_types, map())),
            map_keys(coalesce(column_source_types, map())),
            map_keys(coalesce(before, map())),
            map_keys(coalesce(after, map()))
        ))) as column_names,
        array_sort(map_entries(column_source_types)) as source_type_entries,
        array_sort(map_entries(column_types)) as type_entries
    from described_events
),

-- Events of one table that carry the same columns with the same types are counted together
-- before the columns are unfolded: one row per such signature instead of one per event and column.
-- first_seen / last_seen: the first and last event by (sequence, event id), with its time.
event_signatures as (
    select
        table_key,
        event_kind,
        column_names,
        source_type_entries,
        type_entries,
        {%- for column in table_columns %}
            any_value({{ column }}) as {{ column }},
        {%- endfor %}
        min(sequence) as first_seen_sequence,
        max(sequence) as last_seen_sequence,
        min(struct(sequence, event_id, event_ts)) as first_seen,
        max(struct(sequence, event_id, event_ts)) as last_seen,
        count(*) as event_count
    from event_columns
    group by table_key, event_kind, column_names, source_type_entries, type_entries
),

column_sightings as (
    select
        event_signatures.*,
        seen.column_name,
        map_from_entries(event_signatures.source_type_entries)[seen.column_name] as column_source_type,
        map_from_entries(event_signatures.type_entries)[seen.column_name] as column_type
    from event_signatures
        lateral view explode(event_signatures.column_names) seen as column_name
),

type_versions as (
    select
        table_key,
        column_name,
        column_source_type,
        column_type,
        {%- for column in table_columns %}
            any_value({{ column }}) as {{ column }},
        {%- endfor %}
        min(first_seen_sequence) as first_seen_sequence,
        max(last_seen_sequence) as last_seen_sequence,
        min(first_seen).event_ts as first_seen_ts,
        max(last_seen).event_ts as last_seen_ts,
        min(first_seen).event_id as first_seen_event_id,
        max(last_seen).event_id as last_seen_event_id,
        sum(event_count) as event_count,
        bool_or(event_kind = 'DDL') as seen_in_ddl,
        bool_or(event_kind = 'ROW') as seen_in_rows
    from column_sightings
    group by table_key, column_name, column_source_type, column_type
),

table_keys as (
    select
        table_key,
        max_by(primary_key_columns, struct(sequence, event_id)) as primary_key_columns,
        max_by(primary_key_source, struct(sequence, event_id)) as primary_key_source,
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
