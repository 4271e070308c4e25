"""Pure-Python twin of the Oracle GoldenGate JSON staging SQL as of commit c1308b5
(models/staging/ogg_json/stg_ogg_json__changes.sql over macros/ogg.sql, the macros of
macros/staging.sql and `cdc_exact_variant`): the oracle of `cdc_ogg_rows`
(tests/python/test_jvm_ogg_rows.py).

    ogg_rows(value, source_tz) -> [ {FIELDS...} ]

One dict for the one staged row of the landed value (row_index 0), the columns of the SQL's CTE
`decoded` under the names of FIELDS: maps as dicts in the SQL's key order, op_ts / current_ts as
microseconds since the epoch, the decimal(30,0) pos as its digits. A tombstone (value None) is
row_index 0, all else None; a quarantined value is row_index 0 with error_code / error_detail only.
Every image value is kept as sent and typed 'string'. `natural_id` is the SQL's sha2 of
to_json(transform_values(map_filter(message, k != 'current_ts'), cast(v as string))).

The JSON is read as cdc_exact_variant and the SQL read it (oms_default_rows_oracle.spark_document:
keys and strings as Spark stores them, a lone surrogate as '?', every object below the top level
sorted by UTF-16 code units of those keys). The top level is the variant's own object: its fields
in String.compareTo order of the keys as sent, and two keys that Spark stores as one ('\\ud800' and
'\\udfff', both '?') stay two entries of the SQL's map (to_json writes both; no field the SQL reads
by name can be '?').

op_ts and current_ts (`YYYY-MM-DD[ T]HH:MM:SS[.f{1,9}]`, a Java find: `$` also before one final
line terminator) are wall clock in source_tz: try_to_timestamp of their first 26 characters (digits
past the microsecond dropped) in the session zone UTC, then to_utc_timestamp, which puts a wall
clock in a gap the gap's length later and one in an overlap at its earlier offset (Python's fold=0
gives the same instants). A date or time the calendar does not have (2023-02-30, hour 24) is null.

Where the old SQL fails the whole build instead of staging a row, the oracle quarantines the value
as oms_default_rows_oracle does:
- an object below the top level with two keys that are one key once Spark stores them
  (VARIANT_DUPLICATE_KEY in the SQL): here `invalid_json`;
- pos digits ending in U+0085, U+2028 or U+2029 (the `rlike` lets them through, the ANSI cast to
  decimal(30,0) refuses them): here not a trail position, as for any other text, at that check's place.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Any
from zoneinfo import ZoneInfo

from canal_rows_oracle import ABSENT, JAVA_END, _quoted, map_union, nested, parse, present, spark_str, text
from oms_default_rows_oracle import (
    INVALID_JSON,
    INVALID_UTF8,
    DuplicateKey,
    _digits,
    _utf16,
    json_object,
    spark_document,
)

FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "op", "database_name", "schema_name", "table_name",
    "primary_key_columns", "primary_key_source", "before", "after", "before_is_partial", "after_is_partial",
    "column_types", "event_ts_micros", "event_ts_precision", "emitted_ts_micros", "source_position",
    "position_digits", "natural_id",
)  # fmt: skip
OPS = {"I": "INSERT", "INSERT": "INSERT", "U": "UPDATE", "UPDATE": "UPDATE", "D": "DELETE", "DELETE": "DELETE",
       "T": "TRUNCATE", "TRUNCATE": "TRUNCATE"}  # fmt: skip
NAME_FIELDS = ("op_type", "table", "op_ts", "current_ts", "pos")
MISSING = "_isMissing"
WALL_CLOCK = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.][0-9]{1,9})?" + JAVA_END)
# What Spark's string -> timestamp cast trims from both ends (UTF8String.trimAll: characters <= ' ').
_TRIMMED = "".join(map(chr, range(33)))
_EPOCH = dt.date(1970, 1, 1).toordinal()


# ---------------------------------------------------------------- the message as the SQL holds it
class Message(list):
    """The top-level map<string, variant>: (key, value) entries in the SQL's order, keys as stored."""

    def get(self, name: str) -> Any:
        """message[name]: the first entry's value; ABSENT when there is none."""
        return next((v for k, v in self if k == name), ABSENT)


