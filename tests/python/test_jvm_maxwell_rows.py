"""`cdc_maxwell_rows(value, key)` (the per-message logic of stg_maxwell_json__changes in one JVM
function) against tests/python/maxwell_rows_oracle.py, the pure-Python twin of the SQL it replaces
(macros/maxwell.sql and the model as of commit 823a733, which that oracle was checked against value
by value, with the same corpus and Kafka keys, through the old staging model).

Every (value, key) of the corpus must give the oracle's struct: one row (row_index 0), the same error
code and detail for a quarantined value, and the same decoded columns, maps with their keys in the
same order (message_op null for a DDL: the SQL keeps cdc_ddl_op). The corpus (`corpus` below) is the
JSON values of test_jvm_canal_rows (JSON reading: UTF-8, duplicates, depth, name length, numbers),
the spec examples, the bad-input corpus, the sample-data generator's messages with their Kafka keys
and their malformations (test_maxwell_json's workload) and values built to reach every branch of the
SQL: each check of `checked` in its order and near misses that pass (type of every kind, case and
shape, nested names, database / table, ts at and past 15 digits and timestamp_seconds' range, data
and old of every type, old naming columns data lacks, DDL without sql, position and xoffset at and
past their patterns, primary_key_columns of every shape), Kafka keys in the hash form, the array
form, `_uuid`, malformed, not UTF-8, with repeated names, with names in another case or naming
columns data lacks, and none; DDL keys from def["primary-key"]; embedded JSON values (numbers of
every kind Spark's parse_json types differently, exponents, -0, 1E400, long decimals, escapes,
unicode, nesting: each number now kept as sent) and values the old SQL could not stage.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from maxwell_rows_oracle import FIELDS, maxwell_rows
from staged_rows_oracle import assert_oracle_rows, assert_reaches
from test_jvm_canal_rows import dumps, value_cases

ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
EVENT_KINDS = ("ROW", "DDL", "OTHER")
DROP = object()  # a field left out of a built message
SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples"

ROW = {"id": 1, "note": "a", "price": 9.50, "at": "2024-01-02 03:04:05.123000"}
BASE = {
    "database": "shop", "table": "orders", "type": "insert", "ts": 1700000000, "xid": 23396, "xoffset": 0,
    "position": "mysql-bin.000006:800911", "server_id": 23042, "thread_id": 108, "data": ROW,
}  # fmt: skip
HASH_KEY = b'{"database":"shop","table":"orders","pk.id":1}'


def message(maxwell_type: Any = "insert", **fields: Any) -> dict[str, Any]:
    """An insert of ROW, `fields` replacing its parts (DROP leaves one out)."""
    return {k: v for k, v in {**BASE, "type": maxwell_type, **fields}.items() if v is not DROP}


def update(old: Any = None, **fields: Any) -> dict[str, Any]:
    return message("update", **{"data": {**ROW, "note": "b"}, "old": {"note": "a"} if old is None else old, **fields})


def delete(**fields: Any) -> dict[str, Any]:
    return message("delete", **fields)


def ddl(kind: str = "table-alter", **fields: Any) -> dict[str, Any]:
    base = {"type": kind, "database": "shop", "table": "orders", "ts": 1700000000123, "sql": "ALTER TABLE orders ADD c int",
            "position": "mysql-bin.000006:800050", "def": {"database": "shop", "table": "orders", "primary-key": ["id"]}}  # fmt: skip
    return {k: v for k, v in {**base, **fields}.items() if v is not DROP}


def marker(kind: str = "bootstrap-start", **fields: Any) -> dict[str, Any]:
    base = {"database": "shop", "table": "orders", "type": kind, "ts": 1700000000, "data": {}}
    return {k: v for k, v in {**base, **fields}.items() if v is not DROP}


# ---------------------------------------------------------------- the corpus
def check_cases() -> list[dict[str, Any]]:
    """Messages failing each check of `checked`, in the SQL's order, and near misses that pass."""
    junk = ("x", 5, 1.50, True, [], [ROW], "{}", None, DROP)
    types = ("insert", "update", "delete", "bootstrap-insert", "bootstrap-start", "bootstrap-complete",
             *("table-create", "table-alter", "table-drop", "database-create", "database-alter", "database-drop"))  # fmt: skip
    return [
        # type: present, not nested, one of the Maxwell types (lower-cased)
        *(message(v) for v in (DROP, None, 5, 1.50, True, False, "", " insert", "insert ", "INSERT", "Insert", "upsert",
                               "replace", "heartbeat", "i", "table-rename", "table-", "database-", "bootstrap", "\ud800",
                               "insert\x00", "É", "ＩＮＳＥＲＴ", "İnsert", "Bootstrap-Insert", "TABLE-CREATE")),
        *(message(t) for t in types), *(ddl(t.upper()) for t in types[6:]), *(marker(t.upper()) for t in types[4:6]),
        # nested names: the first of type, database, table
        *(message(**{n: v}) for n in ("type", "database", "table") for v in ({}, [], ["x"], {"a": 1})),
        message({"a": 1}, database=[]), message(DROP, database={}), message("x", table=[1]),
        message(database={}, table=[]), ddl(table={}), marker(database=[]),
        # database: present and not empty, any scalar's text
        *(message(database=v) for v in (DROP, None, "", 5, 1.50, True, " ", "é😀", "\ud800", "a.b")),
        ddl("database-create", database=""), ddl("database-drop", database=None), message("nope", database=DROP),
        # table: for rows, table-* DDL and bootstrap markers; not for database-* DDL
        *(message(t, table=v) for t in ("insert", "delete", "update") for v in (DROP, None, "")),
        *(message(table=v) for v in (5, 1.50, False, " ", "é😀", "\ud800", "t\n")),
        *(ddl(t, table=v) for t in ("table-create", "table-drop", "database-create", "database-alter") for v in (DROP, "")),
        *(marker(t, table=v) for t in types[4:6] for v in (DROP, None, "", "t")),
        # ts: present, then 1..15 digits (seconds for rows and markers, milliseconds for DDL)
        *(message(ts=v) for v in TIMESTAMPS), *(ddl(ts=v) for v in TIMESTAMPS), *(marker(ts=v) for v in TIMESTAMPS[:12]),
        # data: present and an object on rows; old an object whenever present on rows
        *(message(t, data=v) for t in types[:4] for v in junk),
        *(message(t, old=v) for t in types[:4] for v in junk), *(update(data=v, old=v) for v in junk),
        *(ddl(data=v, old=v) for v in junk), *(marker(data=v) for v in junk),
        update(old={}), update(data={}, old={}), message(data={}), delete(data={}), update(old={"note": None}),
        # sql on DDL
        *(ddl(t, sql=v) for t in types[6:] for v in (DROP, None)), *(ddl(sql=v) for v in ("", 5, True, "x")),
        message(sql=DROP), message(sql=None), marker(sql=None),
        # position, xoffset, primary_key_columns
        *(message(position=v) for v in POSITIONS), *(ddl(position=v) for v in POSITIONS[:16]),
        *(message(xoffset=v) for v in XOFFSETS), *(ddl(xoffset=v) for v in XOFFSETS[:8]),
        *(message(primary_key_columns=v) for v in KEY_COLUMNS), *(ddl(primary_key_columns=v) for v in KEY_COLUMNS),
        *(marker(primary_key_columns=v) for v in (["id"], "id", [])),
        # old naming columns data lacks (every row type), then embedded JSON values
        update(old={"zz": 1}), update(old={"b": 1, "a": 2, "note": "x"}), message(old={"x": 1}), delete(old={"é": 1}),
        message("bootstrap-insert", old={"😀": 1, "id": 2}), update(old={"zz": {}}), ddl(old={"x": 1}),
        update(old={"zz": 1}, position="x"), update(old={"zz": 1}, primary_key_columns="x"),
        message(position="x", xoffset="y"), message(xoffset="y", primary_key_columns="z"),
    ]  # fmt: skip


