"""Pure-Python twin of the Tencent CKafka "official format one" staging SQL as of commit 823a733
(models/staging/ckafka_json/stg_ckafka_json__changes.sql, its CTEs `message_fields` .. `decoded`,
over macros/canal.sql `canal_event_kind`, `canal_op`, `canal_epoch_unit`, `canal_epoch_timestamp`,
the macros of macros/staging.sql and `cdc_exact_variant`): the oracle of `cdc_ckafka_rows`
(tests/python/test_jvm_ckafka_rows.py).

    ckafka_rows(value, source_tz) -> [ {FIELDS...} ]

One dict for the one staged row of the landed value (row_index 0), the columns of the SQL's CTE
`decoded` under the names of FIELDS: maps as dicts in the SQL's key order, event_ts / emitted_ts as
microseconds since the epoch. A tombstone (value None) is row_index 0, all else None; a quarantined
value is row_index 0 with error_code / error_detail only. Every image value is kept as sent and
typed 'string' (cdc_canonical_image). The keys stay SQL in the model and are no field here
(created_key, configured_key, primary_key*, natural_id, position_number); `binlog_number` is the
part of position_number the message gives: for a format-one event
try_add(try_multiply(binlog_file_index, 4294967296), try_cast(binlog_pos as bigint)) (None when a
part is None or past a bigint), None for a DDL (the model adds 9999999999999999 then).

Format one (DML) is a message with a `TYPE` key (even JSON null), the Canal-shaped DDL one with a
`type` key and no `TYPE`; one with neither is missing_field. The JSON is read as cdc_exact_variant
and the SQL read it (ogg_rows_oracle.read_value / read_message: the top level's entries in
String.compareTo order, every object below it rebuilt with its keys as Spark stores them, a lone
surrogate as '?', sorted by UTF-16 code units). So NEW_VALUES / OLD_VALUES (`after` / `before`, and
their nested-column list in details) are in that sorted order, and column_types is before's columns
that after lacks, then after's (cdc_map_union). A field's text is ExactJson's (canal_rows_oracle.text:
numbers as their exact digits, true/false, an object or array as JSON with numbers as strings);
`DATABASE`/`TABLE`/`BINLOG_NAME` (`database`/`table` for a DDL) that are an object or array are
wrong_shape (a binlog file name read as JSON text once gave a file index from the digits inside);
BINLOG_NAME's other values, GLOBAL_ID, TYPE, TIME, BINLOG_POS, sql, es and ts are read as their text
whatever they are.
database_name / table_name / transaction_id are None for ''.

Reading rules of the checks (`checked`, first failing one wins, format one's before the DDL's):
- TYPE `I` or `l` (the spec's lower-case L) is INSERT, `U` UPDATE, `D` DELETE, compared exactly.
- TIME: `rlike '^[0-9]{14}$'` is a Java find (`$` also before one final line terminator), then
  try_to_timestamp(time, 'yyyyMMddHHmmss') in the session zone UTC, which needs exactly 14 digits
  (a final terminator makes it None: invalid_timestamp) of a day the proleptic Gregorian calendar has
  (year 0000 too; 02-29 of a non-leap year, month 13, hour 24, second 60: None), then
  to_utc_timestamp(.., source_tz): the wall clock's offset is Java's atZone's, a gap's earlier offset
  (the instant the gap's length later) and an overlap's earlier one, LMT before a zone's first rule.
- BINLOG_POS: `^[0-9]{1,18}$` as a Java find (a final terminator passes, and source_position keeps
  it); try_cast(binlog_pos as bigint) trims \\n / \\r and gives None for U+0085 / U+2028 / U+2029.
- binlog_file_index: try_cast(regexp_extract(binlog_name, '([0-9]+)$', 1) as bigint): the leftmost
  digit run that ends the name (or ends it before one final terminator), None past a bigint or
  with none ('' cast).
- es / ts (DDL): canal_epoch_unit's digit counts (s <= 11, ms 12-14, us 15-17, ns 18-19; a Java
  find), then try_cast to bigint (None past a bigint or with a final U+0085 / U+2028 / U+2029);
  ts is optional, es is required; event_ts_precision is the unit (format one: 's').
- A DDL type is canal_event_kind 'DDL' (QUERY but isDdl 'false' in any case is OTHER, so
  unknown_op), op as canal_op (ERASE -> DROP, CINDEX -> CREATE_INDEX, DINDEX -> DROP_INDEX).

Where the old SQL fails the whole build instead of staging a row, the oracle quarantines the value
as ogg_rows_oracle does: an object anywhere below the top level (NEW_VALUES, OLD_VALUES, a DDL's
data, any other field, in an array too) with two keys that are one key once Spark stores them
({"\\ud800": 1, "\\udfff": 2}, or {"\\ud800": 1, "?": 2}) fails the cast of the message to
map<string, variant> (VARIANT_DUPLICATE_KEY); here `invalid_json` with the duplicate-key detail,
the refusal of any JSON value with a key twice. Two such keys at the top level stay two entries of
the SQL's map and stage normally.
"""

