{#- Dead letters counted per feed, dialect and error code (grain: one error code of one feed). -#}
with dead_letters as (
    select * from {{ ref('cdc_dead_letters') }}
)

select
    source_name,
    dialect,
    error_code,
    any_value(error_meaning) as error_meaning,
    count(*) as dead_letters,
    count(distinct event_id) as distinct_messages,
    min(landed_at) as first_landed_at,
    max(landed_at) as last_landed_at,
    min_by(error_detail, struct(landed_at, landing_topic, landing_partition, landing_offset)) as first_error_detail
from dead_letters
group by source_name, dialect, error_code