TIMESTAMPS = [
    DROP, None, "", "x", True, 1.50, 1.7e9, "1700000000", 1700000000, 0, -1, "-1", "-0", "0", "00", "+1", " 1", "1 ",
    "1\n", "1\r\n", "1\r", "1\n\n", "1\t", "1.0", "1e3", "١٧", "１", 999999999999999, 1000000000000000,
    -999999999999999, -1000000000000000, "999999999999999", "0000000000000001", "000000000000001",
    9223372036854, 9223372036855, -9223372036854, -9223372036855, 253402300799, 253402300800, -62135596800,
    "9223372036854\n", 1700000000123, "--1",
]  # fmt: skip
POSITIONS = [
    DROP, None, "", "x", ":", ":1", "f:", "mysql-bin.000006:800911", "mysql-bin.000006:0", "a:b:12", "a:12:x",
    "mysql-bin.000006:123456789012345678", "mysql-bin.000006:1234567890123456789", "f1:1\n", "f1:1\r\n", "f1\n:1",
    "f1:1\u2028", "f1:1\x85", "f1:1 ", "f1: 1", "f1:-1", "f1:١", 5, 1.50, True, "bin:7", "bin.9223372036854775807:1",
    "bin.9223372036854775808:1", "bin.232830643653869628:1", "bin.999999999999:999999999999999999",
    "bin.0000000000000000000000007:5", "é😀.42:3", "\ud800.1:2", "mysql-bin.000006:800911\n\n", "12:34",
]  # fmt: skip
XOFFSETS = [
    DROP, None, "", "x", 0, 5, 999999999, 1000000000, "000000000", "0000000001", -1, "-1", 1.50, True, "1\n", "1\r\n",
    "1\u2028", "1\u2029", "1\x85", " 1", "1 ", "1\n\n", "１",
]  # fmt: skip
KEY_COLUMNS = [
    DROP, None, [], ["id"], ["ID"], ["id", "note"], ["id", "id"], "id", 5, True, {"id": 1}, {}, [1, 1.50, True],
    [None], ["id", None], [[]], [{"a": 1}], [""], ["\ud800", "😀"], ["missing"], [["id"]],
]  # fmt: skip


