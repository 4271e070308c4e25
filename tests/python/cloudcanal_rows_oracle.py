"""Pure-Python twin of the CloudCanal JSON staging SQL as of commit 3ee905e
(models/staging/cloudcanal_json/stg_cloudcanal_json__changes.sql over the macros of
macros/staging.sql, `cdc_exact_variant` and `cdc_jvm_canonical_image`): the oracle of
`cdc_cloudcanal_rows` (tests/python/test_jvm_cloudcanal_rows.py).

    cloudcanal_rows(value, source_tz) -> [ {FIELDS...}, ... ]

One dict per staged row of the landed value, the columns of the SQL's CTE `decoded` under the
names of FIELDS: maps as dicts in the SQL's key order, timestamps as microseconds since the epoch.
A tombstone (value None) is one row, row_index 0, all else None; a quarantined value is one row,
row_index 0, with error_code / error_detail only. `message_op` is None for a DDL message with a statement
(nullif(trim(sql), '') not null): the SQL classifies that one with cdc_ddl_op. The JSON is read as
cdc_exact_variant reads it, with the readers of tests/python/canal_rows_oracle.py (ExactJson's
rules); row images go through the Python value decoder `cdc_unify.canonicalizers.cloudcanal_json`
(the definition).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from canal_rows_oracle import (
    ABSENT,
    JAVA_END,
    MAX_DEPTH,
    _jackson,
    at,
    decode,
    nested,
    parse,
    present,
    spark_str,
    text,
    text_array,
    text_map,
    text_maps,
    try_bigint,
)

DIALECT = "cloudcanal_json"
FIELDS = (
    "row_index", "error_code", "error_detail", "event_kind", "message_op", "database_name", "schema_name", "table_name",
    "primary_key_columns", "primary_key_source", "before", "after", "before_is_partial", "after_is_partial",
    "column_source_types", "column_types", "event_ts_micros", "emitted_ts_micros", "ddl_statement",
)  # fmt: skip
MAX_MILLIS = 253402300800000  # year 10000, exclusive
DDL_ACTIONS = ("CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "CREATE_INDEX", "DROP_INDEX")
NOT_A_MESSAGE = (
    "not a CloudCanal message: the value must be a JSON object whose data/before are lists"
    " of objects (before as long as data), dbValType/jdbcType objects, pks a list of names"
    " and tableChanges.table.columns distinct named columns"
)
# Spark's cast of a string to an int trims these at both ends.
_SPARK_BLANKS = "".join(map(chr, range(33))) + "\x7f"


# ---------------------------------------------------------------- Spark's functions as the SQL uses them
def spark_trim(value: str | None) -> str | None:
    """trim(text): only spaces."""
    return None if value is None else value.strip(" ")


def nullif_empty(value: str | None) -> str | None:
    return None if value == "" else value


def epoch_millis(digits: str | None) -> int | None:
    """try_cast(case when text rlike '^-?[0-9]{1,16}$' then text end as bigint) (rlike: a Java find)."""
    if digits is None or not re.fullmatch(f"-?[0-9]{{1,16}}{JAVA_END}", digits):
        return None
    return try_bigint(digits)


def try_int(value: str | None) -> int | None:
    """try_cast(text as int): blanks and controls (<= ' ', DEL) trimmed, a sign and ASCII digits only."""
    if value is None or not re.fullmatch(r"[+-]?[0-9]+", value.strip(_SPARK_BLANKS)):
        return None
    number = int(value.strip(_SPARK_BLANKS))
    return number if -(2**31) <= number < 2**31 else None


def variant_order(value: Any) -> Any:
    """The parsed value with every object's keys in the order the SQL reads them: VariantBuilder sorts
    fields by String.compareTo, UTF-16 code units (U+1F600 before U+FF5A, unlike ExactJson), and each
    field of the message read as map<string, variant> is built again from its stored keys, where a
    lone surrogate is already '?' (so {"\\ud800": 1, "a": 2} reads as ? then a)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 2 * MAX_DEPTH + 500))
    try:
        return _variant_order(value)
    finally:
        sys.setrecursionlimit(limit)


