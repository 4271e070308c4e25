"""Canonical text: the one way every value is written in `before`/`after` maps.

Every dialect sends values differently (strings, JSON numbers, epoch units, base64,
Avro records).  Decoders parse what was sent into a Python value and format it here;
the generator formats its true source values here too, so the oracle and the decoders
can only agree when the decoding is right.

Rules (docs/canonical-text.md repeats them for analysts):

| logical type | canonical text |
|---|---|
| tinyint, smallint, int, bigint, ubigint | exact decimal digits, `-` for negatives (beyond int64 too) |
| decimal(p,s) | exact plain notation, no exponent, trailing fractional zeros removed (`12.50` -> `12.5`, `1E+3` -> `1000`) |
| float | shortest text that round-trips the 32-bit value (`1.2222`) |
| double | shortest text that round-trips the 64-bit value (Python `repr`: `0.1`, `1e-05`) |
| float/double specials | `NaN`, `Infinity`, `-Infinity` |
| boolean | `true` / `false` |
| string, json | the text as sent |
| binary | standard base64 with padding of the real bytes |
| date | `YYYY-MM-DD` |
| time | `HH:MM:SS[.f]` (fraction up to 9 digits, trailing zeros removed) |
| datetime (no zone) | `YYYY-MM-DD HH:MM:SS[.f]` source wall clock |
| timestamp (instant) | `YYYY-MM-DDTHH:MM:SS[.f]Z` in UTC |
| zoned_datetime | the UTC instant as above, then the zone: `...Z[Asia/Shanghai]` |
| interval_ym | ISO-8601 duration `P1Y2M`, `-P3M`, `P0M` |
| interval_ds | ISO-8601 duration `P3DT4H5M6.5S`, `-PT1S`, `PT0S` |
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
import struct
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

LOGICAL_TYPES = (
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "ubigint",
    "decimal",
    "float",
    "double",
    "string",
    "json",
    "binary",
    "date",
    "time",
    "datetime",
    "timestamp",
    "zoned_datetime",
    "interval_ym",
    "interval_ds",
)
INTEGER_TYPES = frozenset({"tinyint", "smallint", "int", "bigint", "ubigint"})
# A message is untrusted: `1e999999999` is a valid number whose plain text is a gigabyte, and
# Python refuses to print integers of more than 4300 digits.  These bounds are far beyond any
# database's numbers (MySQL DECIMAL: 65 digits, Oracle NUMBER: 38 digits and exponents up to
# 125) and far below what would stall a decoder; a number beyond them cannot be read.
MAX_INTEGER_DIGITS = 1000
MAX_DECIMAL_DIGITS = 5000
_MAX_INTEGER_BITS = math.ceil(MAX_INTEGER_DIGITS * math.log2(10))


class CanonicalError(ValueError):
    """A value cannot be read as its logical type (quarantine code `invalid_value`)."""


@dataclass(frozen=True)
class IntervalYM:
    """An interval year to month, as a signed number of months."""

    months: int


def base_type(logical_type: str) -> str:
    """`decimal(10,2)` -> `decimal`; any other logical type unchanged."""
    return "decimal" if logical_type.startswith("decimal") else logical_type


# ---------------------------------------------------------------- formatting
def fmt_integer(value: int) -> str:
    value = int(value)
    if value.bit_length() > _MAX_INTEGER_BITS:  # measured before str(), which refuses > 4300 digits
        raise CanonicalError(f"an integer of {value.bit_length()} bits has more than {MAX_INTEGER_DIGITS} digits")
    return str(value)


def check_decimal_size(value: Decimal) -> Decimal:
    """`value` unless its plain text would exceed MAX_DECIMAL_DIGITS digits (CanonicalError)."""
    if value.is_finite() and (
        abs(value.adjusted()) > MAX_DECIMAL_DIGITS or len(value.as_tuple().digits) > MAX_DECIMAL_DIGITS
    ):
        raise CanonicalError(f"{str(value)[:40]!r} has more than {MAX_DECIMAL_DIGITS} digits")
    return value


def fmt_decimal(value: Decimal) -> str:
    if not value.is_finite():
        raise CanonicalError(f"decimal value {value} is not finite")
    check_decimal_size(value)
    if value == 0:
        return "0"
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _fmt_special(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return None


def fmt_double(value: float) -> str:
    return _fmt_special(value) or repr(float(value))


def fmt_float32(value: float) -> str:
    special = _fmt_special(value)
    if special:
        return special
    try:
        target = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        raise CanonicalError(f"{value!r} is beyond the range of a 32-bit float") from None
    for digits in range(1, 18):
        text = f"{target:.{digits}g}"
        try:
            if struct.unpack("<f", struct.pack("<f", float(text)))[0] == target:
                return repr(float(text))
        except OverflowError:
            continue  # rounded up past the largest float (3.5e+38 for 3.4028235e+38): more digits
    return repr(target)


def fmt_bool(value: bool) -> str:
    return "true" if value else "false"


def fmt_binary(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def fmt_fraction(nanos: int) -> str:
    """`.123` for 123_000_000 ns; empty for 0."""
    if not nanos:
        return ""
    return "." + f"{nanos:09d}".rstrip("0")


def fmt_date(value: dt.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def fmt_time(value: dt.time | dt.timedelta, nanos: int | None = None) -> str:
    """A time of day, or a MySQL-style signed duration-of-day (`-838:59:59`)."""
    if isinstance(value, dt.timedelta):
        sign = "-" if value < dt.timedelta(0) else ""
        total_us = abs(value) // dt.timedelta(microseconds=1)
        secs, us = divmod(total_us, 1_000_000)
        h, rem = divmod(secs, 3600)
        m, s = divmod(rem, 60)
        frac = nanos if nanos is not None else us * 1000
        return f"{sign}{h:02d}:{m:02d}:{s:02d}{fmt_fraction(frac)}"
    frac = nanos if nanos is not None else value.microsecond * 1000
    return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}{fmt_fraction(frac)}"


def fmt_datetime(value: dt.datetime, nanos: int | None = None) -> str:
    """A zone-less wall-clock datetime, exactly as the source shows it."""
    if value.tzinfo is not None:
        raise CanonicalError("a zone-less datetime was given a time zone")
    return f"{fmt_date(value)} {fmt_time(value.time(), nanos)}"


def fmt_instant(value: dt.datetime, nanos: int | None = None) -> str:
    """An instant, written in UTC with a `Z`."""
    if value.tzinfo is None:
        raise CanonicalError("an instant needs a time zone or offset")
    try:
        utc = value.astimezone(dt.timezone.utc)
    except OverflowError:
        raise CanonicalError(f"{value.isoformat()} is outside years 1..9999 in UTC") from None
    return f"{fmt_date(utc)}T{fmt_time(utc.time(), nanos)}Z"


def fmt_zoned(value: dt.datetime, zone: str | None = None, nanos: int | None = None) -> str:
    """The UTC instant, then the source zone id in brackets."""
    zone_id = zone or getattr(value.tzinfo, "key", None) or value.strftime("%z")
    return f"{fmt_instant(value, nanos)}[{zone_id}]"


def fmt_interval_ym(value: IntervalYM) -> str:
    months = value.months
    sign = "-" if months < 0 else ""
    years, rem = divmod(abs(months), 12)
    body = (f"{years}Y" if years else "") + (f"{rem}M" if rem or not years else "")
    return f"{sign}P{body}"


def fmt_interval_ds(value: dt.timedelta, nanos: int | None = None) -> str:
    sign = "-" if value < dt.timedelta(0) else ""
    total_us = abs(value) // dt.timedelta(microseconds=1)
    secs, us = divmod(total_us, 1_000_000)
    days, rem = divmod(secs, 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    frac = fmt_fraction(nanos if nanos is not None else us * 1000)
    time_part = (f"{h}H" if h else "") + (f"{m}M" if m else "")
    if s or frac:
        time_part += f"{s}{frac}S"
    if not days and not time_part:
        return f"{sign}PT0S"
    return f"{sign}P" + (f"{days}D" if days else "") + (f"T{time_part}" if time_part else "")


# ---------------------------------------------------------------- dispatch
def to_canonical(logical_type: str, value: object) -> str | None:
    """Canonical text of a true Python value of `logical_type` (None stays None).

    Python representations: integers `int`; decimal `Decimal`; float/double `float`;
    boolean `bool`; string/json `str`; binary `bytes`; date `date`; time `time` or a
    signed `timedelta`; datetime naive `datetime`; timestamp aware `datetime`;
    zoned_datetime `datetime` with a `zoneinfo.ZoneInfo`; interval_ym `IntervalYM`;
    interval_ds `timedelta`.
    """
    if value is None:
        return None
    kind = base_type(logical_type)
    try:
        formatter = _FORMATTERS[kind]
    except KeyError:
        raise CanonicalError(f"unknown logical type {logical_type!r}") from None
    return formatter(value)


_FORMATTERS = {
    "boolean": fmt_bool,
    "tinyint": fmt_integer,
    "smallint": fmt_integer,
    "int": fmt_integer,
    "bigint": fmt_integer,
    "ubigint": fmt_integer,
    "decimal": fmt_decimal,
    "float": fmt_float32,
    "double": fmt_double,
    "string": str,
    "json": str,
    "binary": fmt_binary,
    "date": fmt_date,
    "time": fmt_time,
    "datetime": fmt_datetime,
    "timestamp": fmt_instant,
    "zoned_datetime": fmt_zoned,
    "interval_ym": fmt_interval_ym,
    "interval_ds": fmt_interval_ds,
}


# ---------------------------------------------------------------- parsing helpers
def parse_decimal_text(text: str) -> Decimal:
    """Exact decimal from text such as `12.50`, `1E+3`, `9.99E-308` (no float round trip), bounded
    by MAX_DECIMAL_DIGITS."""
    if isinstance(text, str) and len(text) > 2 * MAX_DECIMAL_DIGITS:  # no number within bounds is that long
        raise CanonicalError(f"{text[:40]!r}... ({len(text)} characters) is too long for a number")
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError, TypeError):
        raise CanonicalError(f"{text[:40]!r} is not a decimal number") from None
    if not value.is_finite():
        raise CanonicalError(f"{text!r} is not a finite decimal")
    return check_decimal_size(value)


def parse_integer_text(text: str) -> int:
    """Exact integer from text; `3`, `-7`, `10223372036854775806`; `3.0` and `1E+3` are accepted,
    `3.5` is not; more than MAX_INTEGER_DIGITS digits cannot be read."""
    value = parse_decimal_text(text)
    if value.adjusted() >= MAX_INTEGER_DIGITS:
        raise CanonicalError(f"{text[:40]!r} has more than {MAX_INTEGER_DIGITS} digits")
    if value != value.to_integral_value():
        raise CanonicalError(f"{text[:40]!r} is not an integer")
    return int(value)


_BOOL_TEXT = {"1": True, "0": False, "true": True, "false": False, "t": True, "f": False}


def parse_bool_text(text: str) -> bool:
    try:
        return _BOOL_TEXT[text.strip().lower()]
    except (KeyError, AttributeError):
        raise CanonicalError(f"{text!r} is not a boolean") from None


def parse_float_text(text: str) -> float:
    specials = {"nan": math.nan, "infinity": math.inf, "-infinity": -math.inf, "inf": math.inf, "-inf": -math.inf}
    low = text.strip().lower()
    if low in specials:
        return specials[low]
    try:
        return float(Decimal(text.strip()))
    except (InvalidOperation, ValueError):
        raise CanonicalError(f"{text!r} is not a floating-point number") from None


def parse_base64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, TypeError):
        raise CanonicalError(f"{text[:40]!r} is not base64") from None


_FRACTION_RE = r"(?:\.(\d{1,9}))?"
_DATE_RE = re.compile(r"^(-?\d{4,})-(\d{2})-(\d{2})$")
_TIME_RE = re.compile(r"^(-)?(\d{2,3}):(\d{2}):(\d{2})" + _FRACTION_RE + "$")
_DATETIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})" + _FRACTION_RE + "$")


def nanos_of(fraction: str | None) -> int:
    return int((fraction or "").ljust(9, "0")) if fraction else 0


def parse_date_text(text: str) -> dt.date:
    m = _DATE_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a date YYYY-MM-DD")
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError as exc:
        raise CanonicalError(f"{text!r}: {exc}") from None


# Texts that are their own canonical text, as most values are: the canonical_*_text readers return
# them as sent instead of reading them into a Python value (a Decimal, a datetime) and writing that
# again. No sign on zero, no leading zero, no trailing fractional zero, no blank, ASCII digits;
# digit counts far inside the bounds above.
_CANONICAL_INTEGER_RE = re.compile(r"(?:0|-?[1-9][0-9]{0,17})\Z")
_CANONICAL_DECIMAL_RE = re.compile(r"(?:(?:0|-?[1-9][0-9]{0,99})(?:\.[0-9]{0,99}[1-9])?|-0\.[0-9]{0,99}[1-9])\Z")
_CANONICAL_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_CANONICAL_DATETIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\Z")


def canonical_integer_text(text: str) -> str:
    """Integer text (`3`, `-7`, `3.0`, `1E+3`) -> canonical integer text."""
    if isinstance(text, str) and _CANONICAL_INTEGER_RE.match(text):
        return text
    return fmt_integer(parse_integer_text(text))


def canonical_decimal_text(text: str) -> str:
    """Decimal text (`12.50`, `1E+3`) -> canonical decimal text."""
    if isinstance(text, str) and _CANONICAL_DECIMAL_RE.match(text):
        return text
    return fmt_decimal(parse_decimal_text(text))


def canonical_date_text(text: str) -> str:
    """`YYYY-MM-DD` -> canonical date text; refused unless a calendar date, canonical or not."""
    value = parse_date_text(text)
    return text if _CANONICAL_DATE_RE.match(text) else fmt_date(value)


def canonical_datetime_text(text: str) -> str:
    """`YYYY-MM-DD[ T]HH:MM:SS[.f]` -> canonical zone-less datetime text; refused unless a calendar
    date and a time of day, canonical or not."""
    value, nanos = parse_datetime_text(text)
    return text if _CANONICAL_DATETIME_RE.match(text) else fmt_datetime(value, nanos)


def canonical_time_text(text: str) -> str:
    """`HH:MM:SS[.f]` (MySQL allows a sign and hours up to 838) to canonical time text."""
    m = _TIME_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a time HH:MM:SS[.f]")
    sign, h, mi, s, frac = m.groups()
    if int(mi) > 59 or int(s) > 59:
        raise CanonicalError(f"{text!r} is not a valid time")
    return f"{sign or ''}{int(h):02d}:{mi}:{s}{fmt_fraction(nanos_of(frac))}"


def parse_datetime_text(text: str) -> tuple[dt.datetime, int]:
    """`YYYY-MM-DD[ T]HH:MM:SS[.f]` -> (naive datetime to the second, nanosecond fraction)."""
    m = _DATETIME_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a datetime YYYY-MM-DD HH:MM:SS[.f]")
    y, mo, d, h, mi, s, frac = m.groups()
    try:
        value = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s))
    except ValueError as exc:
        raise CanonicalError(f"{text!r}: {exc}") from None
    return value, nanos_of(frac)


def instant_from_epoch_text(text: str, unit: str) -> tuple[dt.datetime, int]:
    """Epoch text in `unit` ('s', 'ms', 'us', 'ns'), optionally with a fraction
    (`1606233662.012345` seconds) -> (aware UTC datetime to the second, nanos)."""
    scale = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    total_ns = parse_decimal_text(text) * (1_000_000_000 // scale)
    if total_ns != total_ns.to_integral_value():
        raise CanonicalError(f"{text!r} has more precision than nanoseconds")
    secs, nanos = divmod(int(total_ns), 1_000_000_000)
    try:
        return dt.datetime.fromtimestamp(secs, dt.timezone.utc), nanos
    except (OverflowError, OSError, ValueError):
        raise CanonicalError(f"{text!r} is out of range as epoch {unit}") from None
