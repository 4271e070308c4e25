"""`cdc_dataworks_rows(dialect, value, source_tz)` (src/cdc_unify/java/cdcunify/DataWorksRows.java, the
per-message logic of stg_dataworks_json__changes and stg_oms_dataworks_json__changes in one JVM
function) against tests/python/dataworks_rows_oracle.py, the pure-Python twin of the SQL it replaces
(the models and macros/dataworks.sql as of commit f07d798, which that oracle was checked against value
by value, with the same corpus, through the old staging models).

For dataworks_json and oms_dataworks_json, every value of the corpus must give the oracle's structs:
one row, the same error code and detail for a quarantined value, and the same decoded columns, maps
with their keys in the same order (position_id, the natural id, null where the SQL hashes the message text). The corpus
(`corpus` below) is, per dialect, the JSON values of test_jvm_canal_rows (JSON reading: UTF-8,
duplicates, depth, name length, numbers), the spec examples, the bad-input corpus, the sample-data
generator's messages and their malformations (test_<dialect>'s workload) and values built to reach
every branch of the SQL: each check of dataworks_message_error in its order and near misses that
pass, every op of both op tables and unknown ones, fields of every wrong JSON type (from_json's
partial results: a struct, map or array field given a scalar or the other container is null; a
string field given a container reads its JSON text), eventTime / systemTime texts at and past their
bounds, sequenceId / scn "null", long, with leading zeros or a final line terminator, DDL with and
without ddl.text and declared columns, repeated and null column names, key lists with nulls,
duplicates and empties, images partial both ways, decoder errors in before and after, lone
surrogates and keys outside the BMP, nested values in images. Some values are also read in UTC.
Two kinds of value failed the whole dbt build of the old SQL; the oracle quarantines them (its module
docstring): two keys of a nested object that Spark stores alike ('?'), and a position of digits and
a final U+0085 / U+2028 / U+2029.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from dataworks_rows_oracle import FIELDS, MAX_MILLIS, MIN_MILLIS, dataworks_rows
from staged_rows_oracle import assert_oracle_rows, message_corpus
from test_jvm_canal_rows import dumps

DIALECTS = ("dataworks_json", "oms_dataworks_json")
SHANGHAI = "Asia/Shanghai"
ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
EVENT_KINDS = ("ROW", "DDL", "TRANSACTION", "HEARTBEAT")
DROP = object()  # a field left out of a built message
HIGH, LOW = "\ud800", "\udfff"  # lone surrogates: Spark stores both as '?'

# Each dialect's names for the family's fields (the models' `names`).
NAMES = {
    "dataworks_json": {"columns": "dataColumn", "image": "dataColumn", "schema": "schemaName", "table": "tableName",
                       "key": "primaryKey"},
    "oms_dataworks_json": {"columns": "column", "image": "data", "schema": "schema", "table": "table", "key": "pk"},
}  # fmt: skip
# A built message's fields by their family name: the path to each in the dialect's message.
PATHS = {
    "payload": ("payload",), "op": ("payload", "op"), "before_raw": ("payload", "before"),
    "after_raw": ("payload", "after"), "sequence": ("payload", "sequenceId"), "scn": ("payload", "scn"),
    "timestamp": ("payload", "timestamp"), "event_time": ("payload", "timestamp", "eventTime"),
    "system_time": ("payload", "timestamp", "systemTime"), "ddl": ("payload", "ddl"),
    "ddl_text": ("payload", "ddl", "text"), "schema": ("schema",), "source": ("schema", "source"),
    "columns": ("schema", "{columns}"), "key": ("schema", "{key}"), "db_type": ("schema", "source", "dbType"),
    "db": ("schema", "source", "dbName"), "schema_name": ("schema", "source", "{schema}"),
    "table": ("schema", "source", "{table}"), "version": ("version",),
}  # fmt: skip
ROW_OPS = {"dataworks_json": ("INSERT", "UPDATE_BEFOR", "UPDATE_AFTER", "DELETE"),
           "oms_dataworks_json": ("INSERT", "UPDATE", "DELETE")}  # fmt: skip
DDL_OPS = ("CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX")
OTHER_OPS = ("TRANSACTION_BEGIN", "TRANSACTION_END", "GTID", "XACOMMIT", "XAROLLBACK", "MHEARTBEAT", "HEARTBEAT")
UNKNOWN_OPS = (
    "insert", "Insert", "", " INSERT", "INSERT ", "INSERT\n", "UPDATE_BEFORE", "UPDATE_AFTE", "TRANSACTIONBEGIN",
    "ERASE ", "DROP", "READ", "\ud800", "é\x01\"/", "ＩＮＳＥＲＴ", "null",
)  # fmt: skip

COLUMNS = {
    "dataworks_json": [
        {"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"}, {"name": "price", "type": "DOUBLE"},
        {"name": "ts", "type": "DATE"}, {"name": "bin", "type": "BYTES"}, {"name": "flag", "type": "BOOLEAN"},
    ],
    "oms_dataworks_json": [
        {"name": "id", "type": "bigint"}, {"name": "name", "type": "varchar(20)"},
        {"name": "price", "type": "decimal(10,2)"}, {"name": "ts", "type": "datetime"},
        {"name": "bin", "type": "BLOB"}, {"name": "flag", "type": "BOOLEAN"}, {"name": "at", "type": "TIMESTAMP"},
    ],
}  # fmt: skip
ROW = {
    "dataworks_json": {"id": 1, "name": "a", "price": 9.50, "ts": 1700000000123, "bin": "AAE=", "flag": True},
    "oms_dataworks_json": {"id": 1, "name": "a", "price": 9.50, "ts": "2024-01-02 03:04:05", "bin": "AAE=", "flag": 1,
                           "at": "1700000000.123"},
}  # fmt: skip
# A value of the first column that its declared type refuses.
BAD_ID = {"dataworks_json": "x1", "oms_dataworks_json": "1.5x"}


def base(dialect: str) -> dict[str, Any]:
    """An INSERT of the dialect, as the spec shapes it."""
    n = NAMES[dialect]
    source = {"dbType": "MySQL", "dbVersion": "5.7.35", "dbName": "shop", n["schema"]: "sales", n["table"]: "orders"}
    payload = {
        "before": None, "after": {n["image"]: ROW[dialect]}, "op": "INSERT",
        "timestamp": {"eventTime": 1700000000123, "systemTime": 1700000000456, "checkpointTime": 1700000000000},
        "ddl": None, "scn": "1234",
    }  # fmt: skip
    if dialect == "dataworks_json":
        payload["sequenceId"] = "1700000000000000001"
    schema = {n["columns"]: COLUMNS[dialect], n["key"]: ["id"], "source": source}
    return {"schema": schema, "payload": payload, "version": "1.0.0" if dialect == "dataworks_json" else "2.0"}


def message(dialect: str, **fields: Any) -> dict[str, Any]:
    """The dialect's INSERT with `fields` (family names: PATHS, or `before` / `after` for an image's
    values, None for a null image) set in order; DROP leaves a field out."""
    document = copy.deepcopy(base(dialect))
    for name, value in fields.items():
        if name in ("before", "after"):
            name, value = f"{name}_raw", value if value is None or value is DROP else {NAMES[dialect]["image"]: value}
        *parents, last = (p.format(**NAMES[dialect]) for p in PATHS[name])
        node = document
        for parent in parents:
            if not isinstance(node.get(parent), dict):
                node[parent] = {}
            node = node[parent]
        if value is DROP:
            node.pop(last, None)
        else:
            node[last] = value
    return document


# ---------------------------------------------------------------- the corpus
EPOCH_VALUES = [
    DROP, None, "", "x", 1.5, "1e3", 1e3, -5, 0, "-0", "+1700000000123", " 1700000000123", "1700000000123 ",
    "\t1700000000123\n", "1700000000123\x7f", "\x001700000000123", "1700000000123\x85", "1700000000123\u2028",
    "1700000000123\xa0", "12.", "12.0", "1_000", "0x10", "١٧٠٠", "１７００", "00001700000000123", MIN_MILLIS,
    MIN_MILLIS - 1, MAX_MILLIS, MAX_MILLIS + 1, str(MAX_MILLIS), f"+{MAX_MILLIS + 1}", 9223372036854775807,
    9223372036854775808, -9223372036854775808, "-9223372036854775809", "0" * 30 + "5", True, False, {"a": 1}, [1],
    [], {}, "\ud800", "-", "+", "--1", 1700000000123, 1700000000, 1.7e12, -0.0,
]  # fmt: skip
POSITIONS = [
    DROP, None, "null", "NULL", "", "0", "123", "000123", "1" * 16, "1" * 17, "9" * 38, "1" * 39, "-1", "+1", "1.5",
    "1e3", " 123", "123 ", "123\n", "123\r\n", "123\r", "123\n\n", "abc", "１２３", 123, 12345678901234567890123,
    -7, 1.5, True, {"s": 1}, [1], "\ud800", "⾃增 ID",
]  # fmt: skip
# A final U+0085 / U+2028 / U+2029 passes the SQL's rlike; its cast to decimal fails the dbt build.
CAST_FAILING_POSITIONS = ["123\u2028", "123\x85", "0\u2029"]


def check_cases(d: str) -> list[dict[str, Any]]:
    """Messages failing each check of dataworks_message_error, in its order, and near misses that pass."""
    m = message
    n = NAMES[d]
    return [
        # payload: an object (absent or null: missing_field, else wrong_shape)
        *(m(d, payload=v) for v in (DROP, None, "x", "", 5, True, False, [], [{}], [{"op": "INSERT"}], {})),
        m(d, payload=None, schema="x"), m(d, payload=[], op=DROP), {"Payload": base(d)["payload"]},
        {"payload": base(d)["payload"]}, {"payload": {}}, {"payload": {"OP": "INSERT"}},
        # payload.op: a known op (case-sensitive); a nested op is its JSON text
        *(m(d, op=v) for v in (DROP, None, 5, 1.50, -0.0, True, {"a": 1.50, "b": [None, "é\x01"]}, ["INSERT"])),
        *(m(d, op=v) for v in UNKNOWN_OPS),
        m(d, op="nope", event_time="x"), m(d, op=None, event_time=DROP),
        # payload.timestamp.eventTime: present, epoch ms a timestamp holds
        *(m(d, timestamp=v) for v in (DROP, None, "x", 5, [], [{"eventTime": 1}], {})),
        *(m(d, event_time=v) for v in EPOCH_VALUES),
        m(d, event_time="x", columns="x"), m(d, event_time=DROP, db={"x": 1}),
        # schema.<columns>: a list of objects (nulls allowed)
        *(m(d, columns=v) for v in (DROP, None, "x", "", 5, True, {}, {"name": "id"}, [None], [1], ["id"],
                                    [{"name": "id"}, "x"], [{"name": "id"}, []], [{"name": "id"}, None],
                                    [[{"name": "id"}]], [])),
        m(d, columns="x", db={"d": 1}), m(d, columns=[1], table=DROP), m(d, schema="x"), m(d, schema=[]),
        m(d, schema=[{n["columns"]: [1]}]), m(d, schema=5), m(d, schema=None), m(d, schema=DROP), m(d, schema={}),
        # schema.source names: not a JSON object/array (any op), then dbName / table for a row
        m(d, db={"d": 1}), m(d, db=[]), m(d, schema_name={"s": 1}), m(d, schema_name=["s"]), m(d, table={}),
        m(d, table=["t"]), m(d, db={}, schema_name=[], table={}), m(d, schema_name=[], table={}),
        m(d, db=5, schema_name=True, table=1.50), m(d, db=False, schema_name=None, table=""),
        m(d, op="MHEARTBEAT" if d == "dataworks_json" else "HEARTBEAT", table=[1]),
        m(d, op="CREATE", ddl_text="create table t (a int)", db={"x": [1]}),
        *(m(d, db=v) for v in (DROP, None, "")), *(m(d, table=v) for v in (DROP, None, "")),
        m(d, source=DROP), m(d, source=None), m(d, source="x"), m(d, source=[]), m(d, source={}),
        m(d, source=[{"dbName": "a"}]), m(d, op="DELETE", before=ROW[d], after=None, db=DROP),
        m(d, op="GTID", source=DROP), m(d, op="ALTER", ddl_text="alter table t", table=DROP, db=None),
        m(d, schema={"source": {"DBNAME": "shop", n["table"]: "t"}}),
        # a DDL's payload.ddl.text
        *(m(d, op="ALTER", ddl=v) for v in (DROP, None, "x", 5, [], {}, {"text": None}, {"ddlMeta": "x"},
                                            {"TEXT": "x"}, {"text": ""}, {"text": 5}, {"text": {"a": 1}},
                                            {"text": ["alter", True]}, {"text": " \n"})),
        m(d, op="TRANSACTION_BEGIN", ddl=None), m(d, op="INSERT", ddl="x"),
        # images: payload.before / after {"<image>": {...}} for a row
        *(m(d, **{f"{side}_raw": v}) for side in ("before", "after")
          for v in ("x", "", 5, 0, True, False, [], [{}], {}, {n["image"]: None}, {n["image"]: "x"},
                    {n["image"]: []}, {n["image"]: [ROW[d]]}, {n["image"]: 5}, {n["image"].upper(): ROW[d]},
                    {"data" if d == "dataworks_json" else "dataColumn": ROW[d]}, None, DROP)),
        m(d, op="DELETE", before_raw="x", after_raw=[]), m(d, op="MHEARTBEAT", after_raw="x"),
        m(d, op="HEARTBEAT", before_raw=[1]), m(d, op="CREATE", ddl_text="c", after_raw="x", before_raw=5),
        m(d, op="TRANSACTION_END", after={n["image"]: "x"}),
        # images an op needs
        *(m(d, op=op, before=b, after=a) for op in ROW_OPS[d]
          for b, a in ((None, None), (DROP, DROP), (ROW[d], None), (None, ROW[d]), ({}, None), (None, {}),
                       (ROW[d], ROW[d]), ({}, {}))),
    ]  # fmt: skip


def op_cases(d: str) -> list[dict[str, Any]]:
    """Every op of both op tables, with and without what they may carry."""
    m = message
    n = NAMES[d]
    ops = [*ROW_OPS["dataworks_json"], *ROW_OPS["oms_dataworks_json"], *DDL_OPS, *OTHER_OPS]
    cases = [m(d, op=op, before=ROW[d], after=ROW[d], ddl={"text": f"{op.lower()} table t"}) for op in ops]
    cases += [m(d, op=op, before=None, after=None, ddl=None, columns=DROP, key=DROP, source=DROP) for op in OTHER_OPS]
    cases += [m(d, op=op, ddl_text=f"{op} t", columns=DROP) for op in DDL_OPS]
    cases += [m(d, op=op, ddl_text="", columns=[], key=[]) for op in DDL_OPS[:3]]
    return cases + [
        m(d, op="CREATE", ddl_text="create table t (a int)", before=None, after=None),
        m(d, op="ALTER", ddl_text="alter table t add c int", columns=[{"name": "c", "type": "LONG"}, {"name": "c"}]),
        m(d, op="ALTER", ddl_text="x", columns=[{"name": "a", "type": "decimal(1000,2000)"}, {"type": "INT"}]),
        m(d, op="ALTER", ddl_text="x", columns=[{"name": "b", "type": None}, {"name": "a", "type": 5}, None]),
        m(d, op="TRUNCATE", ddl_text="truncate t", columns=None, key=["id", "id", None]),
        m(d, op="ERASE", ddl_text="drop table t", schema={"source": {"dbName": "d"}}),
        m(d, op="ERASE", ddl_text="drop table t", schema=DROP), m(d, op="QUERY", ddl_text="\ud800 q"),
        m(d, op="CREATE", ddl={"text": "create", "ddlMeta": {"x": 1}}, db="d\ud800", table="\U0001f600"),
        m(d, op="CREATE", ddl_text="c", before=ROW[d], after={"id": BAD_ID[d]}),
        # spec 001's heartbeat, exactly (and as spec 003 sends one)
        {"schema": {n["columns"]: None, n["key"]: None, "source": None},
         "payload": {"before": None, "after": None, "sequenceId": None,
                     "timestamp": {"eventTime": 1620457659000, "checkpointTime": 1620457659000},
                     "op": "MHEARTBEAT", "ddl": None}, "version": "0.0.1"},
        {"version": "2.0", "payload": {"timestamp": {"eventTime": 1620457659000}, "op": "HEARTBEAT"}},
        {"payload": {"timestamp": {"eventTime": "0"}, "op": "GTID"}},
        {"payload": {"timestamp": {"eventTime": "-62135596800000", "systemTime": "x"}, "op": "XACOMMIT"}},
    ]  # fmt: skip


def position_cases(d: str) -> list[dict[str, Any]]:
    """sequenceId and scn: source_position, position_digits and position_id (the natural id)."""
    m = message
    other = "MHEARTBEAT" if d == "dataworks_json" else "HEARTBEAT"
    cases = [m(d, sequence=v) for v in POSITIONS] + [m(d, scn=v) for v in POSITIONS]
    cases += [m(d, sequence=DROP, scn=v) for v in POSITIONS] + [m(d, sequence="null", scn=v) for v in POSITIONS[:12]]
    cases += [m(d, sequence="x1", scn=v) for v in ("123", "null", None, "9" * 38, "1" * 39)]
    cases += [m(d, op=other, sequence=s, scn=c) for s, c in ((DROP, DROP), ("5", DROP), (DROP, "6"), ("null", "null"))]
    cases += [m(d, event_time=e, scn=s) for e in (MIN_MILLIS, MAX_MILLIS, 0, -1) for s in ("1" * 16, "null", "0")]
    cases += [m(d, sequence=v) for v in CAST_FAILING_POSITIONS] + [m(d, scn=v) for v in CAST_FAILING_POSITIONS]
    cases += [m(d, sequence="x", scn=v) for v in CAST_FAILING_POSITIONS]
    cases += [m(d, sequence=DROP, scn=v, op=other, event_time="5") for v in CAST_FAILING_POSITIONS]
    cases += [m(d, sequence=v, scn=v, op="nope") for v in CAST_FAILING_POSITIONS]
    cases += [m(d, sequence=v, scn=v, after={"id": BAD_ID[d]}) for v in CAST_FAILING_POSITIONS]
    return cases


def image_cases(d: str) -> list[dict[str, Any]]:
    """Rows that decode: image shapes, declared columns, keys, names and what Spark makes of odd text."""
    m = message
    row, bad = ROW[d], BAD_ID[d]
    long_type, text_type = ("LONG", "STRING") if d == "dataworks_json" else ("bigint", "varchar(5)")
    wide = [{"name": "b", "type": long_type}, {"name": "a", "type": text_type}, {"name": "é", "type": long_type},
            {"name": "\U0001f600", "type": text_type}, {"name": "ｚ", "type": long_type}, {"name": "A", "type": None},
            {"name": "b", "type": text_type}, {"name": None, "type": long_type}, {"type": long_type}, None,
            {"name": "Z", "type": "JSON"}, {"name": 5, "type": 7}, {"name": {"n": 1}, "type": {"t": [1]}}]  # fmt: skip
    odd = {"b": "2", "a": "x", "é": "3", "\U0001f600": "s", "ｚ": "4", "A": "n", "only": 1.50, "t": True, "f": False,
           "n": None, "Z": {"j": [1, "x", None, -0.0, {"k": "\x01\t\"\\/é\u2028\U0001f600\ud800"}]}, "y": [1, [2]],
           "e": {}, "l": []}  # fmt: skip
    before_only, after_only = {"id": 1, "name": "b", "old": "o"}, {"id": 1, "price": 2.5, "new": "n"}
    return [
        m(d), m(d, op="DELETE", before=row, after=None), m(d, op="DELETE", before=row, after=row),
        m(d, op="INSERT", before=row), m(d, op="INSERT", before=before_only, after=after_only),
        m(d, op="INSERT", before=after_only, after=before_only), m(d, op="INSERT", before={}, after=row),
        m(d, op="INSERT", after={}), m(d, op="DELETE", before={}), m(d, op="DELETE", before=row, after={"zz": "1"}),
        *(m(d, op=op, before=before_only, after=after_only) for op in ROW_OPS[d]),
        m(d, columns=wide, after=odd, key=[]), m(d, columns=wide, before=odd, after={"b": "1"}, op="DELETE"),
        m(d, columns=[], after=row), m(d, columns=DROP, after=row), m(d, columns=None, after=row),
        m(d, columns=[None, None], after=row), m(d, columns=[{"name": "id"}], after={"id": "x"}),
        m(d, columns=[{"name": "id", "type": " long "}, {"name": "name", "type": "string"}], after={"id": "7", "name": 5}),
        m(d, columns=[{"name": "id", "type": "LONG"}, {"name": "id", "type": "STRING"}], after={"id": "x"}),
        m(d, columns=[{"name": "id", "type": "STRING"}, {"name": "id", "type": "LONG"}], after={"id": "x"}),
        m(d, columns=[{"name": HIGH, "type": long_type}, {"name": LOW, "type": text_type}], after={LOW: "x", HIGH: "1"}),
        m(d, after={HIGH: "1", "a": "2", LOW: "3"}), m(d, after={LOW: "x", HIGH: None}),
        m(d, after={HIGH: bad, LOW: "1"}, columns=[{"name": "?", "type": long_type}]),
        m(d, after={HIGH: "1", LOW: bad}, columns=[{"name": "?", "type": long_type}]),
        m(d, after={"name": "\ud800", "id": 1, "x": "a\udfffb", "\U0001f600": "\U0001f600"}),
        m(d, after={"id": 1, "name": "ctl \x00\x01\x1f\x7f\x80\x9f\" \\ / é \u2028 \ufeff \uffff"}),
        m(d, after={"id": 1, "name": {"\ud800": 1, "a": [{"\udfff": 2, "b": 3, "\U0001f600": 4, "ｚ": 5}]}}),
        m(d, after={"id": 1, "name": [True, None, 1.5e300, -0.0, 12.50, "1E+2"]}),
        m(d, after={"id": 12345678901234567890123, "price": 1.5e300, "name": 1.50}),
        m(d, after={"id": -0.0, "price": -1.5e-7}), m(d, after={"id": None, "name": None, "price": None}),
        m(d, after={"ts": -62135596800001}), m(d, after={"ts": 253402300800000}), m(d, after={"ts": "x"}),
        m(d, after={"flag": "maybe"}), m(d, after={"flag": False, "bin": "not base64!"}),
        m(d, after={"price": "NaN"}), m(d, after={"price": "1e999"}),
        # decoder errors: before, after, both (before first)
        m(d, op="DELETE", before={"id": bad}, after=None), m(d, after={"id": bad}),
        m(d, before={"id": bad}, after={"id": "1"}), m(d, before={"id": "1"}, after={"id": bad}),
        m(d, before={"id": bad}, after={"id": bad + "2"}), m(d, before={"name": "x", "id": bad}, after={"id": "\ud800"}),
        m(d, before={"\ud800": bad}, after={}, columns=[{"name": "\udfff", "type": long_type}]),
        m(d, after={"id": {"x": 1}}), m(d, after={"id": [1]}), m(d, after={"id": True}),
        # keys: nulls, duplicates, empties, wrong types
        *(m(d, key=v) for v in (DROP, None, "id", {"id": 1}, 5, [], [None], [None, None], ["", ""],
                                ["id", None, "", "id", 5, 1.50, True, {"k": [1]}, ["x"], "name"], ["\ud800", "\udfff", "?"],
                                ["missing"], ["ID"])),
        # names, the source's dbType (lowered) and version
        m(d, db="d\ud800", schema_name="s\U0001f600", table="é"), m(d, db="", schema_name="", table=""),
        m(d, db=1.50, schema_name=DROP, table=True), m(d, db=-0.0, schema_name=None, table=12345678901234567890),
        *(m(d, db_type=v) for v in (DROP, None, "", "ORACLE", "ob_MySQL", "İSTANBUL", "ΑΣ Σ", "ẞ ǅ Ω K",
                                    {"X": "A"}, ["Q"], 5, True, "\ud800X")),
        m(d, version=DROP), m(d, version={"v": 1}), m(d, system_time="x"), m(d, system_time=DROP),
        m(d, system_time=MAX_MILLIS + 1), m(d, system_time=-1), m(d, timestamp={"eventTime": 5, "checkpointTime": "x"}),
        # keys Spark stores alike ('?'): kept at the top level, the whole build failed on below it (the oracle
        # quarantines the value)
        {**m(d), HIGH: {"a": 1}, LOW: 2, "?": [3]}, {**m(d), "extend": [{HIGH: 1, "?": 2}]},
        {**m(d), "extend": {"x": {"y": [[{LOW: None, HIGH: None}]]}}}, {**m(d), "extend": {HIGH: 1, "\U0001f600": 2}},
        [{HIGH: 1, LOW: 2}], m(d, after={"id": 1, "name": {HIGH: 1, LOW: 2}}), m(d, source={"dbName": "d", HIGH: 1, "?": 2}),
        # fields not in the schema, and ones in another case
        {**m(d), "extend": {"load_fm": "x", "deep": [[[[[[1]]]]]]}, "Schema": 5, "PAYLOAD": None},
        m(d, op="INSERT", after=row, payload={**m(d)["payload"], "Op": "DELETE", "extra": {"a": 1.5e300}}),
    ]  # fmt: skip


def corpus(dialect: str) -> list[bytes | None]:
    """Every value the test reads for `dialect` (module docstring), each once, a tombstone first."""
    built = [*map(dumps, check_cases(dialect) + op_cases(dialect) + position_cases(dialect) + image_cases(dialect))]
    built += [dumps([message(dialect)]), dumps(message(dialect)).replace(b'"op": "INSERT"', b'"op": "INSERT", "x": 1')]
    return message_corpus(dialect, built, [(220, 5, random.Random(2))])  # test_<dialect>'s workload


def test_corpus_reaches_every_error_code_and_event_kind():
    for dialect in DIALECTS:
        values = corpus(dialect)
        rows = [r for v in values for r in dataworks_rows(dialect, v, SHANGHAI)]
        assert len(values) >= 500, dialect
        reached = {r["error_code"] for r in rows} | {r["event_kind"] for r in rows}
        assert reached >= set(ERROR_CODES) | set(EVENT_KINDS), (dialect, set(ERROR_CODES) | set(EVENT_KINDS) - reached)


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_cdc_dataworks_rows_gives_the_oracles_rows_for_every_value(dialect):
    from harness import spark_session

    values = corpus(dialect)
    cases = [(dialect, v, SHANGHAI) for v in values]
    zoned = [v for v in values if v is not None and b"eventTime" in v][:30]  # a source zone must change nothing
    cases += [(dialect, v, "UTC") for v in zoned]
    assert_oracle_rows(
        spark_session(), "cdc_dataworks_rows(c.d, c.v, c.tz)", cases, "struct<d: string, v: binary, tz: string>",
        FIELDS, dataworks_rows,
    )  # fmt: skip
