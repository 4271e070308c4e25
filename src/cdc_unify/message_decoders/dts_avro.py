"""Alibaba Cloud DTS Avro -> staged change events (docs/dialects/dts_avro.md).

One Kafka value is one bare Avro datum of the public `Record` schema
(`dts_avro_record.avsc`, verbatim from dts_avro.md section 1).  Small pure layers:

1. wire: `decode_record(value)` -> the Record as a dict, or `Rejected(code, detail)`;
2. values: `canonical_value` / `canonical_image` turn the VALUE union items
   (Integer, Character, Decimal, Float, Timestamp, DateTime, ...) into canonical text;
3. events: `stage_message(...)` -> the staged row (every contract column except the two
   landing timestamps, which the Arrow wrapper passes through), with ids, sequences and keys
   from the twins of the SQL macros (message_decoders/_staged_rows.py);
4. `decode_arrow_batches`, the function `DataFrame.mapInArrow` runs on the executors.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa

from cdc_unify import canonical as c
from cdc_unify.canonicalizers._value_text import interval_ds_text, interval_ym_text, zone_of
from cdc_unify.contract import NO_FEED, NO_FEED_DETAIL, STAGED_COLUMNS
from cdc_unify.message_decoders import _staged_rows as twins
from cdc_unify.message_decoders._ddl import statement_head, statement_op
from cdc_unify.message_decoders._strict_json import loads_strict

DIALECT = "dts_avro"
SCHEMA_PATH = Path(__file__).with_name("dts_avro_record.avsc")
NAMESPACE = "com.alibaba.dts.formats.avro."
# S4 skips 48-byte values DTS writes only to push offsets forward; a value this short
# that is not a decodable Record is such a filler, not a broken message.
FILLER_MAX_BYTES = 48

OPERATIONS = (
    "INSERT",
    "UPDATE",
    "DELETE",
    "DDL",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "ABORT",
    "HEARTBEAT",
    "CHECKPOINT",
    "COMMAND",
    "FILL",
    "FINISH",
    "CONTROL",
    "RDB",
    "NOOP",
    "INIT",
)
SOURCE_TYPES = (
    "MySQL",
    "Oracle",
    "SQLServer",
    "PostgreSQL",
    "MongoDB",
    "Redis",
    "DB2",
    "PPAS",
    "DRDS",
    "HBASE",
    "HDFS",
    "FILE",
    "OTHER",
)
_ROW_OPS = {"INSERT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE", "INIT": "SNAPSHOT"}
_TRANSACTION_OPS = frozenset({"BEGIN", "COMMIT", "ROLLBACK", "ABORT"})
# COMMAND is how DTS carries a MongoDB command, which its own SDK treats as DDL.
_DDL_RECORD_OPS = frozenset({"DDL", "COMMAND"})
# Which images a row operation must carry.
_REQUIRED_IMAGES = {
    "INSERT": ("afterImages",),
    "INIT": ("afterImages",),
    "UPDATE": ("beforeImages", "afterImages"),
    "DELETE": ("beforeImages",),
}


class Rejected(Exception):
    """A message that must be quarantined with `code` (cdc_unify.contract.ERROR_CODES)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


# ================================================================ 1. wire
@functools.cache
def record_schema(with_born_timestamp: bool = True) -> dict[str, Any]:
    """The parsed `Record` schema; without `bornTimestamp` for reading (section 2 of the spec)."""
    named_types = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    if not with_born_timestamp:
        named_types = copy.deepcopy(named_types)
        record = named_types[-1]
        record["fields"] = [f for f in record["fields"] if f["name"] != "bornTimestamp"]
    return fastavro.parse_schema(named_types)[-1]


def read_zigzag_long(buf: bytes, pos: int) -> tuple[int, int]:
    """One Avro int/long (zig-zag varint) at `pos` -> (value, next position)."""
    if pos < len(buf) and buf[pos] < 0x80:  # one byte: most lengths, ordinals and flags
        return (buf[pos] >> 1) ^ -(buf[pos] & 1), pos + 1
    raw = shift = 0
    while True:
        if pos >= len(buf):
            raise Rejected("invalid_avro", f"the value ends inside a varint at byte {pos}")
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift > 63:
            raise Rejected("invalid_avro", f"a varint longer than 10 bytes ends at byte {pos}")


