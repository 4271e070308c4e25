{{ cdc_typed_history('customers') }}
