"""CloudCanal JSON (spec 000): column types and values to canonical text.

The SQL staging model (models/staging/cloudcanal_json/) explodes the message; this module
canonicalises one row image through the `cdc_canonical_image` Spark function.

CloudCanal declares each column's type twice: `dbValType` (the source database's type text,
e.g. `varchar(22)`, `bigint(20) unsigned`) and `jdbcType` (a java.sql.Types code, table in the
spec appendix).  The staging model passes `dbValType`, and for a column that only has a
`jdbcType` the text `jdbc:<code>`, as the column's source type.  Values arrive as JSON strings
(or JSON numbers) in the MySQL text forms Canal-style tools use; `TIMESTAMP` values are wall
clock in the source time zone.  The MySQL type mapping and the text parsers here are shared
with the Debezium decoder (its DDL `tableChanges` carry the same MySQL type texts).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cdc_unify.canonical import (
    CanonicalError,
    IntervalYM,
    base_type,
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
    parse_base64,
    parse_bool_text,
    parse_date_text,
    parse_datetime_text,
    parse_decimal_text,
    parse_float_text,
    parse_integer_text,
)

# java.sql.Types codes (spec 000 appendix) -> logical type; codes not listed are read as strings.
JDBC_LOGICAL_TYPES: dict[int, str] = {
    -7: "boolean",  # BIT
    16: "boolean",  # BOOLEAN
    -6: "tinyint",
    5: "smallint",
    4: "int",
    -5: "bigint",
    2: "decimal",  # NUMERIC
    3: "decimal",  # DECIMAL
    7: "float",  # REAL
    6: "double",  # FLOAT is double precision in JDBC
    8: "double",
    1: "string",  # CHAR
    12: "string",  # VARCHAR
    -1: "string",  # LONGVARCHAR
    2005: "string",  # CLOB
    -2: "binary",
    -3: "binary",
    -4: "binary",
    2004: "binary",  # BLOB
    91: "date",
    92: "time",
    93: "datetime",  # TIMESTAMP without zone
}

_INTEGER_WIDTHS = {
    # MySQL integer type -> (signed logical type, unsigned logical type)
    "tinyint": ("tinyint", "smallint"),
    "smallint": ("smallint", "int"),
    "mediumint": ("int", "int"),
    "int": ("int", "bigint"),
    "integer": ("int", "bigint"),
    "bigint": ("bigint", "ubigint"),
}
_SIMPLE_TYPES = {
    "boolean": "boolean",
    "bool": "boolean",
    "double": "double",
    "double precision": "double",
    "real": "double",  # MySQL REAL is DOUBLE unless REAL_AS_FLOAT is set
    "char": "string",
    "varchar": "string",
    "character": "string",
    "character varying": "string",
    "nchar": "string",
    "nvarchar": "string",
    "varchar2": "string",
    "nvarchar2": "string",
    "tinytext": "string",
    "text": "string",
    "mediumtext": "string",
    "longtext": "string",
    "enum": "string",
    "set": "string",
    "clob": "string",
    "json": "json",
    "binary": "binary",
    "varbinary": "binary",
    "tinyblob": "binary",
    "blob": "binary",
    "mediumblob": "binary",
    "longblob": "binary",
    "bytea": "binary",
    "raw": "binary",
    "date": "date",
    "time": "time",
    "datetime": "datetime",
    "timestamp": "timestamp",  # MySQL TIMESTAMP is an instant
    "timestamp without time zone": "datetime",
    "timestamp with local time zone": "timestamp",
    "timestamp with time zone": "zoned_datetime",
    "year": "int",
    "interval year to month": "interval_ym",
    "interval day to second": "interval_ds",
}
_ARGS_RE = re.compile(r"\(([^)]*)\)")
_JDBC_SOURCE_TYPE_RE = re.compile(r"^jdbc:(-?\d+)$")


def mysql_logical_type(type_text: str | None) -> str | None:
    """Logical type of a MySQL-style column type text (`bigint(20) unsigned`, `decimal(38,10)`,
    `datetime(6)`, `tinyint(1)`); None when the type is unknown (the value is then kept as sent)."""
    if not type_text:
        return None
    text = type_text.strip().lower()
    args = [a.strip() for m in _ARGS_RE.finditer(text) for a in m.group(1).split(",") if a.strip()]
    words = _ARGS_RE.sub(" ", text).split()
    unsigned = "unsigned" in words
    name = " ".join(w for w in words if w not in ("unsigned", "signed", "zerofill"))
    if name in _INTEGER_WIDTHS:
        if name == "tinyint" and args == ["1"]:
            return "boolean"  # MySQL's BOOLEAN is tinyint(1)
        return _INTEGER_WIDTHS[name][1 if unsigned else 0]
    if name in ("decimal", "numeric", "dec", "fixed", "number"):
        precision = int(args[0]) if args and args[0].isdigit() else 10
        scale = int(args[1]) if len(args) > 1 and args[1].isdigit() else 0
        return f"decimal({precision},{scale})"
    if name == "float":
        # FLOAT(p) with p > 24 is double precision; FLOAT and FLOAT(M,D) stay single precision.
        return "double" if len(args) == 1 and args[0].isdigit() and int(args[0]) > 24 else "float"
    if name == "bit":
        return "boolean" if args in ([], ["1"]) else None
    return _SIMPLE_TYPES.get(name)


def jdbc_logical_type(code: int) -> str:
    return JDBC_LOGICAL_TYPES.get(code, "string")


def source_logical_type(source_type: str | None) -> str:
    """Logical type of a CloudCanal source type: a dbValType text or `jdbc:<code>`."""
    if source_type:
        m = _JDBC_SOURCE_TYPE_RE.match(source_type.strip())
        if m:
            return jdbc_logical_type(int(m.group(1)))
    return mysql_logical_type(source_type) or "string"


# ---------------------------------------------------------------- text parsers
_ISO_DURATION_RE = re.compile(
    r"^(-)?P(?:([-+]?\d+)Y)?(?:([-+]?\d+)M)?(?:([-+]?\d+)W)?(?:([-+]?\d+)D)?"
    r"(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+(?:\.\d{1,9})?)S)?)?$"
)


def parse_iso_duration(text: str) -> tuple[int, Decimal]:
    """ISO-8601 duration with optionally signed components (Debezium writes `P1Y2M-3DT0H0M0S`)
    -> (months, seconds).  Days are 24 hours; years 12 months."""
    m = _ISO_DURATION_RE.match(text.strip())
    if not m or text.strip() in ("P", "-P") or text.strip().endswith("T"):
        raise CanonicalError(f"{text!r} is not an ISO-8601 duration")
    neg, years, months, weeks, days, hours, minutes, seconds = m.groups()
    total_months = int(years or 0) * 12 + int(months or 0)
    total_seconds = (
        (int(weeks or 0) * 7 + int(days or 0)) * 86400
        + int(hours or 0) * 3600
        + int(minutes or 0) * 60
        + Decimal(seconds or 0)
    )
    sign = -1 if neg else 1
    return sign * total_months, sign * total_seconds


_ORACLE_YM_RE = re.compile(r"^([+-])?(\d+)-(\d+)$")
_ORACLE_DS_RE = re.compile(r"^([+-])?(\d+) (\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$")


def parse_interval_text(text: str) -> tuple[int, Decimal]:
    """An ISO-8601 duration, or Oracle's interval text (`+01-02` year-month, `-03 04:05:06.500000`
    day-second, what JDBC's INTERVALYM/INTERVALDS toString print) -> (months, seconds)."""
    stripped = text.strip()
    m = _ORACLE_YM_RE.match(stripped)
    if m:
        months = int(m.group(2)) * 12 + int(m.group(3))
        return (-months if m.group(1) == "-" else months), Decimal(0)
    m = _ORACLE_DS_RE.match(stripped)
    if m:
        sign, days, hours, minutes, seconds, fraction = m.groups()
        total = int(days) * 86400 + int(hours) * 3600 + int(minutes) * 60 + Decimal(f"{seconds}.{fraction or 0}")
        return 0, (-total if sign == "-" else total)
    return parse_iso_duration(stripped)


