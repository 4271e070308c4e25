"""`cdc_cloudcanal_rows(value, source_tz)` (src/cdc_unify/java/cdcunify/CloudCanalRows.java, the
per-message logic of stg_cloudcanal_json__changes in one JVM function) against
tests/python/cloudcanal_rows_oracle.py, the pure-Python twin of the SQL it replaces (the model as of
commit 3ee905e, which that oracle was checked against value by value, with the same corpus, through
the old staging model).

Every value of the corpus must give the oracle's structs: the same rows (row_index), the same error
code and detail for a quarantined value, and the same decoded columns, maps with their keys in the
same order (message_op null for a DDL with a statement: the SQL keeps cdc_ddl_op). The corpus (`corpus`
below) is the spec examples, the bad-input corpus, the sample-data generator's messages and their
malformations (test_cloudcanal_json's workload), the JSON values of test_jvm_canal_rows (JSON
reading: UTF-8, duplicates, depth, name length, numbers) and values built to reach every branch of
the SQL: each check of `checked` in its order (isDdl, nested names, data/before, dbValType/jdbcType,
pks, tableChanges and its columns, entryType, execTs/sendTs texts at and past their bounds, action,
table, rows), TRANSACTIONEND, DDL with and without a statement (its op from action), tableChanges
columns by position (missing, repeated, not a number), key names from pks or the DDL, DELETE from
`before`, UPDATEs with `before` empty, missing, shorter or longer, partial images both ways, decoder
errors in several rows (the detail is the string max of theirs: row 2 over row 10), lone surrogates
and keys outside the BMP. Values with a timestamp column are also read in UTC.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from cloudcanal_rows_oracle import FIELDS, cloudcanal_rows
from staged_rows_oracle import assert_oracle_rows, generated_values
from test_jvm_canal_rows import dumps, value_cases

DIALECT = "cloudcanal_json"
SHANGHAI = "Asia/Shanghai"
ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
EVENT_KINDS = ("ROW", "DDL", "TRANSACTION")
DROP = object()  # a field left out of a built message
SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples" / DIALECT

TYPES = {"id": "int(11)", "note": "varchar(20)", "price": "decimal(10,2)", "at": "datetime(3)", "ts": "timestamp(3)"}
BASE = {
    "action": "INSERT", "bid": 3, "before": [], "db": "shop", "schema": "shop", "table": "orders",
    "data": [{"id": "1", "note": "a", "price": "9.50", "at": "2024-01-02 03:04:05.678", "ts": "2024-03-10 02:30:00"}],
    "dbValType": TYPES, "jdbcType": {"id": 4, "note": 12, "price": 3, "at": 93, "ts": 93}, "entryType": "ROWDATA",
    "isDdl": False, "execTs": 1700000000123, "sendTs": 1700000000456, "pks": ["id"], "sql": "",
}  # fmt: skip
DDL_COLUMNS = [
    {"jdbcType": 4, "name": "a", "position": 0, "typeExpression": "int(11)", "typeName": "int"},
    {"jdbcType": 12, "name": "b", "position": 1, "typeName": "varchar"},
    {"jdbcType": 93, "name": "c", "position": 2},
]


def message(**fields: Any) -> dict[str, Any]:
    """BASE with `fields` replaced (DROP leaves a field out)."""
    return {k: v for k, v in {**BASE, **fields}.items() if v is not DROP}


def ddl(sql: Any = "alter table orders add c int", columns: Any = DROP, keys: Any = DROP, **fields: Any) -> dict:
    """A DDL message; `columns` / `keys` its tableChanges.table columns and primaryKeyColumnNames."""
    table = {k: v for k, v in (("columns", columns), ("primaryKeyColumnNames", keys)) if v is not DROP}
    changes = {"table": table, "type": "ALTER"} if table else DROP
    base = {"action": "ALTER", "isDdl": True, "data": [], "before": [], "pks": [], "sql": sql, "tableChanges": changes}
    return message(**{**base, **fields})


def rows(n: int, **bad: str) -> list[dict[str, str]]:
    """n data rows; `bad` maps a row number (r<i>) to the id text that row carries."""
    return [{"id": bad.get(f"r{i}", str(i)), "note": f"n{i}"} for i in range(n)]


# ---------------------------------------------------------------- the corpus
def check_cases() -> list[Any]:
    """Messages failing each check of `checked`, in the SQL's order, and near misses that pass."""
    return [
        # isDdl: only a JSON boolean (its to_json in the detail)
        *(message(isDdl=v) for v in ("no", "true", "false", 1, 0, [], {"a": 1.50}, "\ud800", "é\x01\"/", None, DROP)),
        message(isDdl="x", db={"d": 1}),
        # names: db, schema, table (first of them); a number is a name
        message(db={"d": 1}), message(schema=[]), message(table={"t": 1}), message(db=[1], schema={}, table=[]),
        message(schema={}, table=[]), message(db=5, schema=True, table=1.50), message(isDdl=True, sql="x", table=[1]),
        # data / before: arrays of objects
        message(data={}), message(data="x"), message(data=[None]), message(data=[1]), message(data=[{"id": "1"}, []]),
        message(data=None), message(data=DROP), message(before={}), message(before="x"), message(before=[None]),
        message(before=[{"id": "1"}, 3]), message(before=None), message(before=DROP),
        message(isDdl=True, sql="x", data=[None]), message(entryType="TRANSACTIONEND", before=[2]),
        # dbValType / jdbcType objects
        message(dbValType=[]), message(dbValType="int"), message(dbValType=5), message(dbValType=None),
        message(dbValType=DROP), message(jdbcType=[]), message(jdbcType="x"), message(jdbcType=None),
        message(jdbcType=DROP, dbValType=DROP),
        # pks: an array without nulls
        message(pks="id"), message(pks={"id": 1}), message(pks=[None]), message(pks=["id", None]), message(pks=None),
        message(pks=DROP), message(pks=[]), message(pks=[1, {"k": 1}, [2]]), message(pks=["", "id", "id", "note"]),
        message(pks=["", ""]), message(pks=["missing"]), message(pks=["\ud800", "\udfff", "?"]),
        # tableChanges: an object; its columns distinct named columns, on any message
        message(tableChanges=[]), message(tableChanges="x"), message(tableChanges=5), message(tableChanges=None),
        message(tableChanges={}), message(tableChanges={"table": []}), message(tableChanges={"table": 5}),
        message(tableChanges={"table": {"columns": {}}}), message(tableChanges={"table": {"columns": "x"}}),
        message(tableChanges={"table": {"columns": None}}), message(tableChanges={"table": {"columns": []}}),
        message(tableChanges={"table": {"columns": [None]}}), message(tableChanges={"table": {"columns": [1]}}),
        message(tableChanges={"table": {"columns": [{"typeName": "int"}]}}),
        message(tableChanges={"table": {"columns": [{"name": None}]}}),
        message(tableChanges={"table": {"columns": [{"name": "a"}, {"name": "a"}]}}),
        message(tableChanges={"table": {"columns": [{"name": "\ud800"}, {"name": "\udfff"}]}}),
        message(tableChanges={"table": {"columns": [{"name": 1}, {"name": "1"}]}}),
        message(tableChanges={"table": {"columns": [{"name": "a"}, {"name": "b"}]}}),
        message(tableChanges={"columns": [{"name": "a"}]}),
        ddl(columns={}), ddl(columns=[None]), ddl(columns=[1]), ddl(columns=[{"name": None, "typeName": "int"}]),
        ddl(columns=[{"name": "a"}, {"name": "a"}]), ddl(columns=[{"name": "\ud800"}, {"name": "\udfff"}]),
        # entryType: ROWDATA (default) or TRANSACTIONEND
        *(message(entryType=v) for v in ("rowdata", "", "HEARTBEAT", 5, {"a": 1}, [], None, DROP)),
        message(entryType="DDL", action=DROP), message(entryType="X", action={"a": "b"}), message(entryType="X", action=3),
        # execTs / sendTs: epoch milliseconds within +-253402300800000
        *(message(execTs=v) for v in EPOCH_VALUES), *(message(sendTs=v) for v in EPOCH_VALUES),
        message(execTs=DROP, sendTs="x"), message(execTs="x", sendTs="y"), message(execTs=None, entryType="nope"),
        message(execTs="1", sendTs=DROP), message(execTs="1", sendTs=None),
        # action, table, rows (not for TRANSACTIONEND nor DDL)
        *(message(action=v) for v in (DROP, None, "insert", "READ", "", 5, {"a": 1}, "INSERT ", " INSERT")),
        *(message(table=v) for v in (DROP, None, "", 5, "t\ud800")),
        message(action=DROP, table=DROP, data=[]), message(action="X", table=DROP), message(table=DROP, data=[]),
        message(data=[]), message(data=DROP, before=DROP), message(action="UPDATE", data=[]),
        message(action="UPDATE", data=[], before=[{"id": "1"}]), message(action="DELETE", data=[], before=[]),
        message(action="DELETE", data=[], before=DROP), message(action="DELETE", data=DROP, before=[{"id": "1"}]),
        message(action="DELETE", data=[], before=[{"id": "4"}, {"id": "5", "note": None}]),
        message(action="UPDATE", data=rows(2), before=rows(1)), message(action="UPDATE", data=rows(1), before=rows(2)),
        message(action="UPDATE", data=rows(3), before=rows(3)), message(action="UPDATE", data=rows(2), before=[]),
        message(action="UPDATE", data=rows(2), before=DROP), message(action="INSERT", data=rows(1), before=rows(3)),
        message(action="DELETE", data=rows(2), before=rows(5)),
    ]  # fmt: skip