def embedded_cases() -> list[dict[str, Any]]:
    """JSON columns and SETs: embedded JSON read back from the value as sent."""
    numbers = [
        1, -1, 0, -0, 1.50, -1.50, 0.10, 100.0, 1000.00, 0.0, -0.0, 9223372036854775807, 9223372036854775808,
        -9223372036854775808, -9223372036854775809, 12345678901234567890123456789012345678,
        123456789012345678901234567890123456789, 10**40, 0.000001,
    ]  # fmt: skip
    texts = [
        "1E400", "-1E400", "1e-400", "-1e-400", "1.5e3", "1E2", "1E+2", "1e0", "0e0", "-0e0", "-0.0e1", "1e-7", "1.0e7",
        "1e6", "1e22", "1e21", "123e-2", "2.5E-3", "0.001e0", "0.0001e0", "4.9e-324", "2e-323", "1.7976931348623157e308",
        "0.1234567890123456789012345678901234567", "0.12345678901234567890123456789012345678",
        "0.123456789012345678901234567890123456789", "1.500000000000000000000000000000000000000",
        "-12345678901234567890123456789012345678.0", "100000000000000000000000000000000000000.5",
        "0.00000000000000000000000000000000000001", "0.000000000000000000000000000000000000001", "1e-38", "0.00",
        "-0.000", "123456.789e-2", "1234567.0e0", "9999999.0e0", "10000000.0e0", "0.5E-3", "3.14159", "-2.5e-5",
        "1" + "0" * 999, "1" + "0" * 1000, "0." + "1" * 998, "0." + "1" * 999, "-" + "1" * 1000, "1" * 1001,
    ]  # fmt: skip
    quoted = "[" + ",".join(texts) + "]"
    raw = ['{"database":"shop","table":"t","type":"insert","ts":1,"data":{"j":' + t + ',"k":"v"}}' for t in texts] + [
        '{"database":"shop","table":"t","type":"insert","ts":1,"data":{"j":' + quoted + "}}",
        '{"database":"shop","table":"t","type":"update","ts":1,"data":{"j":[1],"s":[2]},"old":{"j":{"x":1E400}}}',
        '{"database":"shop","table":"t","type":"insert","ts":1,"data":{"j":{}},"big":' + "1" * 1001 + "}",
        '{"database":"shop","table":"t","type":"insert","ts":1,"data":{"j":"x"},"big":' + "1" * 1001 + "}",
        '{"database":"shop","table":"t","type":"insert","ts":1,"data":{"j":{"a":"\\ud800","\\ud800":1}}}',
        '{"database":"shop","table":"t","type":"insert","ts":1,"data":{"j":["\\u0001\\u001f\\u007f\\"\\\\/\\b\\f"]}}',
        '{"database":"shop","table":"t","type":"insert","ts":1,"data":{"\\ud800":[1],"j":[2]}}',
        '{"database":"shop","table":"t","type":"delete","ts":1,"data":{"j":[1.0, 1e1, 10]}}',
    ]
    wide = {"b": [1, {"z": 1, "y": [None, True, False]}], "a": {"é": 1, "z": 2, "😀": 3, "ｚ": 4, "A": {}}, "c": "1"}
    return [
        message(data={"j": n}) for n in numbers
    ] + [json.loads(r) if False else r for r in raw] + [
        message(data={"j": [n for n in numbers]}), message(data=wide), update(data=wide, old={"a": [1], "c": "0"}),
        update(data={"id": 1, "s": ["a", "b"]}, old={"s": ["a"]}), update(data={"id": 1, "s": ["a"]}, old={"s": None}),
        update(data={"id": 1, "s": "a"}, old={"s": ["a", "b"]}), delete(data=wide), message("bootstrap-insert", data=wide),
        message(data={"j": {"text": "a\nb\t\"c\"\\ \u2028 é 😀 \x01 \x7f / <>&'"}}), message(data={"j": [[[[[]]]], {}, [{}]]}),
        message(data={"j": "[1, 2]", "k": "{}"}), ddl(data={"j": [1]}), ddl(old={"j": {"a": 1}}), marker(data={"j": [1]}),
        message(data={"j": [1]}, old="x"), message(data={"j": {}}, database=""),
    ]  # fmt: skip