def _utf16(key: str) -> bytes:
    return spark_str(key).encode("utf-16-be", "surrogatepass")


def _variant_order(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _variant_order(value[k]) for k in sorted(value, key=_utf16)}
    if isinstance(value, list):
        return [_variant_order(v) for v in value]
    return value


# ---------------------------------------------------------------- fields .. checked
def read_fields(message: dict[str, Any]) -> dict[str, Any]:
    """The `fields` and `classified` CTEs: each field as text or as its typed shape."""
    get = message.get
    is_ddl = get("isDdl", ABSENT)
    changes = get("tableChanges", ABSENT)
    data_rows, before_rows = text_maps(get("data", ABSENT)), text_maps(get("before", ABSENT))
    ddl_columns = text_maps(at(changes, "table", "columns"))
    exec_ts_text, send_ts_text = text(get("execTs", ABSENT)), text(get("sendTs", ABSENT))
    positions = [None if c is None else try_int(c.get("position")) for c in ddl_columns or []]
    order = sorted((i if p is None else p, i) for i, p in enumerate(positions))  # array_sort of (pos, idx)
    entry_type = text(get("entryType", ABSENT))
    return {
        "action": text(get("action", ABSENT)),
        "entry_type": "ROWDATA" if entry_type is None else entry_type,
        "is_ddl_flag": is_ddl if isinstance(is_ddl, bool) else None,
        "is_ddl_json": is_ddl,
        "db": nullif_empty(text(get("db", ABSENT))),
        "schema_text": nullif_empty(text(get("schema", ABSENT))),
        "table_text": nullif_empty(text(get("table", ABSENT))),
        "nested_name": next((n for n in ("db", "schema", "table") if nested(get(n, ABSENT))), None),
        "sql_text": nullif_empty(spark_trim(text(get("sql", ABSENT)))),
        "exec_ts_text": exec_ts_text,
        "send_ts_text": send_ts_text,
        "data_rows": data_rows,
        "before_rows": before_rows,
        "db_val_type": text_map(get("dbValType", ABSENT)),
        "jdbc_type": text_map(get("jdbcType", ABSENT)),
        "pks": text_array(get("pks", ABSENT)),
        "table_changes": changes if isinstance(changes, dict) else None,
        "ddl_columns": ddl_columns,
        "ddl_primary_key": text_array(at(changes, "table", "primaryKeyColumnNames")),
        **{f"has_{n}": present(get(f, ABSENT)) for n, f in HAS_FIELDS},
        "has_ddl_columns": present(at(changes, "table", "columns")),
        "is_ddl": is_ddl is True,
        "data_count": len(data_rows or []),
        "before_count": len(before_rows or []),
        "exec_ms": epoch_millis(exec_ts_text),
        "send_ms": epoch_millis(send_ts_text),
        "ddl_column_names": [None if c is None else c.get("name") for c in ddl_columns or []],
        "ddl_columns_sorted": [ddl_columns[i] for _, i in order],
    }


HAS_FIELDS = (
    ("data", "data"), ("before", "before"), ("db_val_type", "dbValType"), ("jdbc_type", "jdbcType"), ("pks", "pks"),
    ("is_ddl", "isDdl"), ("table_changes", "tableChanges"),
)  # fmt: skip


def _has_null(items: list | None) -> bool:
    return items is None or any(i is None for i in items)


