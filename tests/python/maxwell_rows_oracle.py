"""Pure-Python twin of the Maxwell's daemon JSON staging SQL as of commit 823a733
(models/staging/maxwell_json/stg_maxwell_json__changes.sql over macros/maxwell.sql, the macros of
macros/staging.sql and `cdc_exact_variant`): the oracle of `cdc_maxwell_rows`
(tests/python/test_jvm_maxwell_rows.py).

    maxwell_rows(value, key) -> [ {FIELDS...} ]

One dict for the one staged row of the landed value (row_index 0), the columns of the SQL's CTE
`decoded` under the names of FIELDS: maps as dicts in the SQL's key order, event_ts as microseconds
since the epoch, position_number as its digits. A tombstone (value None) is row_index 0, all else
None; a quarantined value is row_index 0 with error_code / error_detail only. `message_op` is the
SQL's op of a row (row_op) or bootstrap marker (upper(type)) and None for a DDL (the SQL classifies
its statement with cdc_ddl_op). `natural_id` (sha2 of the value) and `primary_key` (cdc_primary_key
of primary_key_columns over before / after) are left to the SQL.

The value is read as cdc_exact_variant and the SQL read it (oms_default_rows_oracle.spark_document:
numbers as strings of their exact digits, strings and keys as Spark stores them, a lone surrogate as
'?', every object below the top level sorted by UTF-16 code units of those keys: `data` and `old`,
so both images are in that order). Reading rules of the SQL:
- `type` is lower-cased (Java's toLowerCase); database, table, ts, xid, xoffset, position, gtid and
  sql are the text of any JSON scalar; `type`, `database` or `table` nested is wrong_shape.
- ts `rlike '^-?[0-9]{1,15}$'` and xoffset `'^[0-9]{1,9}$'` are Java finds (`$` also before one final
  line terminator), then an ANSI cast, which trims \\n and \\r; position `'^(.*):([0-9]{1,18})$'`
  (`.` no line terminator, the last colon followed by 1-18 ASCII digits), its file index the
  trailing digits of what precedes the colon (try_cast to bigint: null past 2^63-1, and then the
  position_number is null). position_number = (file index * 2^32 + offset) * 10^9 + xoffset, or
  999999999 without xoffset: decimal(38, 0) in the SQL, never cast to decimal(30, 0); only the
  staged `sequence` writes it, with lpad(.., 30), which cuts a longer number to its first 30 digits.
- update: before = data's columns that `old` does not name (data's order), then old's (map_concat);
  delete: before = data; insert, update, bootstrap-insert: after = data. `old` must be an object
  whenever present (any row type), and may name only columns of data (any row type).
- key columns: primary_key_columns of the value (any array: each element's text) when present,
  else for a row the Kafka key's names, else for table-* DDL def["primary-key"]. The Kafka key
  (landing column `key`, cast to string: invalid UTF-8 as U+FFFD) is read when it starts (after
  ASCII blanks, Java's \\s) with `{`: from_json(.., 'map<string,string>') of its first JSON value
  (Spark's JSON options: single-quoted strings and NaN / Infinity / -Infinity allowed, what follows
  the first value ignored, duplicate names kept, text order), each name starting with `pk.` less
  that prefix; or with `[`: try_parse_json (strict JSON, what follows ignored, a repeated name
  makes it null), $[2] as array<map<string, variant>>, the first name (UTF-16 order) of each element
  (null for an element that is not an object). Each name is matched to data's first column (its
  order) equal to it lower-cased; a key without names (`_uuid`) names no column.
- embedded JSON values (an object or array in an image): no longer as the SQL had them (to_json
  of try_parse_json of the value as sent, which rounded a number past 38 digits to a double, wrote
  1E400 as "Infinity" and refused a message holding a number of more than 1000 characters) but
  compact JSON with every number's text as sent; keys sorted (UTF-16) and a lone surrogate '?' as
  the variant had them, Jackson's escapes.

Where the old SQL fails the whole build instead of staging a row, the oracle quarantines the value
(module `build_failure` names each case):
- an object below the top level with two keys that are one key once Spark stores them
  (VARIANT_DUPLICATE_KEY): here `invalid_json`, as oms_default_rows_oracle does;
- ts / xoffset digits ending in U+0085, U+2028 or U+2029 (the `rlike` lets them through, the ANSI
  cast refuses them), and a row's or bootstrap marker's ts of more than 9223372036854 seconds
  either way (timestamp_seconds overflows): here not a valid ts / xoffset, at that check's place;
- a row message keyed by its Kafka key (no primary_key_columns) whose key names a column that
  data does not have (element_at of an empty array), or whose array form holds an element that is
  `{}` (map_keys(pk)[0]) or not an object: here, after every check of the SQL,
  `invalid_value` "the Kafka key names key columns that data does not have: <names>" (the key's
  names as matched; a nameless element as 'null').
"""

