"""Pure-Python twin of the OMS SharePlex JSON staging SQL as of commit 823a733
(models/staging/oms_shareplex_json/stg_oms_shareplex_json__changes.sql over macros/oms.sql
`oms_wall_clock_utc`, the macros of macros/staging.sql and `cdc_exact_variant`): the oracle of
`cdc_shareplex_rows` (tests/python/test_jvm_shareplex_rows.py).

    shareplex_rows(value, source_tz) -> [ {FIELDS...} ]

One dict for the one staged row of the landed value (row_index 0), the columns of the SQL's CTE
`decoded` under the names of FIELDS: maps as dicts in the SQL's key order, meta.time / meta.posttime
as microseconds since the epoch, the decimal(30,0) scn as its digits (no leading zeros). A tombstone
(value None) is row_index 0, all else None; a quarantined value is row_index 0 with error_code /
error_detail only. Every image value is kept as sent and typed 'string' (cdc_canonical_image);
before_is_partial is false and after_is_partial `op = 'upd'` (false, not null, for a del).
`rowid_key` is the SQL's `substr(row_id, length(qualified_table) + 2)`: meta.rowid after
`meta.table-`, counted in code points (the model's primary_key is `to_json(split(rowid_key,
'\\u0001'))` when it is not ''). `natural_id` is the SQL's sha2 of concat_ws('\\u0001', cast(data as
string), cast(key as string), to_json(transform_values(map_filter(meta, k != 'posttime'), cast(v as
string)))), each null (absent or JSON null) as ''.

The JSON is read as cdc_exact_variant and the SQL read it (oms_default_rows_oracle.spark_document:
numbers as strings of their exact digits, keys and strings as Spark stores them, a lone surrogate as
'?', every object below the top level sorted by UTF-16 code units of those keys). Every meta field
is read as text (cdc_json_text): a number as its digits, true / false. An object or array in a
field the row is built from (READ_META) is `wrong_shape`, checked right after meta is found an object
(where the SQL of 823a733 read it as its JSON, so that `"table": {"a": 1}` was the table
`{"a":"1"}`). `qualified_table like '%.%'` is any '.' (LIKE's
% spans line breaks): database_name the part before the first '.', table_name the rest (either may
be ''); without a '.', database_name is null and table_name the whole text. Only an upd's `key` is
checked (present, an object, no nested values); an ins's or del's `key` is anything, and only in
natural_id. `data` is checked for nested values whatever the op.

meta.time and meta.posttime (oms_wall_clock_utc): `rlike '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:
[0-9]{2}:[0-9]{2}$'` (a Java find: `$` also before one final line terminator), then
try_to_timestamp(replace(text, 'T', ' '), 'yyyy-MM-dd HH:mm:ss'), which refuses the final line
terminator and any date or time the calendar does not have (2023-02-29, hour 24, second 60) while
year 0000 is a year, in the session zone UTC, then to_utc_timestamp from source_tz, which puts a wall
clock in a gap the gap's length later and one in an overlap at its earlier offset
(ogg_rows_oracle.wall_clock_micros' rule). meta.scn: `rlike '^[0-9]{1,30}$'` (the same find), then
the ANSI cast to decimal(30,0), which trims a final \\n or \\r.

Where the old SQL fails the whole build instead of staging a row, the oracle quarantines the value
as oms_default_rows_oracle does:
- an object below the top level (meta, data, key, or deeper) with two keys that are one key once
  Spark stores them (lone surrogates as '?': {"\\ud800": 1, "\\udfff": 2}, or {"\\ud800": 1, "?": 2}):
  VARIANT_DUPLICATE_KEY in the SQL; here `invalid_json`, the duplicate-key refusal of any JSON value;
- meta.scn digits ending in U+0085, U+2028 or U+2029 (the `rlike` lets them through, the ANSI cast
  to decimal(30,0) refuses them): here `wrong_shape` 'meta.scn ... is not a non-negative integer',
  as for any other text, at that check's place.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from canal_rows_oracle import ABSENT, JAVA_END, _quoted, map_union, nested, parse, present, text
from ogg_rows_oracle import _days, _offset_seconds
from oms_default_rows_oracle import INVALID_JSON, INVALID_UTF8, DuplicateKey, _digits, json_object, spark_document

FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "op", "database_name", "table_name", "rowid_key",
    "before", "after", "before_is_partial", "after_is_partial", "column_types", "event_ts_micros",
    "event_ts_precision", "emitted_ts_micros", "source_position", "transaction_id", "position_digits", "natural_id",
)  # fmt: skip
OPS = {"ins": "INSERT", "upd": "UPDATE", "del": "DELETE"}
SEPARATOR = "\x01"  # the parts natural_id hashes, and the rowid's key values
WALL_CLOCK = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}" + JAVA_END)


# ---------------------------------------------------------------- Spark's functions as the SQL uses them
def wall_clock_micros(value: str | None, tz: str) -> int | None:
    """oms_wall_clock_utc as microseconds since the epoch (module docstring)."""
    if value is None or not WALL_CLOCK.fullmatch(value) or len(value) != 19:  # the formatter refuses a terminator
        return None
    year, month, day, hour, minute, second = (int(value[a:b]) for a, b in ((0, 4), (5, 7), (8, 10), (11, 13),
                                                                           (14, 16), (17, 19)))  # fmt: skip
    days = _days(year, month, day) if 1 <= month <= 12 else None
    if days is None or hour > 23 or minute > 59 or second > 59:
        return None
    local = ((days * 24 + hour) * 60 + minute) * 60 + second
    return (local - _offset_seconds(tz, year, month, day, hour, minute, second)) * 1_000_000


def nested_columns(image: dict[str, Any] | None) -> str | None:
    """cdc_nested_columns: the columns holding an object or array, in the map's order, by ', '."""
    return None if image is None else ", ".join(k for k, v in image.items() if nested(v))