def shape_error(m: dict[str, Any]) -> tuple[str, str] | None:
    """`checked` + `described`: the message's first error (code, detail), in the SQL's order."""
    action, entry = m["action"], m["entry_type"]
    names = m["ddl_column_names"]
    checks = (
        (lambda: m["has_is_ddl"] and m["is_ddl_flag"] is None, "wrong_shape",
         lambda: f"isDdl {spark_str(_jackson(m['is_ddl_json']))} is not a JSON boolean"),
        (lambda: m["nested_name"], "wrong_shape", lambda: f"{m['nested_name']} is a JSON object/array, not a name"),
        (lambda: m["has_data"] and _has_null(m["data_rows"]), "wrong_shape", None),
        (lambda: m["has_before"] and _has_null(m["before_rows"]), "wrong_shape", None),
        (lambda: m["has_db_val_type"] and m["db_val_type"] is None, "wrong_shape", None),
        (lambda: m["has_jdbc_type"] and m["jdbc_type"] is None, "wrong_shape", None),
        (lambda: m["has_pks"] and _has_null(m["pks"]), "wrong_shape", None),
        (lambda: m["has_table_changes"] and m["table_changes"] is None, "wrong_shape", None),
        (lambda: m["has_ddl_columns"] and (_has_null(m["ddl_columns"]) or None in names or len(set(names)) != len(names)),
         "wrong_shape", None),
        (lambda: entry not in ("ROWDATA", "TRANSACTIONEND"), "unknown_op",
         lambda: f"entryType {entry} / action {'null' if action is None else action} is not a CloudCanal operation"),
        (lambda: m["exec_ts_text"] is None, "missing_field", lambda: "execTs is missing"),
        (lambda: m["exec_ms"] is None or abs(m["exec_ms"]) >= MAX_MILLIS, "invalid_timestamp", None),
        (lambda: m["send_ts_text"] is not None and (m["send_ms"] is None or abs(m["send_ms"]) >= MAX_MILLIS),
         "invalid_timestamp", None),
    )  # fmt: skip
    for failed, code, detail in checks:
        if failed():
            return code, _detail(code, m) if detail is None else detail()
    if entry == "TRANSACTIONEND" or m["is_ddl"]:
        return None
    rows = (
        (lambda: action is None, "missing_field", "action is missing"),
        (lambda: action not in ("INSERT", "UPDATE", "DELETE"), "unknown_op",
         f"entryType {entry} / action {action} is not a CloudCanal operation"),
        (lambda: m["table_text"] is None, "missing_field", "table is missing"),
        (lambda: m["data_count"] == 0 and not (action == "DELETE" and m["before_count"] > 0), "missing_field",
         f"{action} carries no rows in data"),
        (lambda: action == "UPDATE" and m["before_count"] not in (0, m["data_count"]), "wrong_shape", NOT_A_MESSAGE),
    )  # fmt: skip
    return next(((code, detail) for failed, code, detail in rows if failed()), None)


def _detail(code: str, m: dict[str, Any]) -> str:
    if code == "wrong_shape":
        return NOT_A_MESSAGE
    return f"execTs/sendTs must be epoch milliseconds: {m['exec_ts_text'] or ''} / {m['send_ts_text'] or ''}"


# ---------------------------------------------------------------- described .. decoded
def source_types(m: dict[str, Any]) -> dict[str, str | None]:
    """`images`.source_types: a DDL's tableChanges columns in position order (typeExpression, typeName,
    jdbc:<jdbcType> or ''), else dbValType after the jdbcType-only columns as jdbc:<code>."""
    if not m["is_ddl"] or m["entry_type"] == "TRANSACTIONEND" or not m["has_ddl_columns"]:
        dbv, jdbc = m["db_val_type"] or {}, m["jdbc_type"] or {}
        only_jdbc = {k: None if v is None else f"jdbc:{v}" for k, v in jdbc.items() if k not in dbv}
        return {**only_jdbc, **dbv}
    types = {}
    for c in m["ddl_columns_sorted"]:
        jdbc = c.get("jdbcType")
        types[c["name"]] = next(
            t
            for t in (c.get("typeExpression"), c.get("typeName"), None if jdbc is None else f"jdbc:{jdbc}", "")
            if t is not None
        )
    return types


def row_images(m: dict[str, Any]) -> list[tuple[dict | None, dict | None]]:
    """`exploded` + `images`: (before_values, after_values) of each staged row of a ROW message."""
    action, before_rows = m["action"], m["before_rows"]
    rows = m["data_rows"] if m["data_count"] > 0 else before_rows
    images = []
    for i, row in enumerate(rows):
        if action == "DELETE":
            images.append((row, None))
        else:
            before = before_rows[i] if action == "UPDATE" and before_rows and i < len(before_rows) else None
            images.append((before, row))
    return images


