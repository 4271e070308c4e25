{#- Smoke test of the stack (SQL model); replaced by the real layers. -#}
with numbers as (
    select explode(sequence(1, 5)) as n
)

select
    n,
    n * n as n_squared
from numbers