from __future__ import annotations

import json
import re
from typing import Any

from canal_rows_oracle import ABSENT, JAVA_END, _quoted, map_union, nested, parse, present, spark_str, text
from oms_default_rows_oracle import INVALID_JSON, INVALID_UTF8, DuplicateKey, _digits, _utf16, spark_document

FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "message_op", "database_name", "table_name",
    "primary_key_columns", "primary_key_source", "before", "after", "before_is_partial", "after_is_partial",
    "column_types", "event_ts_micros", "event_ts_precision", "source_position", "transaction_id", "position_digits",
    "ddl_statement",
)  # fmt: skip
ROW_OPS = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "bootstrap-insert": "SNAPSHOT"}
DDL_TYPES = ("table-create", "table-alter", "table-drop", "database-create", "database-alter", "database-drop")
MARKERS = ("bootstrap-start", "bootstrap-complete")
NAME_FIELDS = ("type", "database", "table")
BIGINT_MAX = 2**63 - 1
# timestamp_seconds(n) multiplies by 10^6 exactly: past this it overflows (the build fails).
MAX_SECONDS = BIGINT_MAX // 1_000_000
_JAVA_DOT = r"[^\n\r\x85\u2028\u2029]"
POSITION = re.compile(f"({_JAVA_DOT}*):([0-9]{{1,18}}){JAVA_END}")
_BLANKS = " \t\n\x0b\x0c\r"  # Java's \s
KEY_NAMES_MISSING = "the Kafka key names key columns that data does not have: "


