{#-
    One row per change applied to one row identity, with the row's full folded image after it.
    docs/semantics.md explains every rule; in short:
    - Row identity: the primary key (JSON array of key values) when the event names key columns;
      otherwise the full row image: sha-256 of the image plus an occurrence number, so identical
      rows of a keyless table stay distinct (a delete ends the most recent identical copy).
    - Each row event becomes "units": -1 on the identity it leaves (UPDATE, DELETE), +1 on the
      identity it reaches (INSERT, SNAPSHOT, UPDATE). An UPDATE whose two units name the same
      identity is one upsert; otherwise (primary key changed) the old identity gets a delete and
      the new one an upsert that starts a new row.
    - TRUNCATE deletes every identity of the table that is live at the truncate's sequence.
    - Folding: within a row's life (from a start - INSERT, SNAPSHOT, new identity, or any change
      after a delete - to its delete), each column takes the value of the latest change that
      carried it: the after image first, then the before image. A column absent from both keeps
      its previous value; an explicit null sets null.
    The fold is a per-(identity, column) "last value that was present" window over the changes in
    sequence order, which is linear in changes x columns, unlike re-merging every prefix of the
    row's change list (quadratic for frequently updated rows).
-#}
{{ config(materialized='table') }}

{%- set change_order = 'sequence, sub_order, event_id' %}
{%- set unit_columns = [
    'table_key', 'row_key', 'is_keyed', 'source_name', 'dialect', 'tenant_name', 'database_name', 'schema_name',
    'table_name', 'primary_key_columns', 'event_id', 'op', 'sequence', 'sub_order', 'event_ts', 'emitted_ts',
    'landing_timestamp', 'epoch', 'unit_sign', 'before', 'before_is_partial', 'after', 'after_is_partial',
] %}
{%- set action_columns = [
    'table_key', 'row_key', 'is_keyed', 'source_name', 'dialect', 'tenant_name', 'database_name', 'schema_name',
    'table_name', 'primary_key_columns', 'event_id', 'op', 'sequence', 'sub_order', 'event_ts', 'emitted_ts',
    'landing_timestamp', 'epoch', 'change_kind', 'starts_row', 'applied_before', 'applied_after', 'resets_fold',
] %}

with events as (
    select
        *,
        {{ cdc_table_key() }} as table_key,
        coalesce(size(primary_key_columns), 0) > 0 as is_keyed
    from {{ ref('int_change_events') }}
    where
        (event_kind = 'ROW' and op in ('INSERT', 'SNAPSHOT', 'UPDATE', 'UPDATE_AFTER', 'DELETE'))
        or op = 'TRUNCATE'
),

-- Truncates cut a table's history into epochs: epoch n = after the n-th truncate.
timeline as (
    select
        *,
        sum(case when op = 'TRUNCATE' then 1 else 0 end) over (
            partition by table_key
            order by sequence, case when op = 'TRUNCATE' then 0 else 1 end, event_id
            rows between unbounded preceding and current row
        ) - case when op = 'TRUNCATE' then 1 else 0 end as epoch
    from events
),

truncates as (
    select
        table_key,
        epoch + 1 as truncate_number,
        event_id,
        op,
        sequence,
        event_ts,
        emitted_ts,
        landing_timestamp
    from timeline
    where op = 'TRUNCATE'
),

units as (
    select
        timeline.*,
        unit.unit_sign,
        unit.sub_order,
        unit.image
    from timeline
    lateral view inline(filter(array(
        case when op in ('UPDATE', 'UPDATE_AFTER', 'DELETE') then named_struct(
            'unit_sign', -1, 'sub_order', 0, 'image', {{ cdc_overlay('after', 'before') }}
        ) end,
        case when op in ('INSERT', 'SNAPSHOT', 'UPDATE', 'UPDATE_AFTER') then named_struct(
            'unit_sign', 1, 'sub_order', 1, 'image', {{ cdc_overlay('before', 'after') }}
        ) end
    ), candidate -> candidate is not null)) unit as unit_sign, sub_order, image
    where op <> 'TRUNCATE'
),