def header_ordinals(value: bytes) -> tuple[int, int]:
    """(source.sourceType, operation) enum ordinals, read by hand from the fixed prefix.

    fastavro indexes enum symbols with the raw ordinal (a negative one silently wraps to
    the last symbol), so the operation is checked here before the full decode.
    """
    pos = 0
    ordinals = []
    # version, id, sourceTimestamp, sourcePosition, safeSourcePosition, sourceTxid,
    # source.sourceType, source.version, operation
    for kind in ("int", "long", "long", "string", "string", "string", "enum", "string", "enum"):
        number, pos = read_zigzag_long(value, pos)
        if kind == "string":
            if number < 0 or pos + number > len(value):
                raise Rejected("invalid_avro", f"a string of {number} bytes does not fit the value at byte {pos}")
            pos += number
        elif kind == "enum":
            ordinals.append(number)
    return ordinals[0], ordinals[1]


# An object's default repr, as fastavro's errors name the stream they read ("cannot read double
# from <_io.BytesIO object at 0x7f19...>"): its address differs in every process.
OBJECT_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")


def reader_error(exc: Exception) -> str:
    """The reader's message without object addresses: the same bytes give the same error detail
    in every run, so a rebuild of a quarantined message leaves its row as it was."""
    return OBJECT_REPR.sub("the value", str(exc))


def decode_record(value: bytes) -> dict[str, Any]:
    """One Kafka value -> the Record dict (VALUE items as `(fullname, datum)` tuples)."""
    source_type, operation = header_ordinals(value)
    if not 0 <= operation < len(OPERATIONS):
        raise Rejected(
            "unknown_op", f"operation ordinal {operation} is not one of the {len(OPERATIONS)} DTS operations"
        )
    if not 0 <= source_type < len(SOURCE_TYPES):
        raise Rejected("invalid_avro", f"sourceType ordinal {source_type} is not in the public SourceType enum")
    stream = io.BytesIO(value)
    try:
        record = fastavro.schemaless_reader(stream, record_schema(False), None, return_record_name=True)
    except UnicodeDecodeError as exc:
        raise Rejected("invalid_utf8", f"an Avro string is not UTF-8: {exc}") from None
    except Exception as exc:  # any failure of the reader on untrusted bytes is a bad datum
        raise Rejected("invalid_avro", f"not a DTS Record datum: {type(exc).__name__}: {reader_error(exc)}") from None
    pos = stream.tell()
    if pos < len(value):
        # Producers since 2020-06 append bornTimestamp; older ones stop before it.
        record["bornTimestamp"], pos = read_zigzag_long(value, pos)
    if pos != len(value):
        raise Rejected("invalid_avro", f"{len(value) - pos} bytes follow the Record datum")
    return record


# ================================================================ 2. values
# MySQL charset -> Python codec (the DTS SDK's JDKCharsetMapper, in Python codec names).
# `binary` (and an empty charset) means raw bytes: such values are binary, not text.
_CHARSETS = {
    "armscii8": "cp1252",
    "ascii": "ascii",
    "big5": "big5",
    "cp1250": "cp1250",
    "cp1251": "cp1251",
    "cp1256": "cp1256",
    "cp1257": "cp1257",
    "cp850": "cp850",
    "cp852": "cp852",
    "cp866": "cp866",
    "cp932": "cp932",
    "dec8": "cp1252",
    "eucjpms": "euc_jp",
    "euckr": "euc_kr",
    "gb2312": "gb2312",
    "gbk": "gbk",
    "gb18030": "gb18030",
    "geostd8": "cp1252",
    "greek": "iso8859_7",
    "hebrew": "iso8859_8",
    "hp8": "cp1252",
    "keybcs2": "cp852",
    "koi8r": "koi8_r",
    "koi8u": "koi8_r",
    "latin2": "iso8859_2",
    "latin5": "iso8859_9",
    "latin7": "iso8859_13",
    "macce": "mac_latin2",
    "macroman": "mac_roman",
    "sjis": "shift_jis",
    "swe7": "cp1252",
    "tis620": "tis_620",
    "ujis": "euc_jp",
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
    "utf8": "utf-8",
    "utf8mb3": "utf-8",
    "utf8mb4": "utf-8",
    "ucs2": "utf-16-be",
}
_BINARY_CHARSETS = frozenset({"binary", ""})
# MySQL's latin1 is cp1252 whose five undefined bytes stay the C1 control characters.
_LATIN1_TRANSLATION = {
    b: bytes([b]).decode("cp1252") for b in range(0x80, 0xA0) if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)
}

