"""Pure-Python twin of the OMS Default staging SQL as of commit f07d798
(models/staging/oms_default_json/stg_oms_default_json__changes.sql and
models/staging/oms_default_ext_json/stg_oms_default_ext_json__changes.sql over macros/oms.sql
`oms_default_records` + `oms_default_staged_rows`, the macros of macros/staging.sql,
`cdc_exact_variant` and `cdc_jvm_canonical_image`): the oracle of `cdc_oms_default_rows`
(tests/python/test_jvm_oms_default_rows.py).

    oms_default_rows(dialect, value, source_tz) -> [ {FIELDS...} ]

One dict for the one staged row of the landed value (row_index 0), the columns of the SQL's CTE
`keyed` under the names of FIELDS: maps as dicts in the SQL's key order, the record time as
microseconds since the epoch, the decimal(30,0) storeDataSequence as its digits. A tombstone (value
None) is row_index 0, all else None; a quarantined value is row_index 0 with error_code /
error_detail only. `message_op` is None for a DDL record: the SQL classifies its statement with
cdc_ddl_op. `key_image` is the map the SQL's primary_key is built from. `natural_id` is the SQL's
sha2 of concat_ws('\\u0001', recordType, cast(prevStruct as string), cast(postStruct as string),
to_json of allMetaData without checkpoint, each value cast(variant as string)).

The JSON is read as cdc_exact_variant and the SQL read it (tests/python/canal_rows_oracle.py: ExactJson's
rules, numbers as strings of their exact digits), then as Spark holds it: every string and key as
UTF-8, a lone surrogate as '?', and every object below the top level built again by the cast of the
message to map<string, variant>, its keys sorted by UTF-16 code units (String.compareTo). Row
images of oms_default_ext_json go through the Python value decoder
`cdc_unify.canonicalizers.oms_default_ext_json` (the definition) under their `__light_type`
schemaTypes; oms_default_json keeps every value as sent and types each column 'string'.

Where the old SQL fails the whole build instead of staging a row, the oracle quarantines the value:
- an object below the top level with two keys that are one key once Spark stores them (lone
  surrogates as '?': {"\\ud800": 1, "\\udfff": 2}, or {"\\ud800": 1, "?": 2}): VARIANT_DUPLICATE_KEY
  in the SQL; here `invalid_json`, the duplicate-key refusal of any JSON value;
- allMetaData.timestamp / storeDataSequence digits ending in U+0085, U+2028 or U+2029 (which the
  SQL's `rlike '...$'` lets through as a final line terminator and its ANSI cast then refuses):
  here not epoch seconds / not a non-negative integer, as for any other text, at that check's place.
"""

from __future__ import annotations

import hashlib
import re
import sys
from typing import Any

from canal_rows_oracle import (
    ABSENT,
    JAVA_END,
    MAX_DEPTH,
    _quoted,
    decode,
    map_union,
    nested,
    parse,
    present,
    spark_str,
    text,
)

DIALECTS = ("oms_default_json", "oms_default_ext_json")
FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "message_op", "source_db_type", "tenant_name",
    "database_name", "table_name", "primary_key_columns", "primary_key_source", "before", "after",
    "before_is_partial", "after_is_partial", "column_source_types", "column_types", "key_image", "event_ts_micros",
    "event_ts_precision", "source_position", "transaction_id", "position_digits", "natural_id", "ddl_statement",
)  # fmt: skip
RECORD_TYPES = ("INSERT", "UPDATE", "DELETE", "ROW", "DDL", "HEARTBEAT")
ROW_OPS = {"INSERT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE", "ROW": "SNAPSHOT"}
LIGHT_TYPE = "__light_type"
SEPARATOR = "\x01"  # record_primary_key / record_primary_value, and the parts natural_id hashes
INVALID_UTF8 = "the value is not valid UTF-8"
INVALID_JSON = "the value is not valid JSON (RFC 8259; duplicate keys are rejected too)"
LIGHT_TYPE_SHAPE = '{column: {"schemaType": type}}'
# Java's `.` (no DOTALL) matches any character but these line terminators.
_JAVA_DOT = r"[^\n\r\x85\u2028\u2029]"
# Line terminators `$` lets through that Spark's cast of a string to a number refuses (ANSI: an error).
_CAST_REFUSES = ("\x85", "\u2028", "\u2029")


class DuplicateKey(ValueError):
    """Two keys of an object below the top level are one key as Spark stores them."""


