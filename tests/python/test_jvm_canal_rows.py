"""`cdc_canal_rows(dialect, value, source_tz)` (src/cdc_unify/java/cdcunify/CanalRows.java, the Canal
FlatMessage staging logic of stg_canal_json__changes and stg_oms_canal_json__changes in one JVM
function) against tests/python/canal_rows_oracle.py, the pure-Python twin of the SQL it replaces
(macros/canal.sql `canal_checked_messages` + `canal_staged_rows` as of commit 4c78c86, which that
oracle was checked against value by value, with the same corpus, through the old staging models).

For canal_json and oms_canal_json, every value of the corpus must give the oracle's structs: the same
rows (row_index across the value), the same error code and detail for a quarantined value, and the
same decoded columns, maps with their keys in the same order. The corpus (`corpus` below) is every
Canal value of test_jvm_functions (spec examples, the bad-input corpora and its own odd shapes), the
sample-data generator's messages and their malformations (test_canal_json's workload), and values
built to reach every branch of the SQL: each value and message check in its order, alone and in the
second message of an array, epoch texts of every unit (19 digits, trailing line terminators),
UPDATEs with a shorter old, CloudCanal tableChanges types with repeated names and null types,
sqlType-only columns, key names with nulls, empties and duplicates, decoder errors in a later row,
QUERY with isDdl false, transaction and heartbeat types. A few values are also read in UTC.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from canal_rows_oracle import FIELDS, canal_rows
from staged_rows_oracle import assert_oracle_rows, generated_values

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples"

DIALECTS = ("canal_json", "oms_canal_json")
SHANGHAI = "Asia/Shanghai"
ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
EVENT_KINDS = ("ROW", "DDL", "TRANSACTION", "HEARTBEAT", "OTHER")
DROP = object()  # a field left out of a built message

BASE = {
    "id": 7, "database": "shop", "table": "orders", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
    "es": 1700000000123, "ts": 1700000000456, "sql": "",
    "mysqlType": {"id": "int(11)", "note": "varchar(20)", "price": "decimal(10,2)", "at": "datetime(3)"},
    "sqlType": {"id": 4, "note": 12, "price": 3, "at": 93},
    "data": [{"id": "1", "note": "a", "price": "9.50", "at": "2024-01-02 03:04:05.678"}],
    "old": None,
}  # fmt: skip


def message(**fields: Any) -> dict[str, Any]:
    """BASE with `fields` replaced (DROP leaves a field out)."""
    return {k: v for k, v in {**BASE, **fields}.items() if v is not DROP}


def dumps(document: Any) -> bytes:
    """UTF-8 JSON, a lone surrogate (only ever in a string) as its escape."""
    text = json.dumps(document, ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m[0]):04x}", text).encode()


# ---------------------------------------------------------------- the corpus
def value_cases() -> list[bytes]:
    """Values the value checks refuse (or just accept), in check order."""
    deep = 1000
    texts = [
        "", " ", "{", '{"a": 1, "a": 2}', '[{"type": "INSERT", "data": [{"a": 1, "a": 2}]}]', "\ufeff{}", "NaN",
        '{"a": 01}', "{} {}", '{"type": "HEARTBEAT"} x', '{"type": "HEART\x01BEAT"}', '{"type": "HEARTBEAT",}',
        '{"a": Infinity}', '{"a": -Infinity}', '{"type": "HEARTBEAT"}\n', ' \t\r\n{"type": "HEARTBEAT"}\n ',
        "42", '"s"', "true", "null", "[]", " [ ] ", "[null]", "[1, 2]",
        '{"type": "HEARTBEAT", "x": ' + "[" * (deep - 1) + "]" * (deep - 1) + "}",
        '{"type": "HEARTBEAT", "x": ' + "[" * deep + "]" * deep + "}",
        '[{"type": "HEARTBEAT", "x": ' + "[" * (deep - 2) + "]" * (deep - 2) + "}]",
        '[{"type": "HEARTBEAT", "x": ' + "[" * (deep - 1) + "]" * (deep - 1) + "}]",
        '{"type": "HEARTBEAT", "' + "k" * 50_000 + '": 1}',
        '{"type": "HEARTBEAT", "' + "k" * 50_001 + '": 1}',
        '{"type": "HEARTBEAT", "' + "\U0001f600" * 25_000 + '": 1}',
        '{"type": "HEARTBEAT", "' + "\U0001f600" * 25_001 + '": 1}',
        '{"type": "HEARTBEAT", "n": 1' + "0" * 2000 + "}",
        '{"type": "HEARTBEAT", "es": 1e400, "ts": -0.0E-0}',
    ]  # fmt: skip
    raw = [b"\xff", b'{"type": "\xc3"}', b"\xc0\xaf", b'{"a": "\xed\xa0\x80"}', b"\xf4\x90\x80\x80", b"\xef\xbb\xbf{}"]
    return raw + [t.encode() for t in texts]


def message_check_cases() -> list[dict[str, Any] | Any]:
    """Messages failing each message check, in the SQL's order, and near misses that pass."""
    return [
        message(type=DROP), message(type=None), message(type=5), message(type=["INSERT"]), message(type="insert"),
        message(type=""), message(type="INSERT "), message(type=True),
        message(database={"d": 1}), message(table=["t"]), message(type="ALTER", database=[], sql="alter"),
        message(database=DROP), message(database=""), message(database=None), message(database=5),
        message(table=DROP), message(table=""), message(type="DELETE", table=None),
        message(data=DROP), message(data=None), message(data={}), message(data="x"), message(data=[None]),
        message(data=[{"id": "1"}, 3]), message(data=[]), message(type="UPDATE", data=[]),
        message(type="UPDATE", old={}), message(type="UPDATE", old=[None]), message(type="UPDATE", old="x"),
        message(type="UPDATE", old=[{"id": "0"}, {"id": "2"}]), message(type="INSERT", old=[{"a": 1}, {"b": 2}]),
        message(type="INSERT", old="garbage"), message(type="DELETE", old=[None, 1]),
        message(pkNames="id"), message(pkNames={"id": 1}), message(pkNames=None),
        message(mysqlType=[]), message(mysqlType="int"), message(mysqlType=None), message(sqlType=[4]),
        message(sqlType=None), message(tableChanges={}), message(tableChanges={"table": {}}),
        message(tableChanges={"table": {"columns": {}}}), message(tableChanges=None),
        message(type="HEARTBEAT", tableChanges={"table": [1]}),
        message(type="CREATE", sql=DROP), message(type="CREATE", sql=None), message(type="QUERY", sql=DROP),
        message(type="QUERY", isDdl=False, sql=DROP), message(type="CREATE", sql=42), message(type="CREATE", sql=""),
        message(es=DROP), message(es=None), message(type="CREATE", sql="create table t (a int)", es=DROP),
        message(type="GTID", es=DROP, ts=DROP), message(type="HEARTBEAT", es=None),
        message(data=[{"id": "1", "note": {"x": 1}}]), message(data=[{"id": "1", "a": [], "b": {}}, {"c": [1]}]),
        message(type="DELETE", data=[{"id": "1", "note": [1]}]),
        message(type="UPDATE", old=[{"note": {"x": 1}}]), message(type="UPDATE", old=[{"a": []}, {"b": {}}]),
        message(type="INSERT", old=[{"note": {"x": 1}}]), message(type="CREATE", sql="c", data=[{"a": {"x": 1}}]),
    ]  # fmt: skip


