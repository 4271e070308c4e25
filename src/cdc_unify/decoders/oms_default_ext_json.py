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

import datetime as dt
import re
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cdc_unify.canonical import (
    CanonicalError,
    IntervalYM,
    canonical_time_text,
    fmt_binary,
    fmt_bool,
    fmt_date,
    fmt_datetime,
    fmt_decimal,
    fmt_double,
    fmt_float32,
    fmt_instant,
    fmt_integer,
    fmt_interval_ds,
    fmt_interval_ym,
    fmt_zoned,
    instant_from_epoch_text,
    nanos_of,
    parse_base64,
    parse_bool_text,
    parse_date_text,
    parse_datetime_text,
    parse_decimal_text,
    parse_float_text,
    parse_integer_text,
)

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
_ZONED_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(?:\s*(\S+))?$")
_OFFSET_RE = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$")
_INTERVAL_UNITS = "YEAR|MONTH|DAY|HOUR|MINUTE|SECOND"
_INTERVAL_RE = re.compile(
    rf"^INTERVAL\s*'\s*([^']*?)\s*'\s*({_INTERVAL_UNITS})(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\))?"
    rf"(?:\s+TO\s+({_INTERVAL_UNITS})(?:\s*\(\s*\d+\s*\))?)?$",
    re.IGNORECASE,
)
_BARE_YM_RE = re.compile(r"^[+-]?\d+-\d+$")
_BARE_DS_RE = re.compile(r"^[+-]?\d+ \d+:\d+:\d+(?:\.\d+)?$")
_YM_FIELDS = ("YEAR", "MONTH")
_DS_FIELDS = ("DAY", "HOUR", "MINUTE", "SECOND")
# Upper bound of every field that is not the leading one.
_FIELD_LIMITS = {"MONTH": 12, "HOUR": 24, "MINUTE": 60, "SECOND": 60}
_EXPONENT_RE = re.compile(r"[eE]")
_MAX_EXPONENT = 100_000  # the spec's own samples reach E-308; a million-digit number is no column value
_NUMERIC_KINDS = frozenset({"tinyint", "smallint", "int", "bigint", "ubigint", "decimal"})
_NANOS_PER_FIELD = {"DAY": 86_400 * 10**9, "HOUR": 3_600 * 10**9, "MINUTE": 60 * 10**9, "SECOND": 10**9}


# ---------------------------------------------------------------- types
def split_schema_type(schema_type: str) -> tuple[str, tuple[int, ...]]:
    """`decimal(10, 2)` -> (`DECIMAL`, (10, 2)); `timestamp with time zone` -> (`TIMESTAMP_WITH_TIME_ZONE`, ())."""
    m = _TYPE_RE.match(schema_type or "")
    if not m:
        return (schema_type or "").strip().upper(), ()
    name = re.sub(r"[\s_]+", "_", m.group(1).strip()).upper()
    params = tuple(int(p) for p in m.groups()[1:] if p is not None)
    return name, params


def logical_type(schema_type: str) -> str:
    """The logical type a `schemaType` declares (`string` for names this module does not know)."""
    name, params = split_schema_type(schema_type)
    logical = SCHEMA_TYPE_LOGICAL.get(name, UNTYPED_LOGICAL_TYPE)
    if logical == "decimal" and params:
        precision, scale = (params + (0,))[:2]
        return f"decimal({precision},{scale})"
    return logical


