{#-
    The columns of every source table over time: one row per (table, column, source type,
    canonical type) with when it was first and last seen, from the types that row events carry
    (column_source_types / column_types), the columns their images carry, and DDL events that
    describe the table. A retyped column (ALTER ... MODIFY) gets a new row; is_latest_type marks
    the type most recently seen. The table's primary key (latest event that names key columns)
    is attached to every row with where it came from. "Seen" is in source order (sequence, then
    event id for events at the same sequence), never landing order, so a late DDL takes its place
    in the history whenever it lands. Events are the distinct decoded row and DDL events of the
    messages (staged rows de-duplicated by event id; the two halves of a split update are two
    events, each with the columns and types its message carries).
    Incremental (insert_overwrite, one partition per feed): a run reads the decoded staged rows landed
    since the newest landing it holds for their feed (landed_until), drops the redeliveries
    (int_staged_events marks every later delivery of an event id when it appends it, so no earlier
    staged row is read), aggregates the rest per column and type, merges that with the rows it holds
    for those feeds (counts add up, first/last sightings and the key by min/max in source order) and
    rewrites those feeds.
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['source_name'],
    on_schema_change='fail',
) }}

{#- The columns naming a source table: one value per table_key. -#}
{% set table_columns = ['dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name'] %}
{#- The grain: one column of one table with one source and canonical type. -#}
{% set type_key = ['table_key', 'source_name', 'column_name', 'column_source_type', 'column_type'] %}
{#- The newest landing this model holds per feed (incremental runs). -#}
{% set held = cdc_held_watermarks(held_until='landed_until', new_rows_of=ref('int_staged_events')) %}
{% do cdc_skip_write_when_nothing_new(held.new_rows if held is not none else none) %}

with staged as (
    select * from {{ ref('int_staged_events') }}
    where message_status = 'decoded'
),

new_rows as (
    select * from staged
    where event_kind in ('ROW', 'DDL')
        and table_name is not null
        and {{ cdc_landed_after_held(held) }}
),

described_events as (
    select
        *,
        {{ cdc_table_key() }} as table_key
    from new_rows
    -- Each event once, at its first delivery: a redelivery's event was counted when it first landed.
    where not is_redelivery
),

-- Events of one table whose type maps and image columns were sent alike (the same entries in the
-- same order: a feed's producer mostly writes one table's messages so) are counted together first,
-- so that the sorted signature below is computed once per such group rather than once per event.
-- Events sent alike have the same signature, so this only splits what the next step merges.
sent_alike as (
    select
        table_key,
        source_name,
        event_kind,
        to_json(named_struct(
            'types', column_types,
            'source_types', column_source_types,
            'before', map_keys(before),
            'after', map_keys(after)
        )) as sent_shape,
        any_value(column_types) as column_types,
        any_value(column_source_types) as column_source_types,
        any_value(map_keys(coalesce(before, map()))) as before_columns,
        any_value(map_keys(coalesce(after, map()))) as after_columns,
        {%- for column in table_columns %}
            any_value({{ column }}) as {{ column }},
        {%- endfor %}
        min(struct(sequence, event_id, event_ts)) as first_seen,
        max(struct(sequence, event_id, event_ts)) as last_seen,
        count(*) as event_count
    from described_events
    group by table_key, source_name, event_kind, sent_shape
),

-- A signature: the columns and their types, as one JSON string. Grouping by one string instead of
-- three arrays of names and (name, type) pairs lets the sort beneath the aggregate compare strings.
sent_signatures as (
    select
        *,
        to_json(named_struct(
            'column_names', array_sort(array_distinct(concat(
                map_keys(coalesce(column_types, map())),
                map_keys(coalesce(column_source_types, map())),
                before_columns,
                after_columns
            ))),
            'source_type_entries', array_sort(map_entries(column_source_types)),
            'type_entries', array_sort(map_entries(column_types))
        )) as signature
    from sent_alike
),

-- Events of one table that carry the same columns with the same types are counted together
-- before the columns are unfolded: one row per such signature instead of one per event and column.
-- first_seen / last_seen: the first and last event by (sequence, event id), with its time.
event_signatures as (
    select
        table_key,
        source_name,
        event_kind,
        signature,
        {%- for column in table_columns %}
            any_value({{ column }}) as {{ column }},
        {%- endfor %}
        min(first_seen) as first_seen,
        max(last_seen) as last_seen,
        sum(event_count) as event_count
    from sent_signatures
    group by table_key, source_name, event_kind, signature
),

signature_columns as (
    select
        *,
        from_json(
            signature,
            'column_names array<string>, source_type_entries array<struct<key: string, value: string>>, '
            || 'type_entries array<struct<key: string, value: string>>'
        ) as described
    from event_signatures
),

-- explode_outer and a filter instead of explode: Spark would push explode's implied
-- "has columns" filter below the aggregate, parsing every event's signature again.
column_sightings as (
    select
        signature_columns.*,
        seen.column_name,
        map_from_entries(signature_columns.described.source_type_entries)[seen.column_name] as column_source_type,
        map_from_entries(signature_columns.described.type_entries)[seen.column_name] as column_type
    from signature_columns
        lateral view explode_outer(signature_columns.described.column_names) seen as column_name
    where seen.column_name is not null
),

new_table_keys as (
    select
        table_key,
        max_by(
            struct(primary_key_columns, primary_key_source),
            struct(sequence, event_id)
        ) as primary_key,
        max(struct(sequence, event_id)) as primary_key_seen
    from described_events
    where coalesce(size(primary_key_columns), 0) > 0
    group by table_key
),

new_feeds as (
    select
        source_name,
        max(landed_at) as landed_until
    from new_rows
    group by source_name
),

{% if is_incremental() %}
    held as (
        select held.*
        from {{ this }} as held
        left semi join new_feeds on held.source_name = new_feeds.source_name
    ),
{% endif %}

-- Each column and type as the new events show it and, on an incremental run, as the rows held for
-- their feeds have it: one aggregate merges both.
type_sightings as (
    select
        {{ (type_key + table_columns) | join(', ') }},
        first_seen,
        last_seen,
        event_count,
        event_kind = 'DDL' as seen_in_ddl,
        event_kind = 'ROW' as seen_in_rows
    from column_sightings
    {%- if is_incremental() %}
        union all
        select
            {{ (type_key + table_columns) | join(', ') }},
            struct(first_seen_sequence as sequence, first_seen_event_id as event_id, first_seen_ts as event_ts)
                as first_seen,
            struct(last_seen_sequence as sequence, last_seen_event_id as event_id, last_seen_ts as event_ts)
                as last_seen,
            event_count,
            seen_in_ddl,
            seen_in_rows
        from held
    {%- endif %}
),

type_versions as (
    select
        {{ type_key | join(', ') }},
        {%- for column in table_columns %}
            any_value({{ column }}) as {{ column }},
        {%- endfor %}
        min(first_seen) as first_seen,
        max(last_seen) as last_seen,
        sum(event_count) as event_count,
        bool_or(seen_in_ddl) as seen_in_ddl,
        bool_or(seen_in_rows) as seen_in_rows
    from type_sightings
    group by {{ type_key | join(', ') }}
),

{% if is_incremental() %}
    table_keys as (
        select
            table_key,
            max_by(primary_key, primary_key_seen) as primary_key,
            max(primary_key_seen) as primary_key_seen
        from (
            select * from new_table_keys
            union all
            select distinct
                table_key,
                struct(primary_key_columns, primary_key_source) as primary_key,
                struct(primary_key_sequence as sequence, primary_key_event_id as event_id) as primary_key_seen
            from held
            where primary_key_sequence is not null
        ) as sightings
        group by table_key
    ),

    feeds as (
        select
            source_name,
            max(landed_until) as landed_until
        from (
            select * from new_feeds
            union all
            select distinct
                source_name,
                landed_until
            from held
        ) as watermarks
        group by source_name
    ),
{% else %}
    table_keys as (
        select * from new_table_keys
    ),

    feeds as (
        select * from new_feeds
    ),
{% endif %}

final as (
    select
        type_versions.dialect,
        type_versions.tenant_name,
        type_versions.database_name,
        type_versions.schema_name,
        type_versions.table_name,
        type_versions.column_name,
        type_versions.column_source_type,
        type_versions.column_type,
        type_versions.first_seen.sequence as first_seen_sequence,
        type_versions.last_seen.sequence as last_seen_sequence,
        type_versions.first_seen.event_ts as first_seen_ts,
        type_versions.last_seen.event_ts as last_seen_ts,
        type_versions.first_seen.event_id as first_seen_event_id,
        type_versions.last_seen.event_id as last_seen_event_id,
        type_versions.event_count,
        type_versions.seen_in_ddl,
        type_versions.seen_in_rows,
        row_number() over (
            partition by type_versions.table_key, type_versions.column_name
            order by
                type_versions.last_seen.sequence desc, type_versions.first_seen.sequence desc,
                type_versions.column_source_type asc, type_versions.column_type asc
        ) = 1 as is_latest_type,
        table_keys.primary_key.primary_key_columns,
        table_keys.primary_key.primary_key_source,
        nullif(array_position(table_keys.primary_key.primary_key_columns, type_versions.column_name), 0)
            as primary_key_ordinal,
        table_keys.primary_key_seen.sequence as primary_key_sequence,
        table_keys.primary_key_seen.event_id as primary_key_event_id,
        type_versions.table_key,
        feeds.landed_until,
        type_versions.source_name
    from type_versions
    left join table_keys on type_versions.table_key = table_keys.table_key
    inner join feeds on type_versions.source_name = feeds.source_name
)

select
    dialect,
    tenant_name,
    database_name,
    schema_name,
    table_name,
    column_name,
    column_source_type,
    column_type,
    first_seen_sequence,
    last_seen_sequence,
    first_seen_ts,
    last_seen_ts,
    first_seen_event_id,
    last_seen_event_id,
    event_count,
    seen_in_ddl,
    seen_in_rows,
    is_latest_type,
    primary_key_columns,
    primary_key_source,
    primary_key_ordinal,
    primary_key_sequence,
    primary_key_event_id,
    table_key,
    landed_until,
    {{ cdc_built_at() }} as built_at,
    source_name
from final
