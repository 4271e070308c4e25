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
    built_at: the run that appended the row.
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
) }}

{% set contract_columns = [] %}
{% set empty_columns = [] %}
{% for name, type in cdc_staged_columns() %}
    {% do contract_columns.append('cast(' ~ name ~ ' as ' ~ type ~ ') as ' ~ name) %}
    {% do empty_columns.append('cast(null as ' ~ type ~ ') as ' ~ name) %}
{% endfor %}
{% set staged_unions = [] %}
{% for dialect in cdc_dialects() %}
    {% do staged_unions.append(
        'select ' ~ contract_columns | join(', ') ~ ' from ' ~ ref('stg_' ~ dialect ~ '__changes')
    ) %}
{% endfor %}
{% if not staged_unions %}
    {#- No dialect configured: an empty relation of the contract's shape keeps every downstream model valid. -#}
    {% do staged_unions.append('select ' ~ empty_columns | join(', ') ~ ' where false') %}
{% endif %}
{% set every_staged_row = '(' ~ staged_unions | join(' union all ') ~ ') as staged' %}
{#- The newest landing this model holds per feed (incremental runs); nothing new: no write. -#}
{% set held = cdc_held_watermarks(new_rows_of=every_staged_row) %}
{% do cdc_skip_write_when_nothing_new(held.new_rows if held is not none else none) %}

-- Spark pushes the filter through the union into each staging model's scan.
with staged as (
    select * from {{ every_staged_row }}
    where {{ cdc_landed_after_held(held) }}
)

select
    {% for name, type in cdc_staged_columns() %}
        {{ name }},
    {% endfor %}
    {{ cdc_built_at() }} as built_at
from staged