-- The identity an event reaches is its staged primary_key; the one it leaves is the key of its
-- before image (key columns it does not carry are unchanged). A before image that cannot name
-- the whole key (some key column in neither image) is taken as not moving the row.
keyed_units as (
    select
        * except (left_key_values),
        case
            when unit_sign = 1 or exists(left_key_values, v -> v is null) then primary_key
            else to_json(left_key_values)
        end as row_key
    from (
        select
            *,
            transform(primary_key_columns, c -> image[c]) as left_key_values
        from units
        where is_keyed
    )
),

keyless_images as (
    select
        *,
        sha2({{ cdc_map_json('image') }}, 256) as image_hash
    from units
    where not is_keyed
),

-- An UPDATE that leaves a keyless row's image as it was does not move it: one unit, sign 0.
keyless_moves as (
    select
        * except (unit_sign, same_image),
        case when same_image then 0 else unit_sign end as unit_sign
    from (
        select
            *,
            op in ('UPDATE', 'UPDATE_AFTER')
            and min(image_hash) over (partition by event_id) = max(image_hash) over (partition by event_id)
                as same_image
        from keyless_images
    )
    where not (same_image and unit_sign = -1)
),

-- Identical copies of a keyless row are numbered in the order they appeared; a change that
-- leaves such an image ends the oldest open copy (first in, first out), as the source's
-- "delete one of several identical rows" cannot say which copy it meant.
keyless_units as (
    select
        * except (image_hash, copies_added, copies_removed),
        to_json(named_struct(
            'row_image_sha256', image_hash,
            'occurrence', case
                when unit_sign = 1 then copies_added
                when unit_sign = -1 then copies_removed
                else copies_removed + 1
            end
        )) as row_key
    from (
        select
            *,
            count_if(unit_sign = 1) over copy_order as copies_added,
            count_if(unit_sign = -1) over copy_order as copies_removed
        from keyless_moves
        window copy_order as (
            partition by table_key, image_hash, epoch
            order by {{ change_order }}
            rows between unbounded preceding and current row
        )
    )
),

identified_units as (
    select {{ unit_columns | join(', ') }} from keyed_units
    union all
    select {{ unit_columns | join(', ') }} from keyless_units
),

identity_moves as (
    select
        *,
        min(row_key) over (partition by event_id) = max(row_key) over (partition by event_id) as keeps_identity
    from identified_units
),

row_actions as (
    select
        table_key,
        row_key,
        is_keyed,
        source_name,
        dialect,
        tenant_name,
        database_name,
        schema_name,
        table_name,
        primary_key_columns,
        event_id,
        op,
        sequence,
        sub_order,
        event_ts,
        emitted_ts,
        landing_timestamp,
        epoch,
        case when unit_sign >= 0 then 'upsert' else 'delete' end as change_kind,
        unit_sign = 1 and (op in ('INSERT', 'SNAPSHOT') or not keeps_identity) as starts_row,
        before,
        before_is_partial,
        case when unit_sign >= 0 then after end as applied_after,
        after_is_partial
    from identity_moves
    -- the -1 half of an update that keeps its identity is carried by the +1 half
    where not (unit_sign = -1 and keeps_identity and op in ('UPDATE', 'UPDATE_AFTER'))
),

-- A full image (is_partial false or unknown) is the whole row: it replaces the fold instead of
-- merging into it, so a column dropped at the source leaves the row. A full after image makes
-- the before image irrelevant.
imaged_actions as (
    select
        * except (before, before_is_partial, after_is_partial),
        case when after_is_full then null else before end as applied_before,
        starts_row
        or after_is_full
        or (not after_is_full and before is not null and not coalesce(before_is_partial, false)) as resets_fold
    from (
        select
            *,
            applied_after is not null and not coalesce(after_is_partial, false) as after_is_full
        from row_actions
    )
),

last_action_per_epoch as (
    select *
    from (
        select
            *,
            row_number() over (
                partition by table_key, row_key, epoch
                order by sequence desc, sub_order desc, event_id desc
            ) as recency
        from imaged_actions
    )
    where recency = 1
),

