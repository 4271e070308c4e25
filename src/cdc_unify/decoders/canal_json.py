"""Canal FlatMessage (spec 004; CloudCanal's Canal flavour, spec 000): column types and values.

The SQL staging model (models/staging/canal_json/) explodes the message and hands every row
image to `canonicalize_image` through the `cdc_canonical_image` Spark function, with each
column's type as the message declares it: the `mysqlType` text (`int(11)`, `bigint(20)
unsigned`, `decimal(12,2)`, `datetime(6)`), or `jdbc:<code>` built from `sqlType` (a
java.sql.Types code) for a column `mysqlType` does not name.

Alibaba Canal sends every value as a JSON string in MySQL's text form, with two quirks:
binary columns are the raw bytes decoded as ISO-8859-1 (LogEventConvert keeps them that way),
and TIMESTAMP columns are the wall clock of the source server's zone (`source_tz`).

The type mapping and the text readers are shared with oms_canal_json, which overrides the
value conventions OMS documents differently (base64 bytes, epoch-second timestamps).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
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
    parse_bool_text,
    parse_date_text,
    parse_datetime_text,
    parse_decimal_text,
    parse_float_text,
    parse_integer_text,
)

# java.sql.Types codes (spec 000 appendix) -> logical type; a code not listed is read as a string.
JDBC_LOGICAL_TYPES: dict[int, str] = {
    -7: "boolean",  # BIT (Canal reports bit(1) columns as BIT)
    16: "boolean",  # BOOLEAN
    -6: "tinyint",
    5: "smallint",
    4: "int",
    -5: "bigint",
    2: "decimal",  # NUMERIC
    3: "decimal",  # DECIMAL
    6: "float",  # FLOAT: OMS sends 6 for MySQL FLOAT (spec 003 sample)
    7: "float",  # REAL: Canal sends 7 for MySQL FLOAT
    8: "double",
    91: "date",
    92: "time",
    # TIMESTAMP: MySQL DATETIME and TIMESTAMP share the code; reading the text as a zone-less
    # wall clock never shifts it, whereas guessing an instant could.
    93: "datetime",
    2014: "timestamp",  # TIMESTAMP_WITH_TIMEZONE
    -2: "binary",
    -3: "binary",
    -4: "binary",
    2004: "binary",  # BLOB
}

# MySQL integer type -> (signed logical type, unsigned logical type): unsigned needs the next width.
_INTEGER_TYPES = {
    "tinyint": ("tinyint", "smallint"),
    "smallint": ("smallint", "int"),
    "mediumint": ("int", "int"),
    "int": ("int", "bigint"),
    "integer": ("int", "bigint"),
    "bigint": ("bigint", "ubigint"),
    "int64": ("bigint", "ubigint"),  # OMS writes `int64` (spec 003 sample)
}
_NAMED_TYPES = {
    "bool": "boolean",
    "boolean": "boolean",
    "double": "double",
    "double precision": "double",
    "real": "double",  # MySQL REAL is DOUBLE unless REAL_AS_FLOAT is set
    "binary_float": "float",
    "binary_double": "double",
    "char": "string",
    "varchar": "string",
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
    "raw": "binary",
    "date": "date",
    "time": "time",
    "datetime": "datetime",
    "timestamp": "timestamp",  # MySQL TIMESTAMP is an instant
    "timestamp with local time zone": "timestamp",
    "timestamp with time zone": "zoned_datetime",
    "year": "int",
    "interval year to month": "interval_ym",
    "interval day to second": "interval_ds",
}
_DECIMAL_NAMES = ("decimal", "numeric", "dec", "fixed", "number")
_ARGS_RE = re.compile(r"\(([^)]*)\)")
_JDBC_RE = re.compile(r"^jdbc:(-?\d+)$")


def mysql_logical_type(type_text: str | None) -> str | None:
    """Logical type of a MySQL-style type text; None when the type is not known.

    `tinyint(1)` is MySQL's BOOLEAN; `bigint(20) unsigned` needs ubigint; a bare `decimal`
    (OMS drops the arguments) has no known precision and stays `decimal`.
    """
    if not type_text:
        return None
    text = type_text.strip().lower()
    args = [a.strip() for m in _ARGS_RE.finditer(text) for a in m.group(1).split(",") if a.strip()]
    words = _ARGS_RE.sub(" ", text).split()
    unsigned = "unsigned" in words
    name = " ".join(w for w in words if w not in ("unsigned", "signed", "zerofill"))
    if name in _INTEGER_TYPES:
        if name == "tinyint" and args == ["1"]:
            return "boolean"
        return _INTEGER_TYPES[name][1 if unsigned else 0]
    if name in _DECIMAL_NAMES:
        if not args or not all(a.isdigit() for a in args):
            return "decimal"
        return f"decimal({args[0]},{args[1] if len(args) > 1 else 0})"
    if name == "float":
        # FLOAT(p) with p > 24 is double precision; FLOAT and FLOAT(M,D) are single precision.
        return "double" if len(args) == 1 and args[0].isdigit() and int(args[0]) > 24 else "float"
    if name == "bit":
        return "boolean" if args in ([], ["1"]) else "ubigint"  # Canal sends BIT(n) as its number
    return _NAMED_TYPES.get(name)


def source_logical_type(source_type: str | None) -> str:
    """Logical type of a declared source type (`mysqlType` text or `jdbc:<code>`); `string` if unknown."""
    if source_type:
        m = _JDBC_RE.match(source_type.strip())
        if m:
            return JDBC_LOGICAL_TYPES.get(int(m.group(1)), "string")
    return mysql_logical_type(source_type) or "string"


# ---------------------------------------------------------------- zones and zoned datetimes
_OFFSET_RE = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
# `2020-11-25 00:01:02.012345 Asia/Shanghai` (OMS) or `2020-11-25T00:01:02.012345+08:00[Asia/Shanghai]`
# (Java ZonedDateTime.toString); the offset, when present, fixes the instant inside a DST fold.
_ZONED_RE = re.compile(
    r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)"
    r"(Z|[+-]\d{2}:?\d{2})?(?:\[([^\]]+)\]|\s+([A-Za-z][\w+\-/]*|[+-]\d{2}:?\d{2}))?$"
)


def zone_of(zone_id: str) -> dt.tzinfo:
    """`Z`, `+08:00`, `+0800` or an IANA zone id -> tzinfo."""
    if zone_id == "Z":
        return dt.timezone.utc
    m = _OFFSET_RE.match(zone_id)
    if m:
        offset = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return dt.timezone(offset if m.group(1) == "+" else -offset)
    try:
        return ZoneInfo(zone_id)
    except (ZoneInfoNotFoundError, ValueError):
        raise CanonicalError(f"unknown time zone {zone_id!r}") from None


def _split_zoned(text: str) -> tuple[dt.datetime, int, str | None, str | None]:
    m = _ZONED_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a datetime with a zone")
    wall, nanos = parse_datetime_text(m.group(1))
    return wall, nanos, m.group(2), m.group(3) or m.group(4)


def zoned_text(text: str, source_tz: str) -> str:
    """A zoned datetime text -> canonical `...Z[zone]`; without a zone the source zone applies."""
    wall, nanos, offset, zone_id = _split_zoned(text)
    zone_id = zone_id or offset or source_tz
    instant = wall.replace(tzinfo=zone_of(offset or zone_id))
    return fmt_zoned(instant, zone_id, nanos)


def wall_clock_instant_text(text: str, source_tz: str) -> str:
    """A datetime text -> canonical instant: its own offset/zone if it has one, else `source_tz`."""
    wall, nanos, offset, zone_id = _split_zoned(text)
    return fmt_instant(wall.replace(tzinfo=zone_of(offset or zone_id or source_tz)), nanos)


# ---------------------------------------------------------------- intervals
_ISO_DURATION_RE = re.compile(
    r"^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d{1,9})?)S)?)?$"
)
_UNIT = r"(YEAR|MONTH|DAY|HOUR|MINUTE|SECOND)(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\))?"
_ORACLE_LITERAL_RE = re.compile(rf"^INTERVAL\s*'([^']*)'\s*{_UNIT}(?:\s+TO\s+{_UNIT})?$", re.IGNORECASE)
_ORACLE_DS_RE = re.compile(r"^([+-])?(\d+) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?$")  # +03 04:05:06.000000
_ORACLE_YM_RE = re.compile(r"^([+-])?(\d+)-(\d{1,2})$")  # +01-02
_YM_UNITS = ("YEAR", "MONTH")
_DS_UNITS = ("DAY", "HOUR", "MINUTE", "SECOND")
_UNIT_SECONDS = {"DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}


def _literal_fields(body: str, units: tuple[str, ...]) -> list[str]:
    """`'3 04:05:06.5'` for DAY TO SECOND -> ['3', '04', '05', '06.5']."""
    if units[0] == "DAY" and len(units) > 1:
        day, _, rest = body.partition(" ")
        return [day, *rest.split(":")]
    if units[0] == "YEAR":
        return body.split("-")
    return body.split(":")


def _oracle_literal(text: str) -> tuple[int, Decimal] | None:
    """An Oracle/OMS interval literal (`INTERVAL '3' DAY`, `INTERVAL '1-2' YEAR TO MONTH`) -> (months, seconds)."""
    m = _ORACLE_LITERAL_RE.match(text.strip())
    if not m:
        return None
    body, lead, trail = m.group(1).strip(), m.group(2).upper(), (m.group(3) or m.group(2)).upper()
    family = _YM_UNITS if lead in _YM_UNITS else _DS_UNITS
    if trail not in family or family.index(trail) < family.index(lead):
        raise CanonicalError(f"{text!r}: {lead} TO {trail} is not an interval qualifier")
    units = family[family.index(lead) : family.index(trail) + 1]
    sign = -1 if body.startswith("-") else 1
    fields = _literal_fields(body.lstrip("+-"), units)
    if len(fields) != len(units) or not all(re.fullmatch(r"\d+(?:\.\d{1,9})?", f) for f in fields):
        raise CanonicalError(f"{text!r} does not match its interval qualifier")
    if any("." in f for f in fields[:-1]) or ("." in fields[-1] and units[-1] != "SECOND"):
        raise CanonicalError(f"{text!r} has a fraction outside the seconds field")
    if family is _YM_UNITS:
        months = sum(int(f) * (12 if u == "YEAR" else 1) for f, u in zip(fields, units, strict=True))
        return sign * months, Decimal(0)
    seconds = sum(Decimal(f) * _UNIT_SECONDS[u] for f, u in zip(fields, units, strict=True))
    return 0, sign * seconds


def _oracle_default(text: str) -> tuple[int, Decimal] | None:
    """Oracle's default interval text: `+03 04:05:06.000000` or `-01-02`."""
    m = _ORACLE_DS_RE.match(text.strip())
    if m:
        sign, d, h, mi, s, frac = m.groups()
        seconds = int(d) * 86400 + int(h) * 3600 + int(mi) * 60 + Decimal(s + (frac or ""))
        return 0, -seconds if sign == "-" else seconds
    m = _ORACLE_YM_RE.match(text.strip())
    if m:
        sign, y, mo = m.groups()
        months = int(y) * 12 + int(mo)
        return (-months if sign == "-" else months), Decimal(0)
    return None