# dataTypeNumber -> logical type, used for SQL NULL and NONE values (a non-null value's
# union branch decides its type).  Oracle's TIMESTAMP WITH TIME ZONE / INTERVAL codes
# 181-183 collide with no MySQL code and are honoured whatever the source.
_MYSQL_TYPES = {
    0: "decimal",
    1: "tinyint",
    2: "smallint",
    3: "int",
    4: "float",
    5: "double",
    6: "string",
    7: "timestamp",
    8: "bigint",
    9: "int",
    10: "date",
    11: "time",
    12: "datetime",
    13: "smallint",
    14: "date",
    15: "string",
    16: "bigint",
    17: "timestamp",
    18: "datetime",
    19: "time",
    245: "json",
    246: "decimal",
    247: "string",
    248: "string",
    249: "binary",
    250: "binary",
    251: "binary",
    252: "binary",
    253: "string",
    254: "string",
    255: "binary",
}
_ORACLE_TYPES = {
    1: "string",
    2: "decimal",
    8: "string",
    12: "datetime",
    23: "binary",
    24: "binary",
    58: "string",
    69: "string",
    96: "string",
    100: "float",
    101: "double",
    112: "string",
    113: "binary",
    114: "binary",
    180: "datetime",
    181: "zoned_datetime",
    182: "interval_ym",
    183: "interval_ds",
    208: "string",
    231: "zoned_datetime",
}
_POSTGRES_TYPES = {
    16: "boolean",
    17: "binary",
    20: "bigint",
    21: "smallint",
    23: "int",
    25: "string",
    114: "json",
    700: "float",
    701: "double",
    1043: "string",
    1082: "date",
    1083: "time",
    1114: "datetime",
    1184: "zoned_datetime",
    1700: "decimal",
    2950: "string",
    3802: "json",
}
_TYPES_BY_SOURCE = {"MySQL": _MYSQL_TYPES, "Oracle": _ORACLE_TYPES, "PostgreSQL": _POSTGRES_TYPES}
_CROSS_SOURCE_TYPES = {181: "zoned_datetime", 182: "interval_ym", 183: "interval_ds"}
# Integer branch: the integer width the type number names.
_INTEGER_WIDTHS = {
    "MySQL": {1: "tinyint", 2: "smallint", 3: "int", 9: "int", 8: "bigint"},
    "PostgreSQL": {21: "smallint", 23: "int", 20: "bigint"},
}
_FLOAT32_TYPES = {"MySQL": 4, "Oracle": 100, "PostgreSQL": 700}
_INTERVAL_TEXT = {182: interval_ym_text, 183: interval_ds_text}
_TEXT_OBJECT_TYPES = {"JSON": "json"}
_BINARY_OBJECT_TEXT_TYPES = {"JSON": "json", "TEXT": "string", "XML": "string"}
_DECIMAL_SPECIALS = {
    "nan": "NaN",
    "infinity": "Infinity",
    "-infinity": "-Infinity",
    "inf": "Infinity",
    "-inf": "-Infinity",
}


@dataclass(frozen=True)
class ValueContext:
    """What a VALUE item's meaning depends on beyond the item itself."""

    source_type: str = "MySQL"
    # DateTime.millis is microseconds for MySQL and PostgreSQL (logical positions), else nanoseconds.
    fraction_nanos: int = 1000

    @classmethod
    def of(cls, source_type: str, source_position: str) -> ValueContext:
        micros = source_type in ("MySQL", "PostgreSQL") and "<->" not in source_position
        return cls(source_type, 1000 if micros else 1)


def type_of_number(type_number: int | None, source_type: str) -> str:
    """Logical type a dataTypeNumber names (`string` when unknown)."""
    table = _TYPES_BY_SOURCE.get(source_type, {})
    return table.get(type_number) or _CROSS_SOURCE_TYPES.get(type_number) or "string"


