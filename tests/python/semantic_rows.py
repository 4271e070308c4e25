"""Compare a mart's row values with the generator's truth by what they mean, not how they are spelt.

Dialects without value types (CKafka format one, OMS default JSON, SharePlex, Debezium without
`schema`) keep values as sent (docs/staged-contract.md): `1` for a boolean, `1668779393.27564`
for a timestamp, `INTERVAL '63-5' YEAR TO MONTH`. Their rows equal the truth once both sides are
read by the column's logical type. A text that no reader here understands (Debezium's base64
decimal without its schema, an epoch-day date) is compared only where the dialect is known to
send such text (`AS_SENT`); anywhere else it is a mismatch.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

Row = dict[str, str | None]

# Dialects whose messages may carry values in a form only their (absent) schema explains.
AS_SENT = frozenset(
    {"ckafka_json", "debezium_json", "oms_default_json", "oms_shareplex_json", "dataworks_json", "ogg_json"}
)
# Columns a dialect adds to every image that the source table does not have.
ADDED_COLUMNS = {"dataworks_json": {"#alibaba_rds_row_id#"}, "oms_dataworks_json": {"#alibaba_rds_row_id#"}}
# DataWorks' only time type is DATE, epoch milliseconds (spec 001): dates, datetimes (the source
# wall clock in the dbt var source_time_zone, default below) and instants arrive as ms instants.
MILLISECOND_INSTANTS = frozenset({"dataworks_json"})
SOURCE_TIME_ZONE = ZoneInfo("Asia/Shanghai")
# Dialects whose format has no TRUNCATE message (generator docs, spec 003 for SharePlex; Maxwell sends
# schema changes only).
NO_TRUNCATE = frozenset({"oms_shareplex_json", "maxwell_json"})
# Dialects that send TIMESTAMP as the UTC wall clock (Maxwell: compat.md).
UTC_WALL_CLOCK = frozenset({"maxwell_json"})

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ZONED = re.compile(r"^(\S+?)(?:\[([^\]]+)\])?$")
_LOCAL_ZONED = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) ([A-Za-z_]+(?:/[A-Za-z_]+)*)$")
_ISO_YM = re.compile(r"^(-?)P(?:(\d+)Y)?(?:(\d+)M)?$")
_SQL_YM = re.compile(r"^INTERVAL '(-?)(\d+)-(\d+)' YEAR TO MONTH$")
_SQL_DS = re.compile(r"^(?:INTERVAL ')?([+-]?)(\d+) (\d+):(\d+):(\d+(?:\.\d+)?)(?:' DAY TO SECOND)?$")


class Unreadable(ValueError):
    """The text is no value of the logical type that this module can read."""


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true"):
        return True
    if lowered in ("0", "false"):
        return False
    raise Unreadable(text)


def _decimal(text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise Unreadable(text) from None
    if not value.is_finite():
        raise Unreadable(text)
    return value


def _integer(text: str) -> int:
    value = _decimal(text)
    if value != value.to_integral_value():
        raise Unreadable(text)
    return int(value)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise Unreadable(text) from None


def _time(text: str) -> str:
    if not re.fullmatch(r"-?\d{1,3}:\d{2}:\d{2}(\.\d+)?", text):
        raise Unreadable(text)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _datetime(text: str) -> dt.datetime:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?", text):
        raise Unreadable(text)
    return dt.datetime.fromisoformat(text)


def _instant(text: str) -> dt.datetime:
    """An ISO instant with `Z` or an offset, or epoch seconds with a fraction."""
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return EPOCH + dt.timedelta(microseconds=int(_decimal(text) * 1_000_000))
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", text):
        raise Unreadable(text)
    head, _, fraction = text.partition(".")
    digits = re.match(r"\d*", fraction).group(0) if fraction else ""
    offset = fraction[len(digits) :] if fraction else head[19:]
    base = dt.datetime.fromisoformat(head[:19] + offset.replace("Z", "+00:00"))
    return base.astimezone(dt.UTC) + dt.timedelta(microseconds=int((digits or "0").ljust(6, "0")[:6]))


def _zoned(text: str) -> tuple[dt.datetime, str | None]:
    local = _LOCAL_ZONED.match(text)
    if local:
        wall = dt.datetime.fromisoformat(local.group(1))
        return wall.replace(tzinfo=ZoneInfo(local.group(2))).astimezone(dt.UTC), local.group(2)
    match = _ZONED.match(text)
    if not match:
        raise Unreadable(text)
    instant, zone = match.groups()
    return _instant(instant), zone


def _months(text: str) -> int:
    match = _ISO_YM.match(text) or _SQL_YM.match(text)
    if not match or not any(match.groups()[1:]):
        raise Unreadable(text)
    sign, years, months = match.groups()
    return (-1 if sign else 1) * (int(years or 0) * 12 + int(months or 0))


def _micros(text: str) -> int:
    """A day-second interval, ISO (`P1DT2H`, negative parts allowed) or SQL (`[+-]d hh:mm:ss.f`)."""
    sql = _SQL_DS.match(text)
    if sql:
        sign, days, hours, minutes, seconds = sql.groups()
        parts = (int(days), int(hours), int(minutes), Decimal(seconds))
        return (-1 if sign == "-" else 1) * _to_micros(*parts)
    iso = re.fullmatch(
        r"(-?)P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?)?", text
    )
    if not iso or not any(iso.groups()[1:]):
        raise Unreadable(text)
    sign, years, months, days, hours, minutes, seconds = iso.groups()
    if int(years or 0) or int(months or 0):
        raise Unreadable(text)
    total = _to_micros(int(days or 0), int(hours or 0), int(minutes or 0), Decimal(seconds or 0))
    return -total if sign else total


def _to_micros(days: int, hours: int, minutes: int, seconds: Decimal) -> int:
    return int((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1_000_000)


def _json_document(text: str) -> Any:
    """A JSON document, numbers as exact decimals."""
    try:
        return json.loads(text, parse_float=Decimal)
    except ValueError:
        raise Unreadable(text) from None


READERS = {
    "boolean": _boolean,
    "tinyint": _integer,
    "smallint": _integer,
    "int": _integer,
    "bigint": _integer,
    "ubigint": _integer,
    "decimal": _decimal,
    "date": lambda t: dt.date.fromisoformat(t) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t) else _fail(t),
    "time": _time,
    "datetime": _datetime,
    "timestamp": _instant,
    "zoned_datetime": _zoned,
    "interval_ym": _months,
    "interval_ds": _micros,
    # Embedded JSON (Maxwell) arrives re-serialised: the same document, by value.
    "json": _json_document,
}


def _fail(text: str) -> Any:
    raise Unreadable(text)


def _millisecond_instant(base: str, got: str, want: str) -> bool:
    """A DataWorks DATE (an instant in ms) against the truth's value of a time type."""
    instant = _instant(got)
    if base in ("timestamp", "zoned_datetime"):
        return _to_ms(instant) == _to_ms(_zoned(want)[0])
    wall = instant.astimezone(SOURCE_TIME_ZONE).replace(tzinfo=None)
    if base == "date":
        return wall == dt.datetime.combine(dt.date.fromisoformat(want), dt.time())
    return wall == _to_ms(_datetime(want))


