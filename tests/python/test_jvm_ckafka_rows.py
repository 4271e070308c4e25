"""`cdc_ckafka_rows(value, source_tz)` (the per-message logic of stg_ckafka_json__changes in one JVM
function) against tests/python/ckafka_rows_oracle.py, the pure-Python twin of the SQL it replaces
(the model's CTEs up to `decoded` as of commit 823a733, which that oracle was checked against value
by value, with the same corpus, through the old staging model).

Every value of the corpus must give the oracle's struct: one row (row_index 0), the same error code
and detail for a quarantined value, and the same decoded columns, maps with their keys in the same
order (the keys stay SQL in the model: no field here). The corpus (`corpus` below) is the JSON
values of test_jvm_canal_rows (JSON reading: UTF-8, duplicates, depth, name length, numbers), the
spec examples, the bad-input corpus, the sample-data generator's messages and their malformations
(two workloads) and values built to reach every branch of the SQL: each check of `checked` in its order and near
misses that pass (TYPE / type present or not, both, of every kind and shape; DATABASE / TABLE and a
DDL's database / table nested, empty, missing; BINLOG_NAME nested; TIME at and past every edge of its pattern and of
the calendar, DST gaps and overlaps, zones' LMT; the images each TYPE needs of every wrong type;
BINLOG_POS at and past 18 digits; nested column values; a DDL's sql, es and ts of every shape and
unit; isDdl false), BINLOG_NAME's file index (none, at and past a bigint, with a final terminator)
and binlog_number's overflow, GLOBAL_ID, names and columns outside the BMP and lone surrogates, and
values the old SQL could not stage. Values with a TIME are also read in UTC and in America/New_York.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from ckafka_rows_oracle import FIELDS, ckafka_rows
from staged_rows_oracle import assert_oracle_rows, assert_reaches, message_corpus
from test_jvm_canal_rows import dumps

SHANGHAI = "Asia/Shanghai"
ZONES = ("UTC", "America/New_York")
ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
EVENT_KINDS = ("ROW", "DDL")
DROP = object()  # a field left out of a built message

ROW = {"id": "1004", "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
BASE = {
    "BINLOG_NAME": "mysql-bin.000003", "BINLOG_POS": 484, "DATABASE": "inventory", "EVENT_SERVER_ID": None,
    "GLOBAL_ID": "3e11fa47-71ca-11e1-9e33-c80aa9429562:23", "GROUP_ID": None, "NEW_VALUES": ROW,
    "OLD_VALUES": None, "TABLE": "customers", "TIME": "20160611015029", "TYPE": "I",
}  # fmt: skip
DDL = {
    "data": None, "database": "inventory", "es": 1655812326, "id": 0, "isDdl": True, "mysqlType": None, "old": None,
    "pkNames": None, "sql": "CREATE TABLE customers (id int NOT NULL, PRIMARY KEY (id))", "sqlType": None,
    "table": "customers", "ts": 1655812326, "type": "CREATE",
}  # fmt: skip


def message(type_code: Any = "I", **fields: Any) -> dict[str, Any]:
    """A format-one insert of ROW, `fields` replacing its parts (DROP leaves one out)."""
    return {k: v for k, v in {**BASE, "TYPE": type_code, **fields}.items() if v is not DROP}


def update(before: Any = ROW, after: Any = None, **fields: Any) -> dict[str, Any]:
    return message("U", OLD_VALUES=before, NEW_VALUES={**ROW, "first_name": "Anne Marie"} if after is None else after,
                   **fields)  # fmt: skip


def delete(before: Any = ROW, **fields: Any) -> dict[str, Any]:
    return message("D", OLD_VALUES=before, **{"NEW_VALUES": None, **fields})


def ddl(canal_type: Any = "CREATE", **fields: Any) -> dict[str, Any]:
    """A Canal-shaped DDL message, `fields` replacing its parts (DROP leaves one out)."""
    return {k: v for k, v in {**DDL, "type": canal_type, **fields}.items() if v is not DROP}


# ---------------------------------------------------------------- the corpus
def check_cases() -> list[dict[str, Any]]:
    """Messages failing each check of `checked`, in the SQL's order, and near misses that pass."""
    junk = ("x", 5, 1.50, True, [], [ROW], "{}", None, DROP)
    return [
        # neither TYPE nor type; TYPE wins over type
        {}, {"x": 1}, message(DROP), ddl(DROP), message(DROP, Type="I"), message(DROP, **{"TYPE ": "I"}),
        message(DROP, tYPE="I", typ="I"), {"\ud800": 1, "?": 2}, message(type="CREATE"), ddl(TYPE="I"),
        ddl(TYPE=None), message(type=None), message(DROP, type="I"), message(DROP, type="INSERT"),
        # TYPE: present, then I / l / U / D
        *(message(v) for v in (None, 5, 1.50, True, False, [], ["I"], {"t": "I"}, "", "i", "L", "u", "d", "1",
                               "I ", " I", "I\n", "INSERT", "UPDATE", "DELETE", "Ｉ", "\ud800", "I\x00", "É", "R")),
        message("l"), message("U", OLD_VALUES=ROW), message("D", OLD_VALUES=ROW), message(None, DATABASE=[]),
        message("X", DATABASE={}, TIME="x"),
        # DATABASE, TABLE: not nested (DATABASE first), then not empty
        *(message(DATABASE=v) for v in ({}, {"d": 1}, [], ["d"], "", None, DROP, 5, 1.50, True, "d\ud800", " ")),
        *(message(TABLE=v) for v in ({}, [], ["t"], "", None, DROP, 0, False, "😀", "\n")),
        message(DATABASE=[], TABLE={}), message(DATABASE="", TABLE=[]), message(DATABASE=DROP, TABLE=DROP),
        message(DATABASE="", TIME="x"), delete(TABLE=None), update(DATABASE={"a": [1]}),
        message(database=[], table={}), message(database="", table=""),
        # TIME: present, then yyyyMMddHHmmss
        *(message(TIME=v) for v in TIMES), delete(TIME="x"), update(TIME=None),
        # the images each TYPE needs: present, an object; the other image anything
        *(message("I", NEW_VALUES=v) for v in junk), *(message("l", NEW_VALUES=v) for v in junk[:3]),
        *(update(after=v) for v in junk if v is not None), message("U", OLD_VALUES=ROW, NEW_VALUES=None),
        *(update(before=v) for v in junk), *(delete(before=v) for v in junk), *(delete(NEW_VALUES=v) for v in junk),
        *(message("I", OLD_VALUES=v) for v in junk), message("U", NEW_VALUES=DROP, OLD_VALUES=DROP),
        message("U", NEW_VALUES="x", OLD_VALUES=DROP), message("U", NEW_VALUES={}, OLD_VALUES=[]),
        update({}, {}), delete({}), message(NEW_VALUES={}), message("D", OLD_VALUES=DROP, NEW_VALUES="x"),
        # BINLOG_POS: absent, null or 1..18 digits
        *(message(BINLOG_POS=v) for v in POSITIONS), delete(BINLOG_POS="x"), message(BINLOG_POS="-1", TIME="x"),
        # nested column values of the images the TYPE needs (not of the others)
        message(NEW_VALUES={**ROW, "email": {"x": 1}}), message(NEW_VALUES={"b": [], "a": {}, "c": "1"}),
        update(before={**ROW, "id": [1]}), update(after={**ROW, "id": {}}), update(before={"a": {}}, after={"b": []}),
        delete(before={"x": {"y": {}}, "é": [], "😀": {}, "ｚ": [], "\ud800": {}}), delete(NEW_VALUES={"a": {}}),
        message(OLD_VALUES={"a": {}}), message(NEW_VALUES={"n": [None], "m": {}}, BINLOG_POS="x"),
        message(NEW_VALUES={"a": {}}, BINLOG_POS=1.5), update(before={"a": []}, BINLOG_POS="1e3"),
        # DDL: type present, then a DDL type; database / table not nested; sql; es; ts
        *(ddl(v) for v in (None, 5, True, [], {"t": "CREATE"}, "", "create", "CREATE ", "INSERT", "UPDATE", "DELETE",
                           "GTID", "XACOMMIT", "TRANSACTIONEND", "HEARTBEAT", "MHEARTBEAT", "I", "DROP", "\ud800")),
        *(ddl(t, sql=f"{t.lower()} x") for t in ("CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX",
                                                   "DINDEX")),
        *(ddl("QUERY", sql="create database d", isDdl=v) for v in (False, "false", "FALSE", "fAlSe", True, "true",
                                                                   None, DROP, 0, "no", [False], " false")),
        ddl("INSERT", isDdl=False), ddl(None, database=[]),
        *(ddl(database=v) for v in ({}, [], ["d"], "", None, DROP, 5, "d\ud800")),
        *(ddl(table=v) for v in ({"t": 1}, [], "", None, DROP, 1.50)), ddl(database={}, table=[]),
        ddl(database="", table=[]), ddl("ALTER", database=DROP, table=DROP, sql="alter table t add c int"),
        *(ddl(sql=v) for v in (DROP, None, "", " ", 5, True, {"s": "CREATE"}, ["x"], "create table \ud800 (a int)")),
        ddl(sql=DROP, es=DROP), ddl("ERASE", sql=None),
        *(ddl(es=v) for v in EPOCHS), *(ddl(ts=v) for v in EPOCHS), ddl(es="x", ts="y"), ddl(es=DROP, ts="y"),
        ddl("TRUNCATE", sql="truncate table t", es=1655812326123, ts=DROP),
        ddl("RENAME", sql="rename table a to b", es=1656300979748, ts=1656300979748),
    ]  # fmt: skip


