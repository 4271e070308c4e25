{#-
    The rows with the most versions in each table (grain: one row identity): the hottest keys.
    versions counts every version of cdc_row_history, tombstones included; version_rank is the
    rank within the table by versions (ties share a rank, so a table may list more than
    analysis_top_n rows).
    vars:
        analysis_top_n: how many ranks to keep per table (default 10).
-#}
{% set top_n = var('analysis_top_n', 10) | int %}

with row_history as (
    select * from {{ ref('cdc_row_history') }}
),

versions_per_key as (
    select
        feed,
        dialect,
        tenant_name,
        database_name,
        schema_name,
        table_name,
        primary_key,
        row_identity,
        count(*) as versions,
        count_if(not is_deleted) as live_versions,
        count_if(is_deleted) as removals,
        min(valid_from) as first_valid_from,
        max(valid_from) as last_changed_at,
        bool_or(is_current and not is_deleted) as is_live
    from row_history
    group by all
),

ranked as (
    select
        *,
        rank() over (
            partition by feed, dialect, tenant_name, database_name, schema_name, table_name
            order by versions desc
        ) as version_rank
    from versions_per_key
)

select *
from ranked
where version_rank <= {{ top_n }}
