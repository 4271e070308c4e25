"""Pure-Python twin of the Canal FlatMessage staging SQL as of commit 4c78c86 (macros/canal.sql
`canal_checked_messages` + `canal_staged_rows` over `cdc_canal_value`, src/cdc_unify/java): the
oracle of `cdc_canal_rows` (tests/python/test_jvm_canal_rows.py).

    canal_rows(dialect, value, source_tz) -> [ {FIELDS...}, ... ]

One dict per staged row of the landed value, the columns of the SQL's CTE `keyed` under the names
of FIELDS: maps as dicts in the SQL's key order, timestamps as microseconds since the epoch. A
tombstone (value None) is one row, row_index 0, all else None; a quarantined value is one row,
row_index 0, with error_code / error_detail only. JSON is read as ExactJson.java reads it (strict
UTF-8, one RFC 8259 value, no key twice, numbers as their exact text, keys in code point order,
nested values rendered as Jackson writes them with numbers as strings); row images go through the
dialect's Python value decoder (cdc_unify.canonicalizers, the definition).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from cdc_unify.canonical import CanonicalError
from cdc_unify.canonicalizers import canonicalizer_for

FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "op", "database_name", "table_name",
    "primary_key_columns", "before", "after", "before_is_partial", "after_is_partial", "column_source_types",
    "column_types", "event_ts_micros", "event_ts_precision", "emitted_ts_micros", "transaction_id", "ddl_statement",
)  # fmt: skip

ABSENT = object()  # a field the object does not have (JSON null is None)
# Jackson's StreamReadConstraints defaults that ExactJson keeps (it lifts only the number length).
MAX_DEPTH = 1000
MAX_NAME_LENGTH = 50_000
BIGINT_MAX = 2**63 - 1

DDL_TYPES = ("CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX")
TRANSACTION_TYPES = ("GTID", "XACOMMIT", "XAROLLBACK", "TRANSACTIONBEGIN", "TRANSACTIONEND")
OPS = {"ERASE": "DROP", "CINDEX": "CREATE_INDEX", "DINDEX": "DROP_INDEX"}
# canal_epoch_unit: digit counts, and how each unit becomes microseconds
EPOCH_UNITS = (("s", 1, 11), ("ms", 12, 14), ("us", 15, 17), ("ns", 18, 19))
TO_MICROS = {"s": lambda n: n * 1_000_000, "ms": lambda n: n * 1000, "us": lambda n: n, "ns": lambda n: n // 1000}
# Java's `$` (no MULTILINE) also matches before one final line terminator.
JAVA_END = r"(?:\r\n|[\n\r\x85\u2028\u2029])?"


class Num(str):
    """A JSON number: its text as sent."""

    __slots__ = ()


# ---------------------------------------------------------------- JSON as ExactJson reads it
def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    if any(len(k.encode("utf-16-le", "surrogatepass")) // 2 > MAX_NAME_LENGTH for k in keys):
        raise ValueError("name too long")  # Jackson counts UTF-16 units
    return dict(sorted(pairs))  # code point order = UTF-8 byte order


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=Num, parse_float=Num, parse_constant=_refuse)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _depth(text: str) -> int:
    """Deepest nesting of brackets outside strings (only exact for a text that is JSON)."""
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", _STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def parse(text: str) -> Any:
    """The JSON value the text is; ABSENT when it is not exactly one (Jackson's rules)."""
    if text.startswith("\ufeff") or _depth(text) > MAX_DEPTH:
        return ABSENT
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 500))  # the C scanner recurses once per level
    try:
        return _DECODER.decode(text)
    except ValueError:
        return ABSENT
    finally:
        sys.setrecursionlimit(limit)


def spark_str(text: str | None) -> str | None:
    """A Java string as Spark stores it: String.getBytes(UTF_8) writes each lone surrogate as '?'."""
    if text is None:
        return None
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\f": "\\f", "\n": "\\n", "\r": "\\r"}


def _quoted(text: str) -> str:
    # Jackson escapes only '"', '\' and control characters (\uXXXX in upper-case hex), nothing else
    escaped = re.sub(r'["\\\x00-\x1f]', lambda m: _SHORT_ESCAPES.get(m[0], f"\\u{ord(m[0]):04X}"), text)
    return f'"{escaped}"'


