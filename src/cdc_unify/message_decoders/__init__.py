"""Whole-message decoders: the Python staging models' decoding (debezium_json, dts_avro), pure
Python, testable without Spark. Each takes a landed message (value, key, landing coordinates) to
its staged rows, quarantine rows included, and offers `decode_arrow_batches` for the model's
`DataFrame.mapInArrow`. `_staged_rows` holds the Python twins of the staged contract's SQL macros,
`_ddl` the twin of `cdc_ddl_op`. Column values are read with the shared rules of
`cdc_unify.canonical` and `cdc_unify.canonicalizers` (MySQL types, value texts).
"""
