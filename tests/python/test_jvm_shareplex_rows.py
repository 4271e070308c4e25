"""`cdc_shareplex_rows(value, source_tz)` (the per-message logic of stg_oms_shareplex_json__changes in one
JVM function) against tests/python/shareplex_rows_oracle.py, the pure-Python twin of the SQL it
replaces (the model, macros/oms.sql `oms_wall_clock_utc` and macros/staging.sql as of commit
823a733, which that oracle was checked against value by value, with the same corpus, through the
old staging model).

Every value of the corpus must give the oracle's struct: one row (row_index 0), the same error code
and detail for a quarantined value, and the same decoded columns, maps with their keys in the same
order (rowid_key the value part of meta.rowid the model builds primary_key from). The corpus
(`corpus` below) is the JSON values of test_jvm_canal_rows (JSON reading: UTF-8, duplicates, depth,
name length, numbers), the spec examples, the bad-input corpus, the sample-data generator's
messages and their malformations (test_oms_default_json's workload) and values built to reach every
branch of the SQL: each check of `checked` in its order and near misses that pass (meta of every
wrong type, meta.op of every kind and shape, meta.table and meta.rowid as text of every JSON type,
with and without dots, rowids that do and do not start with `table-`, data and an upd's key of
every wrong type, meta.time / meta.posttime at and past every edge of their pattern and of the
calendar, DST gaps and overlaps, meta.scn at and past 30 digits, nested column values in data and
key), rowid value parts with `\\u0001` separators (empties, outside the BMP, lone surrogates),
natural_id's text (meta without posttime in its map order, nested meta fields, escapes, key of any
type for ins and del) and values the old SQL could not stage. Values with a meta.time or
meta.posttime are also read in UTC and America/New_York.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from canal_rows_oracle import parse, text
from shareplex_rows_oracle import FIELDS, shareplex_rows
from staged_rows_oracle import assert_oracle_rows, assert_reaches, message_corpus
from test_jvm_canal_rows import dumps

SHANGHAI = "Asia/Shanghai"
OTHER_ZONES = ("UTC", "America/New_York")
ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
DROP = object()  # a field left out of a built message
DEFAULT = object()  # the builder's own image

META = {
    "posttime": "2020-12-07T13:22:00", "op": "ins", "size": 10, "time": "2020-11-25T00:01:02", "idx": "1/10",
    "seq": 1, "table": "db.t", "rowid": "db.t-3\x01129", "trans": "tx-1", "scn": "123456789",
}  # fmt: skip
ROW = {"id": 3, "k": "129", "note": "a", "price": 9.50, "at": "2020-11-25 00:01:02", "n": None}


def meta(**fields: Any) -> dict[str, Any]:
    """META with `fields` replaced (DROP leaves a field out)."""
    return {k: v for k, v in {**META, **fields}.items() if v is not DROP}


def message(op: Any = "ins", **fields: Any) -> dict[str, Any]:
    """An ins of ROW, `fields` replacing its parts (DROP leaves one out); `meta` a dict of meta
    fields to replace, or anything else to send as meta."""
    replaced = fields.pop("meta", {})
    base = {"data": ROW, "meta": meta(op=op, **replaced) if isinstance(replaced, dict) else replaced}
    return {k: v for k, v in {**base, **fields}.items() if v is not DROP}


def update(key: Any = DEFAULT, data: Any = DEFAULT, **fields: Any) -> dict[str, Any]:
    """An upd: data the changed columns, key the whole old row."""
    return message("upd", key=ROW if key is DEFAULT else key, data={"note": "b"} if data is DEFAULT else data, **fields)


def delete(data: Any = DEFAULT, **fields: Any) -> dict[str, Any]:
    return message("del", data=ROW if data is DEFAULT else data, **fields)


def as_text(value: Any) -> str | None:
    """What cdc_json_text reads of `value` once sent (a number as its digits, nested as JSON)."""
    return text(parse(json.dumps(value)))


def named(table: Any, rest: str = "3", **fields: Any) -> dict[str, Any]:
    """An ins whose meta.rowid is meta.table's text, '-' and `rest`."""
    return message(meta={"table": table, "rowid": f"{as_text(table)}-{rest}"}, **fields)