def _jackson(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{_quoted(k)}:{_jackson(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_jackson(v) for v in value) + "]"
    if isinstance(value, str):  # Num too: written as a string
        return _quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null"


def present(value: Any) -> bool:
    return value is not ABSENT and value is not None


def nested(value: Any) -> bool:
    return isinstance(value, dict | list)


def text(value: Any) -> str | None:
    """ExactJson.text: a scalar's text, a nested value's JSON, None for null or absent."""
    if not present(value):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return spark_str(value if isinstance(value, str) else _jackson(value))


def text_map(value: Any) -> dict[str, str | None] | None:
    if not isinstance(value, dict):
        return None
    return {spark_str(k): text(v) for k, v in value.items()}


def text_array(value: Any) -> list[str | None] | None:
    return [text(v) for v in value] if isinstance(value, list) else None


def text_maps(value: Any) -> list[dict | None] | None:
    return [text_map(v) for v in value] if isinstance(value, list) else None


def nested_columns(value: Any) -> str:
    """ExactJson.nestedColumns: each object row's nested columns joined by ', ', rows by ''."""
    rows = value if isinstance(value, list) else []
    return "".join(", ".join(spark_str(k) for k, v in r.items() if nested(v)) for r in rows if isinstance(r, dict))


def at(value: Any, *path: str) -> Any:
    for name in path:
        value = value.get(name, ABSENT) if isinstance(value, dict) else ABSENT
    return value


# ---------------------------------------------------------------- Spark's functions as the SQL uses them
def epoch_unit(digits: str | None) -> str | None:
    """canal_epoch_unit: `rlike '^[0-9]{m,n}$'` is a Java find."""
    if digits is None:
        return None
    return next((u for u, lo, hi in EPOCH_UNITS if re.fullmatch(f"[0-9]{{{lo},{hi}}}{JAVA_END}", digits)), None)


def try_bigint(digits: str) -> int | None:
    """try_cast(text as bigint) of a text epoch_unit accepted: Spark trims only characters <= ' '."""
    if digits[-1] in "\x85\u2028\u2029":
        return None
    number = int(digits.rstrip("\r\n"))
    return number if number <= BIGINT_MAX else None


def epoch_micros(digits: str | None, unit: str | None) -> int | None:
    """canal_epoch_timestamp as microseconds since the epoch."""
    number = try_bigint(digits) if unit else None
    return None if number is None else TO_MICROS[unit](number)


def map_union(first: dict | None, second: dict | None) -> dict:
    """cdc_map_union: first's keys not in second, then second's."""
    first, second = first or {}, second or {}
    return {**{k: v for k, v in first.items() if k not in second}, **second}


def distinct_names(names: list[str | None]) -> list[str]:
    """array_distinct(filter(names, name -> coalesce(name, '') != ''))."""
    return list(dict.fromkeys(n for n in names if n))


# ---------------------------------------------------------------- canal_checked_messages
def _lower(value: str | None) -> str | None:
    # only ever compared with 'false', which no non-ASCII letter lowers to in Java or Python
    return None if value is None else value.lower()


HAS_FIELDS = (
    ("data", "data"), ("old", "old"), ("pk_names", "pkNames"), ("mysql_type", "mysqlType"),
    ("sql_type", "sqlType"), ("table_changes", "tableChanges"),
)  # fmt: skip


def read_message(obj: dict[str, Any]) -> dict[str, Any]:
    """cdc_canal_value's message struct, under the SQL's column names."""
    get = obj.get
    data, old, changes = get("data", ABSENT), get("old", ABSENT), get("tableChanges", ABSENT)
    return {
        "type_present": present(get("type", ABSENT)),
        "canal_type": text(get("type", ABSENT)),
        "is_ddl_text": _lower(text(get("isDdl", ABSENT))),
        "database_text": text(get("database", ABSENT)),
        "table_text": text(get("table", ABSENT)),
        "nested_name": next((n for n in ("database", "table") if nested(get(n, ABSENT))), None),
        "sql_text": text(get("sql", ABSENT)),
        "gtid_text": text(get("gtid", ABSENT)),
        "es_text": text(get("es", ABSENT)),
        "ts_text": text(get("ts", ABSENT)),
        **{f"has_{n}": present(get(f, ABSENT)) for n, f in HAS_FIELDS},
        "data_rows": text_maps(data),
        "data_nested": nested_columns(data),
        "old_rows": text_maps(old),
        "old_nested": nested_columns(old),
        "pk_names": text_array(get("pkNames", ABSENT)),
        "mysql_types": text_map(get("mysqlType", ABSENT)),
        "sql_types": text_map(get("sqlType", ABSENT)),
        "table_change_columns": text_maps(at(changes, "table", "columns")),
        "table_change_keys": text_array(at(changes, "table", "primaryKeyColumnNames")),
    }


def classify(m: dict[str, Any]) -> None:
    """The `classified` and `timed` CTEs: event kind, op, epoch units and times."""
    t = m["canal_type"]
    if t in ("INSERT", "UPDATE", "DELETE"):
        kind = "ROW"
    elif t == "QUERY" and m["is_ddl_text"] == "false":
        kind = "OTHER"
    elif t in DDL_TYPES:
        kind = "DDL"
    elif t in TRANSACTION_TYPES:
        kind = "TRANSACTION"
    else:
        kind = "HEARTBEAT" if t in ("MHEARTBEAT", "HEARTBEAT") else None
    m["event_kind"], m["op"] = kind, OPS.get(t, t)
    for name in ("es", "ts"):
        m[f"{name}_unit"] = epoch_unit(m[f"{name}_text"])
        m[f"{name}_micros"] = epoch_micros(m[f"{name}_text"], m[f"{name}_unit"])


def _has_null_row(rows: list | None) -> bool:
    return rows is None or any(r is None for r in rows)


def message_error(m: dict[str, Any] | None) -> tuple[str, str] | None:
    """message_checked: the message's first error (code, detail), in the SQL's order."""
    if m is None:
        return "wrong_shape", "the element is not a JSON object"
    t, kind, row, update = m["canal_type"], m["event_kind"], m["event_kind"] == "ROW", m["canal_type"] == "UPDATE"
    data, old = m["data_rows"], m["old_rows"]
    checks = (
        (lambda: not m["type_present"], "missing_field", lambda: "type is missing"),
        (lambda: kind is None, "unknown_op", lambda: f"type {t} is not a Canal EventType"),
        (lambda: m["nested_name"], "wrong_shape", lambda: f"{m['nested_name']} is a JSON object/array, not a name"),
        (lambda: row and not m["database_text"], "missing_field", lambda: "database is missing"),
        (lambda: row and not m["table_text"], "missing_field", lambda: "table is missing"),
        (lambda: row and not m["has_data"], "missing_field", lambda: f"data is missing for {t}"),
        (lambda: row and _has_null_row(data), "wrong_shape", lambda: "data is not an array of row objects"),
        (lambda: row and not data, "missing_field", lambda: f"data holds no row for {t}"),
        (lambda: update and m["has_old"] and _has_null_row(old), "wrong_shape",
         lambda: "old is not an array of row objects"),
        # size(null) is null (ANSI), so an absent old never fails here
        (lambda: update and old is not None and data is not None and len(old) > len(data), "wrong_shape",
         lambda: f"old holds {len(old)} rows but data only {len(data)}"),
        (lambda: m["has_pk_names"] and m["pk_names"] is None, "wrong_shape", lambda: "pkNames is not an array of names"),
        (lambda: m["has_mysql_type"] and m["mysql_types"] is None, "wrong_shape", lambda: "mysqlType is not an object"),
        (lambda: m["has_sql_type"] and m["sql_types"] is None, "wrong_shape", lambda: "sqlType is not an object"),
        (lambda: m["has_table_changes"] and m["table_change_columns"] is None, "wrong_shape",
         lambda: "tableChanges.table.columns is not an array of column objects"),
        (lambda: kind == "DDL" and m["sql_text"] is None, "missing_field", lambda: f"sql is missing for DDL type {t}"),
        (lambda: kind in ("ROW", "DDL") and m["es_text"] is None, "missing_field",
         lambda: "es (execution time) is missing"),
        (lambda: m["es_text"] is not None and m["es_micros"] is None, "invalid_timestamp",
         lambda: f"es {m['es_text']} is not epoch seconds/milliseconds"),
        (lambda: m["ts_text"] is not None and m["ts_micros"] is None, "invalid_timestamp",
         lambda: f"ts {m['ts_text']} is not epoch seconds/milliseconds"),
        (lambda: row and m["data_nested"], "invalid_value",
         lambda: f"data values are JSON objects/arrays, not column values: {m['data_nested']}"),
        (lambda: update and m["old_nested"], "invalid_value",
         lambda: f"old values are JSON objects/arrays, not column values: {m['old_nested']}"),
    )  # fmt: skip
    return next(((code, detail()) for failed, code, detail in checks if failed()), None)


def read_value(value: bytes) -> tuple[str, str] | tuple[bool, list[dict | None]]:
    """value_checked + messages: (error_code, detail) of the value, else (is_array, messages)."""
    try:
        decoded = value.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8", "the value is not valid UTF-8"
    document = parse(decoded)
    if document is ABSENT:
        return "invalid_json", "the value is not valid JSON (RFC 8259; duplicate keys are rejected too)"
    if not isinstance(document, dict | list):
        return "wrong_shape", "the JSON value is neither a FlatMessage object nor an array of them"
    if document == []:
        return "wrong_shape", "the JSON array holds no FlatMessage"
    elements = document if isinstance(document, list) else [document]
    return isinstance(document, list), [read_message(e) if isinstance(e, dict) else None for e in elements]


# ---------------------------------------------------------------- canal_staged_rows
def row_images(m: dict[str, Any]) -> list[tuple[dict | None, dict | None]]:
    """row_images: data[i] with old[i] (UPDATE only; get() of a shorter old is null); one empty row
    for any other message."""
    if m["event_kind"] != "ROW":
        return [(None, None)]
    old = m["old_rows"] if m["canal_type"] == "UPDATE" else None
    return [(d, old[i] if old is not None and i < len(old) else None) for i, d in enumerate(m["data_rows"])]


def source_types(m: dict[str, Any]) -> tuple[dict, dict | None]:
    """images: the row's declared types (sqlType codes as jdbc:<code>, mysqlType winning) and a
    DDL's tableChanges types (name -> typeExpression, typeName or jdbc:<jdbcType>; a repeated name
    moves to the end with its last type)."""
    sql_types = {k: None if v is None else f"jdbc:{v}" for k, v in (m["sql_types"] or {}).items()}
    mysql_types = {k: v for k, v in (m["mysql_types"] or {}).items() if v is not None}
    ddl = None
    if m["event_kind"] == "DDL" and m["table_change_columns"] is not None:
        ddl = {}
        for col in m["table_change_columns"]:
            name = (col or {}).get("name")
            if name is not None:
                jdbc = col.get("jdbcType")
                ddl.pop(name, None)
                ddl[name] = _first(
                    col.get("typeExpression"), col.get("typeName"), None if jdbc is None else f"jdbc:{jdbc}"
                )
    return map_union(sql_types, mysql_types), ddl


def _first(*values: str | None) -> str | None:
    return next((v for v in values if v is not None), None)


def decode(
    dialect: str, values: dict | None, types: dict | None, tz: str
) -> tuple[dict | None, dict | None, str | None]:
    """cdc_canonical_image: (values, types, error), all None for a null image."""
    if values is None:
        return None, None, None
    try:
        canonical, logical = canonicalizer_for(dialect)(values, types or {}, tz)
    except CanonicalError as error:
        return None, None, str(error)
    return canonical, logical, None


def _row(row_index: int, **fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": row_index}


def decoded_row(dialect: str, m: dict[str, Any], data: dict | None, old: dict | None, tz: str) -> dict[str, Any]:
    """canonical + decoded: one staged row of a message of a value without errors; its decoder
    error, if any, under the key `image_error` as (before error, after error)."""
    kind, t = m["event_kind"], m["canal_type"]
    row_types, ddl_types = source_types(m)
    row = kind == "ROW"
    before_values = map_union(data, old) if t == "UPDATE" else data if t == "DELETE" else None
    after_values = data if t in ("INSERT", "UPDATE") else {} if ddl_types is not None else None
    before = decode(dialect, before_values if row else None, row_types, tz)
    after = decode(dialect, after_values, ddl_types if ddl_types is not None else row_types, tz)
    if row:
        keys = distinct_names(m["pk_names"] or [])
    else:
        keys = distinct_names(m["table_change_keys"]) if kind == "DDL" and m["table_change_keys"] is not None else []
    return {
        "event_kind": kind,
        "op": m["op"],
        "database_name": m["database_text"] or None,
        "table_name": m["table_text"] or None,
        "primary_key_columns": keys,
        "before": before[0] if row else None,
        "after": after[0] if row else None,
        "before_is_partial": False if row and before[0] is not None else None,
        "after_is_partial": False if row and after[0] is not None else None,
        "column_source_types": row_types if row else ddl_types if kind == "DDL" else None,
        "column_types": map_union(before[1], after[1]) if row else after[1] if ddl_types is not None else None,
        "event_ts_micros": m["es_micros"],
        "event_ts_precision": m["es_unit"],
        "emitted_ts_micros": m["ts_micros"],
        "transaction_id": m["gtid_text"] or None,
        "ddl_statement": m["sql_text"] if kind == "DDL" else None,
        "image_error": (before[2], after[2]),
    }


def canal_rows(dialect: str, value: bytes | None, source_tz: str) -> list[dict[str, Any]]:
    """The staged rows of one landed value, as the SQL's `keyed` CTE has them (module docstring)."""
    if value is None:
        return [_row(0)]
    read = read_value(value)
    if isinstance(read[0], str):
        return [_row(0, error_code=read[0], error_detail=read[1])]
    is_array, messages = read
    for i, m in enumerate(messages):
        if m is not None:
            classify(m)
        error = message_error(m)
        if error:
            return [_row(0, error_code=error[0], error_detail=f"message {i}: {error[1]}" if is_array else error[1])]
    rows = []
    for i, m in enumerate(messages):
        for r, (data, old) in enumerate(row_images(m)):
            decoded = decoded_row(dialect, m, data, old, source_tz)
            before_error, after_error = decoded.pop("image_error")
            if before_error is not None or after_error is not None:
                where = [f"message {i}"] if is_array else []
                where += [f"row {r}"] + [
                    f"{side}: {e}" for side, e in (("before", before_error), ("after", after_error)) if e is not None
                ]
                return [_row(0, error_code="invalid_value", error_detail="; ".join(where))]
            rows.append(_row(len(rows), **decoded))
    return rows