def _to_ms(value: dt.datetime) -> dt.datetime:
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def same_value(logical_type: str, got: str | None, want: str | None, dialect: str) -> bool:
    """Whether a mart text `got` holds the truth's value `want` (canonical text) of `logical_type`."""
    if got == want:
        return True
    if got is None or want is None:
        return False
    base = logical_type.split("(")[0]
    as_sent = dialect in AS_SENT
    if dialect in MILLISECOND_INSTANTS and base in ("date", "datetime", "timestamp", "zoned_datetime"):
        try:
            return _millisecond_instant(base, got, want)
        except Unreadable:
            return False
    if dialect in UTC_WALL_CLOCK and base == "timestamp":
        try:
            return _datetime(got).replace(tzinfo=dt.UTC) == _instant(want)
        except Unreadable:
            return False
    if base in ("float", "double"):
        try:
            return math.isclose(_float(got), _float(want), rel_tol=1e-6 if base == "float" else 1e-15)
        except Unreadable:
            return as_sent
    reader = READERS.get(base)
    if reader is None:
        return False
    try:
        got_value = reader(got)
    except Unreadable:
        return as_sent
    want_value = reader(want)
    if base == "zoned_datetime" and None in (got_value[1], want_value[1]):
        return got_value[0] == want_value[0]
    return got_value == want_value


def same_row(types: dict[str, str], got: Row, want: Row, dialect: str) -> bool:
    """Every column of either row holds the same value (absent = NULL, the truth's rule)."""
    shown = {k: v for k, v in got.items() if k not in ADDED_COLUMNS.get(dialect, ())}
    return all(
        same_value(types.get(column, "string"), shown.get(column), want.get(column), dialect)
        for column in set(shown) | set(want)
    )


def unmatched(types: dict[str, str], got: list[Row], want: list[Row], dialect: str) -> tuple[list[Row], list[Row]]:
    """The rows of `got` and of `want` left over after pairing rows that hold the same values."""
    left = list(want)
    extra = []
    for row in got:
        match = next((i for i, candidate in enumerate(left) if same_row(types, row, candidate, dialect)), None)
        if match is None:
            extra.append(row)
        else:
            left.pop(match)
    return extra, left