# ---------------------------------------------------------------- the corpus
def check_cases() -> list[dict[str, Any]]:
    """Messages failing each check of `checked`, in the SQL's order, and near misses that pass."""
    junk = ("x", 5, 1.50, True, [], [ROW], "{}", None, DROP)
    ops = ("ins", "upd", "del")
    return [
        # meta: present, an object
        *(message(meta=v) for v in (*junk, [META])), {"data": ROW, "meta": {}},
        {"data": ROW}, {"meta": {}}, {"meta": None, "data": None}, {"meta": "x", "key": 5}, {}, {"META": META, "data": ROW},
        # meta.op: present, then one of ins / upd / del (case-sensitive)
        *(message(v) for v in (DROP, None, 5, 1.50, True, False, [], ["ins"], {"op": "ins"}, "", "INS", "Ins", "insert",
                               " ins", "ins ", "in", "ins\n", "ins\x00", "\ud800", "update", "UPD", "Del", "delete",
                               "é", "ｉｎｓ", "I", "U", "D", "0", "null")),
        *(message(o) for o in ops), message(DROP, meta={"table": DROP}), message("x", meta={"table": DROP}),
        message(None, data=DROP), message("upd", meta={"table": ""}), message("upd", key=DROP, data=DROP),
        # meta.table: present and not empty, then meta.rowid present and starting with the table's text and '-'
        *(message(meta={"table": v}) for v in (DROP, None, "", [], {}, " ")),
        *(named(t) for t in ("t", "db.t", ".t", "t.", "a.b.c", "..", ".", "db .t", "db.t\n", "\ndb.t", "é.😀",
                             "😀ｚ", "a-b.c-d", "db.t-3", "%", "_._", "\x01.\x01", 5, 1.50, True, False, 0,
                             {"a": 1}, [1, "x"], ["t"], {"b": [None]}, 12345678901234567890, "\ud800.t")),
        message(meta={"table": "\ud800.t", "rowid": "\udfff.t-3"}), message(meta={"table": "?.t", "rowid": "\ud800.t-3"}),
        message(meta={"table": "db.t", "rowid": "db.t\ud800-3"}),
        *(message(meta={"rowid": v}) for v in (DROP, None, "", 5, True, "db.t", "db.t-", "db.t-3", "db.t3", "db.t--",
                                               "db.t--3", "DB.T-3", " db.t-3", "db.t -3", "db.t\n-3", "db-t-3",
                                               "db.t-\x01", "db.t-\x01\x01", "db.t-a\x01\x01b\x01", "db.t-é😀\x01ｚ",
                                               "db.t-\ud800", "db.t-3\n", "db.t-3\x01129\x01", "db.t-\x013",
                                               "db.t-" + "9" * 40, "db.t-[\"3\"]", "db.t-\"q\"\\", {"a": 1}, [1], "db.x-3",
                                               "db.tt-3", "db.-3", "db-3", "-3", "d.t-3")),
        message(meta={"table": DROP, "rowid": DROP}), message(meta={"rowid": DROP, "time": "x"}),
        message(meta={"rowid": "x", "scn": "y"}), message(meta={"table": "t", "rowid": "t-"}, data=DROP),
        message(meta={"table": 5, "rowid": 5}), message(meta={"table": 5, "rowid": "5-"}),
        message(meta={"table": True, "rowid": "true-x"}), message(meta={"table": {}, "rowid": "{}-1"}),
        message(meta={"table": [], "rowid": "[]-1"}), message(meta={"table": "t", "rowid": ["t-1"]}),
        message(meta={"table": "a", "rowid": {"a-": 1}}), message(meta={"table": "{", "rowid": {"a": 1}}),
        message(meta={"table": "1", "rowid": 1.5}), message(meta={"table": "1.5", "rowid": 1.5}),
        message(meta={"table": "1", "rowid": -12}),
        # data: present, an object (for every op); key for upd only: present, an object
        *(message(o, data=v) for o in ops for v in junk), *(message("upd", key=ROW, data=v) for v in junk),
        *(update(key=v) for v in junk), *(message(o, key=v) for o in ("ins", "del") for v in junk),
        message(data={}), delete(data={}), update(key={}, data={}), update(key={}, data=ROW), update(key=ROW, data={}),
        update(key=DROP, data="x"), update(key="x", data=DROP), message("upd", data=ROW), message("upd", key=None),
        # a meta field the row is built from holding an object or array (the first in READ_META named)
        message(meta={"trans": {"id": 1}}), message(meta={"posttime": [], "time": {"a": "x"}}),
        message(meta={"scn": ["1"], "seq": {}}), message(DROP, meta={"table": {}, "rowid": [], "size": {}}),
        message(meta={"idx": {"a": 1}, "size": [1]}),
        # meta.time, meta.posttime, meta.scn (below), then nested column values of data, and of an upd's key
        *(message(meta={"time": v}) for v in TIMESTAMPS), *(message(meta={"posttime": v}) for v in TIMESTAMPS),
        *(message(meta={"scn": v}) for v in SCNS), message(meta={"time": "x", "posttime": "y", "scn": "z"}),
        message(meta={"posttime": "y", "scn": "z"}), message(meta={"time": "x"}, data="d"), message("del", meta={"scn": "-1"}),
        update(meta={"time": "2020-11-25T24:00:00"}), update(key="x", meta={"time": "x"}),
        message(data={**ROW, "note": {"x": 1}}), message(data={"b": [], "a": {}, "c": "1"}), delete(data={"a": [1]}),
        update(data={"z": {}, "é": [], "😀": {"a": 1}, "ｚ": [], "A": []}), update(key={**ROW, "note": [1]}),
        update(key={"a": {}}, data={"b": []}), update(key={"b": {}, "a": [], "c": "1"}), message(key={"a": {}}),
        delete(key={"a": {}}), message(key=[{"a": {}}]), update(key={"\ud800": {}, "x": [None]}),
        message(meta={"scn": "x"}, data={"a": {}}), message(meta={"time": "x"}, data={"a": []}),
        message(data={"a": [], "n": None, "t": True, "s": "[]", "e": {}}),
    ]  # fmt: skip


