"""Values as CDC tools write them in text, read once for every decoder.

`TEXT_READERS` read every logical type from the MySQL-style text forms (numbers as digits,
`YYYY-MM-DD HH:MM:SS[.f]`, base64 bytes, ...) and `canonicalize_with` runs an image through a
dialect's type mapping and readers; a dialect overrides the readers whose convention differs.

Zones (`zone_of`): `Z`, an offset (`+08:00`, `+0800`, `+8`, `GMT+8`, `UTC-05:30`, at most 18 hours
as in java.time) or an IANA region id (`Asia/Shanghai`).

Datetimes with a zone (`split_zoned`): `YYYY-MM-DD[ T]HH:MM:SS[.f]`, then an offset or `Z`, then
a region in brackets or after blanks: `2020-11-25 00:01:02.012345 Asia/Shanghai` (OMS),
`2020-11-25T00:01:02.012345+08:00[Asia/Shanghai]` (Java's ZonedDateTime), `...+08:00`.

Intervals (`parse_interval`) -> months and nanoseconds:

- SQL literals (Oracle/ANSI and MySQL): `INTERVAL '3' DAY`, `INTERVAL '4' YEAR`,
  `INTERVAL '-1-6' YEAR(2) TO MONTH`, `INTERVAL '3 04:05:06.5' DAY TO SECOND(6)`,
  `INTERVAL '4.5' SECOND(2,6)`, `INTERVAL '1:30' HOUR TO MINUTE`, `-INTERVAL '2' HOUR`,
  `INTERVAL 3 DAY`, `INTERVAL '1 2' DAY_HOUR`, `INTERVAL '2' QUARTER`, `INTERVAL '1' WEEK`;
- Oracle's TO_CHAR forms: `+04-02` (years-months), `+03 04:05:06.500000` (days time);
- ISO-8601 durations (`P1Y2M`, `-P3DT4H5M6.5S`), with signed parts as Debezium writes
  PostgreSQL intervals (`P1Y2M-3DT0H0M0S`).

A literal or an Oracle form says which family it is (year-month or day-second); an ISO duration
is judged by its parts.  Trailing fields stay inside their unit (`'3 25' DAY TO HOUR` is not an
interval); a fraction of a second has at most 9 digits.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cdc_unify.canonical import (
    CanonicalError,
    IntervalYM,
    base_type,
    canonical_date_text,
    canonical_datetime_text,
    canonical_decimal_text,
    canonical_integer_text,
    canonical_time_text,
    fmt_binary,
    fmt_bool,
    fmt_datetime,
    fmt_double,
    fmt_float32,
    fmt_instant,
    fmt_interval_ds,
    fmt_interval_ym,
    fmt_zoned,
    nanos_of,
    parse_base64,
    parse_bool_text,
    parse_datetime_text,
    parse_float_text,
)

# ---------------------------------------------------------------- zones
_OFFSET_ZONE_RE = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
_MAX_OFFSET = dt.timedelta(hours=18)


def zone_of(text: str) -> tuple[dt.tzinfo, str | None]:
    """A zone as sent -> (tzinfo, region id); the region id is None for `Z` and offsets."""
    name = text.strip()
    if name == "Z":
        return dt.timezone.utc, None
    m = _OFFSET_ZONE_RE.match(name)
    if m:
        offset = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        if offset > _MAX_OFFSET or int(m.group(3) or 0) > 59:
            raise CanonicalError(f"time zone offset {text!r} is out of range")
        return dt.timezone(-offset if m.group(1) == "-" else offset), None
    try:
        return ZoneInfo(name), name
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise CanonicalError(f"unknown time zone {text!r}") from None


# ---------------------------------------------------------------- datetimes with a zone
_ZONED_RE = re.compile(
    r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)"
    r"\s*(Z|[+-]\d{1,2}(?::?\d{2})?)?"
    r"(?:\[([^\]]+)\]|\s+(\S+))?$"
)


@dataclass(frozen=True)
class ZonedText:
    wall: dt.datetime  # naive, to the second
    nanos: int
    offset: str | None  # `+08:00`, `Z`, as sent
    region: str | None  # `Asia/Shanghai` (or a zone such as `GMT+8`), as sent

    def zone(self, default_zone: str | None) -> str | None:
        """The zone that fixes the instant: the offset (it decides inside a DST fold), else the region."""
        return self.offset or self.region or default_zone


def split_zoned(text: str) -> ZonedText:
    m = _ZONED_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a datetime YYYY-MM-DD HH:MM:SS[.f] [zone]")
    wall, nanos = parse_datetime_text(m.group(1))
    return ZonedText(wall, nanos, m.group(2), m.group(3) or m.group(4))


def instant_text(text: str, default_zone: str) -> str:
    """A datetime text -> canonical instant: its own offset/zone if it has one, else `default_zone`."""
    zoned = split_zoned(text)
    return fmt_instant(zoned.wall.replace(tzinfo=zone_of(zoned.zone(default_zone))[0]), zoned.nanos)


def zoned_text(text: str, default_zone: str | None) -> tuple[str, str]:
    """A datetime text -> (canonical text, logical type): a zoned datetime labelled with the zone
    as sent (region, else offset, else `default_zone`); a wall-clock datetime when the text has no
    zone and there is no default."""
    zoned = split_zoned(text)
    zone = zoned.zone(default_zone)
    if zone is None:
        return fmt_datetime(zoned.wall, zoned.nanos), "datetime"
    label = zoned.region or zoned.offset or default_zone
    return fmt_zoned(zoned.wall.replace(tzinfo=zone_of(zone)[0]), label, zoned.nanos), "zoned_datetime"


# ---------------------------------------------------------------- intervals
@dataclass(frozen=True)
class Interval:
    months: int
    nanos: int
    family: str | None  # "ym" / "ds" when the text's form says; None for an ISO duration


_YM_UNITS = ("YEAR", "MONTH")
_DS_UNITS = ("DAY", "HOUR", "MINUTE", "SECOND")
# MySQL's single units that are multiples of another unit.
_MULTIPLES = {"QUARTER": ("MONTH", 3), "WEEK": ("DAY", 7)}
_NANOS_PER = {"DAY": 86_400 * 10**9, "HOUR": 3_600 * 10**9, "MINUTE": 60 * 10**9, "SECOND": 10**9}
# Every number of an interval has at most 18 digits (Oracle's precision is at most 9): more is no
# interval, and Python refuses to read integers of thousands of digits.
_NUMBER = r"\d{1,18}"
# Upper bound of a field that is not the leading one.
_FIELD_LIMITS = {"MONTH": 12, "HOUR": 24, "MINUTE": 60, "SECOND": 60}
_UNIT_ARGS = r"(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\))?"
_LITERAL_RE = re.compile(
    r"^(?P<outer>[+-])?\s*INTERVAL\s*(?:'(?P<quoted>[^']*)'|(?<=\s)(?P<bare>[+-]?[0-9][0-9.]{0,30}))\s*"
    rf"(?P<start>[A-Z_]+){_UNIT_ARGS}(?:\s+TO\s+(?P<end>[A-Z]+){_UNIT_ARGS})?$",
    re.IGNORECASE,
)
_ORACLE_YM_RE = re.compile(rf"^([+-])?({_NUMBER})-({_NUMBER})$")
_ORACLE_DS_RE = re.compile(rf"^([+-])?({_NUMBER}) ({_NUMBER}):({_NUMBER}):({_NUMBER}(?:\.\d{{1,9}})?)$")
_ISO_RE = re.compile(
    rf"^(-)?P(?:([-+]?{_NUMBER})Y)?(?:([-+]?{_NUMBER})M)?(?:([-+]?{_NUMBER})W)?(?:([-+]?{_NUMBER})D)?"
    rf"(?:T(?:([-+]?{_NUMBER})H)?(?:([-+]?{_NUMBER})M)?(?:([-+]?{_NUMBER}(?:\.\d{{1,9}})?)S)?)?$"
)


def parse_interval(text: str) -> Interval:
    """A SQL interval literal, Oracle's interval text or an ISO-8601 duration -> Interval."""
    if not isinstance(text, str):
        raise CanonicalError(f"{text!r} is not interval text")
    body = text.strip()
    for parser in (_parse_literal, _parse_oracle, _parse_iso):
        parsed = parser(body)
        if parsed is not None:
            return parsed
    raise CanonicalError(f"{text!r} is not an interval literal or duration")