def read_message(document: Any) -> Message | None:
    """cdc_json_object(exact_document); DuplicateKey where the cast rebuilds an object below the top
    level whose keys collide. None for anything but an object (the cast reads nothing then)."""
    if not isinstance(document, dict):
        return None
    entries = sorted(document.items(), key=lambda e: _utf16(e[0]))
    values = spark_document([v for _, v in entries])  # each one rebuilt as below the top level
    return Message((spark_str(k), v) for (k, _), v in zip(entries, values, strict=True))


# ---------------------------------------------------------------- Spark's functions as the SQL uses them
def _days(year: int, month: int, day: int) -> int | None:
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 too); None if there is no such day."""
    shift = 400 if year < 1 else 0  # the calendar repeats every 400 years (146097 days)
    try:
        return dt.date(year + shift, month, day).toordinal() - _EPOCH - shift // 400 * 146097
    except ValueError:
        return None


def _offset_seconds(tz: str, year: int, month: int, day: int, hour: int, minute: int, second: int) -> int:
    """The zone's offset at that wall clock, fold=0 (Java's atZone: a gap's earlier offset, which puts the
    instant the gap's length later, and an overlap's earlier one). Year 0 is before any transition."""
    if year == 0:
        year, month, day = 1, 1, 1
    at = dt.datetime(year, month, day, hour, minute, second, tzinfo=ZoneInfo(tz))
    offset = at.utcoffset()
    return 0 if offset is None else int(offset.total_seconds())


def wall_clock_micros(value: str | None, tz: str) -> int | None:
    """ogg_wall_clock_utc as microseconds since the epoch (module docstring)."""
    if value is None or not WALL_CLOCK.fullmatch(value):
        return None
    clock = value.replace("T", " ")[:26].strip(_TRIMMED)
    match = re.fullmatch(
        r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.]([0-9]{1,6}))?", clock
    )
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    days = _days(year, month, day) if 1 <= month <= 12 else None
    if days is None or hour > 23 or minute > 59 or second > 59:
        return None
    fraction = int((match[7] or "").ljust(6, "0"))
    local = ((days * 24 + hour) * 60 + minute) * 60 + second
    return (local - _offset_seconds(tz, year, month, day, hour, minute, second)) * 1_000_000 + fraction


def precision(value: str) -> str:
    """ogg_precision: the length of what follows the last '.' (a final line terminator counts)."""
    if "." not in value:
        return "s"
    digits = len(value.rsplit(".", 1)[1])
    return "ms" if digits <= 3 else "us" if digits <= 6 else "ns"


def _flag(image: dict[str, Any], name: str, value: Any) -> bool:
    """ogg_is_missing_flag: `<column>_isMissing`, a JSON boolean, `<column>` in the image too."""
    return name.endswith(MISSING) and name[: len(name) - len(MISSING)] in image and isinstance(value, bool)


def missing_flags(image: dict[str, Any] | None) -> list[str] | None:
    """ogg_missing_flags: the flags set to true."""
    return None if image is None else [k for k, v in image.items() if _flag(image, k, v) and v]


def image_columns(image: dict[str, Any] | None, flags: list[str] | None) -> dict[str, Any] | None:
    """ogg_image_columns: the image without its flags and the columns flagged missing."""
    if image is None:
        return None
    return {k: v for k, v in image.items() if not _flag(image, k, v) and f"{k}{MISSING}" not in flags}


def string_array(value: Any) -> list[str | None] | None:
    """try_variant_get(value, '$', 'array<string>'): each element's text, objects and arrays as JSON."""
    return [text(v) for v in value] if isinstance(value, list) else None