EPOCH_VALUES = [
    DROP, None, "", "x", 1.5, "1e3", 1e3, -5, 0, "-0", "+1700000000123", " 1700000000123", "1700000000123 ",
    "1700000000123\n", "1700000000123\r\n", "1700000000123\r", "1700000000123\u2028", "1700000000123\x85",
    "1700000000123\n\n", "\n1700000000123", 9999999999999999, 10000000000000000, -9999999999999999, 253402300799999,
    253402300800000, -253402300799999, -253402300800000, "-", "--1", "0x10", "١٧٠٠", True, {"a": 1}, [1], "\ud800",
    1700000000123, 1700000000, 17000000001234567,
]  # fmt: skip


def transaction_cases() -> list[dict[str, Any]]:
    end = {"entryType": "TRANSACTIONEND", "action": None, "data": [], "before": [], "dbValType": {}, "jdbcType": {}}
    return [
        message(**end), message(**{**end, "table": DROP, "action": DROP, "data": DROP}),
        message(**{**end, "isDdl": True, "sql": "create table t (a int)"}), message(**{**end, "action": "UPDATE"}),
        message(**{**end, "data": rows(2), "pks": ["id", ""], "db": "", "schema": DROP}),
        message(**{**end, "execTs": "x"}), message(**{**end, "execTs": DROP}), message(**{**end, "sendTs": DROP}),
        message(**{**end, "tableChanges": {"table": {"columns": DDL_COLUMNS, "primaryKeyColumnNames": ["a"]}}}),
        message(**{**end, "isDdl": True, "tableChanges": {"table": {"columns": DDL_COLUMNS}}}),
    ]  # fmt: skip


