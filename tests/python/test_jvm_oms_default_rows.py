"""`cdc_oms_default_rows(dialect, value, source_tz)` (the per-record logic of stg_oms_default_json__changes
and stg_oms_default_ext_json__changes in one JVM function) against
tests/python/oms_default_rows_oracle.py, the pure-Python twin of the SQL it replaces (macros/oms.sql
and the two models as of commit f07d798, which that oracle was checked against value by value, with
the same corpus, through the old staging models).

For oms_default_json and oms_default_ext_json, every value of the corpus must give the oracle's
struct: one row (row_index 0), the same error code and detail for a quarantined value, and the same
decoded columns, maps with their keys in the same order (message_op null for a DDL record: the SQL
keeps cdc_ddl_op; key_image the map the SQL builds primary_key from). The corpus (`corpus` below) is
the JSON values of test_jvm_canal_rows (JSON reading: UTF-8, duplicates, depth, name length,
numbers), the spec examples, the bad-input corpus, the sample-data generator's messages and their
malformations (test_oms_default_json's workload) and values built to reach every branch of the SQL:
each check of `checked` in its order and near misses that pass (recordType of every kind and
shape, allMetaData of every wrong type, nested names, db / table_name, the images each record
type needs, the DDL statement in postStruct, prevStruct or neither, `__light_type` of every wrong
shape on either image, timestamps at and past 12 digits, storeDataSequence at and past 30 digits,
nested column values), db with and without a tenant under every dbType, key names and values
with `\\u0001` separators (empties, duplicates, more names than values and the reverse, key
columns in neither image), checkpoint and uniqueId, natural_id's text (nested metadata, escapes,
keys outside the BMP, lone surrogates), decoder errors in either image and both. Values with a
`__light_type` are also read in UTC.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from oms_default_rows_oracle import DIALECTS, FIELDS, oms_default_rows
from staged_rows_oracle import assert_oracle_rows, message_corpus
from test_jvm_canal_rows import dumps

SHANGHAI = "Asia/Shanghai"
ERROR_CODES = (
    "invalid_utf8", "invalid_json", "wrong_shape", "missing_field", "unknown_op", "invalid_timestamp", "invalid_value",
)  # fmt: skip
EVENT_KINDS = ("ROW", "DDL", "HEARTBEAT")
DROP = object()  # a field left out of a built message
DEFAULT = object()  # the builder's own image

META = {
    "checkpoint": "1700000000", "record_primary_key": "id", "source_identity": None, "record_primary_value": "1",
    "dbType": "OB_MYSQL", "storeDataSequence": "1700000000000001", "table_name": "orders", "db": "tenant.shop",
    "timestamp": "1700000000", "uniqueId": "tx-1",
}  # fmt: skip
TYPES = {"id": "INT", "note": "VARCHAR", "price": "DECIMAL", "at": "DATETIME", "ts": "TIMESTAMP"}
ROW = {"id": 1, "note": "a", "price": "9.50", "at": "2024-01-02 03:04:05", "ts": "1700000000.5"}


class Typed(dict):
    """An image of `typed`: oms_default_json sends it without its `__light_type` (`as_sent`)."""


def typed(image: Any, types: dict[str, Any] | None = None) -> Typed:
    """An image with its `__light_type` ({column: {"schemaType": T}}, TYPES' by default)."""
    declared = TYPES if types is None else types
    return Typed({**image, "__light_type": {c: {"schemaType": t} for c, t in declared.items()}})


def as_sent(document: Any, dialect: str) -> Any:
    """The built message as `dialect` sends it: for oms_default_json, `typed` images untyped."""
    if dialect == "oms_default_ext_json" or not isinstance(document, dict):
        return document
    untyped = dict(document)
    for name, image in document.items():
        if isinstance(image, Typed):
            untyped[name] = {k: v for k, v in image.items() if k != "__light_type"}
    return untyped


def meta(**fields: Any) -> dict[str, Any]:
    """META with `fields` replaced (DROP leaves a field out)."""
    return {k: v for k, v in {**META, **fields}.items() if v is not DROP}


def message(record_type: Any = "INSERT", **fields: Any) -> dict[str, Any]:
    """An INSERT of ROW (typed), `fields` replacing its parts (DROP leaves one out); `meta` a dict
    of allMetaData fields to replace."""
    base = {"allMetaData": meta(**fields.pop("meta", {})), "prevStruct": None, "recordType": record_type,
            "postStruct": typed(ROW)}  # fmt: skip
    return {k: v for k, v in {**base, **fields}.items() if v is not DROP}


def update(before: Any = DEFAULT, after: Any = DEFAULT, **fields: Any) -> dict[str, Any]:
    return message("UPDATE", prevStruct=typed(ROW) if before is DEFAULT else before,
                   postStruct=typed({**ROW, "note": "b"}) if after is DEFAULT else after, **fields)  # fmt: skip


def delete(before: Any = DEFAULT, **fields: Any) -> dict[str, Any]:
    return message("DELETE", prevStruct=typed(ROW) if before is DEFAULT else before, **{"postStruct": None, **fields})


def ddl(post: Any = DEFAULT, prev: Any = None, **fields: Any) -> dict[str, Any]:
    statement = {"ddl": "ALTER TABLE orders ADD c int"}
    return message("DDL", prevStruct=prev, postStruct=statement if post is DEFAULT else post, **fields)


def heartbeat(**fields: Any) -> dict[str, Any]:
    """A HEARTBEAT record; `allMetaData` a dict replaces its metadata (DROP leaves a field out)."""
    bare = {"checkpoint": "1700000000", "timestamp": "1700000000", "dbType": "OB_MYSQL"}
    record = {"allMetaData": bare, "prevStruct": None, "recordType": "HEARTBEAT", "postStruct": None, **fields}
    if isinstance(record["allMetaData"], dict):
        record["allMetaData"] = {k: v for k, v in record["allMetaData"].items() if v is not DROP}
    return {k: v for k, v in record.items() if v is not DROP}


# ---------------------------------------------------------------- the corpus
def check_cases() -> list[dict[str, Any]]:
    """Records failing each check of `checked`, in the SQL's order, and near misses that pass."""
    junk = ("x", 5, 1.50, True, [], [ROW], "{}", None, DROP)
    return [
        # recordType: present, then one of the six
        *(message(t) for t in (DROP, None, 5, 1.50, True, False, ["INSERT"], {"t": "INSERT"}, "insert", "", "INSERT ",
                               " ROW", "UPSERT", "SNAPSHOT", "Heartbeat", "ddl", "\ud800", "INSERT\x00", "é")),
        message(DROP, allMetaData=DROP), message("UPSERT", allMetaData="x"), message(5, postStruct=DROP),
        # allMetaData: present, an object
        *(message(allMetaData=v) for v in ("x", 5, [], [META], True, None, DROP, {}, "{}")),
        heartbeat(allMetaData={}), heartbeat(allMetaData=[]), heartbeat(allMetaData=None), ddl(allMetaData={}),
        # db, table_name: not nested (first db), then not empty for row records only
        *(message(meta={"db": v}) for v in ({}, {"t": "d"}, [], ["t"], 5, True, "", None, DROP, "d", "1.50")),
        *(message(meta={"table_name": v}) for v in ({}, [], ["t"], 5, False, "", None, DROP, "t\ud800")),
        message(meta={"db": [], "table_name": {}}), message(meta={"db": "", "table_name": []}),
        message(meta={"db": DROP, "table_name": DROP}), heartbeat(allMetaData={"db": []}),
        heartbeat(allMetaData={"table_name": {"a": 1}}), ddl(meta={"db": "", "table_name": ""}),
        ddl(meta={"db": DROP, "table_name": DROP}), heartbeat(allMetaData={"db": "", "table_name": None}),
        *(message(rt, meta={"db": ""}) for rt in ("UPDATE", "DELETE", "ROW")),
        # the images each record type needs: present, an object; the others anything
        *(update(before=v) for v in junk), *(update(after=v) for v in junk), *(delete(before=v) for v in junk),
        *(message("INSERT", postStruct=v) for v in junk), *(message("ROW", postStruct=v) for v in junk),
        *(message("INSERT", prevStruct=v) for v in junk), *(message("ROW", prevStruct=v) for v in junk),
        *(delete(postStruct=v) for v in junk), update(before=DROP, after=None), update(before=None, after=DROP), update(before="x", after="y"),
        update(before={}, after={}), delete(before={}), message(postStruct={}), message("ROW", postStruct={}),
        heartbeat(prevStruct="x", postStruct=[1]), heartbeat(prevStruct=ROW, postStruct=ROW),
        # DDL: a "ddl" in postStruct, else in prevStruct
        ddl(), ddl(post={"ddl": "create table t (a int)"}, prev={"ddl": "drop table t"}), ddl(post=None),
        ddl(post=None, prev={"ddl": "DROP TABLE t"}), ddl(post={}, prev={"ddl": "truncate table t"}),
        ddl(post="x", prev={"ddl": "rename table a to b"}), ddl(post={"ddl": None}, prev={"ddl": "create index i"}),
        ddl(post={"ddl": None}, prev={"ddl": None}), ddl(post={"ddl": None}), ddl(post=DROP, prev=DROP), ddl(post=DROP),
        ddl(post={}, prev=[]), ddl(post={"ddl": ""}), ddl(post={"ddl": "   "}), ddl(post={"ddl": 5}),
        ddl(post={"ddl": {"sql": "create table t"}}), ddl(post={"ddl": ["x"]}), ddl(post={"ddl": True}),
        ddl(post={"ddl": " /* c */ CREATE UNIQUE INDEX i ON t (a)", "x": {"nested": 1}}),
        ddl(post={"ddl": "alter table t add \ud800 int"}), ddl(post=[{"ddl": "x"}], prev="y"),
        ddl(post={"ddl": "create table t (a int)", "a": [1]}, prev={"b": {}}),
        ddl(post={"DDL": "create table t"}), ddl(post={"ddl": "x"}, meta={"record_primary_key": "a\x01b"}),
        # allMetaData.timestamp: 12 digits of epoch seconds at most
        *(message(meta={"timestamp": v}) for v in TIMESTAMPS), *(heartbeat(allMetaData={"timestamp": v}) for v in
                                                                 ("x", "1\n", 999999999999, None)),
        # allMetaData.storeDataSequence: 30 digits at most
        *(message(meta={"storeDataSequence": v}) for v in SEQUENCES),
        # nested column values of the images a record needs (not of the others)
        message(postStruct=typed({**ROW, "note": {"x": 1}})), message(postStruct=typed({"b": [], "a": {}, "c": "1"})),
        message(postStruct={"id": "1", "__light_type": {}, "z": [1]}), message("ROW", postStruct={"n": [None]}),
        update(before=typed({**ROW, "note": [1]})), update(after=typed({**ROW, "id": {}})),
        update(before={"a": {}}, after={"b": []}), delete(before={"x": {"y": {}}, "é": [], "😀": {}, "ｚ": []}),
        delete(before={"id": "1"}, postStruct={"a": {}}), message(prevStruct={"a": {}}),
        heartbeat(prevStruct={"a": {}}, postStruct={"b": []}), ddl(post={"ddl": "x", "v": {}}, prev={"w": []}),
        message(meta={"timestamp": "x"}, postStruct={"a": {}}), message(meta={"storeDataSequence": "-1"}, postStruct={"a": []}),
    ]  # fmt: skip


TIMESTAMPS = [
    DROP, None, "", "x", "1.5", 1.5, 1e3, -5, 0, "-0", "+1", " 1", "1 ", "1\n", "1\r\n", "1\r", "1\n\n", "\n1",
    "999999999999", "1000000000000", "-999999999999", "-1000000000000", "000000000001", "0000000000001", "--1",
    "١٧٠٠", "１７００", True, {"a": 1}, [1], "\ud800", 1700000000, "1700000000123", "1e3", "0x10", "-",
]  # fmt: skip
SEQUENCES = [
    DROP, None, "", "0", "00001", "9" * 30, "9" * 31, "1" + "0" * 30, "0" * 30, "0" * 31, "-1", "1.0", 1.5, 12, 0,
    "1\n", "1\r\n", " 1", "1 ", "x", True, {"a": 1}, [1], "١", "+1", "1e3", 123456789012345678901234567890,
]  # fmt: skip


def light_type_cases() -> list[dict[str, Any]]:
    """`__light_type` of every shape, on either image, on records that need it or not (plain Default
    JSON reads it as a column)."""
    wrong = ("VARCHAR", 5, [], ["VARCHAR"], True, "{}")
    entries = ("INT", 5, [], None, {}, {"schemaType": None}, {"schemaType": 5}, {"schemaType": ""},
               {"schemaType": True}, {"schemaType": {"a": 1}}, {"schemaType": [1]}, {"type": "INT"},
               {"schemaType": "INT", "x": 1}, {"schemaType": "\ud800"})  # fmt: skip
    light = "__light_type"
    return [
        *(message(postStruct={**ROW, light: v}) for v in wrong), message(postStruct={**ROW, light: None}),
        message(postStruct={**ROW, light: {}}), message(postStruct=ROW),
        *(message(postStruct={**ROW, light: {"id": e}}) for e in entries),
        *(update(before={**ROW, light: {"id": e}}) for e in entries[:6]),
        *(update(before={**ROW, light: v}) for v in wrong[:3]), update(before=ROW, after={**ROW, light: 5}),
        update(before={**ROW, light: 5}, after={**ROW, light: []}), delete(before={**ROW, light: {"id": "INT"}}),
        message(prevStruct={light: 5}), message(prevStruct={light: {"id": {}}}), message(prevStruct={light: {}}),
        delete(postStruct={light: [1]}), delete(postStruct={light: {"id": {"schemaType": "INT"}}}),
        heartbeat(postStruct={light: "x"}), heartbeat(prevStruct={light: {"a": 1}}), ddl(post={"ddl": "x", light: []}),
        ddl(post={"ddl": "x", light: {"a": {"schemaType": "INT"}}}), ddl(post=None, prev={"ddl": "x", light: 5}),
        message(postStruct={**ROW, light: 5}, meta={"timestamp": "x"}), message(meta={"db": ""}, postStruct={light: 5}),
        # declared types: columns without a value, values without a type, an undeclared type name
        message(postStruct=typed({"id": "2", "b": "x"}, {"id": "INT", "a": "DATE", "c": "FOO", "z": "int(11)"})),
        message(postStruct=typed({"a": None, "b": "1"}, {"a": "INT", "b": "decimal(10, 2)", "é": "BOOLEAN"})),
        message(postStruct=typed({"😀": "1", "ｚ": "2", "\ud800": "3"}, {"ｚ": "INT", "😀": "BIGINT", "\udfff": "INT"})),
        update(before=typed({"id": "1", "x": "1"}, {"x": "INT", "y": "DATE"}),
               after=typed({"id": "1", "y": "2024-01-02"}, {"y": "DATE", "x": "TINYINT"})),
        update(before=typed({"id": "1"}, {}), after={"id": "2"}), update(before={"id": "1"}, after=typed({"id": "2"}, {})),
        message(postStruct=typed({"__light_type2": "1", "id": "1"}, {"__light_type": "INT", "id": "INT"})),
        message(postStruct=typed({"t": "2024-03-10 02:30:00", "z": "2024-03-10 02:30:00"},
                                 {"t": "ZONED_DATETIME", "z": "DATETIME"})),
        message(postStruct=typed({"t": "1606233662.012345", "d": "2020-11-25 00:01:02"},
                                 {"t": "TIMESTAMP", "d": "DATE"})),
    ]  # fmt: skip


def tenant_cases() -> list[dict[str, Any]]:
    """db `{tenant}.{database}` under dbType OB_* / OCEANBASE* in any case; any other db as is."""
    types = ("OB_MYSQL", "ob_oracle", "Ob_x", "OB_", "OceanBase", "OCEANBASE_MYSQL", "oceanbase", "MYSQL", "ORACLE",
             "OB", "XOB_MYSQL", " OB_MYSQL", "oceanbaſe", "OCEANBAſE", "ÖB_", "İOB", "ΑΣ", "ẞ", "Ǆ", 5, True,
             {"t": 1}, None, DROP, "", "\ud800")  # fmt: skip
    dbs = ("t.d", "t.d.e", "d", ".d", "t.", "t..d", "t.\n", "t.\r", "t.\x85", "t.\u2028x", "t.\u2029", "t\n.d",
           "t.\td", "é.😀", "😀.é", "t .d", "..", "t.😀", "1.50", 150)  # fmt: skip
    return [
        *(message(meta={"dbType": t}) for t in types),
        *(message(meta={"db": d}) for d in dbs),
        *(message(meta={"db": d, "dbType": "MYSQL"}) for d in dbs[:4]),
        *(message(meta={"db": d, "dbType": DROP}) for d in dbs[:2]),
        ddl(meta={"db": "t.d", "dbType": "oceanbase"}), ddl(meta={"db": "", "dbType": "OB_MYSQL"}),
        heartbeat(allMetaData={"db": "t.d", "dbType": "OB_MYSQL"}), heartbeat(allMetaData={"db": "t.d"}),
    ]  # fmt: skip


def key_cases() -> list[dict[str, Any]]:
    """record_primary_key / record_primary_value: names and values split on \\u0001."""
    pairs = [
        ("id", "1"), ("id\x01note", "1\x01a"), ("k1\x01k2", "x\x01y"), ("", ""), ("\x01", "\x01"), ("id\x01id", "1\x012"),
        ("a\x01\x01b", "1\x012\x013"), ("a\x01b\x01c", "1\x012"), ("a\x01b", "1\x012\x013"), ("a\x01b", None),
        (None, "1"), (None, None), (DROP, DROP), ("a", DROP), ("a\x01", "1\x01"), ("\x01a", "\x011"), ("a\x01b", ""),
        ("b\x01a\x01b", "1\x012\x013"), ("id", ""), (5, 7), ("\ud800\x01\udfff", "1\x012"), ("😀\x01ｚ", "1\x012"),
        ({"a": 1}, ["x"]), ("a b\x01c", "1 2\x013"), ("id\x01missing", "9\x018"), ("note\x01id", "z\x019"),
    ]  # fmt: skip
    images = [
        ({**ROW, "note": None}, None), (None, ROW), ({"id": None}, {"id": "7"}), ({"id": "7"}, {"id": None}),
        ({"id": None, "note": None}, {}), ({}, {}),
    ]  # fmt: skip
    return [
        *(message(meta={"record_primary_key": k, "record_primary_value": v}) for k, v in pairs),
        *(delete(meta={"record_primary_key": k, "record_primary_value": v}) for k, v in pairs[:8]),
        *(update(typed(b) if b is not None else ROW, typed(a) if a is not None else ROW,
                 meta={"record_primary_key": "id\x01note\x01gone", "record_primary_value": "s1\x01s2\x01s3"})
          for b, a in images),
        message(postStruct=typed({"id": None}), meta={"record_primary_key": "id", "record_primary_value": DROP}),
        message(postStruct={**ROW, "id": None}, meta={"record_primary_value": "k"}),
        ddl(meta={"record_primary_key": "a\x01b", "record_primary_value": "1\x012"}),
        heartbeat(allMetaData={"record_primary_key": "a", "record_primary_value": "1"}),
        heartbeat(allMetaData={"record_primary_key": "a\x01a"}),
    ]  # fmt: skip


def field_cases() -> list[dict[str, Any]]:
    """checkpoint, uniqueId, the other fields natural_id hashes, names outside the BMP and lone surrogates."""
    wide = {"b": "2", "a": "x", "é": "3", "😀": "s", "ｚ": "4", "A": "n", "only": 1.50, "t": True, "n": None,
            "\ud800": "lone", "q": "\ud800\udfff", "ctl": "\x01\x1f\x7f\"\\/\u2028é😀", "e": ""}  # fmt: skip
    return [
        message(meta={"storeDataSequence": DROP}), message(meta={"storeDataSequence": DROP, "checkpoint": DROP}),
        message(meta={"storeDataSequence": None, "checkpoint": {"id": 1}}), message(meta={"checkpoint": 17}),
        message(meta={"storeDataSequence": DROP, "checkpoint": '{"id":"1"}'}), message(meta={"checkpoint": None}),
        *(message(meta={"uniqueId": v}) for v in (DROP, None, "", 12, True, {"x": [1, None]}, "u\ud800")),
        message(meta={"checkpoint": "other"}), message(meta={"source_identity": "7"}),
        message(meta={"extra": {"z": 1, "a": [1.50, None, {"\ud800": "x"}]}, "😀": "1", "ｚ": "2", "\ud800": "3"}),
        message(meta={"ctl\x01": "\x00\x08\x0c\n\r\t\x1f\x7f\"\\/<>&'\u2028\ufeff", "n": None, "b": False}),
        message(postStruct=typed(wide, {})), update(typed(wide, {}), typed({**wide, "b": "3"}, {})),
        delete(typed(wide, {})), message("ROW", postStruct=typed(wide, {})),
        message(postStruct={"id": "1"}), message(postStruct=wide), update(wide, {**wide, "n": "x"}),
        message(prevStruct="x"), message(prevStruct=5), message(prevStruct=True), message(prevStruct=[1, {"b": 1, "a": 2}]),
        message(prevStruct={"z": 1, "a": {"y": 2, "b": None}}), delete(postStruct="\ud800é"), delete(postStruct=10**400),
        heartbeat(), heartbeat(prevStruct="p", postStruct={"a": [1]}), heartbeat(allMetaData={}),
        heartbeat(allMetaData={"checkpoint": "1"}), heartbeat(allMetaData={"timestamp": DROP}),
        {"recordType": "HEARTBEAT", "allMetaData": {}}, {"recordType": "HEARTBEAT", "allMetaData": {}, "x": 1},
        dict([("recordType", "INSERT"), ("allMetaData", META), ("postStruct", ROW), ("\ud800", 1), ("\udfff", 2)]),
        {"recordType": "DDL", "allMetaData": {"db": "d"}, "postStruct": {"ddl": "create table t"}, "?": 1, "\ud800": 2},
        message(meta={"table_name": "😀ｚ", "db": "t.\ud800"}), message(postStruct=typed({"id": "1", "\ud800": "2"}, {})),
    ]  # fmt: skip


def crash_cases() -> list[Any]:
    """Values the old SQL cannot stage (its build fails): keys that collide once Spark stores them
    below the top level, and digits with a final terminator the cast refuses (oracle docstring)."""
    return [
        message(postStruct=dict([("\ud800", "1"), ("\udfff", "2")])), message(meta={"\ud800": 1, "?": 2}),
        message(prevStruct={"a": [dict([("\ud800", 1), ("\udbff", 2)])]}), heartbeat(x=dict([("\udc00", 1), ("\udfff", 1)])),
        *(message(meta={"timestamp": f"1{t}"}) for t in ("\x85", "\u2028", "\u2029")),
        *(message(meta={"storeDataSequence": f"1{t}"}) for t in ("\x85", "\u2028", "\u2029")),
        message("UPSERT", meta={"timestamp": "1\u2028"}), message(meta={"timestamp": "1\u2028", "db": ""}),
        heartbeat(allMetaData={"storeDataSequence": "7\u2029"}),
        [dict([("\ud800", 1), ("\udfff", 2)])],  # in a top-level array: not rebuilt, so only wrong_shape
    ]  # fmt: skip


def decoder_error_cases() -> list[dict[str, Any]]:
    """Images the value decoder refuses (oms_default_ext_json): before first."""
    return [
        message(postStruct=typed({**ROW, "id": "x"})), message(postStruct=typed({**ROW, "price": "abc"})),
        message(postStruct=typed({**ROW, "at": "2024-13-40 00:00:00"})), message("ROW", postStruct=typed({"id": "1.5"})),
        update(before=typed({**ROW, "id": "y"})), update(after=typed({**ROW, "note": "b", "ts": "z"})),
        update(before=typed({**ROW, "id": "q"}), after=typed({**ROW, "id": "r"})),
        delete(before=typed({**ROW, "at": "0000-00-00 00:00:00"})), delete(before=typed({"id": "1"}), postStruct={"id": "x"}),
        message(postStruct=typed({"\ud800": "x"}, {"\ud800": "INT"})), message(postStruct=typed({"é": "x"}, {"é": "DATE"})),
        message(postStruct=typed({"a": "1"}, {"a": "decimal(1000,2000)"})),
        message(postStruct=typed({"a": "not base64!"}, {"a": "BLOB"})), message(prevStruct=typed({"id": "x"})),
    ]  # fmt: skip


def built_cases() -> list[dict[str, Any]]:
    return (check_cases() + light_type_cases() + tenant_cases() + key_cases() + field_cases() + crash_cases()
            + decoder_error_cases())  # fmt: skip


def corpus(dialect: str) -> list[bytes | None]:
    """Every value the test reads for `dialect` (module docstring), each once, a tombstone first."""
    built = [*(dumps(as_sent(c, dialect)) for c in built_cases()), dumps([message()]), dumps([]), dumps("INSERT")]
    return message_corpus(dialect, built, [(160, 20240101, random.Random(7))])  # test_oms_default_json's workload


def test_corpus_reaches_every_error_code_and_event_kind():
    for dialect in DIALECTS:
        values = corpus(dialect)
        rows = [r for v in values for r in oms_default_rows(dialect, v, SHANGHAI)]
        assert len(values) >= 500, (dialect, len(values))
        reached = {r["error_code"] for r in rows} | {r["event_kind"] for r in rows}
        assert reached >= set(ERROR_CODES) | set(EVENT_KINDS), (dialect, set(ERROR_CODES) | set(EVENT_KINDS) - reached)
        assert all(len(oms_default_rows(dialect, v, SHANGHAI)) == 1 for v in values)


@pytest.mark.spark
def test_spark_cdc_oms_default_rows_gives_the_oracles_rows_for_every_value():
    from harness import spark_session

    cases = []
    for dialect in DIALECTS:
        values = corpus(dialect)
        cases += [(dialect, v, SHANGHAI) for v in values]
        zoned = [v for v in values if v is not None and b"schemaType" in v][:30]  # a source zone matters
        cases += [(dialect, v, "UTC") for v in zoned]
    assert_oracle_rows(
        spark_session(), "cdc_oms_default_rows(c.d, c.v, c.tz)", cases, "struct<d: string, v: binary, tz: string>",
        FIELDS, oms_default_rows,
    )  # fmt: skip
