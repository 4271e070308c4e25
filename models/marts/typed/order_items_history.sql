{{ cdc_typed_history('order_items') }}