def ddl_cases() -> list[dict[str, Any]]:
    actions = ("ALTER", "alter", "create_index", "CREATE_INDEX", "Drop", "rename", "truncate", "QUERY", "erase",
               "create_ındex", "drop index", None, 5, DROP)  # fmt: skip
    positions = [
        [{"name": "c", "position": 2}, {"name": "a", "position": 0}, {"name": "b", "position": 1}],
        [{"name": "a"}, {"name": "b", "position": 0}, {"name": "c"}],
        [{"name": "a", "position": 1}, {"name": "b", "position": 1}, {"name": "c", "position": 0}],
        [{"name": "a", "position": "x"}, {"name": "b", "position": "-1"}, {"name": "c", "position": None}],
        [{"name": "a", "position": "2.7"}, {"name": "b", "position": " 1 "}, {"name": "c", "position": 1.2}],
        [{"name": "a", "position": "99999999999"}, {"name": "b", "position": 2147483647}, {"name": "c", "position": "+0"}],
        [{"name": "a", "position": "1e0"}, {"name": "b", "position": ".5"}, {"name": "c", "position": "3."}],
        [{"name": "a", "position": True}, {"name": "b", "position": {"p": 1}}, {"name": "c", "position": "\t5\n"}],
        [{"name": "a", "position": "-2147483648"}, {"name": "b", "position": "-2147483649"}, {"name": "c", "position": "-"}],
    ]  # fmt: skip
    typed = [
        {"name": "a", "typeExpression": "bigint(20) unsigned", "typeName": "BIGINT", "jdbcType": -5},
        {"name": "b", "typeName": "VARCHAR", "jdbcType": 12}, {"name": "c", "jdbcType": 93}, {"name": "d"},
        {"name": "e", "typeExpression": "", "typeName": "INT"}, {"name": "f", "typeExpression": None, "typeName": None},
        {"name": "g", "typeExpression": {"x": 1}, "jdbcType": "x"}, {"name": 9, "jdbcType": 2.50},
        {"name": "h", "typeExpression": "timestamp(6)"}, {"name": "é"}, {"name": "\U0001f600"}, {"name": "ｚ"},
    ]  # fmt: skip
    return [
        *(ddl(sql=s) for s in ("alter table t add c int", "", "   ", " \t ", "\n", None, DROP, 5, " create x ")),
        *(ddl(sql=s, action=a) for s in ("", DROP) for a in actions),
        ddl(action="create", sql="  "), ddl(sql="drop table t", action="ALTER"),
        *(ddl(columns=p) for p in positions),
        ddl(columns=typed), ddl(columns=typed, keys=["a", "a", None, "", "b"]), ddl(columns=DDL_COLUMNS, keys=[]),
        ddl(columns=DDL_COLUMNS, keys=[], pks=["x", "", "x"]), ddl(columns=DDL_COLUMNS, keys=["c"], pks=["x"]),
        ddl(columns=DDL_COLUMNS, keys="a", pks=["y"]), ddl(columns=DDL_COLUMNS, keys=[1, {"k": 1}]),
        ddl(columns=DDL_COLUMNS, keys=None), ddl(columns=[], keys=["a"]), ddl(keys=["a"]), ddl(keys=[None]),
        ddl(columns=DDL_COLUMNS, dbValType={"z": "int"}), ddl(dbValType={"z": "int", "a": None}, jdbcType={"y": 4}),
        ddl(columns=[{"name": "a", "typeExpression": "int"}], data=rows(2), action="INSERT"),
        ddl(columns=[{"name": "a", "typeExpression": "decimal(1000,2000)"}]), ddl(dbValType={"a": "decimal(99,0)x"}),
        ddl(columns=[{"name": "a", "position": "1", "typeName": "???"}, {"name": "b", "position": "0"}], keys=["b"]),
        ddl(columns=DDL_COLUMNS, isDdl=True, execTs="x"), ddl(table=DROP, db=DROP, schema=DROP, pks=DROP),
        ddl(db="", schema="", table=""), ddl(sql="ALTER TABLE t ADD \ud800 int"),
        {"isDdl": True, "execTs": 5, "sql": "create database d"}, {"isDdl": True, "execTs": "5"},
    ]  # fmt: skip