def _partial(first: dict | None, second: dict | None) -> bool:
    """coalesce(exists(map_keys(first), c -> not map_contains_key(second, c)), false)."""
    return first is not None and second is not None and any(c not in second for c in first)


def staged_op(m: dict[str, Any], kind: str) -> str | None:
    if kind == "TRANSACTION":
        return "TRANSACTIONEND"
    if kind == "ROW":
        return m["action"]
    if m["sql_text"] is not None:
        return None  # cdc_ddl_op(sql_text), left to the SQL
    upper = None if m["action"] is None else m["action"].upper()
    return upper if upper in DDL_ACTIONS else "QUERY"


def keys(m: dict[str, Any], kind: str) -> tuple[list[str | None], str]:
    """`staged`.key_columns and key_source."""
    ddl_keys, pks = m["ddl_primary_key"], [k for k in m["pks"] or [] if k is not None and k != ""]
    if kind == "DDL" and ddl_keys:
        return list(dict.fromkeys(ddl_keys)), "ddl"
    return list(dict.fromkeys(pks)), "message" if pks else "none"


def _row(row_index: int, **fields: Any) -> dict[str, Any]:
    return {name: fields.get(name) for name in FIELDS} | {"row_index": row_index}


def cloudcanal_rows(value: bytes | None, source_tz: str) -> list[dict[str, Any]]:
    """The staged rows of one landed value, as the SQL's `decoded` CTE has them (module docstring)."""
    if value is None:
        return [_row(0)]
    try:
        document = variant_order(parse(value.decode("utf-8")))
    except UnicodeDecodeError:
        return [_row(0, error_code="invalid_utf8", error_detail="the value is not UTF-8 text")]
    if document is ABSENT:
        return [_row(0, error_code="invalid_json", error_detail="the value is not JSON (or repeats a key)")]
    if not isinstance(document, dict):
        return [_row(0, error_code="wrong_shape", error_detail=NOT_A_MESSAGE)]
    m = read_fields(document)
    error = shape_error(m)
    if error:
        return [_row(0, error_code=error[0], error_detail=error[1])]
    kind = "TRANSACTION" if m["entry_type"] == "TRANSACTIONEND" else "DDL" if m["is_ddl"] else "ROW"
    types = source_types(m)
    columns, key_source = keys(m, kind)
    common = {
        "event_kind": kind,
        "message_op": staged_op(m, kind),
        "database_name": m["db"],
        "schema_name": m["schema_text"],
        "table_name": m["table_text"],
        "primary_key_columns": columns,
        "primary_key_source": key_source,
        "column_source_types": None if kind == "TRANSACTION" else types,
        "event_ts_micros": m["exec_ms"] * 1000,
        "emitted_ts_micros": None if m["send_ms"] is None else m["send_ms"] * 1000,
        "ddl_statement": m["sql_text"] if kind == "DDL" else None,
    }
    if kind == "TRANSACTION":
        return [_row(0, **common)]
    if kind == "DDL":
        return [_row(0, **common, column_types=decode(DIALECT, {}, types, source_tz)[1])]
    rows, errors = [], []
    for i, (before_values, after_values) in enumerate(row_images(m)):
        before, after = (
            decode(DIALECT, before_values, types, source_tz),
            decode(DIALECT, after_values, types, source_tz),
        )
        error = after[2] if after[2] is not None else before[2]
        if error is not None:
            errors.append(f"row {i}: {spark_str(error)}")
        rows.append(
            _row(
                i,
                **common,
                before=before[0],
                after=after[0],
                before_is_partial=_partial(after[0], before[0]),
                after_is_partial=_partial(before[0], after[0]),
                column_types=next((t for t in (after[1], before[1]) if t is not None), None),
            )
        )
    if errors:
        return [_row(0, error_code="invalid_value", error_detail=max(errors))]
    return rows
