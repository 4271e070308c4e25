"""Pure-Python twin of the DataWorks staging SQL as of commit f07d798
(models/staging/dataworks_json/stg_dataworks_json__changes.sql and
models/staging/oms_dataworks_json/stg_oms_dataworks_json__changes.sql over macros/dataworks.sql and
the macros of macros/staging.sql they call: cdc_json_documents, cdc_exact_json, cdc_json_nested_name,
cdc_canonical_image): the oracle of `cdc_dataworks_rows` (tests/python/test_jvm_dataworks_rows.py).

    dataworks_rows(dialect, value, source_tz) -> [ {FIELDS...} ]

dialect is dataworks_json (spec 001) or oms_dataworks_json (spec 003). One dict, row_index 0, per
landed value, the columns of the SQL's CTE `decoded` under the names of FIELDS: maps as dicts in
the SQL's key order, timestamps as microseconds since the epoch, position_digits (the SQL's
position_number, decimal(38, 0)) as the text of its integer. A tombstone (value None) has all else None; a quarantined value only
error_code / error_detail. position_id is the SQL's natural_id, `position|op`, where its
dataworks_natural_id takes its first branch, else None (its sha2 of the message text stays in SQL); primary_key stays in SQL.

The value is read three ways, as the SQL reads it: whether it is JSON, and the name fields' nested
check (cdc_json_nested_name), as ExactJson / cdc_exact_variant reads it (the readers of
tests/python/canal_rows_oracle.py); every other field as Spark's from_json (ANSI on, partial
results) reads the text cdc_exact_json rewrote, every number a string of its digits (`spark_read`:
field names case-sensitive, document key order, a field of the wrong JSON type null, a nested value
read as a string the JSON text Jackson writes of it), and get_json_object's "is there a non-null
value at this path". Row images go through the dialect's Python value decoder
(cdc_unify.canonicalizers.dataworks_json / oms_dataworks_json, the definition).

Two departures from the SQL, for values on which it fails the whole dbt build (this oracle
quarantines them instead):
- an object below the top-level one with two keys Spark stores alike (two lone surrogates, or one
  and "?": both '?'; cdc_json_object rebuilds each field's variant and raises VARIANT_DUPLICATE_KEY):
  invalid_json, REPEATED_KEY, once the value is known to be a JSON object (a top-level array or
  the top-level object's own keys never fail; no image ever holds such a pair);
- a position (dataworks_json's sequenceId, else scn; oms_dataworks_json's scn) of digits and a
  final U+0085, U+2028 or U+2029, which passes the SQL's `rlike '^[0-9]{1,n}$'` (Java's `$` matches
  before a final line terminator) and fails its ANSI cast to decimal(38, 0): a message that would
  otherwise decode is wrong_shape, `payload.<field> <text> is not a number`.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from canal_rows_oracle import ABSENT, JAVA_END, MAX_DEPTH, Num, at, decode, nested, parse, spark_str

DIALECTS = ("dataworks_json", "oms_dataworks_json")
FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "op", "source_db_type", "database_name", "schema_name",
    "table_name", "primary_key_columns", "primary_key_source", "before", "after", "before_is_partial",
    "after_is_partial", "column_source_types", "column_types", "event_ts_micros", "emitted_ts_micros",
    "source_position", "position_digits", "position_id", "ddl_statement",
)  # fmt: skip

# from_json's types: a dict is a struct (its fields in order), a one-element list an array of it.
STRING = "string"
TEXT_MAP = "map<string, string>"
_TIMESTAMP = {"eventTime": STRING, "systemTime": STRING, "checkpointTime": STRING}
# Each dialect's message_schema (the model's `set message_schema`) and its names for the family's fields.
SCHEMAS = {
    "dataworks_json": {
        "schema": {
            "dataColumn": [{"name": STRING, "type": STRING}],
            "primaryKey": [STRING],
            "source": {"dbType": STRING, "dbVersion": STRING, "dbName": STRING, "schemaName": STRING,
                       "tableName": STRING},
        },
        "payload": {
            "before": {"dataColumn": TEXT_MAP}, "after": {"dataColumn": TEXT_MAP}, "sequenceId": STRING,
            "scn": STRING, "op": STRING, "timestamp": _TIMESTAMP, "ddl": {"text": STRING, "ddlMeta": STRING},
        },
        "version": STRING,
    },
    "oms_dataworks_json": {
        "version": STRING,
        "schema": {
            "source": {"dbType": STRING, "dbVersion": STRING, "dbName": STRING, "schema": STRING, "table": STRING},
            "column": [{"name": STRING, "type": STRING}],
            "pk": [STRING],
        },
        "payload": {
            "before": {"data": TEXT_MAP}, "after": {"data": TEXT_MAP}, "op": STRING, "timestamp": _TIMESTAMP,
            "ddl": {"text": STRING}, "scn": STRING,
        },
    },
}  # fmt: skip
NAMES = {
    "dataworks_json": {"columns": "dataColumn", "image": "dataColumn", "schema": "schemaName", "table": "tableName",
                       "key": "primaryKey", "sequence": "sequenceId", "ops": "DataWorks"},
    "oms_dataworks_json": {"columns": "column", "image": "data", "schema": "schema", "table": "table", "key": "pk",
                           "sequence": None, "ops": "Dataworks 2.0"},
}  # fmt: skip
# dataworks_op_names: raw_op -> (op_kind, staged_op, needs_before, needs_after), the dialect's own first.
SHARED_OPS = {
    "INSERT": ("ROW", "INSERT", False, True), "DELETE": ("ROW", "DELETE", True, False),
    "TRANSACTION_BEGIN": ("TRANSACTION", "BEGIN", False, False), "TRANSACTION_END": ("TRANSACTION", "COMMIT", False, False),
    "GTID": ("TRANSACTION", "GTID", False, False), "XACOMMIT": ("TRANSACTION", "XACOMMIT", False, False),
    "XAROLLBACK": ("TRANSACTION", "XAROLLBACK", False, False), "CREATE": ("DDL", "CREATE", False, False),
    "ALTER": ("DDL", "ALTER", False, False), "ERASE": ("DDL", "DROP", False, False),
    "QUERY": ("DDL", "QUERY", False, False), "TRUNCATE": ("DDL", "TRUNCATE", False, False),
    "RENAME": ("DDL", "RENAME", False, False), "CINDEX": ("DDL", "CREATE_INDEX", False, False),
    "DINDEX": ("DDL", "DROP_INDEX", False, False),
}  # fmt: skip
OPS = {
    "dataworks_json": {
        "UPDATE_BEFOR": ("ROW", "UPDATE_BEFORE", True, False), "UPDATE_AFTER": ("ROW", "UPDATE_AFTER", False, True),
        "MHEARTBEAT": ("HEARTBEAT", "HEARTBEAT", False, False), **SHARED_OPS,
    },
    "oms_dataworks_json": {
        "UPDATE": ("ROW", "UPDATE", False, True), "HEARTBEAT": ("HEARTBEAT", "HEARTBEAT", False, False), **SHARED_OPS,
    },
}  # fmt: skip
# dataworks_epoch_ms: the epoch milliseconds a timestamp can hold (0001-01-01 .. 9999-12-31).
MIN_MILLIS, MAX_MILLIS = -62135596800000, 253402300799999
BIGINT = 2**63
# Spark's cast of a string to an integer trims these at both ends.
_SPARK_BLANKS = "".join(map(chr, range(33))) + "\x7f"
# The oms position number: the event's millisecond, then the scn of at most 16 digits within it.
SCN_SCALE = 10**16
NO_SCN = 10**16 - 1
# The quarantine of a value the SQL fails the whole build on (repeats_a_stored_key).
REPEATED_KEY = "the value is not valid JSON: two keys of an object are the same once a lone surrogate is '?'"


# ---------------------------------------------------------------- from_json of cdc_exact_json's text
_ORDERED = json.JSONDecoder(parse_int=Num, parse_float=Num)


def ordered(text: str) -> Any:
    """A text `parse` accepted, with every object's keys in the document's order, as from_json reads them."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 500))
    try:
        return _ORDERED.decode(text)
    finally:
        sys.setrecursionlimit(limit)


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\f": "\\f", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02X}{units[i + 1]:02X}" for i in range(0, len(units), 2))


