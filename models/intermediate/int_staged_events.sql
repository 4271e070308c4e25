{#-
    Every staged row of every dialect (message_status decoded, quarantined or tombstone), one
    contract, in one table. Columns are selected by name in contract order, so `union all`
    (positional) lines up even if a staging model orders its columns differently.
    A table, not a view of the union: every summary and intermediate model reads it two to four
    times per run, and each read of a 13-way union is 13 scans for Spark to plan and run (about
    1,000 tasks of which most return nothing, docs/benchmarks.md); over one table the same
    queries ran 2-4x faster on the test workload.
    Incremental (append): a run reads, from each staging model, the rows landed since the newest
    landing it holds for their feed (constant watermarks, cdc_held_watermarks, which the Parquet
    scan applies: older files are skipped), and appends them. Rows never change once written; a
    staging model rebuilt with --full-refresh is taken in by rebuilding this model and its
    children too (`dbt build --full-refresh --select stg_<dialect>__changes+`).
    is_redelivery: whether an earlier row of the same message_status has the row's event id
    (landing order: landed_at, landing timestamp, topic, partition, offset, row index), so later
    models count and de-duplicate deliveries without a window over all staged rows. A run numbers
    its own new rows per event id and status and looks their event ids up among the rows it holds.
    built_at: the run that appended the row.
    Partitioned by is_split_half (a decoded UPDATE_BEFORE or UPDATE_AFTER with a source position,
    2-3% of the rows in the bench workloads): int_change_events and cdc_feed_health read every
    half of the pair keys a run's new halves join, and find them in that partition alone instead
    of scanning every staged row.
    What it reads: the staging models' rows landed since (the constant watermarks), and the
    event_id and message_status columns of the rows it holds (a narrow lookup of the new event
    ids, broadcast unless a backfill brings more than var cdc_broadcast_key_limit rows), and on a
    full build every staged row, numbered in one window.
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    partition_by=['is_split_half'],
    on_schema_change='fail',
) }}

{% set contract_columns = [] %}
{% set empty_columns = [] %}
{% for name, type in cdc_staged_columns() %}
    {% do contract_columns.append('cast(' ~ name ~ ' as ' ~ type ~ ') as ' ~ name) %}
    {% do empty_columns.append('cast(null as ' ~ type ~ ') as ' ~ name) %}
{% endfor %}
{% set staged_unions = [] %}
{% set staging_tables = [] %}
{% for dialect in cdc_dialects() %}
    {% do staging_tables.append(ref('stg_' ~ dialect ~ '__changes')) %}
    {% do staged_unions.append('select ' ~ contract_columns | join(', ') ~ ' from ' ~ staging_tables[-1]) %}
{% endfor %}
{% if not staged_unions %}
    {#- No dialect configured: an empty relation of the contract's shape keeps every downstream model valid. -#}
    {% do staged_unions.append('select ' ~ empty_columns | join(', ') ~ ' where false') %}
{% endif %}
{% set every_staged_row = '(' ~ staged_unions | join(' union all ') ~ ') as staged' %}
{#- The newest landing this model holds per feed (incremental runs); nothing new: no write. -#}
{% set held = cdc_held_watermarks(new_rows_of=every_staged_row, union_of=staging_tables) %}
{% set new_rows = held.new_rows if held is not none else none %}
{% do cdc_skip_write_when_nothing_new(new_rows) %}
{% set broadcast = cdc_may_broadcast(new_rows) %}

-- Spark pushes the filter through the union into each staging model's scan.
with staged as (
    select * from {{ every_staged_row }}
    where {{ cdc_landed_after_held(held) }}
),

{% if is_incremental() %}
    new_event_ids as (
        select distinct event_id from staged
    ),

    -- New event ids an earlier run's row of the same status already has: landings come in time
    -- order, so every row this run appends lands after those.
    delivered_before as (
        select distinct
            held_rows.event_id,
            held_rows.message_status
        from (
            select {{ cdc_broadcast_keys(['new_event_ids'], broadcast) }}
                held.event_id,
                held.message_status
            from {{ this }} as held
            left semi join new_event_ids on held.event_id = new_event_ids.event_id
        ) as held_rows
    ),
{% else %}
    delivered_before as (
        select
            cast(null as string) as event_id,
            cast(null as string) as message_status
        where false
    ),
{% endif %}

numbered as (
    select
        staged.*,
        row_number() over (
            partition by event_id, message_status
            order by landed_at, landing_timestamp, landing_topic, landing_partition, landing_offset, row_index
        ) as delivery_rank
    from staged
),

deliveries as (
    select
        numbered.*,
        numbered.delivery_rank > 1 or delivered_before.event_id is not null as is_redelivery
    from numbered
    left join delivered_before
        on
            numbered.event_id = delivered_before.event_id
            and numbered.message_status = delivered_before.message_status
)

select
    {% for name, type in cdc_staged_columns() %}
        {{ name }},
    {% endfor %}
    is_redelivery,
    {{ cdc_built_at() }} as built_at,
    coalesce(
        message_status = 'decoded' and op in ('UPDATE_BEFORE', 'UPDATE_AFTER') and source_position is not null, false
    ) as is_split_half
from deliveries