TIMES = [
    DROP, None, "", "x", 5, 1.50, True, [], {"t": 1}, 20160611015029, 2.0160611015029e13, "2016061101502",
    "201606110150299", "2016-06-11 01:50:29", "20160611 015029", " 20160611015029", "20160611015029 ",
    *(f"20160611015029{t}" for t in ("\n", "\r\n", "\r", "\x85", "\u2028", "\u2029", "\n\n", "\t")),
    "２０１６0611015029", "٢٠١٦0611015029", "2016061101502x", "+2016061101502", "-2016061101502",
    "20240229120000", "20230229120000", "19000229000000", "20000229000000", "20230230000000", "20230431000000",
    "20231301000000", "20230001000000", "20230100000000", "20230132000000", "20240102240000", "20240102236000",
    "20240102235960", "20240102235959", "00000101000000", "00000229120000", "00001231235959", "00010101000000",
    "00991231235959", "15821010000000", "15821004235959", "18001231120000", "19000101000000", "19691231235959",
    "19700101000000", "19700101080000", "99991231235959", "20380119031408", "21000301000000",
    # Asia/Shanghai's summer time (1986-1991) and the old one (1940s): gaps and overlaps
    "19860504020000", "19860504023000", "19860504030000", "19860914013000", "19860914020000", "19860914023000",
    "19870412023000", "19870913015959", "19910414023000", "19910915013000", "19910915023000", "19400603003000",
    "19190413003000",
    # America/New_York's: gaps, overlaps, the edges, LMT before 1883-11-18
    "20240310015959", "20240310020000", "20240310023000", "20240310030000", "20241103005959", "20241103010000",
    "20241103013000", "20241103015959", "20241103020000", "18831118120358", "18831118120359", "18831118115959",
    "19010101000000", "20700309023000", "22001102013000",
]  # fmt: skip
POSITIONS = [
    DROP, None, "", "0", "00001", "484", 484, 0, "9" * 18, "9" * 19, "1" + "0" * 18, "0" * 18, "0" * 19,
    "-1", -1, "1.0", 1.50, 4.84e2, "1e3", "0x10", " 1", "1 ", "+1", "١", "４", True, {"p": 1}, [484],
    *(f"484{t}" for t in ("\n", "\r\n", "\r", "\x85", "\u2028", "\u2029", "\n\n", "\t")),
    "4294967295", "4294967296", "9223372036854775807", 10**18 - 1, 10**18,
]  # fmt: skip
EPOCHS = [
    DROP, None, "", "x", "0", "1", "00000000000", "12345678901", "123456789012", "1655812326123", "12345678901234",
    "123456789012345", "1655812326123456", "12345678901234567", "123456789012345678", "1655812326123456789",
    "9223372036854775807", "9223372036854775808", "9999999999999999999", "12345678901234567890", "1655812326\n",
    "1655812326123\r\n", "1655812326\r", "1655812326\u2028", "1655812326\u2029", "1655812326\x85",
    "1655812326\n\n", " 1655812326", "1655812326 ", "-1", "1.5", "1e3", "0x10", "１６５５", 1655812326,
    1655812326123, 1655812326123456, 1655812326123456789, 9223372036854775808, 1.6e9, -5, 0, True, {"a": 1}, [1],
]  # fmt: skip
BINLOG_NAMES = [
    DROP, None, "", "mysql-bin.000003", "mysql-bin.000000", "mysql-bin.1", "mysql-bin", "binlog.", "12", "000",
    "a1b2", "1a", "mysql-bin.000003\n", "mysql-bin.000003\r\n", "mysql-bin.000003\r", "mysql-bin.000003\x85",
    "mysql-bin.000003\u2028", "mysql-bin.000003\n\n", "mysql-bin.000003 ", "mysql-bin.٣", "mysql-bin.３",
    "mysql-bin.2147483647", "mysql-bin.2147483648", "mysql-bin.9223372036854775807",
    "mysql-bin.9223372036854775808", "mysql-bin." + "0" * 30 + "7", "x." + "9" * 25, 5, 1.50, True, {"f": "1"},
    ["mysql-bin.1"], "mysql-bin.\ud800", "😀.7",
]  # fmt: skip