def interval_ym_text(months: int, seconds: Decimal, raw: str) -> str:
    if seconds:
        raise CanonicalError(f"{raw!r} has a day-time part in a year-month interval")
    return fmt_interval_ym(IntervalYM(months))


def interval_ds_text(months: int, seconds: Decimal, raw: str) -> str:
    if months:
        raise CanonicalError(f"{raw!r} has a year-month part in a day-time interval")
    total_ns = seconds * 1_000_000_000
    if total_ns != total_ns.to_integral_value():
        raise CanonicalError(f"{raw!r} is finer than nanoseconds")
    sign = -1 if total_ns < 0 else 1
    whole_us, nanos = divmod(abs(int(total_ns)), 1000)
    delta = dt.timedelta(microseconds=whole_us)
    frac_ns = (whole_us % 1_000_000) * 1000 + nanos
    return fmt_interval_ds(sign * delta, frac_ns)


_ZONED_RE = re.compile(
    r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)\s*(Z|[+-]\d{2}:?\d{2}|[A-Za-z][A-Za-z0-9_+\-/]*)?$"
)


def zone_of(zone_id: str) -> dt.tzinfo:
    """`Z`, `+08:00`, `+0800` or an IANA id -> tzinfo."""
    if zone_id == "Z":
        return dt.timezone.utc
    m = re.match(r"^([+-])(\d{2}):?(\d{2})$", zone_id)
    if m:
        offset = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return dt.timezone(offset if m.group(1) == "+" else -offset)
    try:
        return ZoneInfo(zone_id)
    except (ZoneInfoNotFoundError, ValueError):
        raise CanonicalError(f"unknown time zone {zone_id!r}") from None