def image_values(image: dict[str, Any] | None) -> dict[str, str | None] | None:
    """cdc_image_values: column -> exact text, JSON null as None."""
    return None if image is None else {k: text(v) for k, v in image.items()}


def _types(values: dict | None) -> dict | None:
    return None if values is None else dict.fromkeys(values, "string")


# The meta fields the row is built from, in the order the nested-field check looks at them.
READ_META = ("op", "table", "rowid", "time", "posttime", "trans", "scn")


# ---------------------------------------------------------------- records .. checked
def read_record(message: dict[str, Any], tz: str) -> dict[str, Any]:
    """The `records`, `metadata`, `images` and `image_values` CTEs."""
    meta_json, data_json, key_json = (message.get(n, ABSENT) for n in ("meta", "data", "key"))
    meta, data_struct, key_struct = json_object(meta_json), json_object(data_json), json_object(key_json)
    field = (meta or {}).get
    m = {
        "meta_json": meta_json,
        "meta": meta,
        "data_json": data_json,
        "data_struct": data_struct,
        "key_json": key_json,
        "key_struct": key_struct,
        "op_json": field("op", ABSENT),
        "meta_nested": next((name for name in READ_META if nested(field(name, ABSENT))), None),
        **{name: text(field(key, ABSENT)) for name, key in (
            ("op_code", "op"), ("qualified_table", "table"), ("row_id", "rowid"), ("time_text", "time"),
            ("posttime_text", "posttime"), ("trans", "trans"), ("scn", "scn"))},
    }  # fmt: skip
    op, table, row_id = m["op_code"], m["qualified_table"], m["row_id"]
    m["row_op"] = OPS.get(op)
    m["before_columns"] = data_struct if op == "del" else key_struct if op == "upd" else None
    m["after_columns"] = data_struct if op in ("ins", "upd") else None
    m["change_ts"] = wall_clock_micros(m["time_text"], tz)
    m["posted_ts"] = wall_clock_micros(m["posttime_text"], tz)
    m["scn_number"] = _digits(m["scn"], 30, sign=False)
    m["rowid_names_table"] = row_id is not None and table is not None and row_id.startswith(f"{table}-")
    m["rowid_key"] = None if row_id is None or table is None else row_id[len(table) + 1 :]
    m["data_nested"], m["key_nested"] = nested_columns(data_struct), nested_columns(key_struct)
    return m


