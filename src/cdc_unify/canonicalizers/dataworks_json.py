"""DataWorks "sync whole database to Kafka" JSON, versions 0.0.1 / 1.0.0 (spec 001) -> canonical images.

`schema.dataColumn` declares each column as one of six types (spec 001, 字段类型):

| type | sent as | logical type | canonical text |
|---|---|---|---|
| BOOLEAN | JSON true/false | boolean | `true` / `false` |
| LONG | JSON number | bigint | exact digits (beyond int64 too) |
| DOUBLE | JSON number | double | shortest round-trip text |
| DATE | JSON number, 13-digit epoch milliseconds | timestamp | the UTC instant |
| BYTES | base64 string | binary | base64 of the decoded bytes |
| STRING | JSON string | string | as sent |

A DATE value is an instant whatever the source column was (DATE, DATETIME, TIMESTAMP):
DataWorks turned the source wall clock into epoch milliseconds, and the message does not
say which it was.  A column without a declared type, or with a type outside the six, is
kept as sent (`string`).  The SQL model passes JSON numbers with their exact digits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cdc_unify import canonical as c

LOGICAL_TYPES = {
    "BOOLEAN": "boolean",
    "LONG": "bigint",
    "DOUBLE": "double",
    "DATE": "timestamp",
    "BYTES": "binary",
    "STRING": "string",
}
# Epoch milliseconds of 0001-01-01 and 9999-12-31 23:59:59.999: the instants a timestamp can hold.
_MIN_EPOCH_MS = -62_135_596_800_000
_MAX_EPOCH_MS = 253_402_300_799_999


@functools.lru_cache(maxsize=4096)  # a feed declares few distinct types, each again in every image
def logical_type(declared: str | None) -> str:
    """Logical type of a declared dataColumn type (case-insensitive; unknown -> string)."""
    return LOGICAL_TYPES.get((declared or "").strip().upper(), "string")


def epoch_ms_text(text: str) -> str:
    """Canonical instant of epoch milliseconds (`1590315269000` -> `2020-05-24T10:14:29Z`)."""
    millis = c.parse_decimal_text(text)
    if not _MIN_EPOCH_MS <= millis <= _MAX_EPOCH_MS:
        raise c.CanonicalError(f"{text!r} is out of range as epoch milliseconds")
    instant, nanos = c.instant_from_epoch_text(text, "ms")
    return c.fmt_instant(instant, nanos)


def _double_text(text: str) -> str:
    return c.fmt_double(c.parse_float_text(text))


_READERS: dict[str, Callable[[str], str]] = {
    "boolean": lambda text: c.fmt_bool(c.parse_bool_text(text)),
    "bigint": c.canonical_integer_text,
    "double": _double_text,
    "timestamp": epoch_ms_text,
    "binary": lambda text: c.fmt_binary(c.parse_base64(text)),
    "string": str,
}


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, str | None], dict[str, str]]:
    """`payload.before/after.dataColumn` -> (canonical values, logical types).

    `types` covers every declared column and every carried one; the values carry
    instants, never wall clocks, so `source_tz` is not needed.
    """
    del source_tz
    types = {name: logical_type(declared) for name, declared in source_types.items()}
    canonical: dict[str, str | None] = {}
    for name, raw in values.items():
        kind = types.setdefault(name, "string")
        try:
            canonical[name] = None if raw is None else _READERS[kind](str(raw))
        except c.CanonicalError as exc:
            raise c.CanonicalError(f"column {name!r} ({source_types.get(name)}): {exc}") from None
    # Sorted keys: the same image always becomes the same map, whatever the JSON key order.
    return dict(sorted(canonical.items())), dict(sorted(types.items()))