def row_cases() -> list[dict[str, Any]]:
    """Messages that decode: every action and image shape, declared types and names."""
    wide = {"b": "int", "a": "varchar(5)", "é": "int", "\U0001f600": "text", "ｚ": "bigint", "A": None, "Z": "json"}
    row = {"b": "2", "a": "x", "é": "3", "\U0001f600": "s", "ｚ": "4", "A": "n", "only": 1.50, "t": True, "n": None,
           "Z": {"j": [1, "x", None, -0.0]}, "y": [1]}  # fmt: skip
    upd = {"action": "UPDATE"}
    return [
        message(), message(action="DELETE"), message(action="UPDATE"), message(**upd, before=BASE["data"]),
        message(**upd, data=rows(3), before=[{"id": "0", "note": "m0"}, {"id": "1"}, {"id": "2", "note": "m", "x": "1"}]),
        message(**upd, data=[{"id": "1"}], before=[{}]), message(**upd, data=[{}], before=[{"id": "1"}]),
        message(**upd, data=[{}], before=[{}]), message(action="INSERT", data=[{}]), message(action="DELETE", data=[{}]),
        message(action="DELETE", data=rows(3)), message(action="INSERT", data=rows(4)),
        message(dbValType=wide, jdbcType={"a": 12, "z": 4, "y": None, "b": "x", "q": {"j": 1}}, data=[row, {}], pks=[]),
        message(dbValType=DROP, jdbcType={"id": 4, "note": 12, "m": -7, "q": None}, data=[{"id": "5", "m": "1"}]),
        message(dbValType={"id": None, "note": "varchar(3)"}, jdbcType={"id": 4}, data=[{"id": "x", "note": "y"}]),
        message(dbValType=DROP, jdbcType=DROP, data=[{"id": 5, "note": "x"}]), message(dbValType={}, jdbcType={}),
        message(dbValType={"id": {"t": "int"}}), message(dbValType={"id": "int unsigned", "x": "bit(1)"}),
        message(data=[{"id": "1", "note": "ctl \x01\x1f\x7f\" \\ / é \U0001f600", "price": 12.50}]),
        message(data=[{"id": 1, "price": 1e2}]), message(data=[{"id": "1", "note": {"x": [1, {"y": None}]}}]),
        message(data=[{"\ud800": "1", "a": "2", "id": "3"}], dbValType={"\ud800": "int", "a": "int"}, pks=["\ud800"]),
        message(data=[{"id": "1", "note": "\ud800"}, {"id": "2", "note": "\udfff x"}]),
        message(data=[{"id": "1", "note": {"\ud800": 1, "a": [{"\udfff": 2, "b": 3, "\U0001f600": 4, "ｚ": 5}]}}]),
        message(db="d\ud800", schema="s\U0001f600", table="é"), message(db="", schema="", table="t"),
        message(db=DROP, schema=None, table="t"), message(db=1, schema=True),
        message(data=[{"id": "1", "ts": "2024-03-10 02:30:00", "at": "2024-03-10 02:30:00"}]),
        message(data=[{"id": "1", "ts": "2024-11-03 01:30:00.5"}], dbValType={"id": "int", "ts": "timestamp(1)"}),
        message(sendTs=DROP), message(sendTs=None), message(execTs="-1", sendTs="0"), message(sql="  "),
        message(sql="insert into t values (1)", isDdl=False), message(tableChanges={"table": {"columns": DDL_COLUMNS}}),
    ]  # fmt: skip