def record_error(m: dict[str, Any]) -> tuple[str, str] | None:
    """`checked`: the message's first error (code, detail), in the SQL's order."""
    op, table, row_id, upd = m["op_code"], m["qualified_table"], m["row_id"], m["op_code"] == "upd"
    time_text, posttime_text, scn = m["time_text"], m["posttime_text"], m["scn"]
    checks = (
        (lambda: not present(m["meta_json"]), "missing_field", lambda: "meta is missing"),
        (lambda: m["meta"] is None, "wrong_shape", lambda: "meta is not an object"),
        (lambda: m["meta_nested"] is not None, "wrong_shape",
         lambda: f"meta.{m['meta_nested']} is a JSON object/array, not text"),
        (lambda: not present(m["op_json"]), "missing_field", lambda: "meta.op is missing"),
        (lambda: m["row_op"] is None, "unknown_op", lambda: f"meta.op {op} is not ins, upd or del"),
        (lambda: not table, "missing_field", lambda: "meta.table is missing"),
        (lambda: row_id is None, "missing_field", lambda: "meta.rowid is missing"),
        (lambda: not m["rowid_names_table"], "wrong_shape",
         lambda: f"meta.rowid {row_id} does not start with meta.table {table}-"),
        (lambda: not present(m["data_json"]), "missing_field", lambda: "data is missing"),
        (lambda: m["data_struct"] is None, "wrong_shape", lambda: "data is not an object"),
        (lambda: upd and not present(m["key_json"]), "missing_field", lambda: "key (the before image) is missing for upd"),
        (lambda: upd and m["key_struct"] is None, "wrong_shape", lambda: "key is not an object"),
        (lambda: time_text is not None and m["change_ts"] is None, "invalid_timestamp",
         lambda: f"meta.time {time_text} is not YYYY-MM-DDTHH:mm:ss"),
        (lambda: posttime_text is not None and m["posted_ts"] is None, "invalid_timestamp",
         lambda: f"meta.posttime {posttime_text} is not YYYY-MM-DDTHH:mm:ss"),
        (lambda: scn is not None and m["scn_number"] is None, "wrong_shape",
         lambda: f"meta.scn {scn} is not a non-negative integer"),
        (lambda: m["data_nested"], "invalid_value",
         lambda: f"data values are JSON objects/arrays, not column values: {m['data_nested']}"),
        (lambda: upd and m["key_nested"], "invalid_value",
         lambda: f"key values are JSON objects/arrays, not column values: {m['key_nested']}"),
    )  # fmt: skip
    return next(((code, detail()) for failed, code, detail in checks if failed()), None)


# ---------------------------------------------------------------- canonical .. decoded
def natural_text(m: dict[str, Any]) -> str:
    """What the SQL's natural_id hashes (module docstring): meta's entries in its map's order, each
    value cast(variant as string) (JSON null: null), written by to_json."""
    meta = ",".join(
        f"{_quoted(k)}:{'null' if (s := text(v)) is None else _quoted(s)}"
        for k, v in m["meta"].items()
        if k != "posttime"
    )
    parts = (text(m["data_json"]), text(m["key_json"]), "{" + meta + "}")
    return SEPARATOR.join(p or "" for p in parts)


def _row(**fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": 0}


def decoded_row(m: dict[str, Any]) -> dict[str, Any]:
    """`canonical` .. `decoded` of a message that passed `checked` (its images cannot fail)."""
    table = m["qualified_table"]
    before, after = image_values(m["before_columns"]), image_values(m["after_columns"])
    dotted = "." in table
    return _row(
        event_kind="ROW",
        op=m["row_op"],
        database_name=table.split(".", 1)[0] if dotted else None,
        table_name=table.split(".", 1)[1] if dotted else table,
        rowid_key=m["rowid_key"],
        before=before,
        after=after,
        before_is_partial=False,
        after_is_partial=m["op_code"] == "upd",
        column_types=map_union(_types(before), _types(after)),
        event_ts_micros=m["change_ts"],
        event_ts_precision=None if m["change_ts"] is None else "s",
        emitted_ts_micros=m["posted_ts"],
        source_position=m["scn"],
        transaction_id=m["trans"],
        position_digits=None if m["scn_number"] is None else str(m["scn_number"]),
        natural_id=hashlib.sha256(natural_text(m).encode("utf-8")).hexdigest(),
    )


def read_value(value: bytes) -> dict[str, Any] | tuple[str, str]:
    """cdc_json_documents, then cdc_document_errors: the message, else its error (code, detail)."""
    try:
        document = parse(value.decode("utf-8"))
    except UnicodeDecodeError:
        return "invalid_utf8", INVALID_UTF8
    if document is ABSENT:
        return "invalid_json", INVALID_JSON
    if not isinstance(document, dict):  # only an object is cast to map<string, variant>, rebuilding what it holds
        return "wrong_shape", "the JSON value is not an object"
    try:
        return spark_document(document)
    except DuplicateKey:  # the old build's VARIANT_DUPLICATE_KEY (module docstring)
        return "invalid_json", INVALID_JSON


def shareplex_rows(value: bytes | None, source_tz: str) -> list[dict[str, Any]]:
    """The staged row of one landed value, as the SQL's `decoded` CTE has it (module docstring)."""
    if value is None:
        return [_row()]
    message = read_value(value)
    error = message if isinstance(message, tuple) else record_error(m := read_record(message, source_tz))
    if error:
        return [_row(error_code=error[0], error_detail=error[1])]
    return [decoded_row(m)]


def primary_key(rowid_key: str | None) -> str | None:
    """What the model builds from rowid_key: `case when rowid_key != '' then
    to_json(split(rowid_key, '\\u0001')) end` (every piece, empty ones too)."""
    if not rowid_key:
        return None
    return "[" + ",".join(_quoted(p) for p in rowid_key.split(SEPARATOR)) + "]"
