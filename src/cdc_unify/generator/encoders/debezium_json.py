"""Debezium MySQL connector messages (Kafka Connect JsonConverter), plus CloudCanal's flavour.

What a feed of `debezium_json` holds, as Debezium 2.x really writes it:
- change events on the table topic: `op` c/u/d/r/t, `before`/`after`, the MySQL `source` block
  (file/pos/gtid/ts_ms/snapshot ...), the emission `ts_ms` (Debezium >= 2.6 also `ts_us`/`ts_ns`,
  in the envelope and in `source`); the key is the primary key (null for a keyless table);
- a delete is followed by a tombstone (null value, same key); an UPDATE that changes the
  primary key is a delete of the old key + tombstone + create of the new key;
- the full-load snapshot as `op` r with `source.snapshot` first/true/last;
- TRUNCATE as `op` t (key null), or as a schema change event carrying the statement;
- schema change events (`databaseName`, `ddl`, `tableChanges` list) keyed by `{"databaseName"}`;
- transaction metadata BEGIN/END events plus the `transaction` block, for some transactions;
- heartbeats `{"ts_ms"}` keyed by `{"serverName"}`.
Each value and key is written with the `schema`/`payload` wrapper (schemas.enable=true) or
without it, mixed per message.  Some transactions use CloudCanal's flavour (spec 000): `op` i
for inserts, `{}` for the missing image, `connector` "MySQL", and DDL with a single
`tableChanges` object without `id`.

Value encodings follow the MySQL connector's defaults (time.precision.mode=adaptive_time_microseconds,
decimal.handling.mode=precise, binary.handling.mode=bytes), with bigint.unsigned.handling.mode=precise
and interval.handling.mode=string (io.debezium.time.Interval, with the propagated source column
type so year-month and day-time intervals stay apart).  docs/dialects/debezium_json.md lists them.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from cdc_unify.canonical import IntervalYM, fmt_float32, to_canonical
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder, PerSchema
from cdc_unify.generator.jsontext import RawJson, dump_json, load_json
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload
from cdc_unify.generator.truth import key_text as staged_key_text

SERVER_NAME = "dbserver1"
CONNECTOR_VERSION = "2.7.3.Final"
SERVER_ID = 223344
EPOCH = dt.datetime(1970, 1, 1)
UTC = dt.timezone.utc
SOURCE_COLUMN_TYPE = "__debezium.source.column.type"


# ---------------------------------------------------------------- JSON writing
# JSON is written as Jackson writes it (raw UTF-8, no spaces) by jsontext.dump_json; a float is
# a RawJson holding Java's text of it, which Python's json cannot produce.


def java_number_text(value: float, single: bool = False) -> str:
    """Java's Float/Double.toString (JDK 19+, shortest digits): `100.0`, `1.0E-5`, `3.4E38`."""
    shortest = Decimal(fmt_float32(value) if single else repr(value))
    if shortest == 0:
        return "-0.0" if str(shortest).startswith("-") else "0.0"
    sign, digits, exponent = shortest.normalize().as_tuple()
    text_digits = "".join(map(str, digits))
    sci_exponent = exponent + len(text_digits) - 1
    prefix = "-" if sign else ""
    if -3 <= sci_exponent < 7:
        plain = format(abs(shortest).normalize(), "f")
        return prefix + (plain if "." in plain else plain + ".0")
    return f"{prefix}{text_digits[0]}.{text_digits[1:] or '0'}E{sci_exponent}"


def float_wire(value: float, single: bool) -> Any:
    """Jackson writes NaN and the infinities as JSON strings (QUOTE_NON_NUMERIC_NUMBERS)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return RawJson(java_number_text(value, single))


# ---------------------------------------------------------------- column codecs
_TYPE_ARGS_RE = re.compile(r"\(([^)]*)\)")


def type_args(mysql_type: str) -> list[str]:
    """Every parenthesised argument: `decimal(12,2)` -> 12, 2; `interval day(2) to second(6)` -> 2, 6."""
    return [a.strip() for group in _TYPE_ARGS_RE.findall(mysql_type) for a in group.split(",") if a.strip()]


def type_name(mysql_type: str) -> str:
    """`bigint(20) unsigned` -> `BIGINT UNSIGNED`, `interval day(2) to second(6)` -> `INTERVAL DAY TO SECOND`."""
    return " ".join(_TYPE_ARGS_RE.sub(" ", mysql_type).upper().split())


def decimal_wire(value: Decimal, scale: int) -> str:
    """Connect Decimal: base64 of the unscaled value, big-endian two's complement, minimal length."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int) or exponent + scale < 0 and any(digits[exponent + scale :]):
        raise ValueError(f"{value} is not a decimal with at most {scale} fractional digits")
    # Exact integer arithmetic: Decimal.scaleb would round to the 28-digit default context.
    magnitude = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    magnitude = magnitude * 10**shift if shift >= 0 else magnitude // 10**-shift
    number = -magnitude if sign else magnitude
    length = (number if number >= 0 else ~number).bit_length() // 8 + 1
    return base64.b64encode(number.to_bytes(length, "big", signed=True)).decode("ascii")