# ---------------------------------------------------------------- records .. checked
def read_record(message: Message, tz: str) -> dict[str, Any]:
    """The `records`, `metadata`, `operations`, `images` and `image_values` CTEs."""
    get = message.get
    before_json, after_json, keys_json = get("before"), get("after"), get("primary_keys")
    before_struct, after_struct = json_object(before_json), json_object(after_json)
    m = {
        "before_json": before_json,
        "after_json": after_json,
        "keys_json": keys_json,
        "primary_keys": string_array(keys_json),
        "op_type_json": get("op_type"),
        "op_code": text(get("op_type")),
        "qualified_table": text(get("table")),
        "op_ts_text": text(get("op_ts")),
        "current_ts_text": text(get("current_ts")),
        "pos": text(get("pos")),
        "nested_name": next((n for n in NAME_FIELDS if nested(get(n))), None),
        "before_missing": missing_flags(before_struct),
        "after_missing": missing_flags(after_struct),
        "before_struct": before_struct,
        "after_struct": after_struct,
    }
    m["row_op"] = OPS.get(m["op_code"])
    m["name_parts"] = None if m["qualified_table"] is None else m["qualified_table"].split(".")
    m["change_ts"] = wall_clock_micros(m["op_ts_text"], tz)
    m["formatted_ts"] = wall_clock_micros(m["current_ts_text"], tz)
    m["pos_number"] = _digits(m["pos"], 30, sign=False)
    columns = {side: image_columns(m[f"{side}_struct"], m[f"{side}_missing"]) for side in ("before", "after")}
    m["before_columns"] = columns["before"] if m["row_op"] in ("UPDATE", "DELETE") else None
    m["after_columns"] = columns["after"] if m["row_op"] in ("INSERT", "UPDATE") else None
    for side in ("before", "after"):
        image = m[f"{side}_columns"]
        m[f"{side}_values"] = None if image is None else {k: text(v) for k, v in image.items()}
        m[f"{side}_nested"] = None if image is None else ", ".join(k for k, v in image.items() if nested(v))
    return m


def record_error(m: dict[str, Any]) -> tuple[str, str] | None:
    """`checked`: the message's first error (code, detail), in the SQL's order."""
    op, code, table, parts = m["row_op"], m["op_code"], m["qualified_table"], m["name_parts"]
    writes, keeps_before = op in ("INSERT", "UPDATE"), op in ("UPDATE", "DELETE")
    op_ts, current_ts, pos = m["op_ts_text"], m["current_ts_text"], m["pos"]
    checks = (
        (lambda: m["nested_name"], "wrong_shape", lambda: f"{m['nested_name']} is a JSON object or array, not a scalar"),
        (lambda: not present(m["op_type_json"]), "missing_field", lambda: "op_type is missing"),
        (lambda: op is None, "unknown_op", lambda: f"op_type {code} is not I, U, D, T or their full names"),
        (lambda: not table, "missing_field", lambda: "table is missing"),
        (lambda: len(parts) > 3 or "" in parts, "wrong_shape",
         lambda: f"table {table} is not [CATALOG.][SCHEMA.]TABLE"),
        (lambda: writes and not present(m["after_json"]), "missing_field",
         lambda: f"after is missing for op_type {code}"),
        (lambda: writes and m["after_struct"] is None, "wrong_shape", lambda: "after is not an object"),
        (lambda: op == "DELETE" and not present(m["before_json"]), "missing_field",
         lambda: f"before is missing for op_type {code}"),
        (lambda: keeps_before and present(m["before_json"]) and m["before_struct"] is None, "wrong_shape",
         lambda: "before is not an object"),
        (lambda: present(m["keys_json"]) and m["primary_keys"] is None, "wrong_shape",
         lambda: "primary_keys is not an array of column names"),
        (lambda: op_ts is not None and m["change_ts"] is None, "invalid_timestamp",
         lambda: f"op_ts {op_ts} is not YYYY-MM-DD HH:MM:SS[.ffffff]"),
        (lambda: current_ts is not None and m["formatted_ts"] is None, "invalid_timestamp",
         lambda: f"current_ts {current_ts} is not YYYY-MM-DD[T]HH:MM:SS[.ffffff]"),
        (lambda: pos is not None and m["pos_number"] is None, "wrong_shape",
         lambda: f"pos {pos} is not a trail position (digits)"),
        (lambda: m["before_nested"] or m["after_nested"], "invalid_value",
         lambda: f"before values are JSON objects/arrays, not column values: {m['before_nested']}"
         if m["before_nested"] else f"after values are JSON objects/arrays, not column values: {m['after_nested']}"),
    )  # fmt: skip
    return next(((code, detail()) for failed, code, detail in checks if failed()), None)


