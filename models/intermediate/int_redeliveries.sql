{#-
    Every later delivery of a decoded event: one row per staged row that int_staged_events marked
    is_redelivery (message_status decoded), with its event id and landing. cdc_change_events counts
    an event's deliveries from these few rows when it is read; counted from int_staged_events, every
    read of delivery_count (an analyst's query, the view's tests of each row) read the event id of
    every staged row, a scan that grows with the history (3.6-4.1 s at mixed:5M, docs/benchmarks.md).
    Incremental (append): a run reads the decoded redeliveries landed since what it has taken in of
    their feed (the later of its newest row's landing and how far it read int_staged_events, kept
    with its table: macro cdc_held_watermarks) and appends them. Rows never change once written.
-#}
{{ config(materialized='incremental', incremental_strategy='append', on_schema_change='fail') }}

{#- The staged rows this model keeps; the newest landing of them it holds per feed (incremental
    runs); nothing new: no write. -#}
{% set kept = "is_redelivery and message_status = 'decoded'" %}
{% set held = cdc_held_staged_rows(kept) %}

{#- The staged contract's first nine columns: the event id, its feed and dialect, where it landed. -#}
{% set delivery_columns = cdc_staged_columns()[:9] | map('first') | list %}

with redeliveries as (
    select {{ delivery_columns | join(', ') }}
    from {{ ref('int_staged_events') }}
    where {{ kept }} and {{ cdc_landed_after_held(held) }}
)

select
    redeliveries.*,
    {{ cdc_built_at() }} as built_at
from redeliveries