def _iso_duration(text: str) -> tuple[int, Decimal] | None:
    m = _ISO_DURATION_RE.match(text.strip())
    if not m or text.strip().rstrip("T") in ("P", "-P") or text.strip().endswith("T"):
        return None
    neg, y, mo, w, d, h, mi, s = m.groups()
    months = int(y or 0) * 12 + int(mo or 0)
    seconds = (int(w or 0) * 7 + int(d or 0)) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60 + Decimal(s or 0)
    return (-months, -seconds) if neg else (months, seconds)


def parse_interval_text(text: str) -> tuple[int, Decimal]:
    """ISO-8601 duration, Oracle interval literal or Oracle default text -> (months, seconds)."""
    for reader in (_iso_duration, _oracle_literal, _oracle_default):
        parsed = reader(text)
        if parsed is not None:
            return parsed
    raise CanonicalError(f"{text!r} is not an interval")


def interval_ym_text(text: str, _source_tz: str) -> str:
    months, seconds = parse_interval_text(text)
    if seconds:
        raise CanonicalError(f"{text!r} has a day-time part in a year-month interval")
    return fmt_interval_ym(IntervalYM(months))


def interval_ds_text(text: str, _source_tz: str) -> str:
    months, seconds = parse_interval_text(text)
    if months:
        raise CanonicalError(f"{text!r} has a year-month part in a day-time interval")
    total_ns = int(seconds * 1_000_000_000)
    sign = -1 if total_ns < 0 else 1
    whole_us, sub_us_ns = divmod(abs(total_ns), 1000)
    frac_ns = (whole_us % 1_000_000) * 1000 + sub_us_ns
    return fmt_interval_ds(sign * dt.timedelta(microseconds=whole_us), frac_ns)