def keyed_cases() -> list[tuple[dict[str, Any] | str, bytes | None]]:
    """Row messages with Kafka keys (no primary_key_columns), and DDL keyed by def."""
    two = {"ID": 1, "Line_No": 2, "note": "a"}
    keys = [
        None, HASH_KEY, b'{"database":"shop","table":"orders","_uuid":"00000000-0000-0000-0000-000000000000"}',
        b'{"database":"shop","table":"orders","pk.id":1,"pk.line_no":2}', b'{"pk.line_no":2,"pk.id":1}',
        b'{"pk.ID":1}', b'{"pk.Id":1}', b'{"pk.id":1,"pk.id":2}', b'{"PK.id":1}', b'{"pk.":1}', b'{}', b' \t\n{"pk.id":1}',
        b'\x0b{"pk.id":1}', b'{"pk.id":1} trailing', b'{"pk.id":1}}', b'{"pk.id":', b'{pk.id:1}', b"{'pk.id':1}",
        b'{"pk.id":01}', b'{"pk.id":1,}', b'{"pk.id":NaN}', b'{"pk.id":Infinity,"pk.note":-Infinity}', b'{"pk.id":1e400}',
        b'{"pk.id":[1,{"a":2}],"pk.note":{"x":[]},"pk.price":null,"pk.at":true}', b'{"pk.\\ud800":1}', b'{"pk.\xff":1}',
        b'\xff{"pk.id":1}', b'{"pk.id":"\xff"}', b'\xc2\xa0{"pk.id":1}', b'{"pk.id":"a\x01"}', b'{"pk.id":"\\x"}',
        b'["shop","orders",[{"id":1}]]', b'["shop","orders",[{"id":1},{"note":"a"}]]', b'["shop","orders",[{"ID":1}]]',
        b'["shop","orders",[{"note":1,"id":2}]]', b'["shop","orders",[]]', b'["shop","orders"]', b'["shop","orders",{"id":1}]',
        b'["shop","orders",[{"id":1,"id":2}]]', b'["shop","orders",[{"id":1}]] x', b'["shop","orders",[{"id":1e400}]]',
        b' ["shop","orders",[{"id":1}]]', b'["shop","orders",[{"id":NaN}]]', b"['shop','orders',[{'id':1}]]",
        b'["shop","orders",[{"id":1}],"x"]', b'[', b'[1,2,[{"id":1}]]', b'{"a":["shop","orders",[{"id":1}]]}',
        b"00000000-0000-0000-0000-000000000000", b"", b" ", b"id", b"1",
    ]  # fmt: skip
    bad_keys = [b'{"pk.nope":1}', b'{"pk.id":1,"pk.nope":2}', b'["shop","orders",[{}]]', b'["shop","orders",[1]]',
                b'["shop","orders",[{"id":1},null]]', b'["shop","orders",[{"nope":1}]]', b'{"pk.":1}']  # fmt: skip
    cases: list[tuple[Any, bytes | None]] = []
    for key in keys:
        cases += [(message(), key), (update(), key), (delete(), key), (message("bootstrap-insert"), key)]
        cases += [(message(data=two), key), (message(primary_key_columns=["note"]), key), (ddl(), key)]
    for key in bad_keys:
        cases += [(message(), key), (message(data={"": 1, "nope": 2, "id": 3}), key), (message(data="x"), key)]
        cases += [(message(ts="x"), key), (message(data={"id": 1}, primary_key_columns=[]), key), (ddl(), key)]
        cases += [(marker(), key), (message(data={"id": {}}), key)]
    cases += [
        (message(data={"ID": 1, "id": 2, "Id": 3}), b'{"pk.iD":1}'), (message(data={"İD": 1}), b'{"pk.i\xcc\x87d":1}'),
        (message(data={"ΣΑΣ": 1}), '{"pk.σας":1}'.encode()), (message(data={"ß": 1}), b'{"pk.SS":1}'),
        (message(data={"é": 1, "É": 2}), '{"pk.é":1}'.encode()), (message(data={"\ud800": 1}), b'{"pk.?":1}'),
        *((ddl(t, **{"def": d}), None) for t in ("table-create", "table-alter", "table-drop", "database-create")
          for d in (DROP, None, {}, {"primary-key": []}, {"primary-key": ["b", "a"]}, {"primary-key": "id"},
                    {"primary-key": [1, None, {"a": 1}]}, [], "x", {"primary-key": None})),
        (ddl(primary_key_columns=["x"]), None), (ddl(primary_key_columns=[]), None), (ddl("table-drop", **{"def": DROP}), None),
    ]  # fmt: skip
    return cases


