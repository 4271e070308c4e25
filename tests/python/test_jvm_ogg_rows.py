"""`cdc_ogg_rows(value, source_tz)` (the per-message logic of stg_ogg_json__changes in one JVM function)
against tests/python/ogg_rows_oracle.py, the pure-Python twin of the SQL it replaces (macros/ogg.sql
and the model as of commit c1308b5, which that oracle was checked against value by value, with the
same corpus, through the old staging model).

Every value of the corpus must give the oracle's struct: one row (row_index 0), the same error code
and detail for a quarantined value, and the same decoded columns, maps with their keys in the same
order. The corpus (`corpus` below) is the JSON values of test_jvm_canal_rows (JSON reading: UTF-8,
duplicates, depth, name length, numbers), the spec examples, the bad-input corpus, the sample-data
generator's messages and their malformations (test_ogg_json's workload) and values built to reach
every branch of the SQL: each check of `checked` in its order and near misses that pass (nested
names, op_type of every kind and shape, table names of one to four parts and empty parts, the images
each op needs of every wrong type, primary_keys of every shape, op_ts / current_ts at and past
every edge of their pattern and of the calendar, DST gaps and overlaps, pos at and past 30 digits,
nested column values), `_isMissing` flags (true, false, not a boolean, without their column, a
column merely ending in _isMissing), natural_id's text (nested top-level fields, escapes, keys
outside the BMP, lone surrogates, keys that collide once stored) and values the old SQL could not
stage. Values with an op_ts or current_ts are also read in UTC.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from ogg_rows_oracle import FIELDS, ogg_rows
from staged_rows_oracle import assert_oracle_rows, assert_reaches, message_corpus
from test_jvm_canal_rows import dumps

SHANGHAI = "Asia/Shanghai"
ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
EVENT_KINDS = ("ROW", "DDL")
DROP = object()  # a field left out of a built message

ROW = {"ID": "1", "NOTE": "a", "PRICE": 9.50, "AT": "2024-01-02:03:04:05"}
BASE = {
    "table": "GG.SHOP.ORDERS", "op_type": "I", "op_ts": "2024-01-02 03:04:05.123456",
    "current_ts": "2024-01-02T03:04:06.000000", "pos": "00000000000000001444", "primary_keys": ["ID"],
    "tokens": {"R": "AADPkvAAEAAEqL2AAA"}, "before": None, "after": ROW,
}  # fmt: skip


def message(op_type: Any = "I", **fields: Any) -> dict[str, Any]:
    """An insert of ROW, `fields` replacing its parts (DROP leaves one out)."""
    return {k: v for k, v in {**BASE, "op_type": op_type, **fields}.items() if v is not DROP}


def update(before: Any = ROW, after: Any = None, **fields: Any) -> dict[str, Any]:
    return message("U", before=before, after={**ROW, "NOTE": "b"} if after is None else after, **fields)


def delete(before: Any = ROW, **fields: Any) -> dict[str, Any]:
    return message("D", before=before, **{"after": None, **fields})


def truncate(**fields: Any) -> dict[str, Any]:
    return message("T", **{"after": DROP, "primary_keys": DROP, **fields})


def flagged(image: dict[str, Any], missing: tuple[str, ...] = ()) -> dict[str, Any]:
    """The image with `<column>_isMissing` after each column, true for those in `missing`."""
    return {k: v for c, x in image.items() for k, v in ((c, x), (f"{c}_isMissing", c in missing))}


# ---------------------------------------------------------------- the corpus
def check_cases() -> list[dict[str, Any]]:
    """Messages failing each check of `checked`, in the SQL's order, and near misses that pass."""
    junk = ("x", 5, 1.50, True, [], [ROW], "{}", None, DROP)
    ops = ("I", "U", "D", "T", "INSERT", "UPDATE", "DELETE", "TRUNCATE")
    return [
        # nested names: the first of op_type, table, op_ts, current_ts, pos
        *(message(**{n: v}) for n in ("op_type", "table", "op_ts", "current_ts", "pos") for v in ({}, [], ["x"])),
        message(op_type={"a": 1}, table=[]), message(table={"a": "b"}, pos=[1]), message(op_ts=[], current_ts={}),
        message(pos={}, op_type=DROP), message(current_ts=[1], table=DROP), message(tokens={"a": [1]}, after={"a": "1"}),
        # op_type: present, then one of the eight
        *(message(v) for v in (DROP, None, 5, 1.50, True, False, "i", "insert", "", " I", "I ", "INS", "UPSERT", "R",
                               "Insert", "\ud800", "I\x00", "É", "ＩＮＳＥＲＴ", "PK", "TRUNC", "0")),
        *(message(v) for v in ops), message(None, table=DROP), message("X", table=DROP),
        # table: present and not empty, then 1..3 parts without an empty one
        *(message(table=v) for v in (DROP, None, "", 5, 1.50, True, "T", "S.T", "C.S.T", "A.B.C.D", "A.B.C.D.E",
                                     ".T", "T.", "S..T", "..", ".", "C.S.", " . ", "a b.c", "S.T\n", "é.😀.ｚ",
                                     "S.\ud800", "C.S.T.", "1.50")),
        truncate(table="A.B.C.D"), truncate(table=""), truncate(table=".T"),
        # the images each op needs: present, an object; the other image anything
        *(message(o, after=v) for o in ("I", "INSERT", "U") for v in junk),
        *(update(before=v) for v in junk), *(message(o, before=v) for o in ("D", "DELETE") for v in junk),
        *(message("I", before=v) for v in junk), *(delete(after=v) for v in junk),
        *(truncate(before=v, after=v) for v in junk), truncate(before={"a": {}}, after={"b": []}),
        update(before={}, after={}), delete(before={}), message(after={}), update(before=DROP), update(before=None),
        message("D", before=DROP, after="x"), message("U", before="x", after=DROP), message("U", before=[], after=5),
        # primary_keys: absent, null or an array (of anything, each element's text)
        *(message(primary_keys=v) for v in (DROP, None, [], ["ID"], ["ID", "NOTE"], ["ID", "ID"], "ID", 5, True,
                                            {"ID": 1}, {}, [1, 1.50, True], [None], ["ID", None], [[]], [{"a": 1}],
                                            [["ID"]], [""], ["\ud800", "😀"], ["MISSING"], ["id"])),
        truncate(primary_keys="x"), truncate(primary_keys=["ID"]), delete(primary_keys=["ID", "NOTE"]),
        # op_ts, current_ts, pos (below), then nested column values of the images the op needs
        *(message(op_ts=v) for v in TIMESTAMPS), *(message(current_ts=v) for v in TIMESTAMPS),
        *(message(pos=v) for v in POSITIONS), truncate(op_ts="x"), truncate(pos="-1"),
        message(op_ts="x", current_ts="y", pos="z"), message(current_ts="y", pos="z"),
        message(after={**ROW, "NOTE": {"x": 1}}), message(after={"b": [], "a": {}, "c": "1"}),
        update(before={**ROW, "NOTE": [1]}), update(after={**ROW, "ID": {}}), update(before={"a": {}}, after={"b": []}),
        delete(before={"x": {"y": {}}, "é": [], "😀": {}, "ｚ": []}), delete(after={"a": {}}),
        message(before={"a": {}}), truncate(before={"a": {}}), message(pos="x", after={"a": {}}),
        message(after={"a": {}, "a_isMissing": True}), message(after={"a": [], "a_isMissing": False}),
        update(before={"a": {}, "a_isMissing": True}, after={"b": "1"}), message(after={"a_isMissing": {}}),
    ]  # fmt: skip


