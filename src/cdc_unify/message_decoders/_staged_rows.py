"""Twins of the SQL macros in macros/staging.sql, for the Python staging models (dts_avro, debezium_json).

A staged row must not depend on which language staged it: `event_id`, `sequence` and
`primary_key` are computed here exactly as `cdc_event_id`, `cdc_sequence` and `cdc_primary_key`
compute them in Spark SQL (same sha2 input, same padding, Spark's `to_json` escaping), and a
Spark test compares both on the same inputs.  `STAGED_ARROW_SCHEMA` is the staged contract as
the Arrow schema `mapInArrow` returns.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re

import pyarrow as pa

from cdc_unify.contract import STAGED_COLUMNS

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_ARROW_TYPES = {
    "string": pa.string(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "array<string>": pa.list_(pa.string()),
    "map<string,string>": pa.map_(pa.string(), pa.string()),
}
STAGED_ARROW_SCHEMA = pa.schema([pa.field(name, _ARROW_TYPES[typ]) for name, typ in STAGED_COLUMNS])


def sha256_hex(data: bytes) -> str:
    """Spark's `sha2(binary, 256)`."""
    return hashlib.sha256(data).hexdigest()


def cdc_event_id(source_name: str | None, dialect: str | None, natural_id: str | None, row_index: int | None) -> str:
    """`cdc_event_id`: sha2 of the parts joined by `|`, NULL parts skipped (concat_ws)."""
    parts = (source_name, dialect, natural_id, None if row_index is None else str(row_index))
    return sha256_hex("|".join(p for p in parts if p is not None).encode("utf-8"))


def landing_natural_id(kind: str, topic: str | None, partition: int | None, offset: int | None) -> str:
    """`concat_ws(':', kind, topic, partition, offset)`: the identity of a message without content of
    its own (a tombstone, a DTS offset filler), which is its place in the topic: two such messages
    are two messages, never a redelivery."""
    return ":".join(str(p) for p in (kind, topic, partition, offset) if p is not None)


def _lpad(text: str, width: int) -> str:
    """Spark's lpad(text, width, '0'): pads on the left, and cuts text longer than width to its first chars."""
    return text[:width] if len(text) >= width else "0" * (width - len(text)) + text


def unix_micros(value: dt.datetime) -> int:
    return (value - _EPOCH) // dt.timedelta(microseconds=1)


# A position number is a decimal(38, 0) in the SQL models: one of more digits names no place.
POSITION_DIGITS = re.compile(r"[0-9]{1,38}")


def position_of_digits(text: str) -> int | None:
    """A position's ASCII digits as a number; None for anything else or more than 38 digits."""
    return int(text) if POSITION_DIGITS.fullmatch(text) else None


def binlog_position(file_index: str, offset: str) -> int | None:
    """A binlog file index and offset, each as ASCII digits, as one number: index * 2^32 + offset,
    where cdc_sequence can sort it (at most 38 digits); None otherwise."""
    index, within = position_of_digits(file_index), position_of_digits(offset)
    if index is None or within is None:
        return None
    number = index * 2**32 + within
    return number if number < 10**38 else None


def _position_text(position_number: int | None) -> str:
    text = "0" if position_number is None else str(position_number)
    return _lpad(text, 30) if len(text) <= 30 else f":{len(text)}{text}"


def cdc_sequence(
    position_number: int | None, event_ts: dt.datetime | None, landing_offset: int | None, row_index: int | None
) -> str:
    """`cdc_sequence`: position (30; 31 to 38 digits as ':', length, digits), event time in micros
    (20), landing offset (20), row (6), zero-padded."""
    parts = (
        _position_text(position_number),
        _lpad("0" if event_ts is None else str(unix_micros(event_ts)), 20),
        None if landing_offset is None else _lpad(str(landing_offset), 20),
        None if row_index is None else _lpad(str(row_index), 6),
    )
    return ".".join(p for p in parts if p is not None)


def spark_json_string(text: str) -> str:
    """A JSON string as Spark's to_json (Jackson) writes it: raw UTF-8, control characters as `\\u00XX`."""
    out = []
    for ch in text:
        escaped = _JSON_ESCAPES.get(ch)
        if escaped is None and ord(ch) < 0x20:
            escaped = f"\\u{ord(ch):04X}"
        out.append(escaped or ch)
    return '"' + "".join(out) + '"'


def cdc_primary_key(
    key_columns: list[str] | None, before: dict[str, str | None] | None, after: dict[str, str | None] | None
) -> str | None:
    """`cdc_primary_key`: `to_json` of the key's texts in key order, after image first; null without a key."""
    if not key_columns:
        return None
    texts = []
    for column in key_columns:
        text = (after or {}).get(column)
        if text is None:
            text = (before or {}).get(column)
        texts.append("null" if text is None else spark_json_string(text))
    return "[" + ",".join(texts) + "]"