truncate_actions as (
    select
        live_rows.table_key,
        live_rows.row_key,
        live_rows.is_keyed,
        live_rows.source_name,
        live_rows.dialect,
        live_rows.tenant_name,
        live_rows.database_name,
        live_rows.schema_name,
        live_rows.table_name,
        live_rows.primary_key_columns,
        truncates.event_id,
        truncates.op,
        truncates.sequence,
        0 as sub_order,
        truncates.event_ts,
        truncates.emitted_ts,
        truncates.landing_timestamp,
        truncates.truncate_number as epoch,
        'delete' as change_kind,
        false as starts_row,
        cast(null as map<string, string>) as applied_before,
        cast(null as map<string, string>) as applied_after,
        false as resets_fold
    from last_action_per_epoch as live_rows
    inner join truncates
        on
            live_rows.table_key = truncates.table_key
            and live_rows.epoch + 1 = truncates.truncate_number
    where live_rows.change_kind = 'upsert'
),

all_actions as (
    select {{ action_columns | join(', ') }} from imaged_actions
    union all
    select {{ action_columns | join(', ') }} from truncate_actions
),

segmented as (
    select
        *,
        sha2(concat_ws('|', table_key, row_key, event_id), 256) as action_id,
        sum(case when resets_fold or previous_kind = 'delete' then 1 else 0 end) over (
            partition by table_key, row_key
            order by {{ change_order }}
            rows between unbounded preceding and current row
        ) as segment
    from (
        select
            *,
            lag(change_kind) over (partition by table_key, row_key order by {{ change_order }}) as previous_kind
        from all_actions
    )
),

segment_columns as (
    select distinct
        table_key,
        row_key,
        segment,
        column_name
    from segmented
    lateral view explode(array_distinct(concat(
        map_keys(coalesce(applied_before, map())),
        map_keys(coalesce(applied_after, map()))
    ))) carried as column_name
),

cells as (
    select
        segmented.action_id,
        segmented.table_key,
        segmented.row_key,
        segmented.segment,
        segmented.sequence,
        segmented.sub_order,
        segmented.event_id,
        segment_columns.column_name,
        case
            when map_contains_key(coalesce(segmented.applied_after, map()), segment_columns.column_name)
                then named_struct('value', segmented.applied_after[segment_columns.column_name])
            when map_contains_key(coalesce(segmented.applied_before, map()), segment_columns.column_name)
                then named_struct('value', segmented.applied_before[segment_columns.column_name])
        end as carried_value
    from segmented
    inner join segment_columns
        on
            segmented.table_key = segment_columns.table_key
            and segmented.row_key = segment_columns.row_key
            and segmented.segment = segment_columns.segment
),

folded_cells as (
    select
        action_id,
        column_name,
        last(carried_value, true) over (
            partition by table_key, row_key, segment, column_name
            order by {{ change_order }}
            rows between unbounded preceding and current row
        ) as folded_value
    from cells
),

folded_rows as (
    select
        action_id,
        map_from_entries(array_sort(collect_list(struct(column_name, folded_value.value)))) as row_values
    from folded_cells
    where folded_value is not null
    group by action_id
),

final as (
    select
        segmented.action_id,
        segmented.table_key,
        segmented.source_name,
        segmented.dialect,
        segmented.tenant_name,
        segmented.database_name,
        segmented.schema_name,
        segmented.table_name,
        segmented.primary_key_columns,
        segmented.row_key,
        case when segmented.is_keyed then 'primary_key' else 'row_image' end as row_identity,
        segmented.event_id,
        segmented.op,
        segmented.change_kind,
        segmented.starts_row,
        segmented.sequence,
        segmented.sub_order,
        segmented.segment,
        segmented.event_ts,
        segmented.emitted_ts,
        segmented.landing_timestamp,
        coalesce(folded_rows.row_values, cast(map() as map<string, string>)) as row_values
    from segmented
    left join folded_rows on segmented.action_id = folded_rows.action_id
)

select
    *,
    {{ cdc_map_json('row_values') }} as row_values_json,
    change_kind = 'delete' as is_deleted
from final
