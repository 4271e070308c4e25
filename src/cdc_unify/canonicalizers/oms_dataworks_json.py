"""OceanBase OMS "Dataworks" serialization, version 2.0 (spec 003) -> canonical images.

`schema.column` declares `{name, type}` per column: the type names of the spec's samples
(TINYINT ... INTERVAL_YEAR_TO_MONTH), or source type text such as `varchar(20)`,
`decimal(10,2)`, `datetime` (the overall format).  Values are written as the OMS text
mapping of the OceanBase tenants says (spec 003, 数据库传输到文本协议的格式说明):

| declared | sent as | logical type | canonical text |
|---|---|---|---|
| TINYINT, SMALLINT, INT, INT64/BIGINT | JSON number | tinyint ... bigint | exact digits (beyond int64 too) |
| BOOLEAN | 1 / 0 (or true/false) | boolean | `true` / `false` |
| DECIMAL/NUMBER[(p,s)] | JSON number, exact digits | decimal[(p,s)] | exact plain text |
| FLOAT / DOUBLE | JSON number | float / double | shortest round-trip text |
| VARCHAR, CHAR, TEXT, ... | string | string | as sent |
| BLOB, BINARY, RAW, ... | base64 | binary | base64 of the bytes |
| DATE | `YYYY-MM-DD` (Oracle DATE: with a time) | date (datetime) | as canonical |
| TIME | `HH:MM:SS[.n]` | time | |
| DATETIME | `YYYY-MM-DD HH:MM:SS[.n] [zone]`, or `<epoch ms>.<9-digit ns>` | datetime / zoned_datetime / timestamp | |
| TIMESTAMP | `<epoch seconds>[.n]` (Oracle: a datetime text) | timestamp (datetime / zoned_datetime) | |
| ZONED_DATETIME | `YYYY-MM-DD HH:MM:SS[.n] Asia/Shanghai` | zoned_datetime | UTC instant + `[zone]` |
| INTERVAL_DAY_TO_SECOND / INTERVAL_YEAR_TO_MONTH | `INTERVAL '3' DAY`, `INTERVAL '4' YEAR`, ... | interval_ds / interval_ym | ISO-8601 duration |

The value decides between the readings a declared type allows (an OceanBase Oracle
tenant's TIMESTAMP is wall-clock text, a MySQL tenant's is epoch seconds).  A column
without a declared type (the spec's own samples name columns `int8`... but send `col1`...)
is kept as sent, `string`; a declared type outside the table, too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from cdc_unify import canonical as c
from cdc_unify.canonicalizers._value_text import interval_ds_text, interval_ym_text, zone_of

# Declared type (upper case, parameters and `UNSIGNED` removed) -> logical type.
_TYPE_NAMES = {
    "tinyint": ("TINYINT",),
    "smallint": ("SMALLINT",),
    "int": ("MEDIUMINT", "INT", "INTEGER", "INT32"),
    "bigint": ("INT64", "BIGINT", "LONG"),
    "boolean": ("BOOLEAN", "BOOL"),
    "decimal": ("DECIMAL", "NUMERIC", "NUMBER", "BIGDECIMAL"),
    "float": ("FLOAT", "BINARY_FLOAT", "FLOAT32"),
    "double": ("DOUBLE", "BINARY_DOUBLE", "REAL", "FLOAT64"),
    "json": ("JSON",),
    "binary": (
        "BLOB",
        "TINYBLOB",
        "MEDIUMBLOB",
        "LONGBLOB",
        "BINARY",
        "VARBINARY",
        "BYTES",
        "RAW",
        "LONG RAW",
        "BFILE",
        "BIT",
    ),  # fmt: skip
    "date": ("DATE",),
    "time": ("TIME",),
    "datetime": ("DATETIME",),
    "timestamp": ("TIMESTAMP",),
    "zoned_datetime": ("ZONED_DATETIME", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH LOCAL TIME ZONE"),
    "interval_ds": ("INTERVAL_DAY_TO_SECOND", "INTERVAL DAY TO SECOND"),
    "interval_ym": ("INTERVAL_YEAR_TO_MONTH", "INTERVAL YEAR TO MONTH"),
}
LOGICAL_BY_TYPE = {name: logical for logical, names in _TYPE_NAMES.items() for name in names}
_PARAMS_RE = re.compile(r"\(\s*(\d+)?\s*(?:,\s*(\d+)\s*)?\)")
_UNSIGNED_RE = re.compile(r"\s+(UNSIGNED|ZEROFILL)\b", re.IGNORECASE)
_ZONED_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)\s+(\S+)$")
_EPOCH_RE = re.compile(r"^-?\d+(?:\.\d+)?$")


@functools.lru_cache(maxsize=4096)  # a feed declares few distinct types, each again in every image
def logical_type(declared: str | None) -> str:
    """`decimal(10,2)` -> `decimal(10,2)`, `INT64` -> `bigint`, `bigint unsigned` -> `ubigint`, unknown -> `string`."""
    text = (declared or "").strip()
    params = _PARAMS_RE.search(text)
    unsigned = bool(_UNSIGNED_RE.search(text))
    name = " ".join(_UNSIGNED_RE.sub("", _PARAMS_RE.sub("", text)).upper().split())
    logical = LOGICAL_BY_TYPE.get(name, "string")
    if logical == "bigint" and unsigned:
        return "ubigint"
    if logical == "decimal" and params and params.group(1) and params.group(2) is not None:
        return f"decimal({int(params.group(1))},{int(params.group(2))})"
    return logical


# ---------------------------------------------------------------- temporal readings
def _wall_clock(text: str) -> tuple[str, str]:
    value, nanos = c.parse_datetime_text(text)
    return c.fmt_datetime(value, nanos), "datetime"


def _zoned(text: str) -> tuple[str, str]:
    """`2020-11-25 00:01:02.012345 Asia/Shanghai` -> the UTC instant with the zone kept."""
    m = _ZONED_RE.match(text.strip())
    if not m:
        raise c.CanonicalError(f"{text!r} is not `YYYY-MM-DD HH:MM:SS[.f] zone`")
    value, nanos = c.parse_datetime_text(m.group(1))
    tzinfo, zone_id = zone_of(m.group(2))
    return c.fmt_zoned(value.replace(tzinfo=tzinfo), zone_id, nanos), "zoned_datetime"


def _epoch(text: str, unit: str) -> tuple[str, str]:
    c.parse_decimal_text(text)  # refuses absurd exponents before any arithmetic
    instant, nanos = c.instant_from_epoch_text(text, unit)
    return c.fmt_instant(instant, nanos), "timestamp"


def _epoch_ms_with_nanos(text: str) -> tuple[str, str]:
    """The overall format's DATETIME `1590315269000.123456789`: "13 位时间戳.9 位纳秒", epoch
    milliseconds whose fraction is the nanosecond of the second."""
    whole, _, fraction = text.partition(".")
    if not fraction:
        return _epoch(whole, "ms")
    if len(fraction) != 9:
        raise c.CanonicalError(f"{text!r}: the fraction of epoch ms must be 9 nanosecond digits")
    millis = c.parse_integer_text(whole)
    return _epoch(f"{millis // 1000}.{fraction}", "s")


def _any_datetime(text: str, epoch: Callable[[str], tuple[str, str]]) -> tuple[str, str]:
    """Epoch text, a zoned datetime or a wall clock, whichever the text is."""
    stripped = text.strip()
    if _EPOCH_RE.match(stripped):
        return epoch(stripped)
    if _ZONED_RE.match(stripped):
        return _zoned(stripped)
    return _wall_clock(stripped)


def _date(text: str) -> tuple[str, str]:
    stripped = text.strip()
    if len(stripped) > 10:  # an Oracle tenant's DATE has a time of day
        return _wall_clock(stripped)
    return c.canonical_date_text(stripped), "date"


def _integer(kind: str) -> Callable[[str], tuple[str, str]]:
    return lambda text: (c.canonical_integer_text(text), kind)


_READERS: dict[str, Callable[[str], tuple[str, str]]] = {
    **{kind: _integer(kind) for kind in c.INTEGER_TYPES},
    "boolean": lambda t: (c.fmt_bool(c.parse_bool_text(t)), "boolean"),
    "float": lambda t: (c.fmt_float32(c.parse_float_text(t)), "float"),
    "double": lambda t: (c.fmt_double(c.parse_float_text(t)), "double"),
    "string": lambda t: (t, "string"),
    "json": lambda t: (t, "json"),
    "binary": lambda t: (c.fmt_binary(c.parse_base64(t)), "binary"),
    "date": _date,
    "time": lambda t: (c.canonical_time_text(t), "time"),
    "datetime": lambda t: _any_datetime(t, _epoch_ms_with_nanos),
    "timestamp": lambda t: _any_datetime(t, lambda e: _epoch(e, "s")),
    "zoned_datetime": _zoned,
    "interval_ds": lambda t: (interval_ds_text(t), "interval_ds"),
    "interval_ym": lambda t: (interval_ym_text(t), "interval_ym"),
}


def read_value(logical: str, text: str) -> tuple[str, str]:
    """Raw text of a value declared `logical` -> (canonical text, logical type of this value)."""
    if c.base_type(logical) == "decimal":
        return c.canonical_decimal_text(text), logical
    return _READERS[logical](text)


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, str | None], dict[str, str]]:
    """`payload.before/after.data` -> (canonical values, logical types).

    Types cover every declared column and every carried one; a value may refine its
    column's type (a DATETIME with a zone is zoned_datetime).  Wall clocks stay wall
    clocks and epochs are instants, so `source_tz` is not needed.
    """
    del source_tz
    types = {name: logical_type(declared) for name, declared in source_types.items()}
    canonical: dict[str, str | None] = {}
    for name, raw in values.items():
        declared = types.setdefault(name, "string")
        if raw is None:
            canonical[name] = None
            continue
        try:
            canonical[name], types[name] = read_value(declared, str(raw))
        except c.CanonicalError as exc:
            raise c.CanonicalError(f"column {name!r} ({source_types.get(name)}): {exc}") from None
    # Sorted keys: the same image always becomes the same map, whatever the JSON key order.
    return dict(sorted(canonical.items())), dict(sorted(types.items()))