def _iso_instant(value: dt.datetime, offset: bool) -> str:
    """ISO_OFFSET_DATE_TIME as Debezium's ZonedTimestamp writes it (fraction without trailing zeros)."""
    local = value if offset else value.astimezone(UTC)
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if local.microsecond:
        text += f".{local.microsecond:06d}".rstrip("0")
    utc_offset = local.utcoffset() or dt.timedelta(0)
    if not utc_offset:
        return text + "Z"
    sign = "-" if utc_offset < dt.timedelta(0) else "+"
    minutes = abs(utc_offset) // dt.timedelta(minutes=1)
    return f"{text}{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _seconds_text(micros: int) -> str:
    """BigDecimal.stripTrailingZeros().toPlainString() of micros / 10^6."""
    text = format(Decimal(micros).scaleb(-6).normalize(), "f")
    return "0" if text in ("0", "-0") else text


def interval_wire(value: IntervalYM | dt.timedelta) -> str:
    """io.debezium.time.Interval: `P{y}Y{m}M{d}DT{h}H{m}M{s}S`, every component carrying the sign."""
    if isinstance(value, IntervalYM):
        sign = -1 if value.months < 0 else 1
        years, months = divmod(abs(value.months), 12)
        return f"P{sign * years}Y{sign * months}M0DT0H0M0S"
    total = value // dt.timedelta(microseconds=1)
    sign = -1 if total < 0 else 1
    days, rem = divmod(abs(total), 86_400_000_000)
    hours, rem = divmod(rem, 3_600_000_000)
    minutes, micros = divmod(rem, 60_000_000)
    return f"P0Y0M{sign * days}DT{sign * hours}H{sign * minutes}M{_seconds_text(sign * micros)}S"


def time_micros(value: dt.time | dt.timedelta) -> int:
    if isinstance(value, dt.timedelta):
        return value // dt.timedelta(microseconds=1)
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


@dataclass(frozen=True)
class ColumnCodec:
    """How one column travels: its Connect field schema, its JSON value, and the logical type
    whose canonical text decoding must give (zoned datetimes arrive as instants)."""

    schema: dict[str, Any]
    wire: Callable[[Any], Any]
    expected_type: str


def _datetime_codec(column: Column) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    fsp = int(type_args(column.mysql_type)[0]) if type_args(column.mysql_type) else 0
    if fsp <= 3:
        return (
            {"type": "int64", "name": "io.debezium.time.Timestamp", "version": 1},
            lambda v: (v - EPOCH) // dt.timedelta(milliseconds=1),
        )
    return (
        {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "version": 1},
        lambda v: (v - EPOCH) // dt.timedelta(microseconds=1),
    )


def column_codec(column: Column, propagate_source_type: bool) -> ColumnCodec:
    """The MySQL connector's mapping of a column, by its logical type."""
    kind = column.logical_type.split("(")[0]
    args = type_args(column.mysql_type)
    expected_type = column.logical_type
    params: dict[str, str] = {}
    wire: Callable[[Any], Any] = lambda v: v  # noqa: E731 - identity for JSON-native values
    if kind == "decimal" or kind == "ubigint":
        precision, scale = (int(args[0]), int(args[1]) if len(args) > 1 else 0) if kind == "decimal" else (20, 0)
        schema = {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1}
        params = {"scale": str(scale), "connect.decimal.precision": str(precision)}
        wire = lambda v: decimal_wire(Decimal(v), scale)  # noqa: E731
    elif kind in ("tinyint", "smallint"):
        schema = {"type": "int16"}
    elif kind in ("int", "bigint"):
        schema = {"type": "int32" if kind == "int" else "int64"}
    elif kind in ("float", "double"):
        schema = {"type": "float32" if kind == "float" else "float64"}
        wire = lambda v: float_wire(v, single=kind == "float")  # noqa: E731
    elif kind == "boolean":
        schema = {"type": "boolean"}
    elif kind == "json":
        schema = {"type": "string", "name": "io.debezium.data.Json", "version": 1}
    elif kind == "binary":
        schema = {"type": "bytes"}
        wire = lambda v: base64.b64encode(v).decode("ascii")  # noqa: E731
    elif kind == "date":
        schema = {"type": "int32", "name": "io.debezium.time.Date", "version": 1}
        wire = lambda v: (v - dt.date(1970, 1, 1)).days  # noqa: E731
    elif kind == "time":
        schema = {"type": "int64", "name": "io.debezium.time.MicroTime", "version": 1}
        wire = time_micros
    elif kind == "datetime":
        schema, wire = _datetime_codec(column)
    elif kind in ("timestamp", "zoned_datetime"):
        schema = {"type": "string", "name": "io.debezium.time.ZonedTimestamp", "version": 1}
        wire = lambda v: _iso_instant(v, offset=kind == "zoned_datetime")  # noqa: E731
        expected_type = "timestamp"  # ZonedTimestamp keeps the offset, not the zone id: read as an instant
    elif kind in ("interval_ym", "interval_ds"):
        schema = {"type": "string", "name": "io.debezium.time.Interval", "version": 1}
        wire = interval_wire
        propagate_source_type = True  # the only way a reader can tell year-month from day-time
    else:
        schema = {"type": "string"}
    if propagate_source_type:
        params[SOURCE_COLUMN_TYPE] = type_name(column.mysql_type)
        if args:
            params["__debezium.source.column.length"] = args[0]
        if len(args) > 1:
            params["__debezium.source.column.scale"] = args[1]
    field_schema = {"type": schema.pop("type"), "optional": column.nullable, **schema}
    if params:
        field_schema["parameters"] = params
    field_schema["field"] = column.name
    return ColumnCodec(field_schema, wire, expected_type)