def _quoted(text: str) -> str:
    """Jackson's UTF8JsonGenerator as from_json copies a value: '"', '\\' and the short escapes,
    other controls as \\u00XX, every UTF-16 surrogate (a lone one, or a half of a character outside
    the BMP) as \\uXXXX, all in upper-case hex; anything else (DEL, U+0080.., U+2028) as it is."""
    return '"' + re.sub('["\\\\\x00-\x1f\ud800-\udfff\U00010000-\U0010ffff]', lambda m: _escape(m[0]), text) + '"'


def json_text(value: Any) -> str:
    """The compact JSON text from_json reads a nested value as, for a string field (numbers are strings)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_quoted(k)}:{json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null"


def spark_text(value: Any) -> str | None:
    """A string field: a string as Spark stores it (a lone surrogate '?'), true/false, a nested value's JSON."""
    if value is ABSENT or value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return spark_str(str(value))  # a Num too: its digits
    return json_text(value)


def spark_read(value: Any, spark_type: Any) -> Any:
    """from_json's reading of `value` as `spark_type` (SCHEMAS' notation), partial results: a value
    of the wrong JSON type is null, the rest of its struct kept; an array of structs with an element
    neither an object nor null is null; map keys as Spark stores them (two keys that both become
    '?' one entry at the first one's place with the last one's value, as the JVM decoder's
    LinkedHashMap keeps the Spark map's two entries; only ever at the top level, which no map is
    read from: repeats_a_stored_key)."""
    if value is ABSENT or value is None:
        return None
    if spark_type == STRING:
        return spark_text(value)
    if spark_type == TEXT_MAP:
        return {spark_str(k): spark_text(v) for k, v in value.items()} if isinstance(value, dict) else None
    if isinstance(spark_type, list):
        element = spark_type[0]
        if not isinstance(value, list):
            return None
        if isinstance(element, dict) and any(not (e is None or isinstance(e, dict)) for e in value):
            return None
        return [spark_read(e, element) for e in value]
    if not isinstance(value, dict):
        return None
    return {name: spark_read(value.get(name, ABSENT), t) for name, t in spark_type.items()}