# ---------------------------------------------------------------- the Kafka key
class _Lenient:
    """from_json's reading of a JSON value (Jackson under Spark's JSONOptions): the object's names in
    text order (repeats kept), or ValueError."""

    def __init__(self, source: str) -> None:
        self.s, self.i = source, 0

    def blank(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\n\r":
            self.i += 1

    def top_names(self) -> list[str]:
        self.blank()
        if self.s[self.i : self.i + 1] != "{":
            raise ValueError("not an object")
        return self.object()

    def object(self) -> list[str]:
        self.i += 1
        names: list[str] = []
        self.blank()
        if self.s[self.i : self.i + 1] == "}":
            self.i += 1
            return names
        while True:
            self.blank()
            if self.s[self.i : self.i + 1] not in ('"', "'"):
                raise ValueError("name")
            names.append(self.string())
            self.blank()
            self.expect(":")
            self.value()
            self.blank()
            if self.s[self.i : self.i + 1] == ",":
                self.i += 1
                continue
            self.expect("}")
            return names

    def expect(self, char: str) -> None:
        if self.s[self.i : self.i + 1] != char:
            raise ValueError(char)
        self.i += 1

    def string(self) -> str:
        quote = self.s[self.i]
        self.i += 1
        out = []
        while True:
            if self.i >= len(self.s):
                raise ValueError("end")
            c = self.s[self.i]
            if c == quote:
                self.i += 1
                return "".join(out)
            if c < " ":
                raise ValueError("control")
            if c == "\\":
                e = self.s[self.i + 1 : self.i + 2]
                if e == "u":
                    hexa = self.s[self.i + 2 : self.i + 6]
                    if not re.fullmatch("[0-9a-fA-F]{4}", hexa):
                        raise ValueError("escape")
                    out.append(chr(int(hexa, 16)))
                    self.i += 6
                    continue
                short = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
                if e not in short:
                    raise ValueError("escape")
                out.append(short[e])
                self.i += 2
                continue
            out.append(c)
            self.i += 1

    def value(self) -> None:
        self.blank()
        c = self.s[self.i : self.i + 1]
        if c == "{":
            self.object()
        elif c == "[":
            self.i += 1
            self.blank()
            if self.s[self.i : self.i + 1] == "]":
                self.i += 1
                return
            while True:
                self.value()
                self.blank()
                if self.s[self.i : self.i + 1] == ",":
                    self.i += 1
                    continue
                self.expect("]")
                return
        elif c in ('"', "'"):
            self.string()
        else:
            word = re.match(r"true|false|null|NaN|-?Infinity|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?",
                            self.s[self.i :])  # fmt: skip
            if not word:
                raise ValueError("value")
            self.i += word.end()
            if self.s[self.i : self.i + 1].isalnum() or self.s[self.i : self.i + 1] in (".", "-", "+"):
                raise ValueError("token")


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({k for k, _ in pairs}) != len(pairs):
        raise ValueError("duplicate key")
    return dict(pairs)


def _refuse(name: str) -> Any:
    raise ValueError(name)


_STRICT = json.JSONDecoder(object_pairs_hook=_no_repeats, parse_constant=_refuse)


def kafka_key_names(key: bytes | None) -> list[str | None] | None:
    """keyed_by_kafka's kafka_key_names (module docstring); an element {} is `{}` (the SQL fails)."""
    if key is None:
        return None
    key_text = key.decode("utf-8", "replace")
    head = key_text.lstrip(_BLANKS)[:1]
    if head == "{":
        try:
            names = _Lenient(key_text).top_names()
        except (ValueError, IndexError):
            return None
        return [spark_str(n)[3:] for n in names if spark_str(n).startswith("pk.")]
    if head == "[":
        at = len(key_text) - len(key_text.lstrip(" \t\n\r"))
        try:
            document, _ = _STRICT.raw_decode(key_text, at)
        except (ValueError, RecursionError):
            return None
        keys = document[2] if isinstance(document, list) and len(document) > 2 else None
        if not isinstance(keys, list):
            return None
        return [_first_name(k) for k in keys]
    return None


def _first_name(element: Any) -> Any:
    if not isinstance(element, dict):
        return None
    if not element:
        return {}
    return min((spark_str(k) for k in element), key=_utf16)


# ---------------------------------------------------------------- embedded JSON
def embedded_json(value: Any) -> str:
    """An embedded JSON value as cdc_maxwell_rows writes it (module docstring)."""
    if isinstance(value, dict):
        entries = sorted(((spark_str(k), v) for k, v in value.items()), key=lambda e: _utf16(e[0]))
        return "{" + ",".join(f"{_quoted(k)}:{embedded_json(v)}" for k, v in entries) + "}"
    if isinstance(value, list):
        return "[" + ",".join(embedded_json(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if type(value).__name__ == "Num":
        return str(value)
    return _quoted(spark_str(value))


# ---------------------------------------------------------------- message_fields .. checked
def string_array(value: Any) -> list[str | None] | None:
    """try_variant_get(value, '$', 'array<string>'): each element's text, objects and arrays as JSON."""
    return [text(v) for v in value] if isinstance(value, list) else None


def _object(value: Any) -> dict | None:
    return value if isinstance(value, dict) else None


def _lower(value: str | None) -> str | None:
    return None if value is None else value.lower()


def read_message(message: dict[str, Any], key: bytes | None) -> dict[str, Any]:
    """The CTEs message_fields .. image_values."""
    get = message.get
    m: dict[str, Any] = {
        "type_json": get("type", ABSENT),
        "maxwell_type": _lower(text(get("type", ABSENT))),
        **{f"{n}_text": text(get(n, ABSENT)) for n in ("database", "table", "ts", "xid", "xoffset", "position")},
        **{f"{n}_text": text(get(n, ABSENT)) for n in ("gtid", "sql")},
        "data_json": get("data", ABSENT),
        "data_struct": _object(get("data", ABSENT)),
        "old_json": get("old", ABSENT),
        "old_struct": _object(get("old", ABSENT)),
        "key_columns_json": get("primary_key_columns", ABSENT),
        "message_key_columns": string_array(get("primary_key_columns", ABSENT)),
        "ddl_key_columns": string_array((_object(get("def", ABSENT)) or {}).get("primary-key", ABSENT)),
        "nested_name": next((n for n in NAME_FIELDS if nested(get(n, ABSENT))), None),
    }
    t = m["maxwell_type"]
    m["row_op"] = ROW_OPS.get(t)
    m["is_ddl"], m["is_marker"] = t in DDL_TYPES, t in MARKERS
    m["names_table"] = t is not None and t.startswith("table-")
    m["ts_number"] = _digits(m["ts_text"], 15, sign=True)
    position = POSITION.fullmatch(m["position_text"]) if m["position_text"] is not None else None
    m["binlog_offset"] = int(position[2]) if position else None
    file_digits = re.search("[0-9]+$", position[1]) if position else None
    file_index = int(file_digits[0]) if file_digits else None
    m["file_index"] = file_index if file_index is not None and file_index <= BIGINT_MAX else None
    m["xoffset_number"] = _digits(m["xoffset_text"], 9, sign=False)
    m["kafka_key_names"] = None if m["row_op"] is None else kafka_key_names(key)
    data, old = m["data_struct"], m["old_struct"]
    if m["row_op"] == "UPDATE":
        merged = None if data is None or old is None else {**{k: v for k, v in data.items() if k not in old}, **old}
        m["before_columns"] = data if old is None else merged
    else:
        m["before_columns"] = data if m["row_op"] == "DELETE" else None
    m["after_columns"] = data if m["row_op"] in ("INSERT", "UPDATE", "SNAPSHOT") else None
    m["old_only_columns"] = ", ".join(k for k in old or {} if data is not None and k not in data)
    return m


def _ts_wrong(m: dict[str, Any]) -> bool:
    number = m["ts_number"]
    return number is None or (not m["is_ddl"] and abs(number) > MAX_SECONDS)


def record_error(m: dict[str, Any]) -> tuple[str, str] | None:
    """`checked`: the message's first error (code, detail), in the SQL's order."""
    t, row = m["maxwell_type"], m["row_op"] is not None
    checks = (
        (lambda: not present(m["type_json"]), "missing_field", lambda: "type is missing"),
        (lambda: m["nested_name"], "wrong_shape", lambda: f"{m['nested_name']} is a JSON object/array, not a name"),
        (lambda: not row and not m["is_ddl"] and not m["is_marker"], "unknown_op",
         lambda: f"type {t} is not a Maxwell row, DDL or bootstrap type"),
        (lambda: not m["database_text"], "missing_field", lambda: "database is missing"),
        (lambda: (row or m["names_table"] or m["is_marker"]) and not m["table_text"], "missing_field",
         lambda: f"table is missing for type {t}"),
        (lambda: m["ts_text"] is None, "missing_field", lambda: "ts is missing"),
        (lambda: _ts_wrong(m), "invalid_timestamp",
         lambda: f"ts {m['ts_text']} is not epoch seconds (rows) or milliseconds (DDL)"),
        (lambda: row and not present(m["data_json"]), "missing_field", lambda: f"data is missing for type {t}"),
        (lambda: row and m["data_struct"] is None, "wrong_shape", lambda: "data is not a JSON object"),
        (lambda: row and present(m["old_json"]) and m["old_struct"] is None, "wrong_shape",
         lambda: "old is not a JSON object"),
        (lambda: m["is_ddl"] and m["sql_text"] is None, "missing_field", lambda: f"sql is missing for DDL type {t}"),
        (lambda: m["position_text"] is not None and m["binlog_offset"] is None, "wrong_shape",
         lambda: f"position {m['position_text']} is not binlog-file:offset"),
        (lambda: m["xoffset_text"] is not None and m["xoffset_number"] is None, "wrong_shape",
         lambda: f"xoffset {m['xoffset_text']} is not a row offset"),
        (lambda: present(m["key_columns_json"]) and m["message_key_columns"] is None, "wrong_shape",
         lambda: "primary_key_columns is not an array of column names"),
        (lambda: row and m["old_only_columns"], "invalid_value",
         lambda: f"old names columns that data does not have: {m['old_only_columns']}"),
    )  # fmt: skip
    return next(((code, detail()) for failed, code, detail in checks if failed()), None)


def found_key_columns(m: dict[str, Any]) -> tuple[list | None, list[str]]:
    """key_columns' found_key_columns, and the Kafka key's names it could not match (the SQL fails)."""
    names, data = m["kafka_key_names"], m["data_struct"]
    empty = ["{}"] if names and {} in names else []  # map_keys(pk)[0] of every row message
    if m["message_key_columns"] is not None:
        return m["message_key_columns"], empty
    if m["row_op"] is not None and names:
        found, unmatched = [], []
        for name in names:
            if name == {}:
                unmatched.append("{}")
                continue
            match = None if data is None else next((c for c in data if _lower(c) == _lower(name)), None)
            if data is not None and match is None:
                unmatched.append("null" if name is None else name)
            found.append(match if data is not None else name)
        return found, unmatched
    if m["is_ddl"] and m["names_table"]:
        return m["ddl_key_columns"], empty
    return None, empty


def build_failure(value: bytes | None, key: bytes | None) -> str | None:
    """Why the old SQL's build fails on this value (module docstring), None when it stages it."""
    if value is None:
        return None
    try:
        document = parse(value.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    try:
        message = spark_document(document)
    except DuplicateKey:
        return "duplicate key below the top level"
    m = read_message(message, key)
    refused = ("\x85", "\u2028", "\u2029")
    if (
        m["ts_text"] is not None
        and m["ts_text"].endswith(refused)
        and re.fullmatch(f"-?[0-9]{{1,15}}{JAVA_END}", m["ts_text"])
    ):
        return "ts cast"
    if (
        m["xoffset_text"] is not None
        and m["xoffset_text"].endswith(refused)
        and re.fullmatch(f"[0-9]{{1,9}}{JAVA_END}", m["xoffset_text"])
    ):
        return "xoffset cast"
    if m["ts_number"] is not None and not m["is_ddl"] and abs(m["ts_number"]) > MAX_SECONDS:
        return "ts overflow"
    if found_key_columns(m)[1]:
        return "kafka key"
    return None


# ---------------------------------------------------------------- canonical .. decoded
def _row(**fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": 0}


def image_values(columns: dict | None) -> dict | None:
    """maxwell_image_values: scalars as their exact text, embedded JSON values as embedded_json."""
    if columns is None:
        return None
    return {col: embedded_json(val) if nested(val) else text(val) for col, val in columns.items()}


def _types(values: dict | None) -> dict | None:
    return None if values is None else dict.fromkeys(values, "string")


def decoded_row(m: dict[str, Any], keys: list | None) -> dict[str, Any]:
    op, ddl = m["row_op"], m["is_ddl"]
    before = image_values(m["before_columns"])
    after = image_values(m["after_columns"])
    number = None
    if m["binlog_offset"] is not None and m["file_index"] is not None:
        xoffset = 999_999_999 if m["xoffset_number"] is None else m["xoffset_number"]
        number = (m["file_index"] * 2**32 + m["binlog_offset"]) * 10**9 + xoffset
    return _row(
        event_kind="ROW" if op else "DDL" if ddl else "OTHER",
        message_op=op if op else None if ddl else m["maxwell_type"].upper(),
        database_name=m["database_text"],
        table_name=m["table_text"] or None,
        primary_key_columns=keys or [],
        primary_key_source="none" if not keys else "ddl" if ddl else "message",
        before=before,
        after=after,
        before_is_partial=None if before is None else False,
        after_is_partial=None if after is None else False,
        column_types=map_union(_types(before), _types(after)) if op else None,
        event_ts_micros=m["ts_number"] * (1000 if ddl else 1_000_000),
        event_ts_precision="ms" if ddl else "s",
        source_position=m["position_text"] if m["position_text"] is not None else m["gtid_text"],
        transaction_id=m["xid_text"],
        position_digits=None if number is None else str(number),
        ddl_statement=m["sql_text"] if ddl else None,
    )


def maxwell_rows(value: bytes | None, key: bytes | None) -> list[dict[str, Any]]:
    """The staged row of one landed value with its Kafka key, as the SQL's `decoded` CTE has it."""
    if value is None:
        return [_row()]
    try:
        value_text = value.decode("utf-8")
    except UnicodeDecodeError:
        return [_row(error_code="invalid_utf8", error_detail=INVALID_UTF8)]
    document = parse(value_text)
    if document is ABSENT:
        return [_row(error_code="invalid_json", error_detail=INVALID_JSON)]
    if not isinstance(document, dict):
        return [_row(error_code="wrong_shape", error_detail="the JSON value is not an object")]
    try:
        message = spark_document(document)
    except DuplicateKey:  # the old build's VARIANT_DUPLICATE_KEY (module docstring)
        return [_row(error_code="invalid_json", error_detail=INVALID_JSON)]
    m = read_message(message, key)
    error = record_error(m)
    if error:
        return [_row(error_code=error[0], error_detail=error[1])]
    keys, unmatched = found_key_columns(m)
    if unmatched:
        return [_row(error_code="invalid_value", error_detail=KEY_NAMES_MISSING + ", ".join(unmatched))]
    return [decoded_row(m, keys)]