EPOCH_TEXTS = [
    "0", "1", "00000000000", "12345678901", "123456789012", "1700000000123", "12345678901234", "123456789012345",
    "1700000000123456", "12345678901234567", "123456789012345678", "1700000000123456789", "9223372036854775807",
    "9223372036854775808", "9999999999999999999", "12345678901234567890", "1700000000\n", "1700000000123\r\n",
    "1700000000\r", "1700000000\u2028", "1700000000\u2029", "1700000000\x85", "1700000000\n\n", " 1700000000",
    "1700000000 ", "-1", "1.5", "1e3", "", "0x10", "１７００", "1700000000123456789\n",
]  # fmt: skip
EPOCH_JSON = [1700000000123, 1700000000, 1700000000123456, 1.7e12, -5, 0, True, {"a": 1}, [1]]


def epoch_cases() -> list[dict[str, Any]]:
    cases = [message(es=e) for e in EPOCH_TEXTS + EPOCH_JSON]
    cases += [message(ts=e) for e in EPOCH_TEXTS + EPOCH_JSON]
    cases += [message(type="TRANSACTIONEND", es=e, ts=DROP) for e in ("1700000000", "x", None)]
    cases += [message(type="HEARTBEAT", es=DROP, ts=e) for e in ("1700000000123456", "1e3")]
    return cases