TIMESTAMPS = [
    DROP, None, "", "x", 5, 1.50, True, [], {}, ["2020-11-25T00:01:02"], {"t": "2020-11-25T00:01:02"}, 20201125000102,
    "2020-11-25T00:01:02", "2020-11-25 00:01:02", "2020-11-25t00:01:02", "2020-11-25T00:01:02.5",
    "2020-11-25T00:01:02.123456", "2020-11-25T00:01:02.", "2020-11-25T00:01", "2020-11-25", "20201125T000102",
    " 2020-11-25T00:01:02", "2020-11-25T00:01:02 ", "2020-11-25T00:01:02Z", "2020-11-25T00:01:02+08:00",
    "2020-11-25TT00:01:02", "2020-11-25T00:01:02T", "2020-1-25T00:01:02", "20-11-25T00:01:02", "12020-11-25T00:01:02",
    "2020/11/25T00:01:02", "２０２０-11-25T00:01:02", "٢٠٢٠-11-25T00:01:02", "2020-11-25T00.01.02", "2020-11-25T0:01:02",
    *(f"2020-11-25T00:01:02{t}" for t in ("\n", "\r\n", "\r", "\x85", "\u2028", "\u2029", "\n\n", "\t", "\x00")),
    "2024-02-29T12:00:00", "2023-02-29T12:00:00", "2023-02-30T00:00:00", "1900-02-29T00:00:00", "2000-02-29T00:00:00",
    "2023-04-31T00:00:00", "2023-13-01T00:00:00", "2023-00-10T00:00:00", "2023-01-00T00:00:00", "2023-01-32T00:00:00",
    "2024-01-02T24:00:00", "2024-01-02T23:60:00", "2024-01-02T23:59:60", "2024-01-02T99:99:99", "2024-01-02T23:59:59",
    "0000-01-01T00:00:00", "0000-02-29T12:00:00", "0000-12-31T23:59:59", "0001-01-01T00:00:00", "0099-12-31T23:59:59",
    "1582-10-04T00:00:00", "1582-10-10T00:00:00", "1582-10-15T00:00:00", "1800-06-01T12:00:00", "1900-01-01T00:00:00",
    "1969-12-31T23:59:59", "1970-01-01T00:00:00", "1970-01-01T08:00:00", "2038-01-19T03:14:08", "9999-12-31T23:59:59",
    # Asia/Shanghai's summer time (1986-1991) and the old one (1940s): gaps and overlaps
    "1986-05-04T02:00:00", "1986-05-04T02:30:00", "1986-05-04T03:00:00", "1986-09-14T01:30:00", "1986-09-14T02:00:00",
    "1986-09-14T02:30:00", "1987-04-12T02:30:00", "1987-09-13T01:59:59", "1991-04-14T02:30:00", "1991-09-15T01:30:00",
    "1991-09-15T02:30:00", "1940-06-03T00:30:00", "1919-04-13T00:30:00", "1927-12-31T23:54:17",
    # America/New_York's, and times before any zone's rules
    "2024-03-10T02:30:00", "2024-03-10T03:00:00", "2024-11-03T01:30:00", "2024-11-03T02:00:00", "1883-11-18T12:03:58",
    "1901-01-01T00:00:00", "1900-12-31T23:59:59",
]  # fmt: skip
SCNS = [
    DROP, None, "", "0", "00001", "123456789", "9" * 30, "9" * 31, "1" + "0" * 30, "0" * 30, "0" * 31, "-1", "1.0",
    "-0", 1.50, 12, 0, -1, "1\n", "1\r\n", "1\r", "1\n\n", "1\t", " 1", "1 ", "\n1", "x", True, False, {"a": 1}, [1],
    "١", "１", "+1", "1e3", 1e3, "0x10", 123456789012345678901234567890, 10**40, 10**29, "0" * 29 + "1",
]  # fmt: skip


