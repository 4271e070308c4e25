"""Value text the dts_avro, dataworks_json and oms_dataworks_json decoders share.

Numbers: `integer_text` / `decimal_text` are canonical.parse_* bounded in size, because a
message is untrusted: `1e999999999` is a valid decimal whose plain text is a gigabyte,
and Python refuses to print integers of more than 4300 digits.

Intervals as CDC tools send them -> canonical ISO-8601 durations (oms_dataworks_json's
INTERVAL_YEAR_TO_MONTH / INTERVAL_DAY_TO_SECOND columns, dts_avro's Oracle interval
type numbers).  Accepted forms:

- SQL literals (Oracle/ANSI and MySQL): `INTERVAL '3' DAY`, `INTERVAL '4' YEAR`,
  `INTERVAL '-1-6' YEAR(2) TO MONTH`, `INTERVAL '3 04:05:06.5' DAY TO SECOND(6)`,
  `INTERVAL '1:30' HOUR TO MINUTE`, `-INTERVAL '2' HOUR`, `INTERVAL 3 DAY`,
  `INTERVAL '1 2' DAY_HOUR`, `INTERVAL '2' QUARTER`, `INTERVAL '1' WEEK`;
- Oracle's TO_CHAR forms: `+04-02` (years-months), `+03 04:05:06.500000` (days time);
- ISO-8601 durations (`P1Y2M`, `-P3DT4H5M6.5S`), re-normalised.

A fraction of a second has at most 9 digits and is read as a decimal fraction (MySQL's
`*_MICROSECOND` units included).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cdc_unify.canonical import (
    CanonicalError,
    IntervalYM,
    fmt_decimal,
    fmt_integer,
    fmt_interval_ds,
    fmt_interval_ym,
    nanos_of,
    parse_decimal_text,
)

# Far beyond any database's numbers (MySQL DECIMAL: 65 digits, Oracle NUMBER: 38 digits
# and exponents up to 125), far below what would stall a decoder.
MAX_INTEGER_DIGITS = 1000
MAX_DECIMAL_DIGITS = 5000
_OFFSET_ZONE_RE = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)

_YM_UNITS = ("YEAR", "MONTH")
_DS_UNITS = ("DAY", "HOUR", "MINUTE", "SECOND")
# MySQL's single units that are multiples of another unit.
_MULTIPLES = {"QUARTER": ("MONTH", 3), "WEEK": ("DAY", 7)}
_NANOS_PER = {"DAY": 86_400 * 10**9, "HOUR": 3_600 * 10**9, "MINUTE": 60 * 10**9, "SECOND": 10**9}

_LITERAL_RE = re.compile(
    r"^(?P<outer>[+-])?\s*INTERVAL\s+(?:'(?P<quoted>[^']*)'|(?P<bare>[+-]?[0-9][0-9.]*))\s+"
    r"(?P<start>[A-Z_]+)(?:\s*\(\s*\d+\s*\))?"
    r"(?:\s+TO\s+(?P<end>[A-Z]+)(?:\s*\(\s*\d+\s*\))?)?$",
    re.IGNORECASE,
)
_ORACLE_YM_RE = re.compile(r"^([+-])?(\d+)-(\d+)$")
_ORACLE_DS_RE = re.compile(r"^([+-])?(\d+) (\d+):(\d+):(\d+)(?:\.(\d{1,9}))?$")
_ISO_RE = re.compile(
    r"^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?"
    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?)?$"
)


def bounded_decimal(text: str) -> Decimal:
    """canonical.parse_decimal_text, refusing numbers whose plain text would exceed MAX_DECIMAL_DIGITS."""
    value = parse_decimal_text(text)
    digits = len(value.as_tuple().digits)
    if abs(value.adjusted()) > MAX_DECIMAL_DIGITS or digits > MAX_DECIMAL_DIGITS:
        raise CanonicalError(f"{text[:40]!r} has more than {MAX_DECIMAL_DIGITS} digits")
    return value


def decimal_text(text: str) -> str:
    """Canonical decimal text (`12.50` -> `12.5`, `1E+3` -> `1000`)."""
    return fmt_decimal(bounded_decimal(text))


def integer_text(text: str) -> str:
    """Canonical integer text; `3.0` and `1E+3` are integers, `3.5` is not."""
    value = bounded_decimal(text)
    if value.adjusted() >= MAX_INTEGER_DIGITS:
        raise CanonicalError(f"{text[:40]!r} has more than {MAX_INTEGER_DIGITS} digits")
    if value != value.to_integral_value():
        raise CanonicalError(f"{text[:40]!r} is not an integer")
    return fmt_integer(int(value))


def zone_of(text: str) -> tuple[dt.tzinfo, str | None]:
    """A TimestampWithTimeZone zone: a region (kept by name) or an offset (`+08:00`, `GMT+8`)."""
    name = text.strip()
    m = _OFFSET_ZONE_RE.match(name)
    if m:
        sign, hours, minutes = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        if hours > 18 or minutes > 59:
            raise CanonicalError(f"time zone offset {text!r} is out of range")
        offset = dt.timedelta(hours=hours, minutes=minutes)
        return dt.timezone(-offset if sign == "-" else offset), None
    try:
        return ZoneInfo(name), name
    except (ZoneInfoNotFoundError, ValueError):
        raise CanonicalError(f"unknown time zone {text!r}") from None


def interval_ym_text(text: str) -> str:
    """Canonical text (`P1Y2M`) of a year-to-month interval as sent."""
    return fmt_interval_ym(IntervalYM(_parse(text, want_ym=True)))


def interval_ds_text(text: str) -> str:
    """Canonical text (`P3DT4H5M6.5S`) of a day-to-second interval as sent."""
    return _fmt_ds_nanos(_parse(text, want_ym=False))


def _fmt_ds_nanos(total_nanos: int) -> str:
    sign = -1 if total_nanos < 0 else 1
    whole, frac_ns = divmod(abs(total_nanos), 10**9)
    value = dt.timedelta(seconds=whole, microseconds=frac_ns // 1000)
    if not value and frac_ns:
        # Below one microsecond the timedelta is zero and would lose the sign; the
        # formatter reads the fraction from `nanos` anyway.
        value = dt.timedelta(microseconds=1)
    return fmt_interval_ds(value if sign > 0 else -value, frac_ns)


def _parse(text: str, want_ym: bool) -> int:
    """Months (want_ym) or nanoseconds of the interval `text`."""
    if not isinstance(text, str):
        raise CanonicalError(f"{text!r} is not interval text")
    body = text.strip()
    for parser in (_parse_literal, _parse_oracle, _parse_iso):
        parsed = parser(body)
        if parsed is not None:
            is_ym, amount = parsed
            if is_ym != want_ym:
                kind = "year-to-month" if want_ym else "day-to-second"
                raise CanonicalError(f"{text!r} is not a {kind} interval")
            return amount
    raise CanonicalError(f"{text!r} is not an interval literal")


def _parse_literal(body: str) -> tuple[bool, int] | None:
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
    if value[:1] in "+-":
        sign = -1 if value[0] == "-" else 1
        value = value[1:].strip()
    fields = re.split(r"[ :-]", value) if count > 1 else [value]
    if len(fields) != count or not all(re.fullmatch(r"\d+(?:\.\d{1,9})?", f) for f in fields):
        raise CanonicalError(f"interval value {value!r} does not match its {count}-field qualifier")
    if any("." in f for f in fields[:-1]) or ("." in fields[-1] and not last_has_fraction):
        raise CanonicalError(f"interval value {value!r} has a fraction in a field that takes none")
    return sign, fields


def _amount(units: tuple[str, ...], fields: list[str], sign: int) -> tuple[bool, int]:
    if units[0] in _MULTIPLES:
        base, factor = _MULTIPLES[units[0]]
        return _amount((base,), [str(int(fields[0]) * factor)], sign)
    if units == ("MICROSECOND",):
        return False, sign * int(fields[0]) * 1000
    if units[0] in _YM_UNITS:
        months = sum(int(f) * (12 if u == "YEAR" else 1) for u, f in zip(units, fields, strict=True))
        return True, sign * months
    nanos = 0
    for unit, field in zip(units, fields, strict=True):
        whole, _, frac = field.partition(".")
        nanos += int(whole) * _NANOS_PER[unit] + nanos_of(frac or None)
    _check_ranges(units, fields)
    return False, sign * nanos


def _check_ranges(units: tuple[str, ...], fields: list[str]) -> None:
    """Trailing fields of a multi-field literal stay inside their unit (`'3 25' DAY TO HOUR` is invalid)."""
    limits = {"HOUR": 24, "MINUTE": 60, "SECOND": 60}
    for unit, field in list(zip(units, fields, strict=True))[1:]:
        if int(field.split(".")[0]) >= limits[unit]:
            raise CanonicalError(f"interval field {unit} = {field} is out of range")


def _parse_oracle(body: str) -> tuple[bool, int] | None:
    m = _ORACLE_YM_RE.match(body)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        if int(m.group(3)) >= 12:
            raise CanonicalError(f"{body!r}: months must be below 12")
        return True, sign * (int(m.group(2)) * 12 + int(m.group(3)))
    m = _ORACLE_DS_RE.match(body)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        fields = [m.group(2), m.group(3), m.group(4), m.group(5) + (f".{m.group(6)}" if m.group(6) else "")]
        return _amount(_DS_UNITS, fields, sign)
    return None


def _parse_iso(body: str) -> tuple[bool, int] | None:
    m = _ISO_RE.match(body)
    if not m or body in ("P", "-P") or body.endswith("T"):
        return None
    neg, years, months, weeks, days, hours, minutes, seconds, frac = m.groups()
    sign = -1 if neg else 1
    has_ym = years is not None or months is not None
    has_ds = any(v is not None for v in (weeks, days, hours, minutes, seconds))
    if has_ym and has_ds:
        raise CanonicalError(f"{body!r} mixes year-month and day-time parts")
    if has_ym:
        return True, sign * (int(years or 0) * 12 + int(months or 0))
    nanos = (int(weeks or 0) * 7 + int(days or 0)) * _NANOS_PER["DAY"] + int(hours or 0) * _NANOS_PER["HOUR"]
    nanos += int(minutes or 0) * _NANOS_PER["MINUTE"] + int(seconds or 0) * _NANOS_PER["SECOND"] + nanos_of(frac)
    return False, sign * nanos