def ym_text(interval: Interval, raw: str) -> str:
    """Canonical text (`P1Y2M`) of a year-to-month interval."""
    if interval.family == "ds" or interval.nanos:
        raise CanonicalError(f"{raw!r} is not a year-to-month interval")
    return fmt_interval_ym(IntervalYM(interval.months))


def ds_text(interval: Interval, raw: str) -> str:
    """Canonical text (`P3DT4H5M6.5S`) of a day-to-second interval."""
    if interval.family == "ym" or interval.months:
        raise CanonicalError(f"{raw!r} is not a day-to-second interval")
    return interval_ds_from_nanos(interval.nanos)


def interval_ym_text(text: str) -> str:
    return ym_text(parse_interval(text), text)


def interval_ds_text(text: str) -> str:
    return ds_text(parse_interval(text), text)


def interval_ds_from_nanos(total_nanos: int) -> str:
    """Canonical day-to-second text of a signed number of nanoseconds."""
    negative = total_nanos < 0
    whole, frac_ns = divmod(abs(total_nanos), 10**9)
    try:
        value = dt.timedelta(seconds=whole, microseconds=frac_ns // 1000)
    except OverflowError:
        raise CanonicalError(f"an interval of {whole} seconds is out of range") from None
    if not value and frac_ns:
        # Below one microsecond the timedelta is zero and would lose the sign; the
        # formatter reads the fraction from `nanos` anyway.
        value = dt.timedelta(microseconds=1)
    return fmt_interval_ds(-value if negative else value, frac_ns)


def _parse_literal(body: str) -> Interval | None:
    m = _LITERAL_RE.match(body)
    if not m:
        return None
    units = _units(m.group("start").upper(), (m.group("end") or "").upper())
    value = m.group("quoted") if m.group("quoted") is not None else m.group("bare")
    sign, fields = _split_fields(value.strip(), len(units), units[-1] == "SECOND")
    if m.group("outer") == "-":
        sign = -sign
    return _amount(units, fields, sign)


def _units(start: str, end: str) -> tuple[str, ...]:
    """The unit of every field of the literal, leading field first."""
    if start in _MULTIPLES and not end:
        return (start,)
    if "_" in start and not end:  # MySQL compound units: DAY_HOUR, SECOND_MICROSECOND, ...
        start, end = start.split("_", 1)
    if end == "MICROSECOND":
        end = "SECOND"
    if start == "MICROSECOND" and not end:
        return ("MICROSECOND",)
    for family in (_YM_UNITS, _DS_UNITS):
        if start in family and (not end or end in family):
            first, last = family.index(start), family.index(end or start)
            if last >= first:
                return family[first : last + 1]
    raise CanonicalError(f"unsupported interval qualifier {start}{' TO ' + end if end else ''}")


def _split_fields(value: str, count: int, last_has_fraction: bool) -> tuple[int, list[str]]:
    sign = 1
    if value[:1] in ("+", "-"):
        sign = -1 if value[0] == "-" else 1
        value = value[1:].strip()
    fields = re.split(r"[ :-]", value) if count > 1 else [value]
    if len(fields) != count or not all(re.fullmatch(rf"{_NUMBER}(?:\.\d{{1,9}})?", f) for f in fields):
        raise CanonicalError(f"interval value {value!r} does not match its {count}-field qualifier")
    if any("." in f for f in fields[:-1]) or ("." in fields[-1] and not last_has_fraction):
        raise CanonicalError(f"interval value {value!r} has a fraction in a field that takes none")
    return sign, fields


def _amount(units: tuple[str, ...], fields: list[str], sign: int) -> Interval:
    if units[0] in _MULTIPLES:
        base, factor = _MULTIPLES[units[0]]
        return _amount((base,), [str(int(fields[0]) * factor)], sign)
    if units == ("MICROSECOND",):
        return Interval(0, sign * int(fields[0]) * 1000, "ds")
    for unit, field in list(zip(units, fields, strict=True))[1:]:
        if int(field.split(".")[0]) >= _FIELD_LIMITS[unit]:
            raise CanonicalError(f"interval field {unit} = {field} is out of range")
    if units[0] in _YM_UNITS:
        months = sum(int(f) * (12 if u == "YEAR" else 1) for u, f in zip(units, fields, strict=True))
        return Interval(sign * months, 0, "ym")
    nanos = 0
    for unit, field in zip(units, fields, strict=True):
        whole, _, frac = field.partition(".")
        nanos += int(whole) * _NANOS_PER[unit] + nanos_of(frac or None)
    return Interval(0, sign * nanos, "ds")


def _parse_oracle(body: str) -> Interval | None:
    m = _ORACLE_YM_RE.match(body)
    if m:
        return _amount(_YM_UNITS, [m.group(2), m.group(3)], -1 if m.group(1) == "-" else 1)
    m = _ORACLE_DS_RE.match(body)
    if m:
        return _amount(_DS_UNITS, list(m.groups()[1:]), -1 if m.group(1) == "-" else 1)
    return None


def _parse_iso(body: str) -> Interval | None:
    m = _ISO_RE.match(body)
    if not m or body in ("P", "-P") or body.endswith("T"):
        return None
    neg, years, months, weeks, days, hours, minutes, seconds = m.groups()
    sign = -1 if neg else 1
    total_months = int(years or 0) * 12 + int(months or 0)
    nanos = (int(weeks or 0) * 7 + int(days or 0)) * _NANOS_PER["DAY"] + int(hours or 0) * _NANOS_PER["HOUR"]
    nanos += int(minutes or 0) * _NANOS_PER["MINUTE"] + int(Decimal(seconds or 0) * 10**9)
    return Interval(sign * total_months, sign * nanos, None)


# ---------------------------------------------------------------- images
ValueReader = Callable[[str, str], str]  # (text as sent, source zone) -> canonical text

TEXT_READERS: dict[str, ValueReader] = {
    "string": lambda text, _tz: text,
    "json": lambda text, _tz: text,
    "boolean": lambda text, _tz: fmt_bool(parse_bool_text(text)),
    "tinyint": lambda text, _tz: canonical_integer_text(text),
    "smallint": lambda text, _tz: canonical_integer_text(text),
    "int": lambda text, _tz: canonical_integer_text(text),
    "bigint": lambda text, _tz: canonical_integer_text(text),
    "ubigint": lambda text, _tz: canonical_integer_text(text),
    "decimal": lambda text, _tz: canonical_decimal_text(text),
    "float": lambda text, _tz: fmt_float32(parse_float_text(text)),
    "double": lambda text, _tz: fmt_double(parse_float_text(text)),
    "binary": lambda text, _tz: fmt_binary(parse_base64(text)),
    "date": lambda text, _tz: canonical_date_text(text),
    "time": lambda text, _tz: canonical_time_text(text),
    "datetime": lambda text, _tz: canonical_datetime_text(text),
    "timestamp": instant_text,
    "zoned_datetime": lambda text, tz: zoned_text(text, tz)[0],
    "interval_ym": lambda text, _tz: interval_ym_text(text),
    "interval_ds": lambda text, _tz: interval_ds_text(text),
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
