{{ config(severity='warn') }}
{#- Landing rows without landed_at, per landing table and feed (docs/landing.md). The incremental
    staging models take each feed's loads landed after the newest one they have staged, so such a
    row is staged by a full refresh only: the loader and the ingestion job always stamp it, and this
    test warns when another writer did not. Parquet keeps a null count per column chunk, so the scan
    skips every row group without a null landed_at: on a healthy warehouse it reads the footers. -#}
with rows_without_landed_at as (
    {%- for dialect in cdc_dialects() %}
        select
            '{{ dialect }}' as landing_table,
            feed
        from {{ source('landing', dialect) }}
        where landed_at is null
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
)

select
    landing_table,
    feed,
    count(*) as landing_rows
from rows_without_landed_at
group by landing_table, feed