# ---------------------------------------------------------------- date/time values
def _zone(zone_text: str) -> dt.tzinfo:
    if zone_text.upper() == "Z":
        return dt.timezone.utc
    m = _OFFSET_RE.match(zone_text)
    if m:
        sign, hours, minutes = m.groups()
        offset = dt.timedelta(hours=int(hours), minutes=int(minutes or 0))
        if offset >= dt.timedelta(hours=24):
            raise CanonicalError(f"zone offset {zone_text!r} is out of range")
        return dt.timezone(-offset if sign == "-" else offset)
    try:
        return ZoneInfo(zone_text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise CanonicalError(f"{zone_text!r} is not a time zone") from None


def _read_datetime(text: str, default_zone: str | None) -> tuple[str, str]:
    """DateTime form: a wall clock, or a zoned datetime when a zone follows (or `default_zone` is given)."""
    m = _ZONED_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a datetime YYYY-MM-DD HH:mm:ss[.n] [zoneId]")
    wall, nanos = parse_datetime_text(m.group(1))
    zone_text = m.group(2) or default_zone
    if zone_text is None:
        return fmt_datetime(wall, nanos), "datetime"
    return fmt_zoned(wall.replace(tzinfo=_zone(zone_text)), zone=zone_text, nanos=nanos), "zoned_datetime"


def _read_date(text: str, source_tz: str) -> tuple[str, str]:
    # Oracle DATE carries a time of day and is sent in the DateTime form.
    if _ZONED_RE.match(text.strip()):
        return _read_datetime(text, None)
    return fmt_date(parse_date_text(text)), "date"


def _read_timestamp(text: str, source_tz: str) -> tuple[str, str]:
    if _EPOCH_RE.match(text.strip()):
        instant, nanos = instant_from_epoch_text(text.strip(), "s")
        return fmt_instant(instant, nanos), "timestamp"
    return _read_datetime(text, None)


# ---------------------------------------------------------------- intervals
def _interval_parts(text: str) -> tuple[str, str, str]:
    """(body, leading field, trailing field) of an Oracle interval literal or bare display form."""
    stripped = text.strip()
    m = _INTERVAL_RE.match(stripped)
    if m:
        body, lead, trail = m.groups()
        return body, lead.upper(), (trail or lead).upper()
    if _BARE_YM_RE.match(stripped):
        return stripped, "YEAR", "MONTH"
    if _BARE_DS_RE.match(stripped):
        return stripped, "DAY", "SECOND"
    raise CanonicalError(f"{text!r} is not an interval such as INTERVAL '3' DAY")


def _interval_fields(text: str, family: tuple[str, ...]) -> tuple[bool, dict[str, str]]:
    """(is negative, field -> digits) of an interval of the YEAR..MONTH or DAY..SECOND family."""
    body, lead, trail = _interval_parts(text)
    if lead not in family or trail not in family or family.index(trail) < family.index(lead):
        raise CanonicalError(f"{text!r} is not an interval of {family[0]} to {family[-1]}")
    negative = body.startswith("-")
    tokens = re.split(r"-" if family == _YM_FIELDS else r"[ :]", body.lstrip("+-"))
    fields = family[family.index(lead) : family.index(trail) + 1]
    if len(tokens) != len(fields):
        raise CanonicalError(f"{text!r}: {body!r} does not match {lead} TO {trail}")
    parts = dict(zip(fields, tokens, strict=True))
    for position, (field, token) in enumerate(parts.items()):
        pattern = r"\d+(?:\.\d{1,9})?" if field == "SECOND" else r"\d+"
        if not re.fullmatch(pattern, token):
            raise CanonicalError(f"{text!r}: {field} {token!r} is not a number")
        if position > 0 and float(token) >= _FIELD_LIMITS[field]:
            raise CanonicalError(f"{text!r}: {field} {token} is out of range")
    return negative, parts


def _read_interval_ym(text: str, source_tz: str) -> tuple[str, str]:
    negative, parts = _interval_fields(text, _YM_FIELDS)
    months = int(parts.get("YEAR", 0)) * 12 + int(parts.get("MONTH", 0))
    return fmt_interval_ym(IntervalYM(-months if negative else months)), "interval_ym"


def _read_interval_ds(text: str, source_tz: str) -> tuple[str, str]:
    negative, parts = _interval_fields(text, _DS_FIELDS)
    total_ns = 0
    for field, token in parts.items():
        whole, _, fraction = token.partition(".")
        total_ns += int(whole) * _NANOS_PER_FIELD[field] + (nanos_of(fraction) if fraction else 0)
    seconds, nanos = divmod(total_ns, 10**9)
    text_abs = fmt_interval_ds(dt.timedelta(seconds=seconds), nanos=nanos)
    return ("-" + text_abs if negative and total_ns else text_abs), "interval_ds"


# ---------------------------------------------------------------- dispatch
def _fixed(logical: str, read: Callable[[str], str]) -> Callable[[str, str], tuple[str, str]]:
    return lambda text, source_tz: (read(text), logical)


_READERS: dict[str, Callable[[str, str], tuple[str, str]]] = {
    **{
        kind: _fixed(kind, lambda t: fmt_integer(parse_integer_text(t)))
        for kind in ("tinyint", "smallint", "int", "bigint", "ubigint")
    },
    "boolean": _fixed("boolean", lambda t: fmt_bool(parse_bool_text(t))),
    "decimal": _fixed("decimal", lambda t: fmt_decimal(parse_decimal_text(t))),
    "float": _fixed("float", lambda t: fmt_float32(parse_float_text(t))),
    "double": _fixed("double", lambda t: fmt_double(parse_float_text(t))),
    "string": _fixed("string", str),
    "json": _fixed("json", str),
    "binary": _fixed("binary", lambda t: fmt_binary(parse_base64(t))),
    "date": _read_date,
    "time": _fixed("time", canonical_time_text),
    "datetime": lambda text, source_tz: _read_datetime(text, None),
    "timestamp": _read_timestamp,
    "zoned_datetime": lambda text, source_tz: _read_datetime(text, source_tz),
    "interval_ym": _read_interval_ym,
    "interval_ds": _read_interval_ds,
}


def _check_magnitude(text: str) -> None:
    """Refuse exponents such as `1E+999999999`: written out they would exhaust memory."""
    if _EXPONENT_RE.search(text) and abs(parse_decimal_text(text).adjusted()) > _MAX_EXPONENT:
        raise CanonicalError(f"{text[:40]!r} is out of range")


def read_value(schema_type: str, text: str, source_tz: str) -> tuple[str, str]:
    """(canonical text, logical type) of one value sent for a column of `schema_type`."""
    declared = logical_type(schema_type)
    kind = declared.split("(")[0]
    if kind in _NUMERIC_KINDS:
        _check_magnitude(text)
    try:
        canonical, logical = _READERS[kind](text, source_tz)
    except CanonicalError:
        raise
    except (OverflowError, ValueError, ArithmeticError) as exc:
        # e.g. a zoned datetime whose UTC instant falls outside years 1..9999
        raise CanonicalError(f"{text[:40]!r} is out of range: {exc}") from None
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