# ---------------------------------------------------------------- the document as the SQL reads it
def spark_document(document: Any) -> Any:
    """The parsed value as the SQL holds it after `cdc_json_object(exact_document)`: strings and keys
    as Spark stores them (spark_str), each object below the top level in String.compareTo order of
    those keys; DuplicateKey where two of them collide. The top level's keys are only looked up by
    name (a collision there stays in the SQL's map, and no field the SQL reads is '?')."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 2 * MAX_DEPTH + 500))
    try:
        if isinstance(document, dict):
            return {spark_str(k): _rebuilt(v) for k, v in document.items()}
        return _rebuilt(document)
    finally:
        sys.setrecursionlimit(limit)


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _rebuilt(value: Any) -> Any:
    if isinstance(value, dict):
        fields = [(spark_str(k), _rebuilt(v)) for k, v in value.items()]
        if len({k for k, _ in fields}) != len(fields):
            raise DuplicateKey("duplicate key")
        return dict(sorted(fields, key=lambda f: _utf16(f[0])))
    if isinstance(value, list):
        return [_rebuilt(v) for v in value]
    if isinstance(value, str):
        return type(value)(spark_str(value))  # Num stays Num
    return value


def variant_string(value: Any) -> str | None:
    """cast(variant as string): a string or number's text, true/false, an object or array as JSON
    (numbers as strings, Jackson's escapes); None for JSON null or an absent field."""
    return text(value)


def json_object(value: Any) -> dict[str, Any] | None:
    """cdc_json_object: the object, None for anything else."""
    return value if isinstance(value, dict) else None


def schema_type(declared: Any) -> str | None:
    """try_variant_get(declared, '$.schemaType', 'string'): any JSON value's text, None when
    `declared` is not an object or has no (or a null) schemaType."""
    return text(declared.get("schemaType", ABSENT)) if isinstance(declared, dict) else None


# ---------------------------------------------------------------- Spark's functions as the SQL uses them
def _digits(value: str | None, most: int, sign: bool) -> int | None:
    """`rlike '^-?[0-9]{1,n}$'` (a Java find: `$` also before one final line terminator), then the
    cast, which trims \\n and \\r and refuses (the SQL's build fails) the other terminators."""
    pattern = f"{'-?' if sign else ''}[0-9]{{1,{most}}}{JAVA_END}"
    if value is None or not re.fullmatch(pattern, value) or value.endswith(_CAST_REFUSES):
        return None
    return int(value.rstrip("\r\n"))


def has_tenant(db_type: str | None, db: str | None) -> bool:
    """coalesce(db_type rlike '^(?i)(OB_|OCEANBASE)' and db rlike '^[^.]+[.].', false): (?i) folds
    ASCII only."""
    if db_type is None or db is None:
        return False
    ob = re.match("OB_|OCEANBASE", db_type, re.IGNORECASE | re.ASCII)
    return bool(ob and re.match(f"[^.]+[.]{_JAVA_DOT}", db))


def names(text_value: str | None) -> list[str] | None:
    """split(text, '\\u0001'): every piece, empty ones too; None for None."""
    return None if text_value is None else text_value.split(SEPARATOR)


# ---------------------------------------------------------------- records .. checked
def read_record(message: dict[str, Any], dialect: str) -> dict[str, Any]:
    """The `records`, `metadata`, `light_types` and `images` CTEs."""
    get = message.get
    record_type = text(get("recordType", ABSENT))
    meta_json, prev_json, post_json = get("allMetaData", ABSENT), get("prevStruct", ABSENT), get("postStruct", ABSENT)
    meta, prev_struct, post_struct = json_object(meta_json), json_object(prev_json), json_object(post_json)
    field = (meta or {}).get
    m = {
        "record_type_present": present(get("recordType", ABSENT)),
        "record_type": record_type,
        "meta_json": meta_json,
        "meta": meta,
        "prev_json": prev_json,
        "post_json": post_json,
        "prev_struct": prev_struct,
        "post_struct": post_struct,
        "row_op": ROW_OPS.get(record_type),
        "needs_before": record_type in ("UPDATE", "DELETE"),
        "needs_after": record_type in ("INSERT", "UPDATE", "ROW"),
        "db": text(field("db", ABSENT)),
        "meta_table_name": text(field("table_name", ABSENT)),
        "nested_name": next((f"allMetaData.{n}" for n in ("db", "table_name") if nested(field(n, ABSENT))), None),
        "db_type": text(field("dbType", ABSENT)),
        "record_primary_key": text(field("record_primary_key", ABSENT)),
        "record_primary_value": text(field("record_primary_value", ABSENT)),
        "checkpoint": text(field("checkpoint", ABSENT)),
        "timestamp_text": text(field("timestamp", ABSENT)),
        "store_sequence": text(field("storeDataSequence", ABSENT)),
        "unique_id": text(field("uniqueId", ABSENT)),
    }
    for side, struct in (("prev", prev_struct), ("post", post_struct)):
        if dialect == "oms_default_ext_json":
            light = (struct or {}).get(LIGHT_TYPE, ABSENT)
            declared = json_object(light)
            m[f"{side}_light_json"] = light
            m[f"{side}_source_types"] = None if declared is None else {k: schema_type(v) for k, v in declared.items()}
            columns = None if struct is None else {k: v for k, v in struct.items() if k != LIGHT_TYPE}
        else:
            m[f"{side}_light_json"], m[f"{side}_source_types"], columns = ABSENT, None, struct
        m[f"{side}_values"] = None if columns is None else {k: text(v) for k, v in columns.items()}
        m[f"{side}_nested"] = None if columns is None else ", ".join(k for k, v in columns.items() if nested(v))
    post_ddl, prev_ddl = (text((s or {}).get("ddl", ABSENT)) for s in (post_struct, prev_struct))
    m["ddl_text"] = post_ddl if post_ddl is not None else prev_ddl
    m["seconds"] = _digits(m["timestamp_text"], 12, sign=True)
    m["sequence_number"] = _digits(m["store_sequence"], 30, sign=False)
    return m


def _light_type_wrong(m: dict[str, Any], side: str) -> bool:
    types = m[f"{side}_source_types"]
    return present(m[f"{side}_light_json"]) and (types is None or None in types.values())


def record_error(m: dict[str, Any]) -> tuple[str, str] | None:
    """`checked`: the record's first error (code, detail), in the SQL's order."""
    t, row = m["record_type"], m["row_op"] is not None
    before, after = m["needs_before"], m["needs_after"]
    checks = (
        (lambda: not m["record_type_present"], "missing_field", lambda: "recordType is missing"),
        (lambda: t not in RECORD_TYPES, "unknown_op",
         lambda: f"recordType {t} is not INSERT, UPDATE, DELETE, ROW, DDL or HEARTBEAT"),
        (lambda: not present(m["meta_json"]), "missing_field", lambda: "allMetaData is missing"),
        (lambda: m["meta"] is None, "wrong_shape", lambda: "allMetaData is not an object"),
        (lambda: m["nested_name"], "wrong_shape", lambda: f"{m['nested_name']} is a JSON object/array, not a name"),
        (lambda: row and not m["db"], "missing_field", lambda: "allMetaData.db is missing"),
        (lambda: row and not m["meta_table_name"], "missing_field", lambda: "allMetaData.table_name is missing"),
        (lambda: before and not present(m["prev_json"]), "missing_field", lambda: f"prevStruct is missing for {t}"),
        (lambda: before and m["prev_struct"] is None, "wrong_shape", lambda: "prevStruct is not an object"),
        (lambda: after and not present(m["post_json"]), "missing_field", lambda: f"postStruct is missing for {t}"),
        (lambda: after and m["post_struct"] is None, "wrong_shape", lambda: "postStruct is not an object"),
        (lambda: t == "DDL" and m["ddl_text"] is None, "missing_field",
         lambda: 'the DDL record has no "ddl" statement'),
        (lambda: _light_type_wrong(m, "prev"), "wrong_shape", lambda: f"prevStruct.{LIGHT_TYPE} is not {LIGHT_TYPE_SHAPE}"),
        (lambda: _light_type_wrong(m, "post"), "wrong_shape", lambda: f"postStruct.{LIGHT_TYPE} is not {LIGHT_TYPE_SHAPE}"),
        (lambda: m["timestamp_text"] is not None and m["seconds"] is None, "invalid_timestamp",
         lambda: f"allMetaData.timestamp {m['timestamp_text']} is not epoch seconds"),
        (lambda: m["store_sequence"] is not None and m["sequence_number"] is None, "wrong_shape",
         lambda: f"allMetaData.storeDataSequence {m['store_sequence']} is not a non-negative integer"),
        (lambda: before and m["prev_nested"], "invalid_value",
         lambda: f"prevStruct values are JSON objects/arrays, not column values: {m['prev_nested']}"),
        (lambda: after and m["post_nested"], "invalid_value",
         lambda: f"postStruct values are JSON objects/arrays, not column values: {m['post_nested']}"),
    )  # fmt: skip
    return next(((code, detail()) for failed, code, detail in checks if failed()), None)


# ---------------------------------------------------------------- canonical .. keyed
def image(
    dialect: str, values: dict | None, types: dict | None, tz: str
) -> tuple[dict | None, dict | None, str | None]:
    """cdc_canonical_image: (values, types, error); oms_default_json keeps the values, all 'string'."""
    if dialect == "oms_default_json":
        return values, None if values is None else dict.fromkeys(values, "string"), None
    canonical, logical, error = decode(dialect, values, types, tz)
    return canonical, logical, spark_str(error)


def natural_text(m: dict[str, Any]) -> str:
    """What the SQL's natural_id hashes: concat_ws('\\u0001', record_type, cast(prev_json as string),
    cast(post_json as string), to_json(transform_values(map_filter(meta, k != 'checkpoint'),
    cast(v as string)))), each null as ''."""
    meta = ",".join(
        f"{_quoted(k)}:{'null' if (s := variant_string(v)) is None else _quoted(s)}"
        for k, v in m["meta"].items()
        if k != "checkpoint"
    )
    parts = (m["record_type"], variant_string(m["prev_json"]), variant_string(m["post_json"]), "{" + meta + "}")
    return SEPARATOR.join(p or "" for p in parts)


def key_image(columns: list[str], before: dict | None, after: dict | None, m: dict[str, Any]) -> dict[str, Any]:
    """`key_images`: each key column's value from after, before, else record_primary_value at the
    name's first place in record_primary_key (try_element_at: None past its end)."""
    sent_names, sent_values = names(m["record_primary_key"]), names(m["record_primary_value"])
    keyed = {}
    for name in columns:
        found = next((v for v in ((after or {}).get(name), (before or {}).get(name)) if v is not None), None)
        if found is None and sent_values is not None:
            place = sent_names.index(name)
            found = sent_values[place] if place < len(sent_values) else None
        keyed[name] = found
    return keyed


def _row(**fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": 0}


def decoded_row(dialect: str, m: dict[str, Any], tz: str) -> dict[str, Any]:
    """`canonical` .. `keyed` of a record that passed `checked`: its row, or its decoder error."""
    t, row_op = m["record_type"], m["row_op"]
    before = image(dialect, m["prev_values"] if m["needs_before"] else None, m["prev_source_types"], tz)
    after = image(dialect, m["post_values"] if m["needs_after"] else None, m["post_source_types"], tz)
    if before[2] is not None or after[2] is not None:
        side, error = ("prevStruct", before[2]) if before[2] is not None else ("postStruct", after[2])
        return _row(error_code="invalid_value", error_detail=f"{side}: {error}")
    db, tenant = m["db"], has_tenant(m["db_type"], m["db"])
    sent_names = [n for n in names(m["record_primary_key"]) or [] if n != ""]
    columns = list(dict.fromkeys(sent_names))
    is_row = row_op is not None
    return _row(
        event_kind="ROW" if is_row else t,
        message_op=None if t == "DDL" else row_op or t,
        source_db_type=None if m["db_type"] is None else m["db_type"].lower(),
        tenant_name=db.split(".", 1)[0] if tenant else None,
        database_name=db.split(".", 1)[1] if tenant else db,
        table_name=m["meta_table_name"],
        primary_key_columns=columns,
        primary_key_source="message" if columns else "none",
        before=before[0],
        after=after[0],
        before_is_partial=False if is_row else None,
        after_is_partial=False if is_row else None,
        column_source_types=map_union(m["prev_source_types"], m["post_source_types"])
        if is_row and dialect == "oms_default_ext_json"
        else None,
        column_types=map_union(before[1], after[1]) if is_row else None,
        key_image=key_image(columns, before[0], after[0], m),
        event_ts_micros=None if m["seconds"] is None else m["seconds"] * 1_000_000,
        event_ts_precision=None if m["seconds"] is None else "s",
        source_position=m["store_sequence"] if m["store_sequence"] is not None else m["checkpoint"],
        transaction_id=m["unique_id"],
        position_digits=None if m["sequence_number"] is None else str(m["sequence_number"]),
        natural_id=hashlib.sha256(natural_text(m).encode("utf-8")).hexdigest(),
        ddl_statement=m["ddl_text"] if t == "DDL" else None,
    )


def oms_default_rows(dialect: str, value: bytes | None, source_tz: str) -> list[dict[str, Any]]:
    """The staged row of one landed value, as the SQL's `keyed` CTE has it (module docstring)."""
    if dialect not in DIALECTS:
        raise ValueError(f"not an OMS Default dialect: {dialect}")
    if value is None:
        return [_row()]
    try:
        document = parse(value.decode("utf-8"))
    except UnicodeDecodeError:
        return [_row(error_code="invalid_utf8", error_detail=INVALID_UTF8)]
    if document is ABSENT:
        return [_row(error_code="invalid_json", error_detail=INVALID_JSON)]
    if not isinstance(document, dict):  # only an object is cast to map<string, variant>, rebuilding what it holds
        return [_row(error_code="wrong_shape", error_detail="the JSON value is not an object")]
    try:
        message = spark_document(document)
    except DuplicateKey:
        return [_row(error_code="invalid_json", error_detail=INVALID_JSON)]
    m = read_record(message, dialect)
    error = record_error(m)
    if error:
        return [_row(error_code=error[0], error_detail=error[1])]
    return [decoded_row(dialect, m, source_tz)]