def json_path_present(value: Any, *path: str) -> bool:
    """get_json_object(exact_text, '$.a.b') is not null: objects all the way down, the last value
    present and not JSON null ("" and containers count)."""
    found = at(value, *path)
    return found is not ABSENT and found is not None


def repeats_a_stored_key(document: dict) -> bool:
    """An object below the top-level one has two keys Spark stores alike (a lone surrogate as '?').
    The SQL's read of the message as map<string, variant> (cdc_json_object) builds each field's
    variant again from its stored keys and fails the dbt build on such a pair (VARIANT_DUPLICATE_KEY);
    at the top level the map keeps both."""
    stack = list(document.values())
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            keys = [spark_str(k) for k in value]
            if len(set(keys)) != len(keys):
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def get(struct: dict | None, *path: str) -> Any:
    """msg['a']['b'] of the read message: null through a null struct."""
    for name in path:
        struct = None if struct is None else struct[name]
    return struct


# ---------------------------------------------------------------- Spark's functions as the SQL uses them
def try_bigint(text: str | None) -> int | None:
    """try_cast(text as bigint): blanks and controls (<= ' ', DEL) trimmed, a sign and ASCII digits only."""
    if text is None:
        return None
    trimmed = text.strip(_SPARK_BLANKS)
    if not re.fullmatch(r"[+-]?[0-9]+", trimmed) or len(trimmed.lstrip("+-").lstrip("0")) > 19:
        return None
    number = int(trimmed)
    return number if -BIGINT <= number < BIGINT else None


def epoch_ms(text: str | None) -> int | None:
    """dataworks_epoch_ms."""
    number = try_bigint(text)
    return number if number is not None and MIN_MILLIS <= number <= MAX_MILLIS else None


def nullif_null(text: str | None) -> str | None:
    return None if text == "null" else text


def digits(text: str | None, most: int) -> int | None | bool:
    """`text rlike '^[0-9]{1,most}$'` then cast(text as decimal(38, 0)): the number; None when the
    text does not match; False when it matches but the cast fails (a final U+0085, U+2028, U+2029:
    Java's `$` allows them, the cast trims only \\r and \\n)."""
    if text is None or not re.fullmatch(f"[0-9]{{1,{most}}}{JAVA_END}", text):
        return None
    stripped = text.rstrip("\r\n")
    return int(stripped) if stripped.isascii() and stripped.isdigit() else False


def spark_lower(text: str | None) -> str | None:
    """lower(): Java's String.toLowerCase, which Python's str.lower follows on these texts."""
    return None if text is None else text.lower()