def decoder_error_cases() -> list[dict[str, Any]]:
    """Rows the value decoder refuses: the detail is the string max of the rows' (row 2 over row 10)."""
    return [
        message(data=rows(12, r2="x", r10="y")), message(data=rows(12, r10="y")), message(data=rows(12, r1="x", r3="x")),
        message(data=rows(3, r0="z", r2="a")), message(data=rows(11, r9="x", r10="x")),
        message(action="UPDATE", data=rows(2), before=rows(2, r1="y")),
        message(action="UPDATE", data=rows(2, r0="q"), before=rows(2, r0="r")),
        message(action="UPDATE", data=rows(3, r2="q"), before=rows(3, r1="r")),
        message(action="DELETE", data=[], before=rows(3, r2="w")), message(action="DELETE", data=rows(2, r1="\ud800")),
        message(data=[{"at": "2024-13-40"}]), message(data=[{"price": "abc"}]), message(data=[{"id": "1.5"}]),
        message(data=[{"id": {"x": 1}}]), message(data=[{"\ud800": "x"}], dbValType={"\ud800": "int"}),
        message(data=[{"é": "x", "\U0001f600": "y"}], dbValType={"é": "int", "\U0001f600": "int"}),
        message(data=[{"id": "1", "note": "1"}], dbValType={"id": "decimal(1000,2000)", "note": "int"}),
        message(data=[{"a": "1"}], dbValType={}, jdbcType={"a": 91}),
    ]  # fmt: skip


def corpus() -> list[bytes | None]:
    """Every value the test reads (module docstring), each once, a tombstone first."""
    from test_bad_inputs import corpus as bad_input_corpus

    built = check_cases() + transaction_cases() + ddl_cases() + row_cases() + decoder_error_cases()
    values = [None, *value_cases(), *map(dumps, built)]
    values += [dumps([message()]), dumps([]), dumps([message(), message()])]
    values += [p.read_bytes() for p in sorted(SPEC.glob("[0-9][0-9]_*.json")) if "expected" not in p.name]
    values += [m.value for m in bad_input_corpus(DIALECT) if m.value is not None]
    values += generated_values(DIALECT, 160, 20240101, random.Random(7))  # test_cloudcanal_json's workload
    return list(dict.fromkeys(values))


def test_corpus_reaches_every_error_code_and_event_kind():
    values = corpus()
    rows = [r for v in values for r in cloudcanal_rows(v, SHANGHAI)]
    assert len(values) >= 500
    reached = {r["error_code"] for r in rows} | {r["event_kind"] for r in rows}
    assert reached >= set(ERROR_CODES) | set(EVENT_KINDS), (set(ERROR_CODES) | set(EVENT_KINDS)) - reached


@pytest.mark.spark
def test_spark_cdc_cloudcanal_rows_gives_the_oracles_rows_for_every_value():
    from harness import spark_session

    values = corpus()
    cases = [(v, SHANGHAI) for v in values]
    zoned = [v for v in values if v is not None and b"timestamp" in v][:30]  # a source zone matters
    cases += [(v, "UTC") for v in zoned]
    assert_oracle_rows(
        spark_session(), "cdc_cloudcanal_rows(c.v, c.tz)", cases, "struct<v: binary, tz: string>", FIELDS,
        cloudcanal_rows,
    )  # fmt: skip