from __future__ import annotations

import re
from typing import Any

from canal_rows_oracle import (
    BIGINT_MAX,
    DDL_TYPES,
    JAVA_END,
    OPS,
    _lower,
    epoch_micros,
    epoch_unit,
    map_union,
    nested,
    present,
    text,
    try_bigint,
)
from ogg_rows_oracle import Message, _days, _offset_seconds, read_value

FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "op", "database_name", "table_name", "before", "after",
    "before_is_partial", "after_is_partial", "column_types", "event_ts_micros", "event_ts_precision",
    "emitted_ts_micros", "source_position", "transaction_id", "binlog_number", "ddl_statement",
)  # fmt: skip
ROW_OPS = {"I": "INSERT", "l": "INSERT", "U": "UPDATE", "D": "DELETE"}
BINLOG_FILE_FACTOR = 4294967296  # 2^32
TIME_TEXT = re.compile("[0-9]{14}" + JAVA_END)
BINLOG_POS_TEXT = re.compile("[0-9]{1,18}" + JAVA_END)
FILE_INDEX = re.compile("([0-9]+)(?=" + JAVA_END + r"\Z)")


# ---------------------------------------------------------------- Spark's functions as the SQL uses them
def time_micros(value: str | None, tz: str) -> int | None:
    """`time_ts`: TIME as a wall clock in `tz`, microseconds since the epoch (module docstring)."""
    if value is None or not TIME_TEXT.fullmatch(value) or len(value) != 14:
        return None  # the rlike lets a final line terminator through, try_to_timestamp does not
    year, month, day, hour, minute, second = (int(value[a:b]) for a, b in ((0, 4), (4, 6), (6, 8), (8, 10),
                                                                           (10, 12), (12, 14)))  # fmt: skip
    days = _days(year, month, day) if 1 <= month <= 12 else None
    if days is None or hour > 23 or minute > 59 or second > 59:
        return None
    local = ((days * 24 + hour) * 60 + minute) * 60 + second
    return (local - _offset_seconds(tz, year, month, day, hour, minute, second)) * 1_000_000


def file_index(binlog_name: str | None) -> int | None:
    """binlog_file_index: try_cast(regexp_extract(binlog_name, '([0-9]+)$', 1) as bigint)."""
    found = None if binlog_name is None else FILE_INDEX.search(binlog_name)
    if found is None:
        return None
    number = int(found[1])
    return number if number <= BIGINT_MAX else None


def binlog_number(index: int | None, pos: str | None) -> int | None:
    """try_add(try_multiply(index, 2^32), try_cast(pos as bigint)): None on a None or an overflow."""
    offset = None if pos is None else try_bigint(pos)  # pos passed `checked`: digits, maybe a terminator
    if index is None or offset is None or index * BINLOG_FILE_FACTOR > BIGINT_MAX:
        return None
    total = index * BINLOG_FILE_FACTOR + offset
    return total if total <= BIGINT_MAX else None


def nested_name(message: Message, fields: tuple[str, ...]) -> str | None:
    """cdc_json_nested_name: the first of the name fields that is a JSON object or array."""
    return next((name for name in fields if nested(message.get(name))), None)