def zip_types(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    """map_zip_with(before, after, (k, b, a) -> coalesce(a, b)): before's keys, then after's others."""
    keys = [*before, *(k for k in after if k not in before)]
    return {k: after.get(k) if after.get(k) is not None else before.get(k) for k in keys}


# ---------------------------------------------------------------- fields .. checked
def read_fields(dialect: str, document: dict, exact: dict) -> dict[str, Any]:
    """`parsed` + `fields`: the message as from_json reads it (`msg`) and the family's fields;
    `document` in document order, `exact` as ExactJson has it (the variant reads)."""
    names = NAMES[dialect]
    msg = spark_read(document, SCHEMAS[dialect])
    raw_op = get(msg, "payload", "op")
    columns = get(msg, "schema", names["columns"])
    if columns is None:
        source_types = None
    else:
        column_names = [None if c is None else c["name"] for c in columns]
        source_types = {
            name: c["type"]
            for i, (name, c) in enumerate(zip(column_names, columns, strict=True))
            if name is not None and column_names.index(name) == i
        }
    keys = get(msg, "schema", names["key"])
    sequence_id = nullif_null(get(msg, "payload", names["sequence"])) if names["sequence"] else None
    kind, staged_op, needs_before, needs_after = OPS[dialect].get(raw_op, (None, None, None, None))
    image = names["image"]
    name_paths = ("dbName", names["schema"], names["table"])
    return {
        "document": document,
        "msg": msg,
        "raw_op": raw_op,
        "op_kind": kind,
        "staged_op": staged_op,
        "needs_before": needs_before,
        "needs_after": needs_after,
        "schema_text": get(msg, "schema", "source", names["schema"]),
        "table_text": get(msg, "schema", "source", names["table"]),
        "before_values": get(msg, "payload", "before", image),
        "after_values": get(msg, "payload", "after", image),
        "key_columns": list(dict.fromkeys(k for k in keys or [] if k is not None)),
        "sequence_id": sequence_id,
        "scn": nullif_null(get(msg, "payload", "scn")),
        "event_time": get(msg, "payload", "timestamp", "eventTime"),
        "event_ms": epoch_ms(get(msg, "payload", "timestamp", "eventTime")),
        "system_ms": epoch_ms(get(msg, "payload", "timestamp", "systemTime")),
        "source_types": source_types,
        "nested_name": next(
            (f"schema.source.{n}" for n in name_paths if nested(at(exact, "schema", "source", n))), None
        ),
    }


def message_error(dialect: str, m: dict[str, Any]) -> tuple[str, str] | None:
    """dataworks_message_error from its `payload` check on: the first (code, detail), in the SQL's order."""
    names, msg, doc, kind, raw_op = NAMES[dialect], m["msg"], m["document"], m["op_kind"], m["raw_op"]
    columns, image = names["columns"], names["image"]
    row = kind == "ROW"
    checks = (
        (lambda: get(msg, "payload") is None and not json_path_present(doc, "payload"), "missing_field",
         lambda: "payload is absent or null"),
        (lambda: get(msg, "payload") is None, "wrong_shape", lambda: "payload is not an object"),
        (lambda: raw_op is None, "missing_field", lambda: "payload.op is absent or null"),
        (lambda: kind is None, "unknown_op", lambda: f"payload.op {raw_op} is not a {names['ops']} op"),
        (lambda: m["event_time"] is None, "missing_field", lambda: "payload.timestamp.eventTime is absent or null"),
        (lambda: m["event_ms"] is None, "invalid_timestamp",
         lambda: f"payload.timestamp.eventTime {m['event_time']} is not epoch ms"),
        (lambda: json_path_present(doc, "schema", columns) and get(msg, "schema", columns) is None, "wrong_shape",
         lambda: f"schema.{columns} is not a list of {{name, type}}"),
        (lambda: m["nested_name"] is not None, "wrong_shape",
         lambda: f"{m['nested_name']} is a JSON object/array, not a name"),
        (lambda: row and (get(msg, "schema", "source", "dbName") is None or m["table_text"] is None),
         "missing_field", lambda: f"schema.source.dbName/{names['table']} is absent"),
        (lambda: kind == "DDL" and get(msg, "payload", "ddl", "text") is None, "missing_field",
         lambda: f"{raw_op} without payload.ddl.text"),
        (lambda: row and m["before_values"] is None and json_path_present(doc, "payload", "before"), "wrong_shape",
         lambda: f'payload.before is not {{"{image}": {{...}}}}'),
        (lambda: row and m["after_values"] is None and json_path_present(doc, "payload", "after"), "wrong_shape",
         lambda: f'payload.after is not {{"{image}": {{...}}}}'),
        (lambda: m["needs_after"] and m["after_values"] is None, "missing_field",
         lambda: f"{raw_op} without payload.after"),
        (lambda: m["needs_before"] and m["before_values"] is None, "missing_field",
         lambda: f"{raw_op} without payload.before"),
    )  # fmt: skip
    return next(((code, detail()) for failed, code, detail in checks if failed()), None)


# ---------------------------------------------------------------- images .. decoded
def position(dialect: str, m: dict[str, Any]) -> tuple[str | None, int | None | bool, str | None]:
    """The model's source_position, position_number (False: the SQL's cast fails) and natural_id."""
    sequence_id, scn, raw_op = m["sequence_id"], m["scn"], m["raw_op"]
    if dialect == "dataworks_json":
        number = digits(sequence_id, 38)
        if number is None:
            number = digits(scn, 38)
        natural = None if sequence_id is None else f"{sequence_id}|{raw_op}"
        return (sequence_id if sequence_id is not None else scn), number, natural
    within = digits(scn, 16)
    number = within if within is False else m["event_ms"] * SCN_SCALE + (NO_SCN if within is None else within)
    return scn, number, None if scn is None else f"{scn}|{raw_op}"


def _position_field(dialect: str, m: dict[str, Any]) -> tuple[str, str]:
    """The field whose text fails the position's cast (dataworks_json: sequenceId first)."""
    if dialect == "dataworks_json" and digits(m["sequence_id"], 38) is False:
        return "sequenceId", m["sequence_id"]
    return "scn", m["scn"]


def _row(**fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": 0}


def dataworks_rows(dialect: str, value: bytes | None, source_tz: str) -> list[dict[str, Any]]:
    """The staged rows of one landed value, as the SQL's `decoded` CTE has them (module docstring)."""
    if dialect not in DIALECTS:
        raise ValueError(f"not a DataWorks dialect: {dialect}")
    if value is None:
        return [_row()]
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return [_row(error_code="invalid_utf8", error_detail="the value is not UTF-8 text")]
    exact = parse(text)
    if exact is ABSENT:
        return [_row(error_code="invalid_json", error_detail="the value is not valid JSON")]
    if not isinstance(exact, dict):
        return [_row(error_code="wrong_shape", error_detail="the value is not a JSON object")]
    if repeats_a_stored_key(exact):
        return [_row(error_code="invalid_json", error_detail=REPEATED_KEY)]
    m = read_fields(dialect, ordered(text), exact)
    error = message_error(dialect, m)
    if error:
        return [_row(error_code=error[0], error_detail=error[1])]
    kind, types = m["op_kind"], m["source_types"]
    if kind == "ROW":
        before = decode(dialect, m["before_values"], types, source_tz)
        after = decode(dialect, m["after_values"], types, source_tz)
    else:
        before = None, None, None
        after = decode(dialect, {} if kind == "DDL" and types is not None else None, types, source_tz)
    if before[2] is not None or after[2] is not None:
        detail = "; ".join(f"{side}: {e}" for side, e in (("before", before[2]), ("after", after[2])) if e is not None)
        return [_row(error_code="invalid_value", error_detail=spark_str(detail))]
    source_position, number, natural_id = position(dialect, m)
    if number is False:
        field, text = _position_field(dialect, m)
        return [_row(error_code="wrong_shape", error_detail=f"payload.{field} {text} is not a number")]
    if before[1] is None or after[1] is None:
        column_types = after[1] if before[1] is None else before[1]
    else:
        column_types = zip_types(before[1], after[1])
    op = m["staged_op"]
    if dialect == "dataworks_json" and m["raw_op"] == "UPDATE_AFTER" and m["before_values"] is not None:
        op = "UPDATE"  # UPDATE_AFTER with both images: a whole update
    msg, keys = m["msg"], m["key_columns"]
    return [
        _row(
            event_kind=kind,
            op=op,
            source_db_type=spark_lower(get(msg, "schema", "source", "dbType")),
            database_name=get(msg, "schema", "source", "dbName"),
            schema_name=m["schema_text"],
            table_name=m["table_text"],
            primary_key_columns=keys,
            primary_key_source="message" if keys else "none",
            before=before[0] if kind == "ROW" else None,
            after=after[0] if kind == "ROW" else None,
            before_is_partial=False if kind == "ROW" else None,
            after_is_partial=False if kind == "ROW" else None,
            column_source_types=types if kind in ("ROW", "DDL") else None,
            column_types=column_types if kind in ("ROW", "DDL") else None,
            event_ts_micros=m["event_ms"] * 1000,
            emitted_ts_micros=None if m["system_ms"] is None else m["system_ms"] * 1000,
            source_position=source_position,
            position_digits=None if number is None else str(number),
            position_id=natural_id,
            ddl_statement=get(msg, "payload", "ddl", "text") if kind == "DDL" else None,
        )
    ]