# ---------------------------------------------------------------- canonical .. decoded
def natural_text(message: Message) -> str:
    """What the SQL's natural_id hashes: to_json of the message's entries but current_ts, each value
    cast(variant as string) (JSON null: null), every entry of the map, in its order."""
    entries = ",".join(
        f"{_quoted(k)}:{'null' if (s := text(v)) is None else _quoted(s)}" for k, v in message if k != "current_ts"
    )
    return "{" + entries + "}"


def _row(**fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": 0}


def _types(values: dict | None) -> dict | None:
    return None if values is None else dict.fromkeys(values, "string")


def decoded_row(message: Message, m: dict[str, Any]) -> dict[str, Any]:
    """`canonical` .. `decoded` of a message that passed `checked` (its images cannot fail)."""
    op, parts, keys = m["row_op"], m["name_parts"], m["primary_keys"]
    before, after = m["before_columns"], m["after_columns"]
    before_partial = None
    if before is not None:
        before_partial = bool(m["before_missing"]) or (
            op == "UPDATE" and after is not None and any(k not in before for k in after)
        )
    return _row(
        event_kind="DDL" if op == "TRUNCATE" else "ROW",
        op=op,
        database_name=parts[0] if len(parts) >= 2 else None,
        schema_name=parts[1] if len(parts) == 3 else None,
        table_name=parts[-1],
        primary_key_columns=keys or [],
        primary_key_source="message" if keys else "none",
        before=m["before_values"],
        after=m["after_values"],
        before_is_partial=before_partial,
        after_is_partial=None if after is None else bool(m["after_missing"]) or op == "UPDATE",
        column_types=map_union(_types(m["before_values"]), _types(m["after_values"])),
        event_ts_micros=m["change_ts"],
        event_ts_precision=None if m["change_ts"] is None else precision(m["op_ts_text"]),
        emitted_ts_micros=m["formatted_ts"],
        source_position=m["pos"],
        position_digits=None if m["pos_number"] is None else str(m["pos_number"]),
        natural_id=hashlib.sha256(natural_text(message).encode("utf-8")).hexdigest(),
    )


def read_value(value: bytes) -> Message | tuple[str, str]:
    """cdc_json_documents, then cdc_document_errors: the message, else its error (code, detail)."""
    try:
        document = parse(value.decode("utf-8"))
    except UnicodeDecodeError:
        return "invalid_utf8", INVALID_UTF8
    message = None
    try:
        message = None if document is ABSENT else read_message(document)
    except DuplicateKey:  # the old build's VARIANT_DUPLICATE_KEY (module docstring)
        document = ABSENT
    if document is ABSENT:
        return "invalid_json", INVALID_JSON
    return ("wrong_shape", "the JSON value is not an object") if message is None else message


def ogg_rows(value: bytes | None, source_tz: str) -> list[dict[str, Any]]:
    """The staged row of one landed value, as the SQL's `decoded` CTE has it (module docstring)."""
    if value is None:
        return [_row()]
    message = read_value(value)
    error = message if isinstance(message, tuple) else record_error(m := read_record(message, source_tz))
    if error:
        return [_row(error_code=error[0], error_detail=error[1])]
    return [decoded_row(message, m)]