# ---------------------------------------------------------------- value readers
def latin1_binary_text(text: str, _source_tz: str) -> str:
    """Canal's binary text (bytes decoded as ISO-8859-1) -> canonical base64 of the bytes."""
    try:
        return fmt_binary(text.encode("latin-1"))
    except UnicodeEncodeError:
        raise CanonicalError("binary text holds a character beyond ISO-8859-1") from None


ValueReader = Callable[[str, str], str]  # (text as sent, source zone) -> canonical text

CANAL_READERS: dict[str, ValueReader] = {
    "string": lambda text, _tz: text,
    "json": lambda text, _tz: text,
    "boolean": lambda text, _tz: fmt_bool(parse_bool_text(text)),
    "tinyint": lambda text, _tz: fmt_integer(parse_integer_text(text)),
    "smallint": lambda text, _tz: fmt_integer(parse_integer_text(text)),
    "int": lambda text, _tz: fmt_integer(parse_integer_text(text)),
    "bigint": lambda text, _tz: fmt_integer(parse_integer_text(text)),
    "ubigint": lambda text, _tz: fmt_integer(parse_integer_text(text)),
    "decimal": lambda text, _tz: fmt_decimal(parse_decimal_text(text)),
    "float": lambda text, _tz: fmt_float32(parse_float_text(text)),
    "double": lambda text, _tz: fmt_double(parse_float_text(text)),
    "binary": latin1_binary_text,
    "date": lambda text, _tz: fmt_date(parse_date_text(text)),
    "time": lambda text, _tz: canonical_time_text(text),
    "datetime": lambda text, _tz: fmt_datetime(*parse_datetime_text(text)),
    "timestamp": wall_clock_instant_text,
    "zoned_datetime": zoned_text,
    "interval_ym": interval_ym_text,
    "interval_ds": interval_ds_text,
}


def canonicalize_with(
    values: Mapping[str, Any],
    source_types: Mapping[str, str],
    source_tz: str,
    logical_type_of: Callable[[str | None], str],
    readers: Mapping[str, ValueReader],
) -> tuple[dict[str, Any], dict[str, str]]:
    """One image through a dialect's type mapping and readers.

    Every column of `values` and of `source_types` gets a logical type (a column the message
    names in only one of them is kept, never an error); SQL NULL stays None.
    """
    types = {col: logical_type_of(source_types.get(col)) for col in {**source_types, **values}}
    canonical: dict[str, Any] = {}
    for col, raw in values.items():
        if raw is None:
            canonical[col] = None
            continue
        try:
            canonical[col] = readers[base_type(types[col])](str(raw), source_tz)
        except CanonicalError as exc:
            declared = source_types.get(col) or "no declared type"
            raise CanonicalError(f"column {col!r} ({declared}): {exc}") from None
    return canonical, types


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """A Canal row image (column -> text as sent) -> (canonical texts, logical types)."""
    return canonicalize_with(values, source_types, source_tz, source_logical_type, CANAL_READERS)
