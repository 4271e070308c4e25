"""The staged change-event contract every `stg_<dialect>__changes` model emits.

One place names the dialects, the staged columns and their Spark types, the event
kinds, the canonical op names and the quarantine error codes, so that SQL models,
Python models, tests and docs agree.  docs/staged-contract.md explains each column.
"""

from __future__ import annotations

DIALECTS: tuple[str, ...] = (
    "canal_json",
    "cloudcanal_json",
    "debezium_json",
    "dts_avro",
    "dataworks_json",
    "ckafka_json",
    "oms_default_json",
    "oms_default_ext_json",
    "oms_canal_json",
    "oms_dataworks_json",
    "oms_shareplex_json",
    "maxwell_json",
    "ogg_json",
)

# (name, Spark SQL type) in the order every staging model selects them.
STAGED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("event_id", "string"),
    ("source_name", "string"),
    ("dialect", "string"),
    ("landing_topic", "string"),
    ("landing_partition", "int"),
    ("landing_offset", "bigint"),
    ("landing_timestamp", "timestamp"),
    ("landed_at", "timestamp"),
    ("row_index", "int"),
    ("message_status", "string"),
    ("event_kind", "string"),
    ("op", "string"),
    ("source_db_type", "string"),
    ("tenant_name", "string"),
    ("database_name", "string"),
    ("schema_name", "string"),
    ("table_name", "string"),
    ("primary_key_columns", "array<string>"),
    ("primary_key_source", "string"),
    ("primary_key", "string"),
    ("before", "map<string,string>"),
    ("after", "map<string,string>"),
    ("before_is_partial", "boolean"),
    ("after_is_partial", "boolean"),
    ("column_source_types", "map<string,string>"),
    ("column_types", "map<string,string>"),
    ("event_ts", "timestamp"),
    ("event_ts_precision", "string"),
    ("emitted_ts", "timestamp"),
    ("source_position", "string"),
    ("transaction_id", "string"),
    ("sequence", "string"),
    ("ddl_statement", "string"),
    ("error_code", "string"),
    ("error_detail", "string"),
    ("raw_value", "binary"),
)

MESSAGE_STATUSES = ("decoded", "quarantined", "tombstone")

EVENT_KINDS = ("ROW", "DDL", "HEARTBEAT", "TRANSACTION", "OTHER")

ROW_OPS = ("INSERT", "UPDATE", "DELETE", "SNAPSHOT", "TRUNCATE")
# A split update (DataWorks UPDATE_BEFOR / UPDATE_AFTER pair) is staged as two halves;
# the intermediate layer pairs them into one UPDATE.
SPLIT_UPDATE_OPS = ("UPDATE_BEFORE", "UPDATE_AFTER")
DDL_OPS = ("CREATE", "ALTER", "DROP", "RENAME", "CREATE_INDEX", "DROP_INDEX", "QUERY", "TRUNCATE")

PRIMARY_KEY_SOURCES = ("message", "ddl", "config", "none")

# Quarantine error codes: the documented, closed list.  A staging model that cannot
# decode a message emits one row with message_status = 'quarantined' and one of these.
ERROR_CODES: dict[str, str] = {
    "invalid_utf8": "The message value is not valid UTF-8 text.",
    "invalid_json": "The message value is not valid JSON.",
    "invalid_avro": "The message value is not a decodable Avro datum of the dialect's schema (e.g. truncated).",
    "wrong_shape": "Valid JSON/Avro, but not the structure the dialect defines (wrong top-level type, wrong field type).",
    "missing_field": "A field the dialect requires is absent or null (e.g. op/type, table name, images).",
    "unknown_op": "The operation code is not one the dialect defines.",
    "invalid_value": "A column value cannot be read as its declared type (e.g. text in an integer column).",
    "invalid_timestamp": "A message timestamp cannot be read in the dialect's documented unit/format.",
    "no_feed": "The landing row names no feed (column feed is null or empty), so no source system's history can hold it.",
}
# The feed a landing row without one (null or empty) is staged under, quarantined (macro
# cdc_no_feed, cdc_staged_select): a name, as '' is no partition value (Spark reads it back as null)
# and a null feed no watermark holds. The loader and the ingestion job refuse it as a feed's name.
NO_FEED = "(no feed)"
NO_FEED_DETAIL = "the landing row names no feed (column feed is null or empty)"


def staged_schema_ddl() -> str:
    """The staged contract as a Spark DDL schema string."""
    return ", ".join(f"`{name}` {typ}" for name, typ in STAGED_COLUMNS)


LANDING_SCHEMA = "landing"
# The Kafka record shape (Spark's Kafka source / Kafka sink connectors) plus feed and landed_at.
LANDING_COLUMNS: tuple[tuple[str, str], ...] = (
    ("feed", "string"),
    ("topic", "string"),
    ("partition", "int"),
    ("offset", "bigint"),
    ("timestamp", "timestamp"),
    ("key", "binary"),
    ("value", "binary"),
    ("landed_at", "timestamp"),
)


def landing_table_ddl(dialect: str) -> str:
    """`create table if not exists` for `landing.<dialect>` (Parquet)."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
    cols = ", ".join(f"`{name}` {typ}" for name, typ in LANDING_COLUMNS)
    return f"create table if not exists `{LANDING_SCHEMA}`.`{dialect}` ({cols}) using parquet"
