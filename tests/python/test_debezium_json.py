"""Debezium JSON (Debezium MySQL connector format, and CloudCanal's Debezium Envelope of spec 000).

(a) the encoder writes the field names, op codes and Connect semantic names of the Debezium
documentation and spec 000; (b) the pure decoder reads values written by hand from those
documents, every message kind and every quarantine path, and its twins of the SQL macros give
hand-computed texts; (c, marked `spark`) the Python staging model stages the spec examples, an
encoded workload and every malformation, and the twins equal the SQL macros on Spark.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_unify.canonical import CanonicalError
from cdc_unify.contract import STAGED_COLUMNS
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE, EncodedMessage
from cdc_unify.generator.encoders.debezium_json import java_number_text
from cdc_unify.generator.model import Workload
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from cdc_unify.message_decoders import _staged_rows as twins
from cdc_unify.message_decoders import debezium_json as dbz
from spec_fixtures import expected_pairs, utc

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "spec_examples" / "debezium_json"
DIALECT = "debezium_json"
LANDING = dbz.Landing("feed", "topic", 0, 42, None, None)
UTC = dt.timezone.utc

# Copied from the Debezium MySQL connector documentation ("Change event values", "Schema change
# topic", "Transaction metadata", "Data type mappings") and spec 000 ("Debezium Envelope").
ENVELOPE_FIELDS = {"before", "after", "source", "op", "ts_ms"}
MYSQL_SOURCE_FIELDS = {"version", "connector", "name", "ts_ms", "snapshot", "db", "table", "server_id", "gtid",
                       "file", "pos", "row", "thread", "query"}  # fmt: skip
SPEC_SOURCE_FIELDS = {"ts_ms", "db", "table", "connector", "gtid", "file", "pos", "server_id"}
SCHEMA_CHANGE_FIELDS = {"source", "databaseName", "ddl", "tableChanges"}
TABLE_CHANGE_FIELDS = {"type", "id", "table"}
TABLE_FIELDS = {"primaryKeyColumnNames", "columns"}
COLUMN_FIELDS = {"name", "jdbcType", "typeName", "typeExpression", "position"}
DEBEZIUM_OPS = {"c", "u", "d", "r", "t"}
SPEC_OPS = {"c", "u", "d", "a", "i"}
SEMANTIC_NAMES = {"io.debezium.time.Date", "io.debezium.time.MicroTime", "io.debezium.time.Timestamp",
                  "io.debezium.time.MicroTimestamp", "io.debezium.time.ZonedTimestamp",
                  "org.apache.kafka.connect.data.Decimal", "io.debezium.data.Json", "io.debezium.time.Interval"}  # fmt: skip


@pytest.fixture(scope="module")
def workload() -> Workload:
    return build_workload(WorkloadOptions(events=160), seed=20240101)


@pytest.fixture(scope="module")
def messages(workload) -> list[EncodedMessage]:
    return list(encoder_for(DIALECT).encode(workload, random.Random(7)))


def payload_of(value: bytes) -> tuple[dict | None, dict]:
    doc = json.loads(value)
    return (doc["schema"], doc["payload"]) if "schema" in doc and "payload" in doc else (None, doc)


def decode(value: bytes | None, key: bytes | None = None) -> list[dict[str, Any]]:
    return dbz.decode_message(value, key, LANDING)


def message(payload: dict, schema: dict | None = None) -> bytes:
    return json.dumps({"schema": schema, "payload": payload} if schema else payload).encode()


SOURCE = {"ts_ms": 1529476623000, "db": "inventory", "table": "customers", "connector": "mysql",
          "file": "mysql-bin.000003", "pos": 154, "gtid": None}  # fmt: skip


# ---------------------------------------------------------------- (a) encoder vs the documents
def test_change_events_carry_the_documented_envelope_and_source(messages):
    ops = Counter()
    for m in messages:
        if m.value is None:
            continue
        _, payload = payload_of(m.value)
        if "op" not in payload:
            continue
        ops[payload["op"]] += 1
        assert ENVELOPE_FIELDS <= set(payload)
        assert SPEC_SOURCE_FIELDS <= set(payload["source"])
        if payload["source"]["connector"] == "mysql":
            assert MYSQL_SOURCE_FIELDS <= set(payload["source"])
        assert len(str(payload["ts_ms"])) == 13 and len(str(payload["source"]["ts_ms"])) == 13
    assert set(ops) <= DEBEZIUM_OPS | SPEC_OPS
    assert {"c", "u", "d", "r", "i"} <= set(ops)


def test_schema_change_events_carry_the_documented_fields(messages):
    changes = [payload_of(m.value)[1] for m in messages if m.value and "ddl" in payload_of(m.value)[1]]
    assert changes
    for payload in changes:
        assert SCHEMA_CHANGE_FIELDS <= set(payload)
        entries = payload["tableChanges"]
        for entry in entries if isinstance(entries, list) else [entries] if entries else []:
            assert {"type", "table"} <= set(entry) and set(entry) <= TABLE_CHANGE_FIELDS | {"comment"}
            assert TABLE_FIELDS <= set(entry["table"])
            assert all(COLUMN_FIELDS <= set(c) for c in entry["table"]["columns"])
    assert any(isinstance(p["tableChanges"], dict) for p in changes), "CloudCanal's single-object flavour"
    assert any(isinstance(p["tableChanges"], list) for p in changes), "Debezium's list"


def test_values_use_the_documented_semantic_types(messages):
    names = set()
    for m in messages:
        schema, _ = payload_of(m.value) if m.value else (None, None)
        for field in (schema or {}).get("fields", []):
            if field.get("field") == "after":
                names |= {f.get("name") for f in field["fields"]}
    assert SEMANTIC_NAMES <= names


def test_deletes_are_followed_by_a_tombstone_with_the_same_key(messages):
    deletes = 0
    for m, nxt in zip(messages, messages[1:], strict=False):
        if m.value is not None and payload_of(m.value)[1].get("op") == "d":
            deletes += 1
            assert nxt.value is None and nxt.key == m.key
            assert nxt.expected[0]["message_status"] == "tombstone" and not nxt.is_row_message
    assert deletes > 5


def test_messages_mix_schema_and_schemaless_values_and_keys(messages):
    values = Counter("schema" in json.loads(m.value) for m in messages if m.value)
    keys = Counter("schema" in json.loads(m.key) for m in messages if m.key)
    assert values[True] > 10 and values[False] > 10 and keys[True] > 10 and keys[False] > 10


@pytest.mark.parametrize(
    ("value", "single", "java"),
    [(100.0, False, "100.0"), (1e-05, False, "1.0E-5"), (1.2222, True, "1.2222"), (3.4e38, True, "3.4E38"),
     (-0.0, False, "-0.0"), (1234567.0, False, "1234567.0"), (12345678.0, False, "1.2345678E7"),
     (0.001, False, "0.001"), (0.0001, False, "1.0E-4")],
)  # fmt: skip
def test_floats_are_written_as_java_writes_them(value, single, java):
    assert java_number_text(value, single) == java


# ---------------------------------------------------------------- (b) values through the Connect schema
@pytest.mark.parametrize(
    ("schema", "value", "canonical", "logical"),
    [
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
          "parameters": {"scale": "2", "connect.decimal.precision": "10"}}, "BNI=", "12.34", "decimal(10,2)"),
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}},
         "/w==", "-0.01", "decimal"),
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "0"}},
         "AA==", "0", "decimal"),
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}},
         dbz.JsonNumber("12.50"), "12.5", "decimal"),
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
          "parameters": {"scale": "0", "connect.decimal.precision": "20",
                         "__debezium.source.column.type": "BIGINT UNSIGNED"}},
         "AP//////////", "18446744073709551615", "ubigint"),
        ({"type": "struct", "name": "io.debezium.data.VariableScaleDecimal"},
         {"scale": dbz.JsonNumber("3"), "value": "AeI="}, "0.482", "decimal"),
        ({"type": "int32", "name": "io.debezium.time.Date"}, dbz.JsonNumber("19000"), "2022-01-08", "date"),
        ({"type": "int32", "name": "io.debezium.time.Date"}, dbz.JsonNumber("-1"), "1969-12-31", "date"),
        ({"type": "int32", "name": "io.debezium.time.Time"}, dbz.JsonNumber("3723004"), "01:02:03.004", "time"),
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, dbz.JsonNumber("3723000001"),
         "01:02:03.000001", "time"),
        ({"type": "int64", "name": "io.debezium.time.NanoTime"}, dbz.JsonNumber("3723000000001"),
         "01:02:03.000000001", "time"),
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, dbz.JsonNumber("-1000000"), "-00:00:01", "time"),
        ({"type": "int64", "name": "io.debezium.time.Timestamp"}, dbz.JsonNumber("1529476623000"),
         "2018-06-20 06:37:03", "datetime"),
        ({"type": "int64", "name": "io.debezium.time.Timestamp"}, dbz.JsonNumber("-1"),
         "1969-12-31 23:59:59.999", "datetime"),
        ({"type": "int64", "name": "io.debezium.time.MicroTimestamp"}, dbz.JsonNumber("1529476623000001"),
         "2018-06-20 06:37:03.000001", "datetime"),
        ({"type": "int64", "name": "io.debezium.time.NanoTimestamp"}, dbz.JsonNumber("1529476623123456789"),
         "2018-06-20 06:37:03.123456789", "datetime"),
        ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "2018-06-20T13:37:03Z",
         "2018-06-20T13:37:03Z", "timestamp"),
        ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "2020-11-25T00:01:02.012345+08:00",
         "2020-11-24T16:01:02.012345Z", "timestamp"),
        ({"type": "string", "name": "io.debezium.time.Interval",
          "parameters": {"__debezium.source.column.type": "INTERVAL YEAR TO MONTH"}},
         "P1Y2M0DT0H0M0S", "P1Y2M", "interval_ym"),
        ({"type": "string", "name": "io.debezium.time.Interval",
          "parameters": {"__debezium.source.column.type": "INTERVAL YEAR TO MONTH"}},
         "P0Y0M0DT0H0M0S", "P0M", "interval_ym"),
        ({"type": "string", "name": "io.debezium.time.Interval",
          "parameters": {"__debezium.source.column.type": "INTERVAL DAY TO SECOND"}},
         "P0Y0M-3DT-4H-5M-6.5S", "-P3DT4H5M6.5S", "interval_ds"),
        ({"type": "string", "name": "io.debezium.time.Interval"}, "P0Y0M1DT0H0M0S", "P1D", "interval_ds"),
        ({"type": "string", "name": "io.debezium.time.Interval"}, "P1Y0M1DT0H0M0S", "P1Y0M1DT0H0M0S", "string"),
        ({"type": "int64", "name": "io.debezium.time.MicroDuration"}, dbz.JsonNumber("90061000001"),
         "P1DT1H1M1.000001S", "interval_ds"),
        ({"type": "bytes", "name": "io.debezium.data.Bits"}, "AQ==", "AQ==", "binary"),
        ({"type": "bytes"}, "aGVsbG8gd29ybGQ=", "aGVsbG8gd29ybGQ=", "binary"),
        ({"type": "string", "name": "io.debezium.data.Json"}, '{"a": [1, 2]}', '{"a": [1, 2]}', "json"),
        ({"type": "int16", "parameters": {"__debezium.source.column.type": "TINYINT"}}, dbz.JsonNumber("-128"),
         "-128", "tinyint"),
        ({"type": "int64"}, dbz.JsonNumber("9223372036854775807"), "9223372036854775807", "bigint"),
        ({"type": "float32"}, dbz.JsonNumber("1.2222"), "1.2222", "float"),
        ({"type": "float64"}, dbz.JsonNumber("1.0E-5"), "1e-05", "double"),
        ({"type": "float64"}, "NaN", "NaN", "double"),
        ({"type": "float64"}, "-Infinity", "-Infinity", "double"),
        ({"type": "boolean"}, True, "true", "boolean"),
        ({"type": "string"}, "张伟 \n", "张伟 \n", "string"),
        ({"type": "struct", "fields": []}, {"x": dbz.JsonNumber("1.50")}, '{"x":1.50}', "json"),
    ],
)  # fmt: skip
def test_connect_values_decode_as_the_documentation_defines(schema, value, canonical, logical):
    assert dbz.decode_connect_value(value, schema) == (canonical, logical)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "int32", "name": "io.debezium.time.Date"}, "2022-01-08"),
        ({"type": "int32"}, "x"),
        ({"type": "int32"}, dbz.JsonNumber("1.5")),
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal"}, "BNI="),
        ({"type": "bytes"}, "not base64!"),
        ({"type": "boolean"}, dbz.JsonNumber("1")),
        ({"type": "string"}, dbz.JsonNumber("1")),
        ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "yesterday"),
        ({"type": "string", "name": "io.debezium.time.Interval",
          "parameters": {"__debezium.source.column.type": "INTERVAL DAY TO SECOND"}}, "P1Y0M0DT0H0M0S"),
    ],
)  # fmt: skip
def test_values_their_schema_cannot_read_raise(schema, value):
    with pytest.raises(CanonicalError):
        dbz.decode_connect_value(value, schema)


# ---------------------------------------------------------------- (b) messages
def test_row_event_with_schema_decodes_types_key_position_and_times():
    schema = {"type": "struct", "fields": [
        {"type": "struct", "field": "after", "fields": [
            {"type": "int32", "field": "id"},
            {"type": "int32", "name": "io.debezium.time.Date", "field": "born"},
            {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
             "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "balance"}]}]}  # fmt: skip
    payload = {"before": None, "after": {"id": 1004, "born": 19000, "balance": "BNI="},
               "source": {**SOURCE, "ts_us": 1529476623000123, "gtid": "uuid:23"}, "op": "c",
               "ts_ms": 1529476623500, "transaction": None}  # fmt: skip
    key = (
        b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}]},"payload":{"id":1004}}'
    )
    (row,) = decode(message(payload, schema), key)
    assert list(row) == [name for name, _ in STAGED_COLUMNS]
    assert (row["message_status"], row["event_kind"], row["op"]) == ("decoded", "ROW", "INSERT")
    assert row["after"] == {"id": "1004", "born": "2022-01-08", "balance": "12.34"} and row["before"] is None
    assert row["column_types"] == {"id": "int", "born": "date", "balance": "decimal(10,2)"}
    assert row["column_source_types"] == {"id": "int32", "born": "io.debezium.time.Date",
                                          "balance": "org.apache.kafka.connect.data.Decimal"}  # fmt: skip
    assert (row["primary_key_columns"], row["primary_key_source"], row["primary_key"]) == (
        ["id"],
        "message",
        '["1004"]',
    )
    assert row["event_ts"] == dt.datetime(2018, 6, 20, 6, 37, 3, 123, tzinfo=UTC)
    assert row["event_ts_precision"] == "us"
    assert row["emitted_ts"] == dt.datetime(2018, 6, 20, 6, 37, 3, 500000, tzinfo=UTC)
    assert (row["source_position"], row["transaction_id"], row["source_db_type"]) == (
        "mysql-bin.000003:154",
        "uuid:23",
        "mysql",
    )
    assert row["sequence"] == f"{3 * 2**32 + 154:030d}.{1529476623000123:020d}.{42:020d}.000000"


def test_schemaless_values_are_kept_as_sent_and_the_key_order_is_the_key_order():
    payload = {"before": {"b": 2, "a": 1, "v": 1.50, "f": False, "j": {"k": [1]}}, "after": None,
               "source": SOURCE, "op": "d", "ts_ms": 1}  # fmt: skip
    (row,) = decode(message(payload), b'{"b":2,"a":1}')
    assert row["before"] == {"b": "2", "a": "1", "v": "1.5", "f": "false", "j": '{"k":[1]}'}
    assert row["column_types"] == dict.fromkeys(row["before"], "string") and row["column_source_types"] is None
    assert (row["op"], row["primary_key_columns"], row["primary_key"]) == ("DELETE", ["b", "a"], '["2","1"]')


def test_json_numbers_keep_their_exact_digits_without_schema():
    value = (
        b'{"op":"c","after":{"n":12.50,"big":123456789012345678901234567890.123456789},"source":'
        + json.dumps(SOURCE).encode()
        + b"}"
    )
    (row,) = decode(value)
    assert row["after"] == {"n": "12.50", "big": "123456789012345678901234567890.123456789"}


def test_cloudcanal_flavour_insert_and_empty_images():
    payload = {"op": "i", "ts_ms": 5, "after": {"id": "1"}, "before": {}, "source": {**SOURCE, "connector": "MySQL"}}
    (row,) = decode(message(payload))
    assert (row["op"], row["before"], row["after"], row["source_db_type"]) == ("INSERT", None, {"id": "1"}, "mysql")


def test_update_that_changes_nothing_else_keeps_both_images_and_key_from_after():
    payload = {"before": {"id": 1, "v": "a"}, "after": {"id": 2, "v": "a"}, "source": SOURCE, "op": "u"}
    (row,) = decode(message(payload), b'{"id":2}')
    assert (row["op"], row["primary_key"], row["before"]["id"]) == ("UPDATE", '["2"]', "1")


def test_snapshot_truncate_heartbeat_and_transaction_events():
    (snap,) = decode(message({"op": "r", "after": {"id": 1}, "source": {**SOURCE, "snapshot": "true"}}))
    (trunc,) = decode(message({"op": "t", "before": None, "after": None, "source": SOURCE}))
    (beat,) = decode(b'{"schema":{"type":"struct","fields":[]},"payload":{"ts_ms":1529476623000}}')
    (begin,) = decode(b'{"status":"BEGIN","id":"571:53195829","ts_ms":1486500577125,"event_count":null}')
    assert (snap["event_kind"], snap["op"]) == ("ROW", "SNAPSHOT")
    assert (trunc["event_kind"], trunc["op"], trunc["table_name"], trunc["primary_key"]) == (
        "DDL",
        "TRUNCATE",
        "customers",
        None,
    )
    assert (beat["event_kind"], beat["op"], beat["event_ts"]) == (
        "HEARTBEAT",
        "HEARTBEAT",
        dt.datetime(2018, 6, 20, 6, 37, 3, tzinfo=UTC),
    )
    assert (begin["event_kind"], begin["op"], begin["transaction_id"]) == ("TRANSACTION", "BEGIN", "571:53195829")
    assert begin["before_is_partial"] is None and begin["primary_key_columns"] == []


def test_schema_change_event_fans_out_per_table_change():
    column = {"name": "id", "jdbcType": 4, "typeName": "INT", "typeExpression": "INT", "length": 11, "position": 1}
    price = {"name": "price", "jdbcType": 3, "typeName": "DECIMAL", "typeExpression": "DECIMAL", "length": 10,
             "scale": 2, "position": 2}  # fmt: skip
    payload = {"source": SOURCE, "databaseName": "inventory", "schemaName": None, "ddl": "DROP TABLE a, b",
               "tableChanges": [
                   {"type": "DROP", "id": '"inventory"."a"', "table": {"primaryKeyColumnNames": ["id"],
                                                                      "columns": [price, column]}},
                   {"type": "DROP", "id": '"inventory"."b""x"', "table": None}]}  # fmt: skip
    first, second = decode(message(payload), b'{"databaseName":"inventory"}')
    assert [first["row_index"], second["row_index"]] == [0, 1]
    assert (first["op"], first["table_name"], second["table_name"]) == ("DROP", "a", 'b"x')
    assert first["column_source_types"] == {"id": "INT(11)", "price": "DECIMAL(10,2)"}
    assert list(first["column_types"].items()) == [("id", "int"), ("price", "decimal(10,2)")]
    assert (first["primary_key_columns"], first["primary_key_source"]) == (["id"], "ddl")
    assert (second["primary_key_columns"], second["primary_key_source"]) == ([], "none")
    assert first["ddl_statement"] == "DROP TABLE a, b" and first["event_id"] != second["event_id"]


def test_cloudcanal_alter_op_is_a_ddl_event():
    (row,) = decode(message({"op": "a", "ddl": None, "source": SOURCE, "ts_ms": 1}))
    assert (row["event_kind"], row["op"], row["table_name"]) == ("DDL", "ALTER", "customers")


def test_event_id_ignores_emission_time_and_changes_with_content():
    payload = {"op": "c", "after": {"id": 1}, "source": SOURCE, "ts_ms": 1}
    first = decode(message(payload))[0]["event_id"]
    assert decode(message({**payload, "ts_ms": 2, "ts_ns": 2000000}))[0]["event_id"] == first
    assert decode(message({**payload, "after": {"id": 2}}))[0]["event_id"] != first


def test_null_value_is_one_tombstone_row():
    (row,) = decode(None, b'{"id":1}')
    assert (row["message_status"], row["event_kind"], row["error_code"]) == ("tombstone", None, None)
    assert row["event_id"] == twins.cdc_event_id("feed", DIALECT, "tombstone:topic:0:42", 0)


@pytest.mark.parametrize(
    ("value", "key", "code"),
    [
        (b'{"op":"c"\xff}', None, "invalid_utf8"),
        (b'{"op":"c",', None, "invalid_json"),
        (b'{"op":"c","after":{"v":NaN}}', None, "invalid_json"),
        (b"[1]", None, "wrong_shape"),
        (b'{"schema":null,"payload":"x"}', None, "wrong_shape"),
        (b'{"unknown":1}', None, "wrong_shape"),
        (json.dumps({"op": "c", "after": {"id": 1}, "source": [SOURCE]}).encode(), None, "wrong_shape"),
        (json.dumps({"op": "c", "after": {"id": 1}, "source": SOURCE}).encode(), b"not json", "wrong_shape"),
        (json.dumps({"after": {"id": 1}, "source": SOURCE}).encode(), None, "missing_field"),
        (json.dumps({"op": "c", "after": {"id": 1}}).encode(), None, "missing_field"),
        (json.dumps({"op": "c", "after": None, "source": SOURCE}).encode(), None, "missing_field"),
        (json.dumps({"op": "d", "before": {}, "source": SOURCE}).encode(), None, "missing_field"),
        (json.dumps({"op": "c", "after": {"id": 1}, "source": {**SOURCE, "table": None}}).encode(), None,
         "missing_field"),
        (json.dumps({"op": "x", "after": {"id": 1}, "source": SOURCE}).encode(), None, "unknown_op"),
        (b'{"status":"COMMIT","id":"1","ts_ms":1}', None, "unknown_op"),
        (json.dumps({"op": "c", "after": {"id": 1}, "source": {**SOURCE, "ts_ms": "2018-06-20"}}).encode(), None,
         "invalid_timestamp"),
        (message({"op": "c", "after": {"id": "one"}, "source": SOURCE},
                 {"type": "struct", "fields": [{"type": "struct", "field": "after",
                                                "fields": [{"type": "int32", "field": "id"}]}]}), None,
         "invalid_value"),
    ],
)  # fmt: skip
def test_undecodable_messages_are_one_quarantine_row(value, key, code):
    (row,) = decode(value, key)
    assert (row["message_status"], row["error_code"], row["raw_value"]) == ("quarantined", code, value)
    assert row["error_detail"] and row["event_kind"] is None and row["row_index"] == 0


def test_spec_examples_decode_as_written_by_hand_without_spark():
    for path, expected in expected_pairs(FIXTURES):
        rows = decode(path.read_bytes())
        assert len(rows) == len(expected)
        for row, want in zip(rows, expected, strict=True):
            for column, value in want.items():
                assert row[column] == value, f"{path.name}: {column}"


# ---------------------------------------------------------------- (b) twins of macros/staging.sql
# message_decoders/_staged_rows.py serves both Python models (debezium_json, dts_avro); tested here once.
def test_sequence_twin_pads_and_cuts_like_spark_lpad():
    ts = dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC)
    assert twins.cdc_sequence(5, ts, 7, 2) == "0" * 29 + "5." + "0" * 19 + "1." + "0" * 19 + "7.000002"
    assert twins.cdc_sequence(None, None, None, 0) == "0" * 30 + "." + "0" * 20 + ".000000"
    assert twins.cdc_sequence(10**30 - 1, None, 1, 0).startswith("9" * 30 + ".")
    assert twins.cdc_sequence(10**35, None, 1, 0).startswith(":36" + "1" + "0" * 35 + ".")
    before_epoch = dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert twins.cdc_sequence(7, before_epoch, None, None) == "0" * 29 + "7." + "0" * 12 + "-1000000"
    assert (
        twins.cdc_sequence(10**31, None, 0, 1234567)
        == ":32" + "1" + "0" * 31 + "." + "0" * 20 + "." + "0" * 20 + ".123456"
    )


def test_sequence_sorts_positions_of_up_to_38_digits_by_value():
    rng = random.Random(5)
    positions = [0, 1, 10**30 - 1, 10**30, 10**30 + 1, 10**37, 10**38 - 1]
    positions += [rng.randrange(10 ** rng.randrange(1, 39)) for _ in range(2000)]
    ordered = sorted(positions, key=lambda p: twins.cdc_sequence(p, None, 0, 0))
    assert ordered == sorted(positions)


def test_position_numbers_are_ascii_digits_of_at_most_38():
    assert twins.position_of_digits("0" * 38) == 0 and twins.position_of_digits("9" * 38) == 10**38 - 1
    for text in ("9" * 39, "9" * 5000, "\u00b2", "\u0663", "", "-1", "1.0", " 1"):
        assert twins.position_of_digits(text) is None, text
    assert twins.binlog_position("3", "154") == 3 * 2**32 + 154
    assert twins.binlog_position("1", "9" * 38) is None and twins.binlog_position("9" * 29, "0") is None
    assert twins.binlog_position("9" * 28, "0") == int("9" * 28) * 2**32
    source = {"db": "d", "table": "t", "ts_ms": dbz.JsonNumber("1")}
    assert dbz.source_position({**source, "file": "mysql-bin.000003", "pos": dbz.JsonNumber("9" * 5000)})[1] is None
    assert dbz.source_position({**source, "lsn": dbz.JsonNumber("9" * 5000)})[1] is None
    assert dbz.source_position({**source, "scn": "\u00b2"}) == ("\u00b2", None)
    assert dbz.source_position({**source, "lsn": dbz.JsonNumber("9" * 38)})[1] == 10**38 - 1


def test_event_id_twin_is_sha256_of_the_non_null_parts():
    assert twins.cdc_event_id("f", "d", "n", 3) == hashlib.sha256(b"f|d|n|3").hexdigest()
    assert twins.cdc_event_id(None, "d", None, 0) == hashlib.sha256(b"d|0").hexdigest()
    assert twins.landing_natural_id("tombstone", "t", 0, 42) == "tombstone:t:0:42"


def test_primary_key_twin_writes_json_as_spark_to_json():
    assert twins.cdc_primary_key(["a", "b"], {"a": "1", "b": "x"}, {"a": None, "b": "y"}) == '["1","y"]'
    assert twins.cdc_primary_key(["a"], None, {"a": 'q"\\\u001f/é'}) == '["q\\"\\\\\\u001F/é"]'
    assert twins.cdc_primary_key(["a", "z"], None, {"a": 'q"\\\n\x01é'}) == '["q\\"\\\\\\n\\u0001é",null]'
    assert twins.cdc_primary_key(["a"], None, None) == "[null]"
    assert twins.cdc_primary_key([], {"a": "1"}, None) is None


# ---------------------------------------------------------------- encoder -> decoder without Spark
def test_encoded_stream_decodes_to_the_encoder_oracle_without_spark(messages):
    kinds = Counter()
    for m in messages:
        rows = decode(m.value, m.key)
        assert len(rows) == len(m.expected)
        for row, want in zip(rows, m.expected, strict=True):
            kinds[(row["message_status"], row["event_kind"], row["op"])] += 1
            for column, value in want.items():
                assert row[column] == value, f"{want.get('op')} {column}"
    assert {("decoded", "ROW", op) for op in ("INSERT", "UPDATE", "DELETE", "SNAPSHOT")} <= set(kinds)
    assert {("decoded", "DDL", "CREATE"), ("decoded", "DDL", "ALTER"), ("decoded", "DDL", "TRUNCATE"),
            ("decoded", "HEARTBEAT", "HEARTBEAT"), ("decoded", "TRANSACTION", "BEGIN"),
            ("tombstone", None, None)} <= set(kinds)  # fmt: skip


@pytest.mark.parametrize("kind", COMMON_MALFORMED_KINDS + ("wrong_shape",))
def test_every_malformation_is_quarantined_with_its_code_without_spark(kind, messages):
    encoder = encoder_for(DIALECT)
    rng = random.Random(5)
    for m in [m for m in messages if m.is_row_message][:60]:
        value = encoder.malform(m, kind, rng)
        (row,) = decode(value, m.key)
        assert row["error_code"] == MALFORMED_ERROR_CODE[kind], row["error_detail"]


# ---------------------------------------------------------------- (c) staging model on Spark


@pytest.fixture(scope="module")
def staged(messages) -> dict[str, Any]:
    """One dbt run over: the spec examples, the encoded workload, every malformation kind."""
    from harness import stage_messages

    encoder = encoder_for(DIALECT)
    fixtures = expected_pairs(FIXTURES)
    rng = random.Random(11)
    row_messages = [m for m in messages if m.is_row_message]
    kinds = [k for k in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds for _ in range(3)]
    picked = [(kind, rng.choice(row_messages)) for kind in kinds]
    malformed = [(kind, encoder.malform(m, kind, rng), m.key) for kind, m in picked]
    values = [p.read_bytes() for p, _ in fixtures] + [m.value for m in messages] + [v for _, v, _ in malformed]
    keys = [None] * len(fixtures) + [m.key for m in messages] + [k for _, _, k in malformed]
    rows = stage_messages(DIALECT, values, keys)
    by_offset: dict[int, list[dict]] = {}
    for row in rows:
        by_offset.setdefault(row["landing_offset"], []).append(row)
    return {"fixtures": fixtures, "malformed": malformed, "rows": rows, "by_offset": by_offset,
            "n_values": len(values)}  # fmt: skip


def _expected_per_offset(staged: dict[str, Any], messages: list[EncodedMessage]) -> list[tuple[int, list[dict]]]:
    n_fix = len(staged["fixtures"])
    return [(i, exp) for i, (_, exp) in enumerate(staged["fixtures"])] + [
        (n_fix + i, list(m.expected)) for i, m in enumerate(messages)
    ]


@pytest.mark.spark
def test_spark_every_landing_row_is_staged_in_contract_shape(staged, messages):
    rows = staged["rows"]
    assert sorted(staged["by_offset"]) == list(range(staged["n_values"]))
    assert list(rows[0]) == [name for name, _ in STAGED_COLUMNS]
    expected_rows = sum(len(e) for _, e in _expected_per_offset(staged, messages)) + len(staged["malformed"])
    assert len(rows) == expected_rows and {r["dialect"] for r in rows} == {DIALECT}


@pytest.mark.spark
def test_spark_spec_examples_and_encoded_stream_decode_as_expected(staged, messages):
    for offset, expected in _expected_per_offset(staged, messages):
        got = staged["by_offset"][offset]
        assert [r["row_index"] for r in got] == [e["row_index"] for e in expected]
        for row, want in zip(got, expected, strict=True):
            for column, value in want.items():
                assert utc(row[column]) == value, f"offset {offset} {want.get('op')}: {column}"


@pytest.mark.spark
def test_spark_malformed_messages_are_quarantined_with_their_code(staged, messages):
    first = len(staged["fixtures"]) + len(messages)
    rows = [staged["by_offset"][first + i] for i in range(len(staged["malformed"]))]
    assert all(len(r) == 1 for r in rows)
    assert Counter(r[0]["error_code"] for r in rows) == Counter(MALFORMED_ERROR_CODE[k] for k, _, _ in
                                                                staged["malformed"])  # fmt: skip
    for (_, value, _), (row,) in zip(staged["malformed"], rows, strict=True):
        assert row["message_status"] == "quarantined" and row["raw_value"] == value and row["error_detail"]


@pytest.mark.spark
def test_spark_python_twins_equal_the_sql_macros(staged):
    """event_id, sequence and primary_key of the Python model equal macros/staging.sql on Spark."""
    import jinja2
    from pyspark.sql import types as T

    from harness import spark_session

    macros = jinja2.Environment().from_string((REPO_ROOT / "macros" / "staging.sql").read_text()).module
    cases = [
        ("feed", "nid", 0, 5, dt.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=UTC), 7, ["id"], None, {"id": "1"}),
        (None, None, 3, None, None, None, [], {"a": "x"}, None),
        ("féed", "ü|x", 12, 10**35, dt.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC), 2**62, ["a", "b"],
         {"a": 'q"\\\u0001\u001f/é', "b": "1"}, {"a": None, "b": "2"}),
        ("f", "n", 1, 0, dt.datetime(9999, 12, 31, tzinfo=UTC), 0, ["a"], None, None),
        ("feed", "1|72469@78|INSERT", 0, 335007521557, dt.datetime(2023, 10, 11, 0, 33, 28, tzinfo=UTC), 0, ["a"],
         None, {"a": "123456789"}),
        ("飞书 feed", None, 3, None, None, 17, ["a", "b"], {"a": "1", "b": 'q"\\\n\t\x01\x1féx'},
         {"a": None, "c": "z"}),
        ("f", "x", None, 10**31 + 5, dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), 123456789012, [],
         None, None),
        ("f", "x", 0, 10**38 - 1, None, 1, [], None, None),
        ("f", "x", 0, 10**30 - 1, None, 1, [], None, None),
        ("f", "x", 0, 10**30, None, 1, [], None, None),
        ("f", "", 1234567, 0, dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), 2**62, ["k"], {}, {}),
    ]  # fmt: skip
    schema = T.StructType([
        T.StructField("source_name", T.StringType()), T.StructField("natural_id", T.StringType()),
        T.StructField("row_index", T.IntegerType()), T.StructField("position_number", T.DecimalType(38, 0)),
        T.StructField("event_ts", T.TimestampType()), T.StructField("landing_offset", T.LongType()),
        T.StructField("pk", T.ArrayType(T.StringType())),
        T.StructField("before", T.MapType(T.StringType(), T.StringType())),
        T.StructField("after", T.MapType(T.StringType(), T.StringType())),
    ])  # fmt: skip
    spark = spark_session()
    rows = [(*c[:3], None if c[3] is None else Decimal(c[3]), *c[4:]) for c in cases]
    spark.createDataFrame(rows, schema).createOrReplaceTempView("twin_cases")
    sql = (
        f"select {macros.cdc_event_id('source_name', repr(DIALECT), 'natural_id', 'row_index')} as event_id, "
        f"{macros.cdc_sequence('position_number', 'event_ts', 'landing_offset', 'row_index')} as sequence, "
        f"{macros.cdc_primary_key('pk', 'before', 'after')} as primary_key from twin_cases"
    )
    got = [r.asDict() for r in spark.sql(sql).collect()]
    for case, row in zip(cases, got, strict=True):
        source_name, natural_id, row_index, position, event_ts, offset, pk, before, after = case
        assert row["event_id"] == twins.cdc_event_id(source_name, DIALECT, natural_id, row_index)
        assert row["sequence"] == twins.cdc_sequence(position, event_ts, offset, row_index)
        assert row["primary_key"] == twins.cdc_primary_key(pk, before, after)


@pytest.mark.spark
def test_spark_dbt_data_tests_pass(staged):
    from harness import run_dbt

    run_dbt("test", "--select", "stg_debezium_json__changes")


def test_json_text_is_compact_json_with_numbers_as_sent():
    """json_text (the natural id's rendering) equals the standard library's compact JSON for every
    value without numbers, escapes and non-ASCII text included; numbers keep their digits."""
    rng = random.Random(7)
    alphabet = ['"', "\\", "\n", "\t", "\x00", "\x1f", "\u2028", "é", "中", "😀", "/", "a", " ", "\x7f"]

    def value(depth: int) -> Any:
        kind = rng.randrange(6 if depth < 3 else 3)
        if kind == 0:
            return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
        if kind == 1:
            return rng.choice([None, True, False])
        if kind == 2:
            return rng.choice(["", "x"])
        if kind in (3, 4):
            return {"".join(rng.choice(alphabet) for _ in range(3)): value(depth + 1) for _ in range(3)}
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    for _ in range(500):
        parsed = value(0)
        for sort_keys in (False, True):
            expected = json.dumps(parsed, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
            assert dbz.json_text(parsed, sort_keys) == expected
    sent = dbz.parse_json_text('{"b": [1.50, -0, 1e400], "a": 12345678901234567890123}')
    assert dbz.json_text(sent, sort_keys=True) == '{"a":12345678901234567890123,"b":[1.50,-0,1e400]}'


def _parsed_or_error(parse: Any, text: str) -> Any:
    try:
        return ("doc", parse(text))
    except ValueError as exc:
        return ("error", str(exc))


def test_envelope_parse_equals_plain_parse_and_reuses_the_schema() -> None:
    """parse_envelope_text gives parse_json_text's document or error for every text, the schema of a
    compact envelope parsed once: a second message with the same schema text holds the same object,
    also where the schema text holds the text that starts the payload."""
    dbz._parsed_schemas.clear()
    schema = '{"type":"struct","fields":[{"type":"int64","field":"id","parameters":{"payload":"x","a":"1"}}]}'
    head = '{"schema":' + schema
    texts = [
        head + ',"payload":{"id":1}}',
        head + ',"payload":{"id":2.50},"extra":[1,{"b":null}]}',
        head + ',"payload":{"id":3}} ',
        head + ',"payload":{"id":4}}x',  # extra data after the document
        head + ',"payload":{"id":5},"schema":{}}',  # a repeated key
        head + ',"payload":{"id":6}',  # truncated
        head + ',"payload":{"id":7,"id":8}}',  # a repeated key inside the payload
        head + "}",  # no payload
        '{"schema":null,"payload":{"id":9}}',
        '{"schema":{"type":"struct","fields":[],"doc":",\\"payload\\":"},"payload":{"id":10}}',
        '{"schema":{"fields":[],"parameters":{"x":"1","payload":{}}},"payload":{"id":11}}',
        '{"schema":{"fields":[],"parameters":{"x":"1","payload":{}}},"payload":{"id":12}}',
        '{"payload":{"id":13},"schema":' + schema + "}",
        '{ "schema": ' + schema + ', "payload": {"id": 14}}',
        '{"schema":' + schema[:-1] + ',"payload":{"id":15}}',  # the schema cut short: not JSON
    ]
    for text in texts + texts:  # the second round finds every schema text parsed before
        assert _parsed_or_error(dbz.parse_envelope_text, text) == _parsed_or_error(dbz.parse_json_text, text), text
    first, second = dbz.parse_envelope_text(texts[0]), dbz.parse_envelope_text(texts[1])
    assert first["schema"] is second["schema"] and first["payload"] != second["payload"]
    assert list(dbz.parse_envelope_text(texts[1])) == ["schema", "payload", "extra"]
    # A schema holding `,"payload":` itself (in a parameter) is parsed once too.
    eleventh, twelfth = dbz.parse_envelope_text(texts[10]), dbz.parse_envelope_text(texts[11])
    assert eleventh["schema"] is twelfth["schema"] and eleventh["payload"] != twelfth["payload"]


def test_field_schema_name_or_type_not_a_string_is_quarantined() -> None:
    for part, bad in (("name", ["io.debezium.data.Json"]), ("type", {"t": 1}), ("name", True)):
        field = {"type": "int32", "field": "id", part: bad}
        value = {
            "schema": {"type": "struct", "fields": [{"type": "struct", "field": "after", "fields": [field]}]},
            "payload": {"op": "c", "after": {"id": 1}, "source": {"db": "d", "table": "t", "ts_ms": 1}},
        }
        [row] = dbz.decode_message(json.dumps(value).encode(), None, LANDING)
        assert (row["message_status"], row["error_code"]) == ("quarantined", "wrong_shape"), part
        assert "field 'id'" in row["error_detail"]