def decoded_cases() -> list[dict[str, Any]]:
    """Messages that decode, across every event kind, op and image shape."""
    wide = {"b": "int", "a": "varchar(5)", "é": "int", "\U0001f600": "text", "ｚ": "bigint", "A": None}
    row = {"b": "2", "a": "x", "é": "3", "\U0001f600": "s", "ｚ": "4", "A": "n", "only": 1.50, "t": True, "n": None}
    tc = {"table": {"columns": [
        {"name": "a", "typeExpression": "int(11)", "typeName": "INT", "jdbcType": 4},
        {"name": "b", "typeName": "VARCHAR", "jdbcType": 12}, {"name": "c", "jdbcType": 93}, {"name": "d"},
        {"name": "a", "typeExpression": "bigint(20)"}, {"name": None, "typeName": "X"}, 3, None,
        {"name": "e", "typeExpression": "", "typeName": "INT"}, {"name": "f", "jdbcType": None, "typeName": None},
        {"name": 9, "typeExpression": {"x": 1}}, {"name": "b", "typeName": None, "jdbcType": -5},
    ], "primaryKeyColumnNames": ["a", None, "", "a", 1, "b"]}}  # fmt: skip
    return [
        message(), message(type="DELETE"), message(type="UPDATE"), message(type="UPDATE", old=None),
        message(type="UPDATE", old=[{"note": "b", "price": "1.25"}]), message(type="UPDATE", old=[{}]),
        message(type="UPDATE", data=[{"id": "1", "note": "x"}, {"id": "2", "note": "y"}, {"id": "3"}],
                old=[{"note": "w", "zz": "9"}]),
        message(type="DELETE", data=[{"id": "1"}, {"id": "2"}, {"id": "3", "note": None}]),
        message(mysqlType=wide, sqlType={"a": 12, "z": 4, "y": None, "b": "x"}, data=[row, {}], pkNames=[]),
        message(mysqlType=DROP, sqlType={"id": 4, "note": 12, "m": -7, "q": None}, data=[{"id": "5", "m": "1"}]),
        message(mysqlType=DROP, sqlType=DROP, data=[{"id": 5, "note": "x"}]),
        message(pkNames=["id", None, "", "id", "note", 5, {"k": 1}]), message(pkNames=[None, ""]), message(pkNames=DROP),
        message(pkNames=["missing"]), message(database="", type="CREATE", sql="create database x"),
        message(gtid=""), message(gtid="uuid:1-5"), message(gtid=5), message(gtid={"g": 1}),
        message(type="CREATE", sql="create table t (a int, b varchar(3), primary key (a))", tableChanges=tc),
        message(type="ALTER", sql="alter table t", tableChanges={"table": {"columns": []}}),
        message(type="ALTER", sql="alter table t", tableChanges={"table": {"columns": [], "primaryKeyColumnNames": []}}),
        message(type="ERASE", sql="drop table t", tableChanges={"table": {"columns": [{"name": "a", "typeName": "??"}],
                                                                         "primaryKeyColumnNames": "a"}}),
        message(type="INSERT", tableChanges=tc), message(type="HEARTBEAT", tableChanges=tc),
        *(message(type=t, sql=f"{t.lower()} stuff", data=DROP) for t in
          ("CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX")),
        *(message(type="QUERY", sql="select 1", isDdl=v) for v in (False, "false", "FALSE", "False", True, None, DROP, 0)),
        *(message(type=t, data=DROP, es=DROP, gtid="g1") for t in
          ("GTID", "XACOMMIT", "XAROLLBACK", "TRANSACTIONBEGIN", "TRANSACTIONEND", "MHEARTBEAT", "HEARTBEAT")),
        message(type="HEARTBEAT", data="nope", old=3, database=DROP, table=DROP),
        # a lone surrogate: Spark stores it as '?' (String.getBytes), before the value decoder reads it
        message(data=[{"\ud800": "1", "a": "2", "id": "3"}], mysqlType={"\ud800": "int", "a": "int"}, pkNames=["\ud800"]),
        message(data=[{"id": "\ud800", "note": "\udfff"}]), message(data=[{"note": "\ud800x"}]),
        message(data=[{"id": "1", "note": "ctl \x01\x1f\x7f\" \\ / é \U0001f600"}]),
        message(type={"a": "\x01\"/é", "n": 1.50, "b": [True, None, -0]}), message(type="CREATE\n", sql="c"),
    ]  # fmt: skip


def decoder_error_cases() -> list[dict[str, Any]]:
    """Rows the value decoder refuses, in a later row and on either side of an UPDATE."""
    return [
        message(data=[{"id": "x"}]), message(data=[{"id": "1"}, {"id": "1.5"}]),
        message(type="DELETE", data=[{"id": "1"}, {"id": "1"}, {"id": "zz"}]),
        message(type="UPDATE", data=[{"id": "1"}, {"id": "2"}], old=[{"id": "1"}, {"id": "y"}]),
        message(type="UPDATE", data=[{"id": "q"}], old=[{"id": "r"}]), message(data=[{"at": "2024-13-40"}]),
        message(data=[{"price": "abc"}]), message(data=[{"id": "\ud800"}]),
        message(type="CREATE", sql="c", tableChanges={"table": {"columns": [{"name": "a", "typeName": "int"}]}}),
    ]  # fmt: skip


