"""Canal FlatMessage (spec 004; CloudCanal's Canal flavour, spec 000): column types and values.

The SQL staging model (models/staging/canal_json/) explodes the message and hands every row
image to its value decoder (this module's JVM twin: canonicalizers/__init__.py), with each
column's type as the message declares it: the `mysqlType` text (`int(11)`, `bigint(20)
unsigned`, `decimal(12,2)`, `datetime(6)`), or `jdbc:<code>` built from `sqlType` (a
java.sql.Types code) for a column `mysqlType` does not name.

Alibaba Canal sends every value as a JSON string in MySQL's text form, with two quirks:
binary columns are the raw bytes decoded as ISO-8859-1 (LogEventConvert keeps them that way),
and TIMESTAMP columns are the wall clock of the source server's zone (`source_tz`).

Types follow the MySQL mapping every MySQL-family decoder shares (canonicalizers/_mysql_types.py),
except BIT(n): Canal sends a bit field as its number.  Zoned datetimes and intervals are read by
canonicalizers/_value_text.py, as are the values' text forms, except Canal's binary text.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from cdc_unify.canonical import CanonicalError, fmt_binary
from cdc_unify.canonicalizers._mysql_types import source_logical_type
from cdc_unify.canonicalizers._value_text import TEXT_READERS, canonicalize_with

_BIT_FIELD_RE = re.compile(r"^bit\s*\(\s*(\d+)\s*\)$")


@functools.lru_cache(maxsize=4096)  # a feed declares few distinct types, each again in every image
def canal_logical_type(source_type: str | None) -> str:
    """Logical type of a `mysqlType` text or `jdbc:<code>`; Canal sends BIT(n > 1) as its number."""
    m = _BIT_FIELD_RE.match((source_type or "").strip().lower())
    if m and int(m.group(1)) > 1:
        return "ubigint"
    return source_logical_type(source_type)


def latin1_binary_text(text: str, _source_tz: str) -> str:
    """Canal's binary text (bytes decoded as ISO-8859-1) -> canonical base64 of the bytes."""
    try:
        return fmt_binary(text.encode("latin-1"))
    except UnicodeEncodeError:
        raise CanonicalError("binary text holds a character beyond ISO-8859-1") from None


CANAL_READERS = {**TEXT_READERS, "binary": latin1_binary_text}


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """A Canal row image (column -> text as sent) -> (canonical texts, logical types)."""
    return canonicalize_with(values, source_types, source_tz, canal_logical_type, CANAL_READERS)