def decode_characters(charset: str, raw: bytes) -> str:
    """Bytes of a Character value in its source charset -> text."""
    name = charset.strip().lower()
    if name == "latin1":
        return raw.decode("latin-1").translate(_LATIN1_TRANSLATION)
    codec = _CHARSETS.get(name, name)
    try:
        return raw.decode(codec)
    except LookupError:
        raise c.CanonicalError(f"unknown charset {charset!r}") from None
    except UnicodeDecodeError as exc:
        raise c.CanonicalError(f"bytes are not valid {charset}: {exc.reason} at byte {exc.start}") from None


def _signed_timedelta(negative: bool, seconds: int, nanos: int) -> dt.timedelta:
    value = dt.timedelta(seconds=seconds, microseconds=nanos // 1000)
    if negative and not value and nanos:
        value = dt.timedelta(microseconds=1)  # keeps the sign; the text takes its fraction from nanos
    return -value if negative else value


def _fraction_nanos(millis: int | None, ctx: ValueContext) -> int:
    nanos = abs(millis or 0) * ctx.fraction_nanos
    if nanos >= 1_000_000_000:
        raise c.CanonicalError(f"fraction {millis} is not below one second")
    return nanos


def _datetime_parts(parts: dict[str, int | None], ctx: ValueContext) -> tuple[str, Any, int]:
    """DateTime record -> (kind, value, fraction nanos); the non-null parts give the kind (S4):
    datetime (all), date (y/m/d), time (h/m/s, a signed timedelta: MySQL TIME), year."""
    year, month, day = parts.get("year"), parts.get("month"), parts.get("day")
    hour, minute, second = parts.get("hour"), parts.get("minute"), parts.get("second")
    has_date = None not in (year, month, day)
    has_time = None not in (hour, minute, second)
    nanos = _fraction_nanos(parts.get("millis"), ctx)
    try:
        if has_date and has_time:
            return "datetime", dt.datetime(year, month, day, hour, minute, second), nanos
        if has_date and hour is None and minute is None and second is None:
            return "date", dt.date(year, month, day), 0
    except ValueError as exc:
        raise c.CanonicalError(f"DateTime {parts}: {exc}") from None
    if has_time and year is None and month is None and day is None:
        negative = min(hour, minute, second, parts.get("millis") or 0) < 0
        seconds = abs(hour) * 3600 + abs(minute) * 60 + abs(second)
        if abs(minute) > 59 or abs(second) > 59:
            raise c.CanonicalError(f"DateTime {parts} is not a valid time")
        return "time", _signed_timedelta(negative, seconds, nanos), nanos
    if year is not None and month is None and day is None and not has_time:
        return "year", year, 0
    raise c.CanonicalError(f"DateTime parts {parts} are neither a date, a time, a datetime nor a year")


def _datetime_text(parts: dict[str, int | None], ctx: ValueContext) -> tuple[str, str]:
    kind, value, nanos = _datetime_parts(parts, ctx)
    if kind == "datetime":
        return c.fmt_datetime(value, nanos), "datetime"
    if kind == "date":
        return c.fmt_date(value), "date"
    if kind == "time":
        return c.fmt_time(value, nanos), "time"
    return c.fmt_integer(value), "smallint"  # YEAR


def _zoned_text(datum: dict[str, Any], ctx: ValueContext) -> tuple[str, str]:
    kind, value, nanos = _datetime_parts(datum["value"], ctx)
    tzinfo, zone_id = zone_of(datum["timezone"])
    if kind == "datetime":
        return c.fmt_zoned(value.replace(tzinfo=tzinfo), zone_id, nanos), "zoned_datetime"
    # A time (PostgreSQL timetz) or date with a zone has no instant: keep wall clock + zone as text.
    text, _ = _datetime_text(datum["value"], ctx)
    return f"{text}{datum['timezone']}", "string"


def _timestamp_text(datum: dict[str, Any]) -> str:
    micros = datum["millis"]  # named millis, holds microseconds (S3, S4, S6)
    if not 0 <= micros < 1_000_000:
        raise c.CanonicalError(f"Timestamp fraction {micros} is not a microsecond count")
    try:
        instant = dt.datetime.fromtimestamp(datum["timestamp"], dt.UTC)
    except (OverflowError, OSError, ValueError):
        raise c.CanonicalError(f"Timestamp {datum['timestamp']} is out of range") from None
    return c.fmt_instant(instant, micros * 1000)


def _decimal_text(text: str) -> str:
    special = _DECIMAL_SPECIALS.get(text.strip().lower())
    return special or c.canonical_decimal_text(text)


def _text_value(text: str, type_number: int | None, default_type: str) -> tuple[str, str]:
    interval = _INTERVAL_TEXT.get(type_number)
    if interval:
        return interval(text), _CROSS_SOURCE_TYPES[type_number]
    return text, default_type


def canonical_value(item: Any, type_number: int | None, ctx: ValueContext) -> tuple[str | None, str]:
    """One VALUE union item (not EmptyObject.NONE) -> (canonical text or None, logical type)."""
    if item is None:
        return None, type_of_number(type_number, ctx.source_type)
    name, datum = item
    kind = name.removeprefix(NAMESPACE)
    if kind == "EmptyObject":  # NULL: read as SQL NULL (NONE is handled by the image)
        return None, type_of_number(type_number, ctx.source_type)
    if kind == "Integer":
        width = _INTEGER_WIDTHS.get(ctx.source_type, {}).get(type_number, "bigint")
        return c.canonical_integer_text(datum["value"]), width
    if kind == "Character":
        if datum["charset"].strip().lower() in _BINARY_CHARSETS:
            return c.fmt_binary(datum["value"]), "binary"
        return _text_value(decode_characters(datum["charset"], datum["value"]), type_number, "string")
    if kind == "Decimal":
        return _decimal_text(datum["value"]), "decimal"
    if kind == "Float":
        if type_number == _FLOAT32_TYPES.get(ctx.source_type):
            return c.fmt_float32(datum["value"]), "float"
        return c.fmt_double(datum["value"]), "double"
    if kind == "Timestamp":
        return _timestamp_text(datum), "timestamp"
    if kind == "DateTime":
        return _datetime_text(datum, ctx)
    if kind == "TimestampWithTimeZone":
        return _zoned_text(datum, ctx)
    if kind == "BinaryGeometry":
        return c.fmt_binary(datum["value"]), "binary"
    if kind == "TextGeometry":
        return datum["value"], "string"
    if kind == "BinaryObject":
        text_type = _BINARY_OBJECT_TEXT_TYPES.get(datum["type"].upper())
        if text_type:
            return decode_characters("utf8", datum["value"]), text_type
        return c.fmt_binary(datum["value"]), "binary"
    if kind == "TextObject":
        object_type = datum["type"].upper()
        if object_type == "BOOL":
            return c.fmt_bool(c.parse_bool_text(datum["value"])), "boolean"
        return _text_value(datum["value"], type_number, _TEXT_OBJECT_TYPES.get(object_type, "string"))
    raise c.CanonicalError(f"unknown VALUE branch {name}")


def is_none_placeholder(item: Any) -> bool:
    """EmptyObject.NONE: the column is not carried by this image (S3: a placeholder)."""
    return isinstance(item, tuple) and item[0] == NAMESPACE + "EmptyObject" and item[1] == "NONE"


def canonical_image(
    fields: list[tuple[str, int]], items: list[Any], ctx: ValueContext
) -> tuple[dict[str, str | None], dict[str, str], bool]:
    """Aligned `fields` and image items -> (canonical values, logical types, is_partial).

    A NONE placeholder leaves its column out of the values (not carried), so the image is partial.
    """
    values: dict[str, str | None] = {}
    types: dict[str, str] = {}
    partial = False
    for (name, type_number), item in zip(fields, items, strict=True):
        if is_none_placeholder(item):
            partial = True
            types[name] = type_of_number(type_number, ctx.source_type)
            continue
        try:
            values[name], types[name] = canonical_value(item, type_number, ctx)
        except (c.CanonicalError, KeyError, TypeError, ValueError) as exc:
            raise c.CanonicalError(f"column {name!r}: {exc}") from None
    return values, types, partial


# ================================================================ 3. events
_IDENT = r"(?:`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[\w$]+)"
_QUALIFIED = rf"({_IDENT}(?:\s*\.\s*{_IDENT})?)"
# Where each op's statement names its table (CREATE VIEW, CREATE DATABASE ... name none: the
# record's objectName does); the op itself comes from the shared classification (_ddl.py).
_DDL_TABLES = {
    "CREATE_INDEX": rf"create\s+(?:unique\s+|fulltext\s+|spatial\s+)?index\s+{_IDENT}\s+on\s+{_QUALIFIED}",
    "DROP_INDEX": rf"drop\s+index\s+{_IDENT}\s+on\s+{_QUALIFIED}",
    "CREATE": rf"create\s+(?:temporary\s+)?table\s+(?:if\s+not\s+exists\s+)?{_QUALIFIED}",
    "ALTER": rf"alter\s+(?:online\s+|ignore\s+)?table\s+{_QUALIFIED}",
    "DROP": rf"drop\s+(?:temporary\s+)?table\s+(?:if\s+exists\s+)?{_QUALIFIED}",
    "RENAME": rf"(?:rename\s+table|alter\s+table)\s+{_QUALIFIED}",
    "TRUNCATE": rf"truncate\s+(?:table\s+)?{_QUALIFIED}",
}
_DDL_TABLE_RES = {op: re.compile(pattern, re.IGNORECASE) for op, pattern in _DDL_TABLES.items()}


def _unquote(identifier: str) -> str:
    identifier = identifier.strip()
    if identifier[:1] == "`":
        return identifier[1:-1].replace("``", "`")
    if identifier[:1] == '"':
        return identifier[1:-1].replace('""', '"')
    return identifier


def parse_ddl(statement: str) -> tuple[str, str | None, str | None]:
    """DDL text -> (staged op, database or None, table or None); unrecognised text is QUERY."""
    op = statement_op(statement)
    table = _DDL_TABLE_RES.get(op)
    m = table.match(statement_head(statement)) if table else None
    if m is None:
        return op, None, None
    names = [_unquote(p) for p in re.findall(_IDENT, m.group(1))]
    return op, (names[0] if len(names) == 2 else None), names[-1]


def split_object_name(object_name: str) -> list[str]:
    """`db.schema.table` -> parts; a `.` inside a name is sent as the 6 characters `\\u002E`."""
    return [part.replace("\\u002E", ".") for part in object_name.split(".")]


def primary_key_columns(tags: dict[str, str]) -> list[str]:
    """`tags.pk_uk_info` (`{"PRIMARY":["a"]}`) -> the primary-key columns, de-duplicated."""
    info = tags.get("pk_uk_info")
    if info is None:
        return []
    try:
        parsed = loads_strict(info)
    except ValueError as exc:
        raise Rejected("invalid_json", f"tags.pk_uk_info is not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise Rejected("wrong_shape", f"tags.pk_uk_info is not a JSON object: {info[:80]!r}")
    columns = parsed.get("PRIMARY") or []
    if not isinstance(columns, list) or not all(isinstance(col, str) for col in columns):
        raise Rejected("wrong_shape", f"tags.pk_uk_info PRIMARY is not a list of column names: {info[:80]!r}")
    return list(dict.fromkeys(columns))


def event_time(source_timestamp: int) -> tuple[dt.datetime, str]:
    """`sourceTimestamp` (epoch seconds; 13-digit values read as milliseconds, like the DTS SDK)."""
    precision = "ms" if abs(source_timestamp) >= 10**10 else "s"
    micros = source_timestamp * (1000 if precision == "ms" else 1_000_000)
    try:
        return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=micros), precision
    except OverflowError:
        raise Rejected("invalid_timestamp", f"sourceTimestamp {source_timestamp} is out of range") from None


def emitted_time(tags: dict[str, str]) -> dt.datetime | None:
    """`tags.readerThroughoutTime`: when the DTS reader handled the record (epoch ms), if sent."""
    text = tags.get("readerThroughoutTime", "")
    if not text.isdigit() or len(text) > 15:
        return None
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=int(text))