def crash_cases() -> list[dict[str, Any]]:
    """Values the old SQL cannot stage (its build fails): keys that collide once Spark stores them
    below the top level, digits the cast refuses, ts past timestamp_seconds (oracle docstring)."""
    return [
        message(data=dict([("\ud800", "1"), ("\udfff", "2")])), message(extra={"\ud800": 1, "?": 2}),
        update(old=dict([("\ud800", "1"), ("\udbff", "2")])),
        *(message(ts=f"1{t}") for t in ("\x85", "\u2028", "\u2029")), ddl(ts="7\u2029"), message("x", ts="1\u2028"),
        *(message(xoffset=f"1{t}") for t in ("\x85", "\u2028", "\u2029")), message(ts="x", xoffset="1\u2028"),
        message(ts=9223372036855), marker(ts=-9223372036855), message(ts=999999999999999), message("x", ts=999999999999999),
    ]  # fmt: skip


def built_cases() -> list[tuple[bytes, bytes | None]]:
    """The built values: check_cases under HASH_KEY (the key of ROW), the others without a key."""
    keyed = [(dumps(v), HASH_KEY) for v in check_cases()]
    values = [*embedded_cases(), *crash_cases(), [message()], [], "insert"]
    pairs = keyed + [(v.encode() if isinstance(v, str) else dumps(v), None) for v in values]
    pairs += [(dumps(v) if not isinstance(v, str) else v, k) for v, k in keyed_cases()]
    return pairs


def generated_pairs() -> list[tuple[bytes, bytes | None]]:
    """test_maxwell_json's kind of workload as the generator encodes it, with its Kafka keys, then
    each malformation kind of the first 8 row messages (staged_rows_oracle.generated_values)."""
    from cdc_unify.generator.encoders import encoder_for
    from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS
    from cdc_unify.generator.workload import WorkloadOptions, build_workload

    encoder = encoder_for("maxwell_json")
    encoded = list(encoder.encode(build_workload(WorkloadOptions(events=200), seed=20240101), random.Random(7)))
    pairs = [(m.value, m.key) for m in encoded if m.value is not None]
    rng = random.Random(3)
    rows = [m for m in encoded if m.is_row_message][:8]
    for kind in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds:
        pairs += [(encoder.malform(m, kind, rng), m.key) for m in rows]
    return pairs


def corpus() -> list[tuple[bytes | None, bytes | None]]:
    """Every (value, key) the test reads (module docstring), each once, a tombstone first."""
    from test_bad_inputs import corpus as bad_input_corpus

    pairs: list[tuple[bytes | None, bytes | None]] = [(None, None), (None, HASH_KEY)]
    pairs += [(v, None) for v in value_cases()] + built_cases()
    for path in sorted((SPEC / "maxwell_json").glob("[0-9][0-9]_*.json*")):
        if "expected" not in path.name:
            lines = path.read_bytes().splitlines() if path.suffix == ".jsonl" else [path.read_bytes()]
            pairs += [(line, None) for line in lines if line]
    pairs += [(m.value, None) for m in bad_input_corpus("maxwell_json") if m.value is not None]
    pairs += generated_pairs()
    return list(dict.fromkeys(pairs))


def test_corpus_reaches_every_error_code_and_event_kind():
    pairs = corpus()
    rows = [r for v, k in pairs for r in maxwell_rows(v, k)]
    assert_reaches(pairs, rows, 1000, ERROR_CODES + EVENT_KINDS)
    assert {r["message_op"] for r in rows} >= {"INSERT", "UPDATE", "DELETE", "SNAPSHOT", "BOOTSTRAP-START", None}
    assert {r["primary_key_source"] for r in rows} >= {"none", "message", "ddl"}
    assert any(r["position_digits"] and len(r["position_digits"]) > 30 for r in rows)


@pytest.mark.spark
def test_spark_cdc_maxwell_rows_gives_the_oracles_rows_for_every_value():
    from harness import spark_session

    assert_oracle_rows(
        spark_session(), "cdc_maxwell_rows(c.v, c.k)", corpus(), "struct<v: binary, k: binary>", FIELDS, maxwell_rows
    )
