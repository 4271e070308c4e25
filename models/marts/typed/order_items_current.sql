{#- `order_items_current`: the cdc_current_rows rows of entity `order_items` (var typed_entities),
    one row per live source row, with typed columns and cast_failures (docs/typed-marts.md, macro
    cdc_typed_current). A view: a run stores no row. What it reads: when compiled, the entity's
    columns and types from int_schema_registry (one query of that small table); when queried, the
    entity's rows of cdc_current_rows. -#}
{{ cdc_typed_current('order_items') }}