_POSITION_RE = re.compile(r"^([0-9]+)@([0-9]+)$")


def position_number(source_position: str, record_id: int) -> int | None:
    """`<offset>@<binlog file index>` -> file_index * 2^32 + offset; else the record id."""
    m = _POSITION_RE.match(source_position)
    if m:
        return twins.binlog_position(m.group(2), m.group(1))
    return record_id if record_id >= 0 else None


def _fields(record: dict[str, Any]) -> list[tuple[str, int]]:
    fields = record["fields"]
    if fields is None:
        raise Rejected("missing_field", f"a {record['operation']} record has no fields")
    if not isinstance(fields, list):
        raise Rejected("wrong_shape", f"a {record['operation']} record's fields is a string, not a field list")
    pairs = [(f["name"], f["dataTypeNumber"]) for f in fields]
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise Rejected("wrong_shape", f"fields name a column twice: {names}")
    return pairs


def _image(
    record: dict[str, Any], name: str, fields: list[tuple[str, int]], ctx: ValueContext
) -> tuple[dict[str, str | None] | None, dict[str, str], bool]:
    """One image -> (values, types, is_partial); (None, {}, False) for an absent optional image."""
    items = record[name]
    operation = record["operation"]
    if items is None:
        if name in _REQUIRED_IMAGES[operation]:
            raise Rejected("missing_field", f"a {operation} record has no {name}")
        return None, {}, False
    if not isinstance(items, list):
        raise Rejected("wrong_shape", f"a {operation} record's {name} is a string, not a value list")
    if len(items) != len(fields):
        raise Rejected("wrong_shape", f"{name} has {len(items)} values for {len(fields)} fields")
    try:
        values, types, partial = canonical_image(fields, items, ctx)
    except c.CanonicalError as exc:
        raise Rejected("invalid_value", f"{name}: {exc}") from None
    return values, types, partial


