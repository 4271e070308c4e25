{{ cdc_typed_current('customers') }}
