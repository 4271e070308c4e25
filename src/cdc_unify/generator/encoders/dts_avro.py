"""Alibaba Cloud DTS Avro (dts_avro.md): one bare Avro `Record` datum per Kafka value.

What the encoder emits, a deterministic mix drawn from the rng:
- a transaction is BEGIN, one record per row change, COMMIT (change tracking's shape);
  full-load snapshot rows are INIT records without transaction markers; DDL and TRUNCATE
  are DDL records whose afterImages is the statement and whose objectName is the database;
- heartbeats are HEARTBEAT records; now and then a 48-byte filler value (a NOOP record, or
  48 bytes that are no Record at all) pushes the offset forward, as DTS does;
- `sourcePosition` is `<offset>@<binlog file index>`, `sourceTimestamp` epoch seconds,
  `sourceTxid` the transaction id, `tags.pk_uk_info` the primary key (`{}` without one),
  `tags.readerThroughoutTime` the reader's time in ms;
- most records end with `bornTimestamp` (seconds, as in the public samples), some stop
  before it (producers older than 2020-06);
- some UPDATE/DELETE records of keyed tables carry MySQL's minimal row image: the before
  image has only the key, the after image only the changed columns, every other column is
  the EmptyObject NONE placeholder (the decoder leaves it out: partial images).

Values (MySQL source): integers are `Integer` (a `tinyint(1)` boolean is the TINYINT it is
in the binlog: `1`/`0`), DECIMAL is `Decimal` with Java's BigDecimal.toString text, FLOAT/DOUBLE
are `Float`, strings are `Character` in a charset the text fits (utf8mb4, utf8, gbk, latin1),
`binary(n)` is `Character` with charset `binary`, BLOBs are `BinaryObject("BLOB")`, JSON is
`TextObject("JSON")`, DATE/TIME/DATETIME are `DateTime` parts (fraction in microseconds),
TIMESTAMP is `Timestamp` (epoch seconds + microseconds).  MySQL has no zoned or interval
types: those columns are sent as DTS sends Oracle's (type numbers 181-183): zoned values as
`TimestampWithTimeZone` (local wall clock + zone name, or + offset when the wall clock is
ambiguous in a DST overlap), intervals as Oracle's text (`+01-02`, `+03 04:05:06.500000`).
The Kafka key of DTS is not documented (dts_avro.md section 7): the encoder sends none.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import struct
from collections.abc import Callable, Iterator
from typing import Any

import fastavro

from cdc_unify.canonical import IntervalYM, base_type, to_canonical
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder, PerSchema, stream_in_source_order
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload
from cdc_unify.generator.truth import key_text
from cdc_unify.message_decoders.dts_avro import NAMESPACE, OPERATIONS, SOURCE_TYPES, read_zigzag_long, record_schema

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
SOURCE = {"sourceType": "MySQL", "version": "8.0.28"}
FILLER_BYTES = 48
NO_RECORD_FILLER = bytes(FILLER_BYTES)  # not a Record: zeros decode to a record with 32 bytes left over
# Shares of the mix.
MINIMAL_IMAGE_SHARE = 0.2
WITHOUT_BORN_TIMESTAMP_SHARE = 0.15
FILLER_SHARE = 0.02
_TEXT_CHARSETS = (("utf8mb4", "utf-8"), ("utf8mb4", "utf-8"), ("utf8", "utf-8"), ("gbk", "gbk"), ("latin1", "cp1252"))
_INTEGER_TYPE_NUMBERS = {"tinyint": 1, "smallint": 2, "mediumint": 9, "int": 3, "bigint": 8}
_DDL_OPS = {"CREATE", "ALTER", "DROP", "RENAME", "CREATE_INDEX", "DROP_INDEX", "QUERY", "TRUNCATE"}
_INVALID_UTF8_PLACEHOLDER = "\x01INVALID-UTF8-PLACEHOLDER\x01"


def _item(kind: str, datum: Any) -> tuple[str, Any]:
    return NAMESPACE + kind, datum


NONE = _item("EmptyObject", "NONE")


def epoch_seconds(value: dt.datetime) -> int:
    return (value - EPOCH) // dt.timedelta(seconds=1)


def mysql_base_type(column: Column) -> str:
    """`bigint(20) unsigned` -> `bigint`."""
    return column.mysql_type.split("(")[0].split()[0].lower()


def type_number(column: Column) -> int:
    """The dataTypeNumber DTS reports for the column (MySQL codes; Oracle's for zoned/intervals)."""
    kind = base_type(column.logical_type)
    mysql = mysql_base_type(column)
    if kind in ("boolean", "tinyint", "smallint", "int", "bigint", "ubigint"):
        return _INTEGER_TYPE_NUMBERS.get(mysql, 8)
    by_kind = {
        "decimal": 246, "float": 4, "double": 5, "json": 245, "date": 10, "time": 11, "datetime": 12,
        "timestamp": 7, "zoned_datetime": 181, "interval_ym": 182, "interval_ds": 183,
    }  # fmt: skip
    if kind in by_kind:
        return by_kind[kind]
    if mysql in ("char", "binary"):
        return 254
    if mysql in ("varchar", "varbinary"):
        return 253
    return 252  # TEXT and BLOB types


def expected_type(column: Column) -> str:
    """The logical type a decoder can know from the record: booleans are TINYINT in the binlog."""
    return "tinyint" if base_type(column.logical_type) == "boolean" else column.logical_type


def expected_text(column: Column, value: Any) -> str | None:
    """Canonical text decoding must give, from the true value."""
    if value is None:
        return None
    kind = base_type(column.logical_type)
    if kind == "boolean":
        return to_canonical("tinyint", int(value))
    if kind == "zoned_datetime" and _is_ambiguous(value):
        return to_canonical("zoned_datetime", value.astimezone(dt.timezone(value.utcoffset())))
    return to_canonical(column.logical_type, value)


def _is_ambiguous(value: dt.datetime) -> bool:
    """A zoned wall clock that zone name + wall clock cannot pin down (DST overlap)."""
    first = value.replace(tzinfo=None).replace(tzinfo=value.tzinfo, fold=0)
    return first.utcoffset() != value.utcoffset()


def _offset_text(offset: dt.timedelta) -> str:
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(offset) // dt.timedelta(minutes=1)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _datetime_parts(value: dt.datetime | dt.date | dt.time | dt.timedelta) -> dict[str, int | None]:
    """DateTime parts: date, time or both by the value's type; a timedelta is a signed MySQL TIME."""
    parts = dict.fromkeys(("year", "month", "day", "hour", "minute", "second", "millis"))
    if isinstance(value, dt.date):
        parts.update(year=value.year, month=value.month, day=value.day)
    if isinstance(value, (dt.datetime, dt.time)):
        parts.update(hour=value.hour, minute=value.minute, second=value.second, millis=value.microsecond)
    if isinstance(value, dt.timedelta):  # MySQL TIME as a signed duration: every part negated
        sign = -1 if value < dt.timedelta(0) else 1
        secs, micros = divmod(abs(value) // dt.timedelta(microseconds=1), 1_000_000)
        parts.update(hour=sign * (secs // 3600), minute=sign * (secs // 60 % 60), second=sign * (secs % 60),
                     millis=sign * micros)  # fmt: skip
    return parts


def _oracle_interval_text(value: IntervalYM | dt.timedelta) -> str:
    """Oracle's TO_CHAR of an interval: `+01-02` or `+03 04:05:06.500000`."""
    if isinstance(value, IntervalYM):
        sign = "-" if value.months < 0 else "+"
        years, months = divmod(abs(value.months), 12)
        return f"{sign}{years:02d}-{months:02d}"
    sign = "-" if value < dt.timedelta(0) else "+"
    secs, micros = divmod(abs(value) // dt.timedelta(microseconds=1), 1_000_000)
    days, rem = divmod(secs, 86400)
    return f"{sign}{days:02d} {rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}.{micros:06d}"


def _characters(text: str, rng: random.Random) -> tuple[str, Any]:
    charset, codec = rng.choice(_TEXT_CHARSETS)
    try:
        raw = text.encode(codec)
    except UnicodeEncodeError:
        charset, raw = "utf8mb4", text.encode("utf-8")
    return _item("Character", {"charset": charset, "value": raw})


def avro_value(column: Column, value: Any, rng: random.Random) -> Any:
    """A true value as the VALUE union item DTS writes for it (None = union branch null)."""
    if value is None:
        return None
    kind = base_type(column.logical_type)
    if kind == "boolean":
        return _item("Integer", {"precision": 1, "value": str(int(value))})
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return _item("Integer", {"precision": 8, "value": str(value)})
    if kind == "decimal":
        digits = value.as_tuple()
        return _item("Decimal", {"value": str(value), "precision": len(digits.digits), "scale": -digits.exponent})
    if kind in ("float", "double"):
        return _item("Float", {"value": float(value), "precision": 8, "scale": 15})
    if kind == "json":
        return _item("TextObject", {"type": "JSON", "value": value})
    if kind == "binary":
        if mysql_base_type(column) in ("binary", "varbinary"):
            return _item("Character", {"charset": "binary", "value": value})
        return _item("BinaryObject", {"type": "BLOB", "value": value})
    if kind in ("date", "time", "datetime"):
        return _item("DateTime", _datetime_parts(value))
    if kind == "timestamp":
        return _item("Timestamp", {"timestamp": epoch_seconds(value), "millis": value.microsecond})
    if kind == "zoned_datetime":
        zone = _offset_text(value.utcoffset()) if _is_ambiguous(value) else value.tzinfo.key
        return _item("TimestampWithTimeZone", {"value": _datetime_parts(value.replace(tzinfo=None)), "timezone": zone})
    if kind in ("interval_ym", "interval_ds"):
        return _item("Character", {"charset": "utf8mb4", "value": _oracle_interval_text(value).encode("ascii")})
    return _characters(value, rng)


def object_name(*names: str) -> str:
    """Names joined by `.`, a `.` inside a name written as the 6 characters `\\u002E`."""
    return ".".join(name.replace(".", "\\u002E") for name in names)


def encode_record(datum: dict[str, Any], with_born_timestamp: bool = True) -> bytes:
    """Any Record datum, by fastavro (malformations rewrite records read back from bytes)."""
    out = io.BytesIO()
    if not with_born_timestamp:
        datum = {k: v for k, v in datum.items() if k != "bornTimestamp"}
    fastavro.schemaless_writer(out, record_schema(with_born_timestamp), datum)
    return out.getvalue()


# ---------------------------------------------------------------- Avro writing, fast
# The records the stream builds, written straight into Avro's binary encoding: the same bytes as
# encode_record, several times faster (fastavro resolves the union branch of every value by
# trying the schema's alternatives, which was most of this encoder's time).
_RECORD_FIELDS = ("version", "id", "sourceTimestamp", "sourcePosition", "safeSourcePosition", "sourceTxid", "source",
                  "operation", "objectName", "processTimestamps", "tags", "fields", "beforeImages", "afterImages",
                  "bornTimestamp")  # fmt: skip
if tuple(f["name"] for f in record_schema()["fields"]) != _RECORD_FIELDS:
    raise ImportError("the DTS Record schema changed: update write_record")
_SMALL_LONGS = [bytes([zigzag]) for zigzag in range(0x80)]
_double = struct.Struct("<d").pack


def _long(n: int) -> bytes:
    """An Avro int/long: zig-zag varint."""
    zigzag = (n << 1) ^ (n >> 63)
    if zigzag < 0x80:
        return _SMALL_LONGS[zigzag]
    out = bytearray()
    while zigzag > 0x7F:
        out.append(zigzag & 0x7F | 0x80)
        zigzag >>= 7
    out.append(zigzag)
    return bytes(out)


def _bytes(raw: bytes) -> bytes:
    size = len(raw)  # most are short: their length is one byte, 2 * size
    return (_SMALL_LONGS[size << 1] if size < 0x40 else _long(size)) + raw


def _string(text: str) -> bytes:
    return _bytes(text.encode("utf-8"))


def _optional_int(n: int | None) -> bytes:
    return b"\x00" if n is None else b"\x02" + _long(n)


def _date_time(d: dict[str, int | None]) -> bytes:
    parts = (d["year"], d["month"], d["day"], d["hour"], d["minute"], d["second"], d["millis"])
    return b"".join([_optional_int(part) for part in parts])


# A VALUE union item (name, datum) -> its fields, after the branch index.
_ITEM_FIELDS: dict[str, Callable[[Any], bytes]] = {
    "Integer": lambda d: _long(d["precision"]) + _string(d["value"]),
    "Character": lambda d: _string(d["charset"]) + _bytes(d["value"]),
    "Decimal": lambda d: _string(d["value"]) + _long(d["precision"]) + _long(d["scale"]),
    "Float": lambda d: _double(d["value"]) + _long(d["precision"]) + _long(d["scale"]),
    "Timestamp": lambda d: _long(d["timestamp"]) + _long(d["millis"]),
    "DateTime": _date_time,
    "TimestampWithTimeZone": lambda d: _date_time(d["value"]) + _string(d["timezone"]),
    "BinaryGeometry": lambda d: _string(d["type"]) + _bytes(d["value"]),
    "TextGeometry": lambda d: _string(d["type"]) + _string(d["value"]),
    "BinaryObject": lambda d: _string(d["type"]) + _bytes(d["value"]),
    "TextObject": lambda d: _string(d["type"]) + _string(d["value"]),
    "EmptyObject": lambda d: _long(("NULL", "NONE").index(d)),
}
_ITEM_BRANCHES = record_schema()["fields"][_RECORD_FIELDS.index("afterImages")]["type"][2]["items"]


def _branch_writer(index: int, fields: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    prefix = _long(index)
    return lambda datum: prefix + fields(datum)


_ITEM_WRITERS = {
    branch: _branch_writer(i, _ITEM_FIELDS[branch.removeprefix(NAMESPACE)])
    for i, branch in enumerate(_ITEM_BRANCHES)
    if branch != "null"
}


def _value_item(value: tuple[str, Any] | None) -> bytes:
    return b"\x00" if value is None else _ITEM_WRITERS[value[0]](value[1])


def _field_item(field: dict[str, Any]) -> bytes:
    return _string(field["name"]) + _long(field["dataTypeNumber"])


def _array(values: list, write: Callable[[Any], bytes]) -> bytes:
    if not values:
        return b"\x00"
    return _long(len(values)) + b"".join(map(write, values)) + b"\x00"


def _text_or_array(value: str | list | None, write: Callable[[Any], bytes]) -> bytes:
    """The union [null, string, array] of fields and images."""
    if value is None:
        return b"\x00"
    if isinstance(value, str):
        return b"\x02" + _string(value)
    if isinstance(value, FieldList):
        return value.avro
    return b"\x04" + _array(value, write)


class FieldList(list):
    """A record's `fields` that also holds its encoding: every record of a table repeats it."""

    def __init__(self, fields: list[dict[str, Any]]) -> None:
        super().__init__(fields)
        self.avro = b"\x04" + _array(fields, _field_item)


fields_of = PerSchema(
    lambda schema: FieldList([{"name": c.name, "dataTypeNumber": type_number(c)} for c in schema.columns])
)


def _tags(tags: dict[str, str]) -> bytes:
    if not tags:
        return b"\x00"
    return _long(len(tags)) + b"".join(_string(k) + _string(v) for k, v in tags.items()) + b"\x00"


def write_record(datum: dict[str, Any], with_born_timestamp: bool = True) -> bytes:
    """encode_record of a record the stream built (plain values, tuple-notation images)."""
    if datum["processTimestamps"] is not None:
        raise ValueError("write_record writes no processTimestamps: use encode_record")
    object_name = datum["objectName"]
    parts = [
        _long(datum["version"]),
        _long(datum["id"]),
        _long(datum["sourceTimestamp"]),
        _string(datum["sourcePosition"]),
        _string(datum["safeSourcePosition"]),
        _string(datum["sourceTxid"]),
        _long(SOURCE_TYPES.index(datum["source"]["sourceType"])),
        _string(datum["source"]["version"]),
        _long(OPERATIONS.index(datum["operation"])),
        b"\x00" if object_name is None else b"\x02" + _string(object_name),
        b"\x00",  # processTimestamps: null
        _tags(datum["tags"]),
        _text_or_array(datum["fields"], _field_item),
        _text_or_array(datum["beforeImages"], _value_item),
        _text_or_array(datum["afterImages"], _value_item),
    ]
    if with_born_timestamp:
        parts.append(_long(datum["bornTimestamp"]))
    return b"".join(parts)


class DtsAvroEncoder(Encoder):
    dialect = "dts_avro"
    extra_malformed_kinds = ("truncated_avro", "wrong_shape")

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        return stream_in_source_order(_Stream(rng), workload)

    def redeliverable(self, message: EncodedMessage) -> bool:
        # 48 bytes that are no Record are all alike: the decoder names each by its offset.
        return super().redeliverable(message) and message.value != NO_RECORD_FILLER

    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        datum = fastavro.schemaless_reader(
            io.BytesIO(message.value), record_schema(False), None, return_record_name=True
        )
        datum["bornTimestamp"] = datum["sourceTimestamp"]
        if kind == "invalid_json":  # the JSON inside the record: tags.pk_uk_info
            datum["tags"] = {**datum["tags"], "pk_uk_info": '{"PRIMARY":["' + rng.choice(("id", "a", "k")) + '"'}
            return encode_record(datum)
        if kind == "invalid_utf8":  # an Avro string that is not UTF-8
            datum["sourceTxid"] = _INVALID_UTF8_PLACEHOLDER
            placeholder = _INVALID_UTF8_PLACEHOLDER.encode("utf-8")
            invalid = (b"\xc3\x28\xff" * len(placeholder))[: len(placeholder)]  # same length: the prefix stays right
            return encode_record(datum).replace(placeholder, invalid)
        if kind == "missing_field":
            datum["objectName"] = None
            return encode_record(datum)
        if kind == "unknown_op":
            value = encode_record(datum)
            op_at = operation_offset(value)
            return value[:op_at] + bytes([2 * rng.randint(len(OPERATIONS), 63)]) + value[op_at + 1 :]
        if kind == "wrong_value_type":  # text in an integer: the first column becomes an unreadable Integer
            image = "afterImages" if datum["afterImages"] else "beforeImages"
            broken = _item("Integer", {"precision": 8, "value": f"12x{rng.randrange(100)}"})
            datum[image] = [broken, *datum[image][1:]]
            return encode_record(datum)
        if kind == "wrong_shape":  # one field fewer than values
            datum["fields"] = datum["fields"][:-1]
            return encode_record(datum)
        if kind == "truncated_avro":
            value = encode_record(datum, with_born_timestamp=False)
            return value[: rng.randint(max(FILLER_BYTES + 1, len(value) // 2), len(value) - 1)]
        raise ValueError(f"unknown malformation {kind!r}")


def operation_offset(value: bytes) -> int:
    """Byte offset of the operation enum: after version, id, sourceTimestamp, three strings and Source."""
    pos = 0
    for kind in ("int", "long", "long", "string", "string", "string", "enum", "string"):
        number, pos = read_zigzag_long(value, pos)
        if kind == "string":
            pos += number
    return pos


class _Stream:
    """Record ids, positions and the rng of one encoded stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.next_id = 1
        self.position = "4@1"
        self.thread_id = str(rng.randrange(10_000, 200_000))

    def _record(self, operation: str, when: dt.datetime, position: str, tx_id: str = "0", **fields: Any) -> dict:
        record = {
            "version": 0,
            "id": self.next_id,
            "sourceTimestamp": epoch_seconds(when),
            "sourcePosition": position,
            "safeSourcePosition": self.position,
            "sourceTxid": tx_id,
            "source": SOURCE,
            "operation": operation,
            "objectName": None,
            "processTimestamps": None,
            "tags": {
                "readerThroughoutTime": str(epoch_seconds(when) * 1000 + self.rng.randrange(5, 900)),
                "thread_id": self.thread_id,
            },  # fmt: skip
            "fields": None,
            "beforeImages": None,
            "afterImages": None,
            "bornTimestamp": epoch_seconds(when),
        }
        record.update(fields)
        self.next_id += 1
        self.position = position
        return record

    def _message(self, record: dict, routing_key: str, when: dt.datetime, expected: dict, row: bool) -> EncodedMessage:
        with_born = self.rng.random() >= WITHOUT_BORN_TIMESTAMP_SHARE
        expected = {"row_index": 0, "event_ts": when.replace(microsecond=0), **expected}
        return EncodedMessage(write_record(record, with_born), None, routing_key, when, (expected,), row)

    def heartbeat(self, when: dt.datetime) -> EncodedMessage:
        record = self._record("HEARTBEAT", when, self.position)
        return self._message(record, "", when, {"event_kind": "HEARTBEAT", "op": "HEARTBEAT"}, False)

    def filler(self, when: dt.datetime) -> EncodedMessage:
        if self.rng.random() < 0.5:
            value = NO_RECORD_FILLER
        else:
            record = self._record("NOOP", when, self.position, tx_id="", tags={})
            value = write_record(record, with_born_timestamp=False)
            record["safeSourcePosition"] += "0" * (FILLER_BYTES - len(value))
            value = write_record(record, with_born_timestamp=False)
        expected = {"row_index": 0, "event_kind": "OTHER", "op": "NOOP"}
        return EncodedMessage(value, None, "", when, (expected,), False)

    def transaction(self, tx: Transaction) -> Iterator[EncodedMessage]:
        when = tx.commit_ts
        first = tx.changes[0].position
        markers = not tx.is_snapshot and tx.changes[0].op not in ("DDL", "TRUNCATE")
        if markers:
            begin = self._record("BEGIN", when, f"{first.offset}@{first.file_index}", tx.tx_id)
            yield self._message(begin, "", when, {"event_kind": "TRANSACTION", "op": "BEGIN"}, False)
        for change in tx.changes:
            yield self.change(change, tx)
            if self.rng.random() < FILLER_SHARE:
                yield self.filler(when)
        if markers:
            commit = self._record("COMMIT", when, self.position, tx.tx_id)
            yield self._message(commit, "", when, {"event_kind": "TRANSACTION", "op": "COMMIT"}, False)

    def change(self, change: SourceChange, tx: Transaction) -> EncodedMessage:
        schema = change.schema
        position = f"{change.position.offset}@{change.position.file_index}"
        routing_key = f"{schema.database}.{schema.table}"
        if change.op in ("DDL", "TRUNCATE"):
            statement = change.ddl_statement or f"TRUNCATE TABLE `{schema.database}`.`{schema.table}`"
            kind = change.ddl_kind or "TRUNCATE"
            if kind not in _DDL_OPS:
                raise ValueError(f"unknown DDL kind {kind!r}")
            record = self._record("DDL", tx.commit_ts, position, tx.tx_id, objectName=object_name(schema.database),
                                  afterImages=statement)  # fmt: skip
            record["tags"].update(GTID=tx.tx_id, lowerCaseTableNames="0")
            expected = {"event_kind": "DDL", "op": kind, "database_name": schema.database, "table_name": schema.table,
                        "ddl_statement": statement}  # fmt: skip
            return self._message(record, routing_key, tx.commit_ts, expected, False)
        operation = "INIT" if change.op == "SNAPSHOT" else change.op
        before, after, images = self._images(change)
        pk = list(schema.primary_key)
        record = self._record(
            operation, tx.commit_ts, position, tx.tx_id,
            objectName=object_name(schema.database, schema.table),
            fields=fields_of(schema),
            beforeImages=images[0], afterImages=images[1],
        )  # fmt: skip
        record["tags"].update(pk_uk_info=json.dumps({"PRIMARY": pk} if pk else {}), metaVersion="1")
        expected = {
            "event_kind": "ROW",
            "op": change.op,
            "database_name": schema.database,
            "table_name": schema.table,
            "primary_key_columns": pk,
            "primary_key": _expected_key(pk, before, after),
            "before": before,
            "after": after,
            "before_is_partial": before is not None and len(before) < len(schema.columns),
            "after_is_partial": after is not None and len(after) < len(schema.columns),
        }
        return self._message(record, routing_key, tx.commit_ts, expected, True)

    def _images(self, change: SourceChange) -> tuple[dict | None, dict | None, tuple[list | None, list | None]]:
        """(expected before, expected after, (beforeImages, afterImages)), minimal row image sometimes."""
        schema = change.schema
        full = {
            side: _full_image(schema, image) for side, image in (("before", change.before), ("after", change.after))
        }
        carried = {side: None if full[side] is None else set(full[side]) for side in full}
        minimal = change.op in ("UPDATE", "DELETE") and schema.primary_key and self.rng.random() < MINIMAL_IMAGE_SHARE
        if minimal:
            carried["before"] = set(schema.primary_key)
            if full["after"] is not None:
                carried["after"] = {c for c in full["after"] if full["after"][c] != full["before"][c]}
        images = []
        expected = []
        for side, image in (("before", change.before), ("after", change.after)):
            if image is None:
                images.append(None)
                expected.append(None)
                continue
            images.append([avro_value(c, image[c.name], self.rng) if c.name in carried[side] else NONE
                           for c in schema.columns])  # fmt: skip
            expected.append({k: v for k, v in full[side].items() if k in carried[side]})
        return expected[0], expected[1], (images[0], images[1])


def _full_image(schema: TableSchema, image: dict[str, Any] | None) -> dict[str, str | None] | None:
    if image is None:
        return None
    return {c.name: expected_text(c, image[c.name]) for c in schema.columns}


def _expected_key(pk: list[str], before: dict | None, after: dict | None) -> str | None:
    """The staged primary_key: each key column from the after image, else the before image."""
    if not pk:
        return None
    values = [(after or {}).get(c) for c in pk]
    return key_text(v if v is not None else (before or {}).get(c) for c, v in zip(pk, values, strict=True))


ENCODER = DtsAvroEncoder()
