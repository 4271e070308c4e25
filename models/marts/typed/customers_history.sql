{#- `customers_history`: the cdc_row_history rows of entity `customers` (var typed_entities), one
    row per version, with typed columns and cast_failures (docs/typed-marts.md, macro
    cdc_typed_history). A view: a run stores no row. What it reads: when compiled, the entity's
    columns and types from int_schema_registry (one query of that small table); when queried, the
    entity's rows of cdc_row_history. -#}
{{ cdc_typed_history('customers') }}