def _row_event(record: dict[str, Any]) -> dict[str, Any]:
    operation = record["operation"]
    if record["objectName"] is None:
        raise Rejected("missing_field", f"a {operation} record has no objectName")
    names = split_object_name(record["objectName"])
    if len(names) not in (2, 3):
        raise Rejected("wrong_shape", f"objectName {record['objectName']!r} is not db.table or db.schema.table")
    fields = _fields(record)
    ctx = ValueContext.of(record["source"]["sourceType"], record["sourcePosition"])
    before, before_types, before_partial = _image(record, "beforeImages", fields, ctx)
    after, after_types, after_partial = _image(record, "afterImages", fields, ctx)
    key_columns = primary_key_columns(record["tags"])
    return {
        "event_kind": "ROW",
        "op": _ROW_OPS[operation],
        "database_name": names[0],
        "schema_name": names[1] if len(names) == 3 else None,
        "table_name": names[-1],
        "primary_key_columns": key_columns,
        "primary_key_source": "message" if key_columns else "none",
        "primary_key": twins.cdc_primary_key(key_columns, before, after),
        "before": before,
        "after": after,
        "before_is_partial": before_partial,
        "after_is_partial": after_partial,
        "column_source_types": {name: str(number) for name, number in fields},
        "column_types": {**before_types, **after_types},
    }