def field_cases() -> list[dict[str, Any]]:
    """Images, names and times that decode; natural_id's text (data, key, meta but posttime)."""
    wide = {"b": "2", "a": "x", "é": "3", "😀": "s", "ｚ": "4", "A": "n", "only": 1.50, "t": True, "f": False,
            "n": None, "\ud800": "lone", "q": "\ud800\udfff", "ctl": "\x01\x1f\x7f\"\\/\u2028é😀", "e": "",
            "big": 10**40, "exp": 1e300, "neg": -0.0, "s": "[1]"}  # fmt: skip
    return [
        message(data=wide), update(wide, {"b": "3", "😀": None}), delete(wide), update(wide, wide), update({}, {"a": "1"}),
        message(data={"id": "1"}), message(data={"id": 1}), message(data={"id": "\ud800"}),
        message(data={"b": "1", "B": "2", "a": "3", "_": "4", "ｚ": "5", "😀": "6", "\uffff": "7", "": "8"}),
        message(data={"\ud800": "1", "\udbff\udfff": "2", "\uffff": "3"}), message(data={"big": 10**400, "small": -1.5e-300}),
        message(data={"x": 12345678901234567890.123}), message(data={"x": "1.2222", "y": 1.2222, "z": 1e-7}),
        # key of ins / del: in natural_id only
        *(message(o, key=v) for o in ("ins", "del") for v in ("k", 5, 1.50, True, False, [1, {"b": 1, "a": 2}],
                                                             {"z": 1, "a": {"y": 2, "b": None}}, "\ud800é", 10**400, {})),
        # meta: the fields not staged, in natural_id (posttime left out), any type and name
        message(meta={"posttime": DROP}), message(meta={"posttime": None}), message(meta={"time": DROP}),
        message(meta={"time": None, "posttime": None}), message(meta={"scn": DROP}), message(meta={"scn": None}),
        message(meta={"trans": DROP}), message(meta={"trans": None}), message(meta={"trans": ""}),
        message(meta={"trans": 12}), message(meta={"trans": True}), message(meta={"trans": {"x": [1, None]}}),
        message(meta={"trans": "t\ud800"}), message(meta={"seq": DROP, "idx": DROP, "size": DROP}),
        message(meta={"seq": {"a": [1.50, None]}, "idx": [], "size": None, "extra": {"z": 1, "a": {"\ud800": "x"}}}),
        message(meta={"😀": "1", "ｚ": "2", "\ud800": "3", "\uffff": "4", "A": True, "a": [None], "": ""}),
        message(meta={"ctl\x01": "\x00\x08\x0c\n\r\t\x1f\x7f\"\\/<>&'\u2028\ufeff", "n": None, "b": False}),
        message(meta={"Posttime": "x", "posttime ": "y"}), message(meta={"posttime": {"a": 1}}),
        message(meta={"time": DROP, "posttime": DROP, "scn": DROP, "trans": DROP, "seq": DROP, "idx": DROP, "size": DROP}),
        # full-load rows: no scn, seq, trans
        message(meta={"scn": DROP, "seq": DROP, "trans": DROP}),
        # top-level fields beside data, meta and key; keys that Spark stores as one at the top level
        message(extra={"a": [1]}, **{"😀": 1}), message(KEY={"a": {}}, Data="x"),
        dict([*message().items(), ("\ud800", 1), ("\udfff", 2)]), dict([*update().items(), ("?", 1), ("\ud800", 2)]),
        # names
        named("db.t", "3\x01129"), named("db.t", ""), named("db.t", "\x01"), named("db.t", "a\x01"), named("t", "x"),
        named("db.t", "é😀\x01ｚ"), named("a.b.c", "1"), named("😀.é", "😀"), named("db.", "1"), named(".t", "1"),
        update(meta={"table": "é.😀", "rowid": "é.😀-1\x012"}), delete(meta={"table": "t", "rowid": "t-\x01\x01"}),
        # times in every zone
        message(meta={"time": "1986-05-04T02:30:00", "posttime": "1986-09-14T01:30:00"}),
        message(meta={"time": "2024-03-10T02:30:00", "posttime": "2024-11-03T01:30:00"}),
        message(meta={"time": "0000-02-29T12:00:00", "posttime": "9999-12-31T23:59:59"}),
    ]  # fmt: skip