def array_cases() -> list[list[Any]]:
    """Values of several messages: an error in the second one, rows numbered across messages."""
    good, ddl = message(type="UPDATE", data=[{"id": "1"}, {"id": "2"}]), message(type="CREATE", sql="create x")
    arrays = [
        [good],
        [good, ddl, message(type="DELETE")],
        [message(type="GTID", es=DROP), good, good],
        [good, 7],
        [None, good],
    ]
    arrays += [[good, bad] for bad in message_check_cases()[::3]]
    arrays += [[good, ddl, bad] for bad in decoder_error_cases()]
    arrays += [[good, message(es="x"), message(type=DROP)], [good, message(data=[{"id": "z"}]), message(es="x")]]
    return arrays


# Values that reach each branch of the reader (nested names, non-object rows, null elements, odd
# types); with the spec examples and the bad-input corpora, part of the corpus.
CANAL_EXTRA = [
    '{"type": {"a": 1}, "database": ["d"], "table": {"t": 2}, "es": true, "ts": null, "isDdl": false}',
    '{"type": "INSERT", "data": [{"a": 1, "b": {"x": [1, 2]}, "c": null}, null, 3, {"d": [], "e": {}}]}',
    '{"type": "UPDATE", "data": [{"a": 1}], "old": [{"a": 0.50, "z": true}, "x"], "pkNames": [1, null, {"k": 1}, "id"]}',
    '{"type": "QUERY", "mysqlType": {"b": "int", "a": 7, "c": null, "d": {"x": 1}}, "sqlType": [], "sql": "CREATE"}',
    '{"tableChanges": {"table": {"columns": [{"name": "a", "jdbcType": 4}, 3, null, {"typeExpression": {"x": 1}}],'
    ' "primaryKeyColumnNames": ["a", 1]}}}',
    '{"tableChanges": {"table": [1]}}',
    '{"tableChanges": null, "data": null, "old": null}',
    '[{"type": "INSERT"}, 7, null, [1], {"type": "DELETE", "data": []}]',
    "[]",
    '"just a string"',
    "42",
    '{"\\u00e9": 1, "type": "HEARTBEAT", "data": "nope"}',
]


def canal_values() -> list[bytes]:
    from test_bad_inputs import corpus as bad_input_corpus

    values = [text.encode() for text in CANAL_EXTRA]
    for dialect in ("canal_json", "oms_canal_json"):
        values += [p.read_bytes() for p in sorted((SPEC / dialect).glob("[0-9][0-9]_*.json"))]
        values += [m.value for m in bad_input_corpus(dialect) if m.value is not None]
    return list(dict.fromkeys(values))


def corpus() -> list[bytes | None]:
    """Every value the test reads (module docstring), each once, a tombstone first."""
    built = message_check_cases() + epoch_cases() + decoded_cases() + decoder_error_cases()
    values = [None, *value_cases(), *map(dumps, built), *map(dumps, array_cases())]
    values += canal_values()
    for dialect in DIALECTS:  # test_canal_json's workload
        values += generated_values(dialect, 160, 20240601, random.Random(f"test:{dialect}"), first=300)
    return list(dict.fromkeys(values))


def test_corpus_reaches_every_error_code_and_event_kind():
    rows = [r for v in corpus() for d in DIALECTS for r in canal_rows(d, v, SHANGHAI)]
    assert len(corpus()) >= 500
    reached = {r["error_code"] for r in rows} | {r["event_kind"] for r in rows}
    assert reached >= set(ERROR_CODES) | set(EVENT_KINDS), set(ERROR_CODES) | set(EVENT_KINDS) - reached


@pytest.mark.spark
def test_spark_cdc_canal_rows_gives_the_oracles_rows_for_every_value():
    from harness import spark_session

    values = corpus()
    cases = [(d, v, SHANGHAI) for d in DIALECTS for v in values]
    zoned = [v for v in values if v is not None and b"timestamp" in v][:30]  # a source zone matters
    cases += [(d, v, "UTC") for d in DIALECTS for v in zoned]
    assert_oracle_rows(
        spark_session(), "cdc_canal_rows(c.d, c.v, c.tz)", cases, "struct<d: string, v: binary, tz: string>", FIELDS,
        canal_rows,
    )  # fmt: skip