def _ddl_event(record: dict[str, Any]) -> dict[str, Any]:
    statement = record["afterImages"]
    if statement is None:
        raise Rejected("missing_field", f"a {record['operation']} record has no statement in afterImages")
    if not isinstance(statement, str):
        raise Rejected("wrong_shape", f"a {record['operation']} record's afterImages is a value list, not DDL text")
    op, database, table = parse_ddl(statement) if record["operation"] == "DDL" else ("QUERY", None, None)
    names = split_object_name(record["objectName"]) if record["objectName"] else []
    return {
        "event_kind": "DDL",
        "op": op,
        "database_name": database or (names[0] if names else None),
        "schema_name": names[1] if len(names) == 3 else None,
        "table_name": table or (names[-1] if len(names) >= 2 else None),
        "primary_key_columns": [],
        "primary_key_source": "none",
        "ddl_statement": statement,
    }


def _non_row_event(record: dict[str, Any]) -> dict[str, Any]:
    operation = record["operation"]
    if operation == "HEARTBEAT":
        kind = "HEARTBEAT"
    elif operation in _TRANSACTION_OPS:
        kind = "TRANSACTION"
    else:
        kind = "OTHER"
    names = split_object_name(record["objectName"]) if record["objectName"] else []
    return {
        "event_kind": kind,
        "op": operation,
        "database_name": names[0] if names else None,
        "schema_name": names[1] if len(names) == 3 else None,
        "table_name": names[-1] if len(names) >= 2 else None,
        "primary_key_columns": [],
        "primary_key_source": "none",
    }