# ---------------------------------------------------------------- message_fields .. timed
def read_fields(message: Message, tz: str) -> dict[str, Any]:
    """The `message_fields`, `classified` and `timed` CTEs."""
    get = message.get
    new_json, old_json = get("NEW_VALUES"), get("OLD_VALUES")
    m = {
        "is_format_one": any(k == "TYPE" for k, _ in message),
        "is_canal": any(k == "type" for k, _ in message),
        "type_json": get("TYPE"),
        "type_code": text(get("TYPE")),
        "dml_database": text(get("DATABASE")),
        "dml_table": text(get("TABLE")),
        "time_text": text(get("TIME")),
        "binlog_name": text(get("BINLOG_NAME")),
        "binlog_pos": text(get("BINLOG_POS")),
        "global_id": text(get("GLOBAL_ID")) or None,
        "new_json": new_json,
        "old_json": old_json,
        "new_struct": new_json if isinstance(new_json, dict) else None,
        "old_struct": old_json if isinstance(old_json, dict) else None,
        "canal_type_json": get("type"),
        "canal_type": text(get("type")),
        "is_ddl_text": _lower(text(get("isDdl"))),
        "ddl_database": text(get("database")),
        "ddl_table": text(get("table")),
        "sql_text": text(get("sql")),
        "es_text": text(get("es")),
        "ts_text": text(get("ts")),
    }
    names = ("DATABASE", "TABLE", "BINLOG_NAME") if m["is_format_one"] else ("database", "table")
    m["nested_name"] = nested_name(message, names)
    m["row_op"] = ROW_OPS.get(m["type_code"]) if m["is_format_one"] else None
    m["ddl_op"] = None
    if not m["is_format_one"] and m["is_canal"]:
        t = m["canal_type"]
        ddl = t in DDL_TYPES and not (t == "QUERY" and m["is_ddl_text"] == "false")
        m["ddl_op"] = OPS.get(t, t) if ddl else None
    for name in ("es", "ts"):
        m[f"{name}_unit"] = epoch_unit(m[f"{name}_text"])
        m[f"{name}_micros"] = epoch_micros(m[f"{name}_text"], m[f"{name}_unit"])
    m["time_micros"] = time_micros(m["time_text"], tz) if m["is_format_one"] else None
    m["needs_new"] = m["row_op"] in ("INSERT", "UPDATE")
    m["needs_old"] = m["row_op"] in ("UPDATE", "DELETE")
    for side, struct in (("new", m["new_struct"]), ("old", m["old_struct"])):
        m[f"{side}_values"] = None if struct is None else {k: text(v) for k, v in struct.items()}
        m[f"{side}_nested"] = "" if struct is None else ", ".join(k for k, v in struct.items() if nested(v))
    return m


