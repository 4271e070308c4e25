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

`mysqlType` texts may lack their arguments (`decimal`, `varchar`) and use OMS names (`int64`);
a bare `decimal` therefore has no known precision, and `sqlType` 6 is MySQL's FLOAT (spec 003 sample).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from cdc_unify.canonical import CanonicalError, fmt_datetime, fmt_instant, instant_from_epoch_text
from cdc_unify.canonicalizers._mysql_types import jdbc_code, source_logical_type, split_type_text
from cdc_unify.canonicalizers._value_text import TEXT_READERS, canonicalize_with, instant_text, split_zoned

_EPOCH_SECONDS_RE = re.compile(r"^-?\d+(?:\.\d{1,9})?$")
# OMS marks a TIMESTAMP it could not read as `0000-00-00 00:00:00` (spec 003).
_INVALID_TIMESTAMP = "0000-00-00 00:00:00"


@functools.lru_cache(maxsize=4096)  # a feed declares few distinct types, each again in every image
def oms_logical_type(source_type: str | None) -> str:
    """As for the MySQL family, except: BIT is bytes (base64), a `decimal` without arguments has
    no known precision, and java.sql.Types 6 (FLOAT) is MySQL's single-precision FLOAT."""
    code = jdbc_code(source_type)
    if code is not None:
        return {-7: "binary", 6: "float"}.get(code) or source_logical_type(source_type)
    name, args, _ = split_type_text(source_type or "")
    if name == "bit":
        return "binary"
    if name == "decimal" and not args:
        return "decimal"
    return source_logical_type(source_type)


def oms_timestamp_text(text: str, source_tz: str) -> str:
    """`1606233662.012345` (epoch seconds) -> canonical instant; a datetime text is read in `source_tz`."""
    stripped = text.strip()
    if stripped == _INVALID_TIMESTAMP:
        raise CanonicalError("OMS marks this TIMESTAMP as invalid (0000-00-00 00:00:00)")
    if _EPOCH_SECONDS_RE.match(stripped):
        return fmt_instant(*instant_from_epoch_text(stripped, "s"))
    return instant_text(stripped, source_tz)


def oms_datetime_text(text: str, _source_tz: str) -> str:
    """`2020-11-25 00:01:02[.n] [zoneId]` -> the zone-less wall clock (the zone is OMS's annotation)."""
    zoned = split_zoned(text)
    return fmt_datetime(zoned.wall, zoned.nanos)


OMS_READERS = {**TEXT_READERS, "timestamp": oms_timestamp_text, "datetime": oms_datetime_text}


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """An OMS Canal row image (column -> exact text as sent) -> (canonical texts, logical types)."""
    return canonicalize_with(values, source_types, source_tz, oms_logical_type, OMS_READERS)