def jdbc_type_code(column: Column) -> int:
    """java.sql.Types code a MySQL JDBC driver reports for the column (spec 000 appendix)."""
    kind = column.logical_type.split("(")[0]
    codes = {
        "boolean": -7,
        "tinyint": -6,
        "smallint": 5,
        "int": 4,
        "bigint": -5,
        "ubigint": -5,
        "decimal": 3,
        "float": 7,
        "double": 8,
        "json": -1,
        "binary": -2 if "binary" in column.mysql_type else -4,
        "date": 91,
        "time": 92,
        "datetime": 93,
        "timestamp": 93,
    }
    if kind == "string":
        return 1 if column.mysql_type.startswith("char") else (12 if "varchar" in column.mysql_type else -1)
    return codes.get(kind, 1111)


def as_sent(wire_value: Any) -> str | None:
    """The staged text of a value without a declared type: what the JSON says."""
    if wire_value is None:
        return None
    if isinstance(wire_value, bool):
        return "true" if wire_value else "false"
    return str(wire_value)


# ---------------------------------------------------------------- message building
@dataclass(frozen=True)
class Style:
    """How one message is written (a connector's configuration, drawn per message)."""

    value_schema: bool  # value.converter.schemas.enable
    key_schema: bool  # key.converter.schemas.enable
    modern: bool  # Debezium >= 2.6: ts_us / ts_ns next to ts_ms
    propagate: bool  # column.propagate.source.type for every column
    cloudcanal: bool  # CloudCanal's flavour of the envelope (spec 000)