def crash_cases() -> list[Any]:
    """Values the old SQL cannot stage (its build fails): keys that collide once Spark stores them
    below the top level, and scn digits with a final terminator the cast refuses (oracle docstring)."""
    return [
        message(data=dict([("\ud800", "1"), ("\udfff", "2")])), message(meta={"\ud800": 1, "?": 2}),
        update(key={"a": [dict([("\ud800", 1), ("\udbff", 2)])]}), message(x=dict([("\udc00", 1), ("\udfff", 1)])),
        message(key={"\ud800": 1, "?": 2}), message("x", data=dict([("\ud800", 1), ("\udfff", 2)])),
        *(message(meta={"scn": f"1{t}"}) for t in ("\x85", "\u2028", "\u2029")), message("x", meta={"scn": "1\u2028"}),
        message(meta={"time": "x", "scn": "1\u2028"}), message(meta={"scn": "7\u2029"}, data={"a": {}}),
        message(meta={"scn": "1" * 30 + "\x85"}), message(meta={"rowid": "x", "scn": "1\x85"}),
    ]  # fmt: skip


def mixed_cases(count: int, rng: random.Random) -> list[dict[str, Any]]:
    """Seeded messages mixing the fields' edge values, several at once (each check's order)."""
    ops = ("ins", "upd", "del", "ins", "upd", "del", "x", DROP)
    tables = (("db.t", "db.t-3"), ("t", "t-"), ("é.😀", "é.😀-1\x012"), ("a.b", "a.c-1"), ("", "-1"), (DROP, DROP),
              (5, "5-5"), ("db.t", DROP), ("db.t", "db.t-\x01\x01"))  # fmt: skip
    images = (ROW, {}, {"a": None}, {"z": "1", "é": 2, "😀": True}, {"a": {}}, {"b": [1], "a": "x"}, "x", None, DROP)
    cases = []
    for _ in range(count):
        table, rowid = rng.choice(tables)
        edge = {"time": TIMESTAMPS, "posttime": TIMESTAMPS, "scn": SCNS}  # an edge value, else META's
        fields = {"op": rng.choice(ops), "table": table, "rowid": rowid, "trans": rng.choice(("t", 7, None, DROP)),
                  **{n: rng.choice(v) if rng.random() < 0.3 else META[n] for n, v in edge.items()}}  # fmt: skip
        cases.append(message(fields.pop("op"), meta=fields, data=rng.choice(images), key=rng.choice(images)))
    return cases


def built_cases() -> list[Any]:
    arrays = [[message()], [], "ins", [dict([("\ud800", 1), ("\udfff", 2)])], [META]]
    return check_cases() + field_cases() + crash_cases() + mixed_cases(300, random.Random(11)) + arrays


def corpus() -> list[bytes | None]:
    """Every value the test reads (module docstring), each once, a tombstone first."""
    # test_oms_default_json's workload, then a larger one: more tables and types
    workloads = [(160, 20240101, random.Random(7)), (400, 5, random.Random(2))]
    return message_corpus("oms_shareplex_json", map(dumps, built_cases()), workloads)


def zoned(values: list[bytes | None]) -> list[bytes]:
    """The values whose staged row depends on the source zone, and some that it may."""
    return [v for v in values if v is not None and (b'"time"' in v or b'"posttime"' in v)][:400]


def test_corpus_reaches_every_error_code_and_every_op():
    values = corpus()
    rows = [r for v in values for r in shareplex_rows(v, SHANGHAI)]
    assert_reaches(values, rows, 1000, (*ERROR_CODES, "ROW"))
    assert {r["op"] for r in rows} >= {"INSERT", "UPDATE", "DELETE"}
    assert any(r["event_ts_micros"] is None and r["event_kind"] == "ROW" for r in rows)
    for zone in OTHER_ZONES:
        other = {v: shareplex_rows(v, zone)[0]["event_ts_micros"] for v in zoned(values)}
        assert any(other[v] != shareplex_rows(v, SHANGHAI)[0]["event_ts_micros"] for v in other), zone


@pytest.mark.spark
def test_spark_cdc_shareplex_rows_gives_the_oracles_rows_for_every_value():
    from harness import spark_session

    values = corpus()
    cases = [(v, SHANGHAI) for v in values] + [(v, zone) for zone in OTHER_ZONES for v in zoned(values)]
    assert_oracle_rows(
        spark_session(), "cdc_shareplex_rows(c.v, c.tz)", cases, "struct<v: binary, tz: string>", FIELDS, shareplex_rows
    )
