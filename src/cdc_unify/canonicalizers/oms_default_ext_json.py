"""OceanBase OMS DefaultExtendColumnType JSON (spec 003): `__light_type` types and values to canonical text.

The message is OMS Default JSON whose images also hold `__light_type`: `{column: {"schemaType": T}}`.
The staging model (macros/oms.sql) removes that entry from the images and passes the
`schemaType`s here as `source_types`; values arrive as their exact text.  Typing follows the
spec's appendix (OceanBase MySQL / Oracle tenant -> Long, BigDecimal, Double, String, Bytes, Date,
Time, DateTime, Timestamp) and the type names its samples use (`TINYINT`, `INT64`, `BIGINT`,
`BLOB`, `DATETIME`, `TIMESTAMP`, ... and, from the OMS DataWorks 2.0 sample, `BOOLEAN`,
`ZONED_DATETIME`, `INTERVAL_DAY_TO_SECOND`, `INTERVAL_YEAR_TO_MONTH`).

Value forms (appendix):
- integers: plain digits; `BIGINT` holds values beyond int64 (`10223372036854775806` in the
  sample, next to an `INT64` column), so it is the `ubigint` logical type; BOOL/BOOLEAN is 1/0.
- DECIMAL: BigDecimal text, trailing zeros kept, scientific notation allowed (`1E-7`).
- FLOAT / DOUBLE: 7 / 16 significant digits; read back to the nearest 32/64-bit value.
- bytes: base64.
- DATE `YYYY-MM-DD`; TIME `HH:mm:ss[.nnnnnnnnn]`; DATETIME `YYYY-MM-DD HH:mm:ss[.n…] [zoneId]`:
  without a zone it is a wall clock (`datetime`), with one a `zoned_datetime`.
- TIMESTAMP `seconds[.nnnnnnnnn]` since the epoch: an instant.  Oracle tenants map TIMESTAMP to
  the DateTime form instead, which is read as DATETIME.
- intervals (Oracle tenants; strings in the appendix): `INTERVAL '3' DAY`,
  `INTERVAL '4-2' YEAR TO MONTH`, `INTERVAL '-3 04:05:06.5' DAY TO SECOND` or Oracle's bare
  `+03 04:05:06.500000` / `+04-02`.
- illegal dates the appendix says are sent verbatim (or as `0000-00-00 00:00:00`) cannot be read
  as their type: CanonicalError, so the message is quarantined with `invalid_value`.

A column without a type keeps its value as sent (`string`); a type without a value is still
reported in the logical types, so the schema registry sees it.  Unknown type names read as
`string` too: never a failure for a name this module does not know.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from cdc_unify.canonical import CanonicalError, canonical_date_text, fmt_instant, instant_from_epoch_text
from cdc_unify.canonicalizers._value_text import TEXT_READERS, zoned_text

UNTYPED_LOGICAL_TYPE = "string"

# schemaType (upper case, words joined by `_`, parameters removed) -> logical type.
SCHEMA_TYPE_LOGICAL: dict[str, str] = {
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "MEDIUMINT": "int",
    "INT": "int",
    "INTEGER": "int",
    "YEAR": "smallint",
    "INT64": "bigint",
    "LONG": "bigint",
    "BIGINT": "ubigint",
    "BOOL": "boolean",
    "BOOLEAN": "boolean",
    "DECIMAL": "decimal",
    "NUMERIC": "decimal",
    "NUMBER": "decimal",
    "BIGDECIMAL": "decimal",
    "FLOAT": "float",
    "BINARY_FLOAT": "float",
    "DOUBLE": "double",
    "BINARY_DOUBLE": "double",
    "CHAR": "string",
    "NCHAR": "string",
    "VARCHAR": "string",
    "VARCHAR2": "string",
    "NVARCHAR2": "string",
    "TINYTEXT": "string",
    "TEXT": "string",
    "MEDIUMTEXT": "string",
    "LONGTEXT": "string",
    "ENUM": "string",
    "SET": "string",
    "CLOB": "string",
    "NCLOB": "string",
    "ROWID": "string",
    "UROWID": "string",
    "STRING": "string",
    "JSON": "json",
    "TINYBLOB": "binary",
    "BLOB": "binary",
    "MEDIUMBLOB": "binary",
    "LONGBLOB": "binary",
    "BINARY": "binary",
    "VARBINARY": "binary",
    "BIT": "binary",
    "RAW": "binary",
    "BFILE": "binary",
    "BYTES": "binary",
    "DATE": "date",
    "TIME": "time",
    "DATETIME": "datetime",
    "TIMESTAMP": "timestamp",
    "ZONED_DATETIME": "zoned_datetime",
    "TIMESTAMP_WITH_TIME_ZONE": "zoned_datetime",
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": "zoned_datetime",
    "INTERVAL_YEAR_TO_MONTH": "interval_ym",
    "INTERVAL_DAY_TO_SECOND": "interval_ds",
}

_TYPE_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$")
_EPOCH_RE = re.compile(r"^-?\d+(?:\.\d+)?$")


# ---------------------------------------------------------------- types
def split_schema_type(schema_type: str) -> tuple[str, tuple[int, ...]]:
    """`decimal(10, 2)` -> (`DECIMAL`, (10, 2)); `timestamp with time zone` -> (`TIMESTAMP_WITH_TIME_ZONE`, ())."""
    m = _TYPE_RE.match(schema_type or "")
    if not m:
        return (schema_type or "").strip().upper(), ()
    name = re.sub(r"[\s_]+", "_", m.group(1).strip()).upper()
    params = tuple(int(p) for p in m.groups()[1:] if p is not None)
    return name, params


@functools.lru_cache(maxsize=4096)  # a feed declares few distinct types, each again in every image
def logical_type(schema_type: str) -> str:
    """The logical type a `schemaType` declares (`string` for names this module does not know)."""
    name, params = split_schema_type(schema_type)
    logical = SCHEMA_TYPE_LOGICAL.get(name, UNTYPED_LOGICAL_TYPE)
    if logical == "decimal" and params:
        precision, scale = (params + (0,))[:2]
        return f"decimal({precision},{scale})"
    return logical


# ---------------------------------------------------------------- date/time values
def _read_date(text: str, source_tz: str) -> tuple[str, str]:
    # Oracle DATE carries a time of day and is sent in the DateTime form.
    if len(text.strip()) > len("YYYY-MM-DD"):
        return zoned_text(text, None)
    return canonical_date_text(text), "date"


def _read_timestamp(text: str, source_tz: str) -> tuple[str, str]:
    if _EPOCH_RE.match(text.strip()):
        instant, nanos = instant_from_epoch_text(text.strip(), "s")
        return fmt_instant(instant, nanos), "timestamp"
    return zoned_text(text, None)


# ---------------------------------------------------------------- dispatch
def _typed(kind: str) -> Callable[[str, str], tuple[str, str]]:
    read = TEXT_READERS[kind]
    return lambda text, source_tz: (read(text, source_tz), kind)


# The shared text forms, except where the value itself says what it is (a DATETIME with a zone).
_READERS: dict[str, Callable[[str, str], tuple[str, str]]] = {
    **{kind: _typed(kind) for kind in TEXT_READERS},
    "date": _read_date,
    "datetime": lambda text, source_tz: zoned_text(text, None),
    "timestamp": _read_timestamp,
    "zoned_datetime": zoned_text,
}


def read_value(schema_type: str, text: str, source_tz: str) -> tuple[str, str]:
    """(canonical text, logical type) of one value sent for a column of `schema_type`."""
    declared = logical_type(schema_type)
    canonical, logical = _READERS[declared.split("(")[0]](text, source_tz)
    # A declared decimal(p,s) stays the column's type; readers report the bare kind.
    return canonical, declared if logical == "decimal" else logical


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """Typed columns to canonical text; untyped columns as sent; types without a value kept."""
    canonical: dict[str, Any] = {}
    types = {column: logical_type(schema_type) for column, schema_type in source_types.items()}
    for column, text in values.items():
        schema_type = source_types.get(column)
        if schema_type is None:
            canonical[column] = text
            types[column] = UNTYPED_LOGICAL_TYPE
        elif text is None:
            canonical[column] = None
        else:
            try:
                canonical[column], types[column] = read_value(schema_type, text, source_tz)
            except CanonicalError as exc:
                raise CanonicalError(f"column {column!r} ({schema_type}): {exc}") from None
    return canonical, types