def record_event(record: dict[str, Any]) -> dict[str, Any]:
    """A decoded Record -> its staged event columns (no landing or id columns)."""
    operation = record["operation"]
    if operation in _ROW_OPS:
        event = _row_event(record)
    elif operation in _DDL_RECORD_OPS:
        event = _ddl_event(record)
    else:
        event = _non_row_event(record)
    event_ts, precision = event_time(record["sourceTimestamp"])
    return {
        **event,
        "source_db_type": record["source"]["sourceType"].lower(),
        "event_ts": event_ts,
        "event_ts_precision": precision,
        "emitted_ts": emitted_time(record["tags"]),
        "source_position": record["sourcePosition"] or None,
        "transaction_id": record["sourceTxid"] or None,
        "position_number": position_number(record["sourcePosition"], record["id"]),
        "natural_id": f"{record['id']}|{record['sourcePosition']}|{operation}",
    }


def stage_message(feed: str, topic: str, partition: int, offset: int, value: bytes | None) -> dict[str, Any]:
    """One landing row -> its one staged row (every contract column but the landing timestamps).
    A row without a feed is staged under NO_FEED and quarantined (macro cdc_staged_select)."""
    feed = feed or NO_FEED
    row: dict[str, Any] = {name: None for name, _ in STAGED_COLUMNS if name not in _PASSED_THROUGH}
    row.update(
        source_name=feed,
        dialect=DIALECT,
        landing_topic=topic,
        landing_partition=partition,
        landing_offset=offset,
        row_index=0,
    )
    if value is None:
        event: dict[str, Any] = {
            "message_status": "tombstone",
            "natural_id": twins.landing_natural_id("tombstone", topic, partition, offset),
        }
    elif feed == NO_FEED:
        event = {
            "message_status": "quarantined",
            "error_code": "no_feed",
            "error_detail": NO_FEED_DETAIL,
            "raw_value": value,
        }
    else:
        try:
            event = {"message_status": "decoded", **record_event(decode_record(value))}
        except Rejected as rejected:
            if rejected.code == "invalid_avro" and len(value) <= FILLER_MAX_BYTES:
                # Fillers are alike byte for byte; each is written to push one offset forward.
                event = {
                    "message_status": "decoded",
                    "event_kind": "OTHER",
                    "op": "NOOP",
                    "primary_key_columns": [],
                    "primary_key_source": "none",
                    "natural_id": twins.landing_natural_id("filler", topic, partition, offset),
                }
            else:
                event = {
                    "message_status": "quarantined",
                    "error_code": rejected.code,
                    "error_detail": rejected.detail,
                    "raw_value": value,
                }
    natural_id = event.pop("natural_id", None) or twins.sha256_hex(value)
    position = event.pop("position_number", None)
    row.update(event)
    row["event_id"] = twins.cdc_event_id(feed, DIALECT, natural_id, 0)
    row["sequence"] = twins.cdc_sequence(position, row["event_ts"], offset, 0)
    return row


# ================================================================ 4. Arrow
_PASSED_THROUGH = {"landing_timestamp": "timestamp", "landed_at": "landed_at"}


def _arrow_column(name: str, rows: list[dict[str, Any]]) -> pa.Array:
    # pyarrow reads a dict as a map entry list itself, several times faster than from its items().
    return pa.array([row[name] for row in rows], type=twins.STAGED_ARROW_SCHEMA.field(name).type)


def decode_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Landing rows (feed, topic, partition, offset, timestamp, key, value, landed_at) -> staged rows."""
    cols = {name: batch.column(name).to_pylist() for name in ("feed", "topic", "partition", "offset", "value")}
    rows = [
        stage_message(feed, topic, partition, offset, value)
        for feed, topic, partition, offset, value in zip(
            cols["feed"], cols["topic"], cols["partition"], cols["offset"], cols["value"], strict=True
        )
    ]
    arrays = []
    for name, _ in STAGED_COLUMNS:
        if name in _PASSED_THROUGH:
            arrays.append(batch.column(_PASSED_THROUGH[name]).cast(twins.STAGED_ARROW_SCHEMA.field(name).type))
        else:
            arrays.append(_arrow_column(name, rows))
    return pa.RecordBatch.from_arrays(arrays, schema=twins.STAGED_ARROW_SCHEMA)


def decode_arrow_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`DataFrame.mapInArrow` over the landing table, with contract.staged_schema_ddl() as the schema."""
    for batch in batches:
        yield decode_batch(batch)