TIMESTAMPS = [
    DROP, None, "", "x", 5, 1.50, True, 1700000000, "2024-01-02", "2024-01-02 03:04:05", "2024-01-02T03:04:05",
    *(f"2024-01-02 03:04:05.{'123456789'[:n]}" for n in range(1, 10)), "2024-01-02 03:04:05.1234567890",
    "2024-01-02 03:04:05.", "2024-01-02T03:04:05.987654321", "2024-01-02t03:04:05", "2024-01-02  03:04:05",
    " 2024-01-02 03:04:05", "2024-01-02 03:04:05 ", "2024-1-02 03:04:05", "24-01-02 03:04:05", "12024-01-02 03:04:05",
    "2024-01-02 03:04:05Z", "2024-01-02 03:04:05+08:00", "2024-01-02 03:04", "2024/01/02 03:04:05",
    "２０２４-01-02 03:04:05", "2024-01-02 03:04:05,123", "2024-01-02-03.04.05.123456", "2024-01-02:03:04:05",
    *(f"2024-01-02 03:04:05{t}" for t in ("\n", "\r\n", "\r", "\x85", "\u2028", "\u2029", "\n\n", "\t")),
    "2024-01-02 03:04:05.123\n", "2024-01-02 03:04:05.12345\r", "2024-01-02T03:04:05.1234567\u2028",
    "2024-01-02 03:04:05.123456\n", "2024-02-29 12:00:00", "2023-02-29 12:00:00", "2023-02-30 00:00:00",
    "1900-02-29 00:00:00", "2000-02-29 00:00:00", "2023-04-31 00:00:00", "2023-13-01 00:00:00", "2023-00-10 00:00:00",
    "2023-01-00 00:00:00", "2023-01-32 00:00:00", "2024-01-02 24:00:00", "2024-01-02 23:60:00", "2024-01-02 23:59:60",
    "2024-01-02 23:59:59.999999999", "0000-01-01 00:00:00", "0000-02-29 12:00:00", "0001-01-01 00:00:00",
    "0099-12-31 23:59:59", "1582-10-10 00:00:00", "1800-06-01 12:00:00", "1900-01-01 00:00:00",
    "1969-12-31 23:59:59.999999", "1970-01-01 00:00:00", "9999-12-31 23:59:59.999999", "9999-12-31T23:59:59.9999999",
    # Asia/Shanghai's summer time (1986-1991) and the old one (1940s): gaps and overlaps
    "1986-05-04 02:00:00", "1986-05-04 02:30:00", "1986-05-04 03:00:00", "1986-09-14 01:30:00",
    "1986-09-14 02:00:00", "1986-09-14 02:30:00", "1987-04-12 02:30:00", "1987-09-13 01:59:59.5",
    "1991-04-14 02:30:00", "1991-09-15 01:30:00", "1991-09-15 02:30:00", "1940-06-03 00:30:00", "1919-04-13 00:30:00",
    # America/New_York's in UTC and Shanghai, and times before any zone's rules
    "2024-03-10 02:30:00", "2024-11-03 01:30:00", "1883-11-18 12:03:58", "1901-01-01 00:00:00",
]  # fmt: skip
POSITIONS = [
    DROP, None, "", "0", "00001", "9" * 30, "9" * 31, "1" + "0" * 30, "0" * 30, "0" * 31, "-1", "1.0", 1.50, 12, 0,
    "1\n", "1\r\n", "1\r", " 1", "1 ", "x", True, "١", "+1", "1e3", "0x10", 123456789012345678901234567890,
    "00000000000000001444", "1\n\n", "1\t",
]  # fmt: skip