def position_cases() -> list[dict[str, Any]]:
    """BINLOG_NAME's file index with BINLOG_POS: source_position and binlog_number (and its overflow)."""
    pairs = [
        ("mysql-bin.2147483647", "4294967295"), ("mysql-bin.2147483647", "999999999999999999"),
        ("mysql-bin.2147483648", "0"), ("mysql-bin.2147483647", 0), ("mysql-bin.1", "9" * 18),
        ("mysql-bin.0", "9" * 18), ("mysql-bin.2147483646", "8589934591"), ("mysql-bin.2147483646", "8589934592"),
        ("mysql-bin.000003", DROP), ("mysql-bin.000003", None), (DROP, 484), (None, "484"), ("", ""),
        ("mysql-bin.000003", "484\u2028"), ("mysql-bin.000003", "484\x85"), ("mysql-bin.000003\n", "484\n"),
    ]  # fmt: skip
    return [
        *(message(BINLOG_NAME=n) for n in BINLOG_NAMES),
        *(message(BINLOG_NAME=n, BINLOG_POS=p) for n, p in pairs),
        *(delete(BINLOG_NAME=n, BINLOG_POS=p) for n, p in pairs[:4]),
        ddl(BINLOG_NAME="mysql-bin.000003", BINLOG_POS=484, GLOBAL_ID="g"),
    ]