def _ms(ts: dt.datetime) -> int:
    return (ts - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(milliseconds=1)


def _us(ts: dt.datetime) -> int:
    return (ts - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


def _floor_ms(ts: dt.datetime) -> dt.datetime:
    return ts.replace(microsecond=ts.microsecond // 1000 * 1000)


def _timestamps(ts: dt.datetime, modern: bool) -> dict[str, int]:
    stamps = {"ts_ms": _ms(ts)}
    if modern:
        stamps.update(ts_us=_us(ts), ts_ns=_us(ts) * 1000)
    return stamps


def _struct(name: str, fields: list[dict[str, Any]], optional: bool = False, **extra: Any) -> dict[str, Any]:
    return {"type": "struct", "fields": fields, "optional": optional, "name": name, **extra}


def _field(typ: str, field_name: str, optional: bool = True, **extra: Any) -> dict[str, Any]:
    return {"type": typ, "optional": optional, **extra, "field": field_name}


def source_schema(modern: bool) -> dict[str, Any]:
    fields = [
        _field("string", "version", False),
        _field("string", "connector", False),
        _field("string", "name", False),
        _field("int64", "ts_ms", False),
        _field(
            "string",
            "snapshot",
            name="io.debezium.data.Enum",
            version=1,
            parameters={"allowed": "true,last,false,incremental"},
            default="false",
        ),
        _field("string", "db", False),
        _field("string", "sequence"),
    ]
    if modern:
        fields += [_field("int64", "ts_us"), _field("int64", "ts_ns")]
    fields += [
        _field("string", "table"),
        _field("int64", "server_id", False),
        _field("string", "gtid"),
        _field("string", "file", False),
        _field("int64", "pos", False),
        _field("int32", "row", False),
        _field("int64", "thread"),
        _field("string", "query"),
    ]
    return _struct("io.debezium.connector.mysql.Source", fields, field="source")


TRANSACTION_BLOCK_SCHEMA = _struct(
    "event.block",
    [
        _field("string", "id", False),
        _field("int64", "total_order", False),
        _field("int64", "data_collection_order", False),
    ],
    optional=True,
    version=1,
    field="transaction",
)


def envelope_schema(table: TableSchema, codecs: dict[str, ColumnCodec], modern: bool) -> dict[str, Any]:
    prefix = f"{SERVER_NAME}.{table.database}.{table.table}"
    columns = [codecs[c.name].schema for c in table.columns]
    fields = [
        _struct(f"{prefix}.Value", columns, optional=True, field="before"),
        _struct(f"{prefix}.Value", columns, optional=True, field="after"),
        source_schema(modern),
        TRANSACTION_BLOCK_SCHEMA,
        _field("string", "op", False),
        _field("int64", "ts_ms"),
    ]
    if modern:
        fields += [_field("int64", "ts_us"), _field("int64", "ts_ns")]
    return _struct(f"{prefix}.Envelope", fields, version=2)


def with_schema(schema_json: str, payload: Any, enabled: bool) -> bytes:
    """The value, in the JSON converter's envelope if schemas are enabled.  The schema comes as
    its JSON text, written once per table rather than per message."""
    if not enabled:
        return dump_json(payload).encode("utf-8")
    return f'{{"schema":{schema_json},"payload":{dump_json(payload)}}}'.encode()


# Per table schema and connector option: the column codecs, the value and key schemas' JSON.
table_codecs = PerSchema(lambda table, propagate: {c.name: column_codec(c, propagate) for c in table.columns})
envelope_schema_json = PerSchema(
    lambda table, propagate, modern: dump_json(envelope_schema(table, table_codecs(table, propagate), modern))
)


def _key_schema(table: TableSchema, propagate: bool) -> dict[str, Any]:
    codecs = table_codecs(table, propagate)
    fields = [{**codecs[c].schema, "optional": False} for c in table.primary_key]
    return _struct(f"{SERVER_NAME}.{table.database}.{table.table}.Key", fields)


key_schema_json = PerSchema(lambda table, propagate: dump_json(_key_schema(table, propagate)))


_TX_SCHEMA_JSON = dump_json(
    _struct(
        "io.debezium.connector.common.TransactionMetadataValue",
        [
            _field("string", "status", False),
            _field("string", "id", False),
            _field("int64", "ts_ms", False),
            _field("int64", "event_count"),
            {
                "type": "array",
                "items": _struct(
                    "io.debezium.connector.common.TransactionMetadataValue.DataCollection",
                    [_field("string", "data_collection", False), _field("int64", "event_count", False)],
                ),
                "optional": True,
                "field": "data_collections",
            },
        ],
    )
)
_TX_KEY_SCHEMA_JSON = dump_json(
    _struct("io.debezium.connector.common.TransactionMetadataKey", [_field("string", "id", False)])
)
_HEARTBEAT_SCHEMA_JSON = dump_json(_struct("io.debezium.connector.common.Heartbeat", [_field("int64", "ts_ms", False)]))
_SERVER_NAME_KEY_SCHEMA_JSON = dump_json(
    _struct("io.debezium.connector.common.ServerNameKey", [_field("string", "serverName", False)])
)
_SCHEMA_CHANGE_KEY_SCHEMA_JSON = dump_json(
    _struct("io.debezium.connector.mysql.SchemaChangeKey", [_field("string", "databaseName", False)])
)


@dataclass
class _TxContext:
    tx: Transaction
    gtid: str | None
    metadata: bool  # provide.transaction.metadata for this transaction
    emitted: dt.datetime
    total_order: int = 0
    per_table: dict[str, int] | None = None


class DebeziumJsonEncoder(Encoder):
    dialect = "debezium_json"
    extra_malformed_kinds = ("wrong_shape",)

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        heartbeats = sorted(workload.heartbeat_times)
        snapshot_changes = [
            c for tx in workload.transactions if tx.is_snapshot for c in tx.changes if c.op == "SNAPSHOT"
        ]
        first_last = (snapshot_changes[0], snapshot_changes[-1]) if snapshot_changes else (None, None)
        next_hb = 0
        for tx in workload.transactions:
            while next_hb < len(heartbeats) and heartbeats[next_hb] <= tx.commit_ts:
                yield self._heartbeat(heartbeats[next_hb], rng)
                next_hb += 1
            yield from self._transaction(tx, rng, first_last)
        for hb in heartbeats[next_hb:]:
            yield self._heartbeat(hb, rng)

    # ------------------------------------------------------------ styles and blocks
    @staticmethod
    def _style(rng: random.Random, cloudcanal: bool) -> Style:
        return Style(
            value_schema=rng.random() < 0.5,
            key_schema=rng.random() < 0.5,
            modern=rng.random() < 0.4,
            propagate=rng.random() < 0.5,
            cloudcanal=cloudcanal,
        )

    @staticmethod
    def _source(change: SourceChange, ctx: _TxContext, style: Style, snapshot: str) -> dict[str, Any]:
        ts = ctx.tx.commit_ts
        if style.cloudcanal:  # the fields CloudCanal's example shows, in its order
            return {
                "ts_ms": _ms(ts),
                "db": change.schema.database,
                "table": change.schema.table,
                "connector": "MySQL",
                "gtid": None,
                "file": change.position.file_name,
                "pos": change.position.offset,
                "server_id": SERVER_ID,
            }
        source: dict[str, Any] = {
            "version": CONNECTOR_VERSION,
            "connector": "mysql",
            "name": SERVER_NAME,
            "ts_ms": _ms(ts),
            "snapshot": snapshot,
            "db": change.schema.database,
            "sequence": None,
        }
        if style.modern:
            source.update(ts_us=_us(ts), ts_ns=_us(ts) * 1000)
        source.update(
            table=change.schema.table,
            server_id=SERVER_ID,
            gtid=ctx.gtid,
            file=change.position.file_name,
            pos=change.position.offset,
            row=0,
            thread=None if snapshot != "false" else 7,
            query=None,
        )
        return source

    @staticmethod
    def _event_ts(ctx: _TxContext, style: Style) -> tuple[dt.datetime, str]:
        if style.modern and not style.cloudcanal:
            return ctx.tx.commit_ts, "ns"
        return _floor_ms(ctx.tx.commit_ts), "ms"

    @staticmethod
    def _emitted(ctx: _TxContext, style: Style) -> dt.datetime:
        return ctx.emitted if style.modern and not style.cloudcanal else _floor_ms(ctx.emitted)

    # ------------------------------------------------------------ transactions
    def _transaction(
        self, tx: Transaction, rng: random.Random, first_last: tuple[SourceChange | None, SourceChange | None]
    ) -> Iterator[EncodedMessage]:
        cloudcanal = rng.random() < 0.2
        ctx = _TxContext(
            tx=tx,
            gtid=None if cloudcanal or rng.random() < 0.3 else tx.tx_id,
            metadata=not (tx.is_snapshot or cloudcanal) and rng.random() < 0.4,
            emitted=tx.commit_ts + dt.timedelta(microseconds=rng.randrange(2_000, 900_000)),
            per_table={},
        )
        row_changes = [c for c in tx.changes if c.op in ("INSERT", "UPDATE", "DELETE", "SNAPSHOT")]
        if ctx.metadata and row_changes:
            yield self._tx_marker(ctx, "BEGIN", row_changes, rng)
        for change in tx.changes:
            style = self._style(rng, cloudcanal)
            if change.op == "DDL":
                yield self._schema_change(change, ctx, style, change.ddl_statement)
            elif change.op == "TRUNCATE":
                if style.cloudcanal or rng.random() < 0.3:
                    yield self._schema_change(change, ctx, style, change.ddl_statement)
                else:
                    yield self._truncate(change, ctx, style)
            else:
                snapshot = "false"
                if change.op == "SNAPSHOT":
                    snapshot = "first" if change is first_last[0] else "last" if change is first_last[1] else "true"
                yield from self._row_change(change, ctx, style, snapshot)
        if ctx.metadata and row_changes:
            yield self._tx_marker(ctx, "END", row_changes, rng)

    def _tx_marker(
        self, ctx: _TxContext, status: str, changes: list[SourceChange], rng: random.Random
    ) -> EncodedMessage:
        counts: dict[str, int] = {}
        for c in changes:
            name = f"{c.schema.database}.{c.schema.table}"
            counts[name] = counts.get(name, 0) + (2 if self._splits_key(c) else 1)
        payload = {
            "status": status,
            "id": ctx.tx.tx_id,
            "ts_ms": _ms(ctx.tx.commit_ts),
            "event_count": sum(counts.values()) if status == "END" else None,
            "data_collections": [{"data_collection": n, "event_count": k} for n, k in counts.items()]
            if status == "END"
            else None,
        }
        value = with_schema(_TX_SCHEMA_JSON, payload, rng.random() < 0.5)
        key = with_schema(_TX_KEY_SCHEMA_JSON, {"id": ctx.tx.tx_id}, rng.random() < 0.5)
        expected = {
            "row_index": 0,
            "message_status": "decoded",
            "event_kind": "TRANSACTION",
            "op": status,
            "transaction_id": ctx.tx.tx_id,
            "event_ts": _floor_ms(ctx.tx.commit_ts),
            "event_ts_precision": "ms",
        }
        return EncodedMessage(value, key, ctx.tx.tx_id, ctx.tx.commit_ts, (expected,), is_row_message=False)

    def _heartbeat(self, ts: dt.datetime, rng: random.Random) -> EncodedMessage:
        value = with_schema(_HEARTBEAT_SCHEMA_JSON, {"ts_ms": _ms(ts)}, rng.random() < 0.5)
        key = with_schema(_SERVER_NAME_KEY_SCHEMA_JSON, {"serverName": SERVER_NAME}, rng.random() < 0.5)
        expected = {
            "row_index": 0,
            "message_status": "decoded",
            "event_kind": "HEARTBEAT",
            "op": "HEARTBEAT",
            "event_ts": _floor_ms(ts),
            "event_ts_precision": "ms",
        }
        return EncodedMessage(value, key, SERVER_NAME, ts, (expected,), is_row_message=False)

    # ------------------------------------------------------------ row changes
    @staticmethod
    def _splits_key(change: SourceChange) -> bool:
        """Debezium writes an UPDATE of the primary key as a delete plus a create."""
        return (
            change.op == "UPDATE"
            and bool(change.schema.primary_key)
            and (change.key_of(change.before) != change.key_of(change.after))
        )

    def _row_change(
        self, change: SourceChange, ctx: _TxContext, style: Style, snapshot: str
    ) -> Iterator[EncodedMessage]:
        if self._splits_key(change) and not style.cloudcanal:
            yield from self._row_message(change, ctx, style, "d", change.before, None, snapshot)
            yield from self._row_message(change, ctx, style, "c", None, change.after, snapshot)
            return
        op = {"INSERT": "i" if style.cloudcanal else "c", "UPDATE": "u", "DELETE": "d", "SNAPSHOT": "r"}[change.op]
        yield from self._row_message(change, ctx, style, op, change.before, change.after, snapshot)

    def _row_message(
        self,
        change: SourceChange,
        ctx: _TxContext,
        style: Style,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        snapshot: str,
    ) -> Iterator[EncodedMessage]:
        table = change.schema
        codecs = table_codecs(table, style.propagate)

        def wire_image(image: dict[str, Any] | None) -> dict[str, Any] | None:
            if image is None:
                return None
            return {c: None if (v := image[c]) is None else codec.wire(v) for c, codec in codecs.items()}

        def expected_image(image: dict[str, Any] | None, wire: dict[str, Any] | None) -> dict[str, str | None] | None:
            if image is None:
                return None
            if not style.value_schema:  # untyped: the text of the value as sent
                return {c: as_sent(w) for c, w in wire.items()}
            return {c: to_canonical(codec.expected_type, image[c]) for c, codec in codecs.items()}

        wire_before, wire_after = wire_image(before), wire_image(after)
        payload: dict[str, Any]
        if style.cloudcanal:
            payload = {
                "op": op,
                **_timestamps(ctx.emitted, False),
                "after": {} if wire_after is None else wire_after,
                "before": {} if wire_before is None else wire_before,
                "source": self._source(change, ctx, style, snapshot),
            }
        else:
            ctx.total_order += 1
            name = f"{table.database}.{table.table}"
            assert ctx.per_table is not None
            ctx.per_table[name] = ctx.per_table.get(name, 0) + 1
            block = (
                {"id": ctx.tx.tx_id, "total_order": ctx.total_order, "data_collection_order": ctx.per_table[name]}
                if ctx.metadata
                else None
            )
            payload = {
                "before": wire_before,
                "after": wire_after,
                "source": self._source(change, ctx, style, snapshot),
                "transaction": block,
                "op": op,
                **_timestamps(ctx.emitted, style.modern),
            }
        value = with_schema(envelope_schema_json(table, style.propagate, style.modern), payload, style.value_schema)
        key_image = after if after is not None else before
        key, key_text = self._key(table, codecs, key_image, style)
        event_ts, precision = self._event_ts(ctx, style)
        exp_before, exp_after = expected_image(before, wire_before), expected_image(after, wire_after)
        pk_texts = [(exp_after or exp_before or {}).get(c) for c in table.primary_key]
        staged_op = {"c": "INSERT", "i": "INSERT", "u": "UPDATE", "d": "DELETE", "r": "SNAPSHOT"}[op]
        expected = {
            "row_index": 0,
            "message_status": "decoded",
            "event_kind": "ROW",
            "op": staged_op,
            "source_db_type": "mysql",
            "database_name": table.database,
            "table_name": table.table,
            "primary_key_columns": list(table.primary_key),
            "primary_key_source": "message" if table.primary_key else "none",
            "primary_key": staged_key_text(pk_texts) if table.primary_key else None,
            "before": exp_before,
            "after": exp_after,
            "before_is_partial": False,
            "after_is_partial": False,
            "event_ts": event_ts,
            "event_ts_precision": precision,
            "emitted_ts": self._emitted(ctx, style),
            "source_position": f"{change.position.file_name}:{change.position.offset}",
            "transaction_id": ctx.tx.tx_id if (ctx.metadata and not style.cloudcanal) or ctx.gtid else None,
        }
        routing = f"{table.database}.{table.table}" + (f"|{key_text}" if key_text else "")
        yield EncodedMessage(value, key, routing, ctx.tx.commit_ts, (expected,))
        if op == "d":
            tombstone = {"row_index": 0, "message_status": "tombstone", "event_kind": None, "op": None}
            yield EncodedMessage(None, key, routing, ctx.tx.commit_ts, (tombstone,), is_row_message=False)

    @staticmethod
    def _key(
        table: TableSchema, codecs: dict[str, ColumnCodec], image: dict[str, Any] | None, style: Style
    ) -> tuple[bytes | None, str | None]:
        if not table.primary_key or image is None:
            return None, None
        payload = {c: codecs[c].wire(image[c]) for c in table.primary_key}
        return with_schema(key_schema_json(table, style.propagate), payload, style.key_schema), dump_json(payload)

    # ------------------------------------------------------------ truncate and DDL
    def _truncate(self, change: SourceChange, ctx: _TxContext, style: Style) -> EncodedMessage:
        table = change.schema
        payload = {
            "before": None,
            "after": None,
            "source": self._source(change, ctx, style, "false"),
            "transaction": None,
            "op": "t",
            **_timestamps(ctx.emitted, style.modern),
        }
        value = with_schema(envelope_schema_json(table, style.propagate, style.modern), payload, style.value_schema)
        event_ts, precision = self._event_ts(ctx, style)
        expected = {
            "row_index": 0,
            "message_status": "decoded",
            "event_kind": "DDL",
            "op": "TRUNCATE",
            "database_name": table.database,
            "table_name": table.table,
            "primary_key_columns": [],
            "primary_key": None,
            "ddl_statement": None,
            "event_ts": event_ts,
            "event_ts_precision": precision,
            "source_position": f"{change.position.file_name}:{change.position.offset}",
        }
        return EncodedMessage(
            value, None, f"{table.database}.{table.table}", ctx.tx.commit_ts, (expected,), is_row_message=False
        )

    def _schema_change(
        self, change: SourceChange, ctx: _TxContext, style: Style, statement: str | None
    ) -> EncodedMessage:
        table = change.schema
        kind = change.ddl_kind or "QUERY"
        described = kind in ("CREATE", "ALTER", "DROP")
        if style.cloudcanal:
            table_changes: Any = {"type": kind, "table": self._table_description(table, cloudcanal=True)}
            payload = {
                "databaseName": table.database,
                "ddl": statement,
                **_timestamps(ctx.emitted, False),
                "source": self._source(change, ctx, style, "false"),
                "tableChanges": table_changes if described else None,
            }
        else:
            table_changes = [
                {
                    "type": kind,
                    "id": f'"{table.database}"."{table.table}"',
                    "table": self._table_description(table, cloudcanal=False),
                    "comment": None,
                }
            ]
            payload = {
                "source": self._source(change, ctx, style, "false"),
                **_timestamps(ctx.emitted, style.modern),
                "databaseName": table.database,
                "schemaName": None,
                "ddl": statement,
                "tableChanges": table_changes if described else [],
            }
        value = with_schema(_schema_change_schema_json(style.modern), payload, style.value_schema)
        key = with_schema(_SCHEMA_CHANGE_KEY_SCHEMA_JSON, {"databaseName": table.database}, style.key_schema)
        event_ts, precision = self._event_ts(ctx, style)
        expected: dict[str, Any] = {
            "row_index": 0,
            "message_status": "decoded",
            "event_kind": "DDL",
            "op": kind,
            "database_name": table.database,
            "table_name": table.table,
            "ddl_statement": statement,
            "event_ts": event_ts,
            "event_ts_precision": precision,
            "primary_key": None,
            "primary_key_columns": list(table.primary_key) if described else [],
            "source_position": f"{change.position.file_name}:{change.position.offset}",
        }
        if described:
            expected["column_types"] = {c.name: c.logical_type for c in table.columns}
        return EncodedMessage(value, key, table.database, ctx.tx.commit_ts, (expected,), is_row_message=False)

    @staticmethod
    def _table_description(table: TableSchema, cloudcanal: bool) -> dict[str, Any]:
        columns = []
        for pos, col in enumerate(table.columns):
            name = type_name(col.mysql_type)
            args = type_args(col.mysql_type)
            if cloudcanal:  # spec 000's columns: lower-case typeExpression with arguments, 0-based position
                columns.append(
                    {
                        "jdbcType": jdbc_type_code(col),
                        "name": col.name,
                        "position": pos,
                        "typeExpression": col.mysql_type,
                        "typeName": name.lower(),
                    }
                )
                continue
            columns.append(
                {
                    "name": col.name,
                    "jdbcType": jdbc_type_code(col),
                    "nativeType": None,
                    "typeName": name,
                    "typeExpression": name,
                    "charsetName": "utf8mb4" if col.logical_type == "string" else None,
                    "length": int(args[0]) if args else None,
                    "scale": int(args[1]) if len(args) > 1 else None,
                    "position": pos + 1,
                    "optional": col.nullable,
                    "autoIncremented": False,
                    "generated": False,
                    "comment": None,
                    "hasDefaultValue": False,
                    "enumValues": [],
                }
            )
        if cloudcanal:
            return {"columns": columns, "primaryKeyColumnNames": list(table.primary_key)}
        return {
            "defaultCharsetName": "utf8mb4",
            "primaryKeyColumnNames": list(table.primary_key),
            "columns": columns,
            "comment": None,
        }

    # ------------------------------------------------------------ malformed messages
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        assert message.value is not None, "only row messages are malformed"
        text = message.value.decode("utf-8")
        if kind == "invalid_utf8":
            cut = rng.randrange(len(message.value))
            return message.value[:cut] + b"\xc3\x28" + message.value[cut:]
        if kind == "invalid_json":
            return text[: rng.randrange(1, len(text) - 1)].encode("utf-8")
        doc = load_json(message.value)
        enveloped = isinstance(doc, dict) and "schema" in doc and "payload" in doc
        payload = doc["payload"] if enveloped else doc
        if kind == "missing_field":
            choice = rng.randrange(3)
            if choice == 0:
                del payload["op"]
            elif choice == 1:
                del payload["source"]
            else:
                payload["source"]["table"] = None
        elif kind == "unknown_op":
            payload["op"] = rng.choice(("x", "upsert", "C", "merge", "insert"))
        elif kind == "wrong_value_type":
            doc = self._wrong_value_type(doc, payload, enveloped, rng)
        elif kind == "wrong_shape":
            choice = rng.randrange(3)
            if choice == 0:
                doc = [doc]
            elif choice == 1:
                payload["source"] = [payload["source"]]
            else:
                image = "before" if payload.get("op") == "d" else "after"
                payload[image] = list((payload[image] or {}).values())
        else:
            raise ValueError(f"unsupported malformation {kind!r}")
        return dump_json(doc).encode("utf-8")

    @staticmethod
    def _wrong_value_type(doc: Any, payload: dict[str, Any], enveloped: bool, rng: random.Random) -> Any:
        """A column whose schema says int32 holds text: schema-less messages get a schema saying so."""
        image_name = "before" if payload.get("op") == "d" else "after"
        image = payload[image_name]
        column = rng.choice(sorted(image))
        image[column] = "not-a-number"
        bad_field = {"type": "int32", "optional": True, "field": column}
        if not enveloped:
            image_schema = {"type": "struct", "fields": [bad_field], "optional": True, "field": image_name}
            return {"schema": {"type": "struct", "fields": [image_schema], "optional": False}, "payload": payload}
        for field in doc["schema"]["fields"]:
            if field.get("field") == image_name:
                field["fields"] = [bad_field if f.get("field") == column else f for f in field["fields"]]
        return doc


def schema_change_schema(modern: bool) -> dict[str, Any]:
    column = _struct(
        "io.debezium.connector.schema.Column",
        [
            _field("string", "name", False),
            _field("int32", "jdbcType", False),
            _field("int32", "nativeType"),
            _field("string", "typeName", False),
            _field("string", "typeExpression"),
            _field("string", "charsetName"),
            _field("int32", "length"),
            _field("int32", "scale"),
            _field("int32", "position", False),
            _field("boolean", "optional"),
            _field("boolean", "autoIncremented"),
            _field("boolean", "generated"),
            _field("string", "comment"),
            _field("boolean", "hasDefaultValue"),
            {
                "type": "array",
                "items": {"type": "string", "optional": False},
                "optional": True,
                "field": "enumValues",
            },
        ],
    )
    table = _struct(
        "io.debezium.connector.schema.Table",
        [
            _field("string", "defaultCharsetName"),
            {
                "type": "array",
                "items": {"type": "string", "optional": False},
                "optional": True,
                "field": "primaryKeyColumnNames",
            },
            {"type": "array", "items": column, "optional": False, "field": "columns"},
            _field("string", "comment"),
        ],
        optional=True,
        field="table",
    )
    change = _struct(
        "io.debezium.connector.schema.Change",
        [
            _field("string", "type", False),
            _field("string", "id", False),
            table,
            _field("string", "comment"),
        ],
    )
    fields = [source_schema(modern), _field("int64", "ts_ms", False)]
    if modern:
        fields += [_field("int64", "ts_us"), _field("int64", "ts_ns")]
    fields += [
        _field("string", "databaseName"),
        _field("string", "schemaName"),
        _field("string", "ddl"),
        {"type": "array", "items": change, "optional": False, "field": "tableChanges"},
    ]
    return _struct("io.debezium.connector.mysql.SchemaChangeValue", fields)


@functools.cache
def _schema_change_schema_json(modern: bool) -> str:
    return dump_json(schema_change_schema(modern))


ENCODER = DebeziumJsonEncoder()