def flag_cases() -> list[dict[str, Any]]:
    """`<column>_isMissing` flags: true drops the column and makes the image partial."""
    wide = {"ID": "1", "A": "x", "B": None, "C": 5}
    return [
        message(after=flagged(wide)), message(after=flagged(wide, ("A",))), message(after=flagged(wide, ("A", "B", "ID"))),
        update(flagged(wide), flagged(wide)), update(flagged(wide, ("C",)), flagged(wide)),
        update(flagged(wide), flagged(wide, ("A",))), update({"ID": "1"}, wide), update(wide, {"ID": "1"}),
        update(wide, {**wide, "Z": "new"}), update({"ID": "1", "A_isMissing": True}, wide), update({}, {"X": "1"}),
        delete(flagged(wide, ("A",))), delete(flagged(wide)), delete({"ID": "1"}), message("U", before=DROP, after=wide),
        message(after={"A_isMissing": True}), message(after={"A_isMissing": False, "B": "1"}),
        *(message(after={"A": "1", "A_isMissing": v}) for v in ("true", "false", 1, 0, None, [True], {"v": True}, "x")),
        message(after={"A": "1", "A_ismissing": True}), message(after={"A": "1", "a_isMissing": True}),
        message(after={"_isMissing": True, "": "1"}), message(after={"_isMissing": True}),
        message(after={"A_isMissing": "1", "A_isMissing_isMissing": True}),
        message(after={"A": "1", "A_isMissing": True, "A_isMissing_isMissing": True}),
        message(after={"A": "1", "A_isMissing": False, "A_isMissing_isMissing": True}),
        message(after={"😀": "1", "😀_isMissing": True, "é_isMissing": False, "é": "2", "\ud800_isMissing": True}),
        message(after={"\ud800": "1", "\ud800_isMissing": True}), message(after={"LAST_isMissing": "v", "ID": "1"}),
        truncate(before=flagged(wide, ("A",)), after=flagged(wide)), message(before=flagged(wide, ("A",))),
        update(flagged({"ID": "1", "A": "1"}, ("A",)), flagged({"ID": "1", "A": "2"}, ("ID",))),
    ]  # fmt: skip


