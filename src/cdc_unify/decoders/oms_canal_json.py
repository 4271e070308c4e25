"""OceanBase OMS, Canal serialisation (spec 003): column types and values.

The message shape is Canal's FlatMessage (the staging model shares the Canal macro), but the
values follow OMS's "database to text protocol" table (end of spec 003), not Canal's:

- numbers are JSON numbers (the staging model keeps their exact digits: `10223372036854775806`,
  decimals with hundreds of digits, `E-308` exponents); decimals may use scientific notation;
- BLOB/BINARY/VARBINARY and BIT are base64 (`aGVsbG8gd29ybGQ=`);
- TIMESTAMP is epoch seconds with an optional fraction (`1606233662.012345`);
- DATETIME is `YYYY-MM-DD HH:mm:ss[.nnnnnnnnn] [zoneId]`: the zone is OMS's annotation, the
  column stays a zone-less wall clock; zoned types keep it;
- intervals are Oracle literals (`INTERVAL '3' DAY`, `INTERVAL '4' YEAR`).

`mysqlType` texts may lack their arguments (`decimal`, `varchar`) and use OMS names (`int64`).
"""

from __future__ import annotations

import re
from typing import Any

from cdc_unify.canonical import (
    CanonicalError,
    fmt_binary,
    fmt_datetime,
    fmt_instant,
    instant_from_epoch_text,
    parse_base64,
    parse_datetime_text,
)
from cdc_unify.decoders.canal_json import (
    CANAL_READERS,
    canonicalize_with,
    source_logical_type,
    wall_clock_instant_text,
)

_EPOCH_SECONDS_RE = re.compile(r"^-?\d+(?:\.\d{1,9})?$")
# OMS marks a TIMESTAMP it could not read as `0000-00-00 00:00:00` (spec 003).
_INVALID_TIMESTAMP = "0000-00-00 00:00:00"
_BIT_RE = re.compile(r"^(?:bit\s*(?:\(\s*\d+\s*\))?|jdbc:-7)$")
_DATETIME_ZONE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(?:\s+\S+)?$")


def oms_logical_type(source_type: str | None) -> str:
    """As for Canal, except BIT: OMS sends it as bytes (base64), Canal as a number."""
    if source_type and _BIT_RE.match(source_type.strip().lower()):
        return "binary"
    return source_logical_type(source_type)


def oms_timestamp_text(text: str, source_tz: str) -> str:
    """`1606233662.012345` (epoch seconds) -> canonical instant; a datetime text is read in `source_tz`."""
    stripped = text.strip()
    if stripped == _INVALID_TIMESTAMP:
        raise CanonicalError("OMS marks this TIMESTAMP as invalid (0000-00-00 00:00:00)")
    if _EPOCH_SECONDS_RE.match(stripped):
        return fmt_instant(*instant_from_epoch_text(stripped, "s"))
    return wall_clock_instant_text(stripped, source_tz)


def oms_datetime_text(text: str, _source_tz: str) -> str:
    """`2020-11-25 00:01:02[.n] [zoneId]` -> the zone-less wall clock."""
    m = _DATETIME_ZONE_RE.match(text.strip())
    if not m:
        raise CanonicalError(f"{text!r} is not a datetime YYYY-MM-DD HH:mm:ss[.n] [zoneId]")
    return fmt_datetime(*parse_datetime_text(m.group(1)))


OMS_READERS = {
    **CANAL_READERS,
    "binary": lambda text, _tz: fmt_binary(parse_base64(text)),
    "timestamp": oms_timestamp_text,
    "datetime": oms_datetime_text,
}


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """An OMS Canal row image (column -> exact text as sent) -> (canonical texts, logical types)."""
    return canonicalize_with(values, source_types, source_tz, oms_logical_type, OMS_READERS)