def instant_text(text: str, source_tz: str) -> str:
    """A datetime text with an offset/zone, or wall clock in `source_tz`, -> canonical instant."""
    m = _ZONED_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a timestamp")
    wall, nanos = parse_datetime_text(m.group(1))
    return fmt_instant(wall.replace(tzinfo=zone_of(m.group(2) or source_tz)), nanos)


def zoned_text(text: str, source_tz: str) -> str:
    """`2020-11-25 00:01:02.012345 Asia/Shanghai` (or an offset) -> canonical zoned datetime."""
    m = _ZONED_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a zoned datetime")
    zone_id = m.group(2) or source_tz
    wall, nanos = parse_datetime_text(m.group(1))
    return fmt_zoned(wall.replace(tzinfo=zone_of(zone_id)), zone_id, nanos)


def canonical_from_text(logical_type: str, text: str, source_tz: str) -> str:
    """Canonical text of a value sent as text in the source's usual text form."""
    kind = base_type(logical_type)
    if kind in ("string", "json"):
        return text
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return fmt_integer(parse_integer_text(text))
    if kind == "decimal":
        return fmt_decimal(parse_decimal_text(text))
    if kind == "float":
        return fmt_float32(parse_float_text(text))
    if kind == "double":
        return fmt_double(parse_float_text(text))
    if kind == "boolean":
        return fmt_bool(parse_bool_text(text))
    if kind == "binary":
        return fmt_binary(parse_base64(text))
    if kind == "date":
        return fmt_date(parse_date_text(text))
    if kind == "time":
        return canonical_time_text(text)
    if kind == "datetime":
        return fmt_datetime(*parse_datetime_text(text))
    if kind == "timestamp":
        return instant_text(text, source_tz)
    if kind == "zoned_datetime":
        return zoned_text(text, source_tz)
    if kind == "interval_ym":
        return interval_ym_text(*parse_interval_text(text), text)
    if kind == "interval_ds":
        return interval_ds_text(*parse_interval_text(text), text)
    raise CanonicalError(f"unknown logical type {logical_type!r}")


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """One row image (column -> text as sent) -> (canonical texts, logical types).

    Every column of `values` and of `source_types` gets a logical type; a column without a
    declared type is `string` and keeps its text.  A value its type cannot read raises
    CanonicalError naming the column.
    """
    types = {col: source_logical_type(source_types.get(col)) for col in {**source_types, **values}}
    canonical: dict[str, Any] = {}
    for col, raw in values.items():
        if raw is None:
            canonical[col] = None
            continue
        try:
            canonical[col] = canonical_from_text(types[col], str(raw), source_tz)
        except CanonicalError as exc:
            raise CanonicalError(f"column {col!r} ({source_types.get(col) or 'no type'}): {exc}") from None
    return canonical, types