def field_cases() -> list[dict[str, Any]]:
    """Images and names outside ASCII, natural_id's text (the top level but current_ts, in its order)."""
    wide = {"b": "2", "a": "x", "é": "3", "😀": "s", "ｚ": "4", "A": "n", "only": 1.50, "t": True, "n": None,
            "\ud800": "lone", "q": "\ud800\udfff", "ctl": "\x01\x1f\x7f\"\\/\u2028é😀", "e": ""}  # fmt: skip
    return [
        message(after=wide), update(wide, {**wide, "b": "3"}), delete(wide), message(after={"id": "1"}),
        message(tokens={"z": 1, "a": [1.50, None, {"\ud800": "x"}]}, extra={"😀": "1", "ｚ": "2", "\ud800": "3"}),
        message(**{"😀": "1", "ｚ": "2", "\ud800": "3", "\uffff": "4", "zz": None, "A": True, "a": [None]}),
        message(**{"ctl\x01": "\x00\x08\x0c\n\r\t\x1f\x7f\"\\/<>&'\u2028\ufeff", "n": None, "b": False}),
        message(current_ts=DROP), message(current_ts="2030-01-01 00:00:00"), message(current_ts=None),
        message(op_ts=DROP, current_ts=DROP, pos=DROP), message(tokens=DROP, primary_keys=DROP),
        truncate(), truncate(table="T", tokens={"a": {"b": {}}}), message(table="é.😀.\ud800"),
        dict([*message().items(), ("\ud800", 1), ("\udfff", 2)]), dict([*update().items(), ("?", 1), ("\ud800", 2)]),
        dict([*message().items(), ("\ud800", "x"), ("\udbff\udfff", "y"), ("\uffff", "z")]),
        message(after={"id": "1", "\ud800": "2"}), message(after={"\ud800": "1", "\udbff\udfff": "2", "\uffff": "3"}),
        message(after={"b": "1", "B": "2", "a": "3", "_": "4", "ｚ": "5", "😀": "6"}), message(pos=10**40),
        message(after={"big": 10**400, "small": -1.5e-300, "exp": 1e300}), message(primary_keys=["😀", "ｚ"]),
    ]  # fmt: skip


def crash_cases() -> list[Any]:
    """Values the old SQL cannot stage (its build fails): keys that collide once Spark stores them
    below the top level, and pos digits with a final terminator the cast refuses (oracle docstring)."""
    return [
        message(after=dict([("\ud800", "1"), ("\udfff", "2")])), message(tokens={"\ud800": 1, "?": 2}),
        message(before={"a": [dict([("\ud800", 1), ("\udbff", 2)])]}), truncate(x=dict([("\udc00", 1), ("\udfff", 1)])),
        *(message(pos=f"1{t}") for t in ("\x85", "\u2028", "\u2029")), message("X", pos="1\u2028"),
        message(op_ts="x", pos="1\u2028"), truncate(pos="7\u2029"),
    ]  # fmt: skip


def built_cases() -> list[Any]:
    arrays = [[message()], [], "I", [dict([("\ud800", 1), ("\udfff", 2)])]]
    return check_cases() + flag_cases() + field_cases() + crash_cases() + arrays


def corpus() -> list[bytes | None]:
    """Every value the test reads (module docstring), each once, a tombstone first."""
    # test_ogg_json's workload
    return message_corpus("ogg_json", map(dumps, built_cases()), [(160, 20240101, random.Random(7))])


def zoned(values: list[bytes | None]) -> list[bytes]:
    """The values whose staged row depends on the source zone, and some that it may."""
    return [v for v in values if v is not None and (b"op_ts" in v or b"current_ts" in v)][:400]


def test_corpus_reaches_every_error_code_and_event_kind():
    values = corpus()
    rows = [r for v in values for r in ogg_rows(v, SHANGHAI)]
    assert_reaches(values, rows, 500, ERROR_CODES + EVENT_KINDS)
    assert {r["op"] for r in rows} >= {"INSERT", "UPDATE", "DELETE", "TRUNCATE"}
    assert {r["event_ts_precision"] for r in rows} >= {"s", "ms", "us", "ns"}
    utc = {v: ogg_rows(v, "UTC")[0]["event_ts_micros"] for v in zoned(values)}
    assert any(utc[v] != ogg_rows(v, SHANGHAI)[0]["event_ts_micros"] for v in utc)


@pytest.mark.spark
def test_spark_cdc_ogg_rows_gives_the_oracles_rows_for_every_value():
    from harness import spark_session

    values = corpus()
    cases = [(v, SHANGHAI) for v in values] + [(v, "UTC") for v in zoned(values)]
    assert_oracle_rows(
        spark_session(), "cdc_ogg_rows(c.v, c.tz)", cases, "struct<v: binary, tz: string>", FIELDS, ogg_rows
    )