def message_error(m: dict[str, Any]) -> tuple[str, str] | None:
    """`checked`: the message's first error (code, detail), in the SQL's order."""
    one, canal, new, old = m["is_format_one"], not m["is_format_one"], m["needs_new"], m["needs_old"]
    code, t, pos = m["type_code"], m["canal_type"], m["binlog_pos"]
    checks = (
        (lambda: not one and not m["is_canal"], "missing_field",
         lambda: "neither TYPE (format one DML) nor type (Canal-shaped DDL) is present"),
        (lambda: one and not present(m["type_json"]), "missing_field", lambda: "TYPE is null"),
        (lambda: one and m["row_op"] is None, "unknown_op", lambda: f"TYPE {code} is not I, U or D"),
        (lambda: one and m["nested_name"], "wrong_shape",
         lambda: f"{m['nested_name']} is a JSON object/array, not a name"),
        (lambda: one and not m["dml_database"], "missing_field", lambda: "DATABASE is missing"),
        (lambda: one and not m["dml_table"], "missing_field", lambda: "TABLE is missing"),
        (lambda: one and m["time_text"] is None, "missing_field", lambda: "TIME is missing"),
        (lambda: one and m["time_micros"] is None, "invalid_timestamp",
         lambda: f"TIME {m['time_text']} is not yyyyMMddHHmmss"),
        (lambda: new and not present(m["new_json"]), "missing_field", lambda: f"NEW_VALUES is missing for TYPE {code}"),
        (lambda: new and m["new_struct"] is None, "wrong_shape", lambda: "NEW_VALUES is not a JSON object"),
        (lambda: old and not present(m["old_json"]), "missing_field", lambda: f"OLD_VALUES is missing for TYPE {code}"),
        (lambda: old and m["old_struct"] is None, "wrong_shape", lambda: "OLD_VALUES is not a JSON object"),
        (lambda: one and pos is not None and not BINLOG_POS_TEXT.fullmatch(pos), "wrong_shape",
         lambda: f"BINLOG_POS {pos} is not a binlog offset"),
        (lambda: new and m["new_nested"], "invalid_value",
         lambda: f"NEW_VALUES values are JSON objects/arrays, not column values: {m['new_nested']}"),
        (lambda: old and m["old_nested"], "invalid_value",
         lambda: f"OLD_VALUES values are JSON objects/arrays, not column values: {m['old_nested']}"),
        (lambda: canal and not present(m["canal_type_json"]), "missing_field", lambda: "type is null"),
        (lambda: canal and m["ddl_op"] is None, "unknown_op",
         lambda: f"type {t} is not a Canal DDL type (format one carries the DML)"),
        (lambda: canal and m["nested_name"], "wrong_shape",
         lambda: f"{m['nested_name']} is a JSON object/array, not a name"),
        (lambda: canal and m["sql_text"] is None, "missing_field", lambda: f"sql is missing for DDL type {t}"),
        (lambda: canal and m["es_text"] is None, "missing_field", lambda: "es (execution time) is missing"),
        (lambda: canal and m["es_micros"] is None, "invalid_timestamp",
         lambda: f"es {m['es_text']} is not epoch seconds/milliseconds"),
        (lambda: canal and m["ts_text"] is not None and m["ts_micros"] is None, "invalid_timestamp",
         lambda: f"ts {m['ts_text']} is not epoch seconds/milliseconds"),
    )  # fmt: skip
    return next(((code, detail()) for failed, code, detail in checks if failed()), None)


# ---------------------------------------------------------------- canonical .. decoded
def _row(**fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": 0}


def _types(values: dict | None) -> dict | None:
    return None if values is None else dict.fromkeys(values, "string")


def decoded_row(m: dict[str, Any]) -> dict[str, Any]:
    """`canonical` and `decoded` of a message that passed `checked` (its images cannot fail)."""
    one, row_op = m["is_format_one"], m["row_op"]
    before = m["old_values"] if m["needs_old"] else None
    after = m["new_values"] if m["needs_new"] else None
    name, pos = m["binlog_name"], m["binlog_pos"]
    return _row(
        event_kind="ROW" if row_op else "DDL",
        op=row_op or m["ddl_op"],
        database_name=(m["dml_database"] if one else m["ddl_database"]) or None,
        table_name=(m["dml_table"] if one else m["ddl_table"]) or None,
        before=before,
        after=after,
        before_is_partial=False if before is not None else None,
        after_is_partial=False if after is not None else None,
        column_types=map_union(_types(before), _types(after)) if row_op else None,
        event_ts_micros=m["time_micros"] if one else m["es_micros"],
        event_ts_precision="s" if one else m["es_unit"],
        emitted_ts_micros=None if one else m["ts_micros"],
        source_position=f"{name}:{pos}" if one and name is not None and pos is not None else None,
        transaction_id=m["global_id"] if one else None,
        binlog_number=binlog_number(file_index(name), pos) if one else None,
        ddl_statement=m["sql_text"] if m["ddl_op"] else None,
    )


def ckafka_rows(value: bytes | None, source_tz: str) -> list[dict[str, Any]]:
    """The staged row of one landed value, as the SQL's `decoded` CTE has it (module docstring)."""
    if value is None:
        return [_row()]
    message = read_value(value)
    error = message if isinstance(message, tuple) else message_error(m := read_fields(message, source_tz))
    if error:
        return [_row(error_code=error[0], error_detail=error[1])]
    return [decoded_row(m)]
