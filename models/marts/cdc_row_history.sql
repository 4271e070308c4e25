{#-
    SCD2 history of every source row (grain: one version of one row identity).
    - valid_from is the source commit time of the change that made the version (event_ts; the
      emission time, then the broker time, only where a dialect sends no commit time), never the
      run time. It never decreases along a row's sequence order, so intervals cannot invert when
      a source clock steps back.
    - Several changes of one row at the same instant leave only the last one (by sequence): the
      source state at that instant.
    - A change that leaves the row as it was (same values, same deleted flag) makes no version; a
      column that is null and a column the row does not carry count as the same.
    - A DELETE or TRUNCATE ends the live version and starts a tombstone version (is_deleted,
      row_values = the deleted row) that lasts until the row is inserted again.
    - valid_to is the next version's valid_from: intervals are half-open, without gaps or
      overlaps, and the last version of each row is current (valid_to null).
    So `valid_from <= T and (valid_to > T or valid_to is null) and not is_deleted` is the source
    table at instant T.
-#}
with row_changes as (
    select * from {{ ref('int_row_changes') }}
),

timed as (
    select
        *,
        max(coalesce(event_ts, emitted_ts, landing_timestamp)) over (
            partition by table_key, row_key
            order by sequence, sub_order, event_id
            rows between unbounded preceding and current row
        ) as effective_ts
    from row_changes
),

instant_states as (
    select *
    from (
        select
            *,
            row_number() over (
                partition by table_key, row_key, effective_ts
                order by sequence desc, sub_order desc, event_id desc
            ) as recency_in_instant
        from timed
    )
    where recency_in_instant = 1
),

state_changes as (
    select *
    from (
        select
            *,
            lag(state_signature) over (partition by table_key, row_key order by effective_ts) as previous_signature
        from (
            select
                *,
                case
                    when is_deleted then 'deleted'
                    else {{ cdc_map_json('map_filter(row_values, (k, v) -> v is not null)') }}
                end as state_signature
            from instant_states
        )
    )
    where not (previous_signature <=> state_signature)
),

versions as (
    select
        *,
        lead(effective_ts) over (partition by table_key, row_key order by effective_ts) as next_valid_from,
        row_number() over (partition by table_key, row_key order by effective_ts) as version_number
    from state_changes
)

select
    sha2(concat_ws('|', table_key, row_key, cast(version_number as string)), 256) as version_id,
    source_name as feed,
    dialect,
    tenant_name,
    database_name,
    schema_name,
    table_name,
    primary_key_columns,
    row_key as primary_key,
    row_identity,
    row_values,
    row_values_json,
    effective_ts as valid_from,
    next_valid_from as valid_to,
    next_valid_from is null as is_current,
    is_deleted,
    version_number,
    op,
    event_id,
    sequence
from versions
