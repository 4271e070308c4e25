{#- Dead letters counted per feed, dialect and error code (grain: one error code of one feed).
    Incremental (insert_overwrite, one partition per feed): a run reads the cdc_dead_letters rows
    built since its last run, merges their counts into the rows it holds for their feeds (counts
    add up; distinct messages are first deliveries; first/last landing by min/max) and rewrites
    those feeds' partitions. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['feed'],
    on_schema_change='fail',
) }}

{%- set new_rows = cdc_built_since(ref('cdc_dead_letters')) %}
{%- do cdc_skip_write_when_nothing_new(new_rows.rows) %}

with dead_letters as (
    select * from {{ ref('cdc_dead_letters') }}
    where {{ new_rows.predicate }}
),

new_counts as (
    select
        feed,
        dialect,
        error_code,
        any_value(error_meaning) as error_meaning,
        count(*) as dead_letters,
        count_if(delivery_number = 1) as distinct_messages,
        min(landed_at) as first_landed_at,
        max(landed_at) as last_landed_at,
        min(struct(landed_at, landing_topic, landing_partition, landing_offset, error_detail)) as first_error
    from dead_letters
    group by feed, dialect, error_code
),

{% if is_incremental() %}
    held_counts as (
        select
            held.feed,
            held.dialect,
            held.error_code,
            held.error_meaning,
            held.dead_letters,
            held.distinct_messages,
            held.first_landed_at,
            held.last_landed_at,
            -- Held rows landed before every new one of their feed: their first error stays first.
            struct(
                held.first_landed_at as landed_at,
                cast(null as string) as landing_topic,
                cast(null as int) as landing_partition,
                cast(null as bigint) as landing_offset,
                held.first_error_detail as error_detail
            ) as first_error
        from {{ this }} as held
        left semi join new_counts on held.feed = new_counts.feed
    ),

    all_counts as (
        select * from new_counts
        union all
        select * from held_counts
    ),
{% else %}
    all_counts as (
        select * from new_counts
    ),
{% endif %}

merged as (
    select
        dialect,
        error_code,
        any_value(error_meaning) as error_meaning,
        sum(dead_letters) as dead_letters,
        sum(distinct_messages) as distinct_messages,
        min(first_landed_at) as first_landed_at,
        max(last_landed_at) as last_landed_at,
        min(first_error).error_detail as first_error_detail,
        feed
    from all_counts
    group by feed, dialect, error_code
)

select
    dialect,
    error_code,
    error_meaning,
    dead_letters,
    distinct_messages,
    first_landed_at,
    last_landed_at,
    first_error_detail,
    {{ cdc_built_at() }} as built_at,
    feed
from merged
