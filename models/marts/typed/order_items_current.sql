{{ cdc_typed_current('order_items') }}