def field_cases() -> list[dict[str, Any]]:
    """GLOBAL_ID, images and names outside ASCII, the fields format one leaves unread."""
    wide = {"b": "2", "a": "x", "é": "3", "😀": "s", "ｚ": "4", "A": "n", "only": 1.50, "t": True, "f": False,
            "n": None, "\ud800": "lone", "q": "\ud800\udfff", "ctl": "\x01\x1f\x7f\"\\/\u2028é😀", "e": "",
            "big": 10**400, "small": -1.5e-300, "exp": 1e300, "zero": -0, "\uffff": "max"}  # fmt: skip
    return [
        *(message(GLOBAL_ID=v) for v in (DROP, None, "", " ", 12, True, {"x": [1, None]}, ["g"], "u\ud800", "0")),
        message(NEW_VALUES=wide), update(wide, {**wide, "b": "3"}), delete(wide), message(NEW_VALUES={"id": None}),
        update({"id": "1", "x": "1", "z": None}, {"id": "1", "y": "2"}), update({}, {"X": "1"}), update({"X": "1"}, {}),
        update({"b": "1", "B": "2", "a": "3"}, {"_": "4", "ｚ": "5", "😀": "6", "a": "7"}),
        message(NEW_VALUES={"\ud800": "1", "\udbff\udfff": "2", "\uffff": "3", "😀": "4"}),
        message(DATABASE="é.😀", TABLE="\ud800"), message(DATABASE=1.50, TABLE=True),
        message(DATABASE="d", TABLE="t.x"),
        message(EVENT_SERVER_ID={"a": 1}, GROUP_ID=[1], extra={"z": 1, "a": [1.50, None, {"\ud800": "x"}]}),
        message(**{"😀": "1", "ｚ": "2", "\ud800": "3", "\uffff": "4", "zz": None, "A": True, "a": [None]}),
        message(**{"ctl\x01": "\x00\x08\x0c\n\r\t\x1f\x7f\"\\/<>&'\u2028\ufeff", "n": None, "b": False}),
        dict([*message().items(), ("\ud800", 1), ("\udfff", 2)]), dict([*update().items(), ("?", 1), ("\ud800", 2)]),
        dict([*ddl().items(), ("\ud800", "x"), ("\udbff\udfff", "y")]),
        message(type="CREATE", sql="x", es="y"), ddl(TYPE="U", OLD_VALUES=ROW, NEW_VALUES=ROW),
        ddl(data=[{"a": {}}], old="x", mysqlType=5), ddl(database="", table=""), ddl(database=None, table=DROP),
        ddl("ALTER", sql="ALTER TABLE customers ADD c int", BINLOG_POS="x", TIME="y"),
        ddl("CREATE", sql="CREATE DATABASE d", database="d", table=""),
        ddl(sql="CREATE TABLE `a``b` (`k``1` int, v int, PRIMARY KEY (`k``1`(10) DESC))", table="a`b"),
        ddl(sql="create table t2 (id bigint primary key, v text)", table="t2"),
        ddl(sql="CREATE TABLE t3 LIKE customers", table="t3"), ddl(sql="CREATE TABLE t4 (a int)", table="t4"),
        ddl(isDdl=False), ddl(isDdl="x"), ddl(gtid="g"), ddl(es=1655812326, ts=None),
        ddl(sql="ALTER TABLE t \ud800", type="ALTER"), ddl(sql="drop table t", type="ERASE", table="t"),
    ]  # fmt: skip


def crash_cases() -> list[Any]:
    """Values the old SQL cannot stage (its build fails): keys that collide once Spark stores them
    below the top level (oracle docstring)."""
    return [
        message(NEW_VALUES=dict([("\ud800", "1"), ("\udfff", "2")])), message(NEW_VALUES={"\ud800": "1", "?": "2"}),
        update(before=dict([("\udc00", "1"), ("\udfff", "1")])),
        delete(NEW_VALUES=dict([("\ud800", 1), ("\udbff", 2)])),
        message(OLD_VALUES={"a": [dict([("\ud800", 1), ("\udbff", 2)])]}), message(extra={"\ud800": 1, "?": 2}),
        message("X", EVENT_SERVER_ID=dict([("\ud800", 1), ("\udfff", 2)])),
        message(TIME="x", GROUP_ID=[{"\ud800": 1, "?": 2}]),
        ddl(data=[dict([("\ud800", 1), ("\udfff", 2)])]), ddl(DROP, x={"?": 1, "\udfff": 2}),
    ]  # fmt: skip


def built_cases() -> list[Any]:
    arrays = [[message()], [], "I", [dict([("\ud800", 1), ("\udfff", 2)])], [ddl()]]
    return check_cases() + position_cases() + field_cases() + crash_cases() + arrays


def corpus() -> list[bytes | None]:
    """Every value the test reads (module docstring), each once, a tombstone first."""
    workloads = [(160, 20240101, random.Random(7)), (240, 20240601, random.Random("test:ckafka_json"))]
    return message_corpus("ckafka_json", map(dumps, built_cases()), workloads)


def zoned(values: list[bytes | None]) -> list[bytes]:
    """The values whose staged row may depend on the source zone: those with a TIME."""
    return [v for v in values if v is not None and b"TIME" in v]


def test_corpus_reaches_every_error_code_and_event_kind():
    values = corpus()
    rows = [r for v in values for r in ckafka_rows(v, SHANGHAI)]
    assert_reaches(values, rows, 1000, ERROR_CODES + EVENT_KINDS)
    assert {r["op"] for r in rows} >= {"INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP", "QUERY", "TRUNCATE",
                                       "RENAME", "CREATE_INDEX", "DROP_INDEX"}  # fmt: skip
    assert {r["event_ts_precision"] for r in rows} >= {"s", "ms", "us", "ns"}
    assert {r["binlog_number"] is None for r in rows if r["event_kind"] == "ROW"} == {True, False}
    for zone in ZONES:
        times = {v: ckafka_rows(v, zone)[0]["event_ts_micros"] for v in zoned(values)}
        assert any(times[v] != ckafka_rows(v, SHANGHAI)[0]["event_ts_micros"] for v in times), zone


@pytest.mark.spark
def test_spark_cdc_ckafka_rows_gives_the_oracles_rows_for_every_value():
    from harness import spark_session

    values = corpus()
    cases = [(v, SHANGHAI) for v in values] + [(v, zone) for zone in ZONES for v in zoned(values)]
    assert_oracle_rows(
        spark_session(), "cdc_ckafka_rows(c.v, c.tz)", cases, "struct<v: binary, tz: string>", FIELDS, ckafka_rows
    )


@pytest.mark.spark
def test_a_binlog_name_that_is_a_json_object_or_array_is_quarantined_not_read_for_its_digits():
    """A nested BINLOG_NAME once staged its JSON text as the source position, and the digits inside
    it as a file index; it is wrong_shape, as a nested DATABASE or TABLE is."""
    from harness import spark_session

    names = [{"f": "mysql-bin.000003"}, ["mysql-bin.000003"], "mysql-bin.000003"]
    frame = spark_session().createDataFrame([(dumps(message(BINLOG_NAME=n)),) for n in names], "v binary")
    staged = [row.r for row in frame.selectExpr(f"cdc_ckafka_rows(v, '{SHANGHAI}') as r").collect()]

    assert [(rows[0].error_code, rows[0].error_detail) for rows in staged] == [
        ("wrong_shape", "BINLOG_NAME is a JSON object/array, not a name"),
        ("wrong_shape", "BINLOG_NAME is a JSON object/array, not a name"),
        (None, None),
    ]
    assert (staged[2][0].source_position, staged[2][0].binlog_number) == ("mysql-bin.000003:484", 3 * 2**32 + 484)
