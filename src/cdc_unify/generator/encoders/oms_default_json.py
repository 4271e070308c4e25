"""OceanBase OMS Default JSON (spec 003, "Default JSON 消息格式"): the workload as OMS writes it.

One record per message: `allMetaData` (checkpoint, record_primary_key / record_primary_value joined
by \\u0001, source_identity, dbType, storeDataSequence, table_name, db = `{tenant}.{database}`,
timestamp = epoch seconds as a string, uniqueId), `prevStruct` / `postStruct` (column -> value) and
`recordType` INSERT / UPDATE / DELETE / ROW (full load) / DDL / HEARTBEAT.

Choices where the spec is silent (docs/dialects/oms_default_json.md):
- the source is an OceanBase MySQL tenant (`dbType` OB_MYSQL, `db` = `{TENANT}.{database}`);
- a DDL (TRUNCATE included) is a `DDL` record whose postStruct is `{"ddl": statement}`;
- heartbeats carry allMetaData with `timestamp` / `checkpoint` and no images;
- full-load rows (`ROW`) carry neither `timestamp`, `storeDataSequence` nor `uniqueId` ("only in
  the incremental phase"); their `checkpoint` is the key as JSON text (`{"id":"3"}`);
- `storeDataSequence` is always sent (sequenceEnabled defaults to true): commit second * 10^5 +
  a counter, "timestamp + an increasing sequence of at most five digits".
Values follow the appendix's type mapping (`vendor_value`).  The message declares no types, so
the expected canonical text of every column is the value's text as sent.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from cdc_unify.canonical import IntervalYM, fmt_date, fmt_datetime, fmt_time
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder
from cdc_unify.generator.jsontext import compact_dumps
from cdc_unify.generator.model import SourceChange, TableSchema, Transaction, Workload
from cdc_unify.generator.truth import key_text

TENANT = "shop_tenant"
DB_TYPE = "OB_MYSQL"
SUBTOPIC = "oms_subtopic_0"
KEY_SEPARATOR = "\u0001"
_FLOAT_DIGITS = 7  # appendix: FLOAT has 7 significant digits, DOUBLE 16
_DOUBLE_DIGITS = 16


@dataclass(frozen=True)
class RawNumber:
    """A JSON number written with exactly this text (JSON numbers must not go through float)."""

    text: str


class _Verbatim(str):
    """A number's JSON text, written as is."""


def _number_text(value: Any) -> _Verbatim:
    if isinstance(value, RawNumber):
        return _Verbatim(value.text)
    if isinstance(value, Decimal):
        return _Verbatim(str(value))
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


# Compact JSON text; RawNumber and Decimal keep their digits, non-ASCII text stays UTF-8.
dumps = compact_dumps(_Verbatim, _number_text)


def loads_exact(value: bytes) -> Any:
    """Parse a message back without losing digits (numbers become int / Decimal)."""
    return json.loads(value.decode("utf-8"), parse_float=Decimal)


# ---------------------------------------------------------------- value mapping (spec 003 appendix)
def epoch_seconds_text(value: dt.datetime) -> str:
    """`[seconds][.nnnnnnnnn]`: the appendix's Timestamp form, trailing zeros dropped."""
    total_us = (value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1)
    seconds, micros = divmod(abs(total_us), 1_000_000)
    fraction = f".{micros:06d}".rstrip("0") if micros else ""
    return f"{'-' if total_us < 0 else ''}{seconds}{fraction}"


def interval_ym_literal(value: IntervalYM) -> str:
    sign = "-" if value.months < 0 else ""
    years, months = divmod(abs(value.months), 12)
    if months == 0:
        return f"INTERVAL '{sign}{years}' YEAR"
    return f"INTERVAL '{sign}{years}-{months}' YEAR TO MONTH"


def interval_ds_literal(value: dt.timedelta) -> str:
    sign = "-" if value < dt.timedelta(0) else ""
    total_us = abs(value) // dt.timedelta(microseconds=1)
    seconds, micros = divmod(total_us, 1_000_000)
    days, rest = divmod(seconds, 86_400)
    if rest == 0 and micros == 0:
        return f"INTERVAL '{sign}{days}' DAY"
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    fraction = f".{micros:06d}".rstrip("0") if micros else ""
    return f"INTERVAL '{sign}{days} {hours:02d}:{minutes:02d}:{secs:02d}{fraction}' DAY TO SECOND"


def _zoned_text(value: dt.datetime) -> str:
    zone = getattr(value.tzinfo, "key", None) or value.strftime("%z")
    return f"{fmt_datetime(value.replace(tzinfo=None))} {zone}"


def _float_number(value: float, digits: int) -> RawNumber | str:
    if value != value or value in (float("inf"), float("-inf")):
        # JSON has no NaN/Infinity: sent as Java's Double.toString text in a string.
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return RawNumber(f"{value:.{digits}g}")


def _decimal_number(value: Decimal, logical_type: str) -> RawNumber:
    """BigDecimal.toString of the value at the column's scale (trailing zeros kept, E notation allowed)."""
    scale = int(logical_type.split(",")[1].rstrip(")")) if "," in logical_type else None
    if scale is not None and value.as_tuple().exponent > -scale:
        value = value.quantize(Decimal(1).scaleb(-scale))
    # Python's str(Decimal) and Java's BigDecimal.toString are the same to-scientific-string rule.
    return RawNumber(str(value))


def vendor_value(logical_type: str, value: Any) -> RawNumber | str | None:
    """A true value as OMS writes it: a JSON number (RawNumber) or a JSON string."""
    if value is None:
        return None
    kind = logical_type.split("(")[0]
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return RawNumber(str(int(value)))
    if kind == "boolean":
        return RawNumber("1" if value else "0")  # appendix: BOOL/BOOLEAN are Long, true = 1
    if kind == "decimal":
        return _decimal_number(value, logical_type)
    if kind == "float":
        return _float_number(value, _FLOAT_DIGITS)
    if kind == "double":
        return _float_number(value, _DOUBLE_DIGITS)
    if kind == "binary":
        return base64.b64encode(value).decode("ascii")
    if kind == "date":
        return fmt_date(value)
    if kind == "time":
        return fmt_time(value)
    if kind == "datetime":
        return fmt_datetime(value)
    if kind == "timestamp":
        return epoch_seconds_text(value)
    if kind == "zoned_datetime":
        return _zoned_text(value)
    if kind == "interval_ym":
        return interval_ym_literal(value)
    if kind == "interval_ds":
        return interval_ds_literal(value)
    return str(value)  # string, json


def sent_text(value: RawNumber | str | None) -> str | None:
    """The text a decoder keeps for an untyped value: the number's digits or the string's content."""
    return value.text if isinstance(value, RawNumber) else value


def key_json(texts: list[str | None]) -> str:
    """`cdc_primary_key`'s serialisation (Spark to_json of an array of strings)."""
    return key_text(texts)


def coalesce_key(after: dict[str, Any] | None, before: dict[str, Any] | None, column: str) -> Any:
    """`coalesce(after[c], before[c])`, as cdc_primary_key reads a key column."""
    value = after.get(column) if after is not None else None
    return value if value is not None else (before or {}).get(column)


class StoreSequence:
    """`storeDataSequence` (and SharePlex `scn`): epoch second, then a counter of at most five digits."""

    def __init__(self) -> None:
        self._second: int | None = None
        self._count = 0

    def next(self, ts: dt.datetime) -> int:
        second = int(ts.timestamp())
        if second == self._second:
            self._count += 1
        else:
            self._second, self._count = second, 0
        if self._count >= 100_000:
            raise ValueError("more than 100000 changes in one second do not fit storeDataSequence")
        return second * 100_000 + self._count


def source_order(workload: Workload) -> Iterator[Transaction | dt.datetime]:
    """Transactions and heartbeat times merged in time order (a heartbeat first on a tie)."""
    heartbeats = sorted(workload.heartbeat_times)
    index = 0
    for tx in workload.transactions:
        while index < len(heartbeats) and heartbeats[index] <= tx.commit_ts:
            yield heartbeats[index]
            index += 1
        yield tx
    yield from heartbeats[index:]


def truncate_to_second(value: dt.datetime) -> dt.datetime:
    return value.replace(microsecond=0)


def broken_bytes(value: bytes, kind: str, rng: random.Random) -> bytes:
    """An `invalid_utf8` or `invalid_json` replacement of a JSON message value."""
    if kind == "invalid_utf8":
        cut = value.index(b'"') + 1
        return value[:cut] + b"\xc3\x28" + value[cut:]
    text = value.decode("utf-8")
    # A truncated message, or the trailing comma of the spec's own Default INSERT sample.
    broken = text[: len(text) // 2] if rng.random() < 0.5 else text[:-1] + ",}"
    return broken.encode("utf-8")


# ---------------------------------------------------------------- encoder
class OmsDefaultEncoder(Encoder):
    dialect = "oms_default_json"
    extra_malformed_kinds = ("wrong_shape",)

    # -------------------------------------------------------- images (overridden by the ext variant)
    def image(self, schema: TableSchema, row: dict[str, Any]) -> dict[str, Any]:
        return {c.name: vendor_value(c.logical_type, row.get(c.name)) for c in schema.columns}

    def expected_image(self, schema: TableSchema, row: dict[str, Any], sent: dict[str, Any]) -> dict[str, str | None]:
        """Canonical text the decoder must produce from `row`, sent as `sent` (its `image`):
        untyped, so the value as sent."""
        return {c.name: sent_text(sent[c.name]) for c in schema.columns}

    # -------------------------------------------------------- messages
    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        sequence = StoreSequence()
        snapshot_index = 0
        for item in source_order(workload):
            if isinstance(item, dt.datetime):
                yield self._heartbeat(item)
                continue
            for change in item.changes:
                if item.is_snapshot:
                    snapshot_index += 1
                    yield self._snapshot_row(change, item, snapshot_index)
                elif change.op in ("DDL", "TRUNCATE"):
                    yield self._ddl(change, item, sequence.next(item.commit_ts))
                else:
                    yield self._row(change, item, sequence.next(item.commit_ts))

    def _meta(self, schema: TableSchema | None, **fields: Any) -> dict[str, Any]:
        """allMetaData in the spec's field order; absent fields are left out, null ones sent as null."""
        key_names = KEY_SEPARATOR.join(schema.primary_key) if schema and schema.primary_key else None
        meta = {
            "checkpoint": fields.get("checkpoint"),
            "record_primary_key": key_names,
            "source_identity": fields.get("source_identity", SUBTOPIC),
            "record_primary_value": fields.get("record_primary_value"),
            "dbType": DB_TYPE,
        }
        if "sequence" in fields:
            meta["storeDataSequence"] = fields["sequence"]
        meta["table_name"] = schema.table if schema else None
        meta["db"] = f"{TENANT}.{schema.database}" if schema else None
        if "timestamp" in fields:
            meta["timestamp"] = fields["timestamp"]
        if "unique_id" in fields:
            meta["uniqueId"] = fields["unique_id"]
        return meta

    def _message(self, meta: dict[str, Any], record_type: str, prev: Any, post: Any) -> bytes:
        return dumps({"allMetaData": meta, "prevStruct": prev, "recordType": record_type, "postStruct": post}).encode()

    def _heartbeat(self, at: dt.datetime) -> EncodedMessage:
        seconds = str(int(at.timestamp()))
        value = self._message(self._meta(None, checkpoint=seconds, timestamp=seconds), "HEARTBEAT", None, None)
        expected = {"row_index": 0, "event_kind": "HEARTBEAT", "op": "HEARTBEAT", "event_ts": truncate_to_second(at)}
        return EncodedMessage(value, None, "heartbeat", at, (expected,), is_row_message=False)

    def _ddl(self, change: SourceChange, tx: Transaction, position: int) -> EncodedMessage:
        seconds = str(int(tx.commit_ts.timestamp()))
        meta = self._meta(change.schema, checkpoint=seconds, sequence=position, timestamp=seconds, unique_id=tx.tx_id)
        meta["record_primary_key"] = None  # a DDL record names no key
        value = self._message(meta, "DDL", None, {"ddl": change.ddl_statement})
        expected = {
            "row_index": 0,
            "event_kind": "DDL",
            "op": change.ddl_kind or "QUERY",
            "tenant_name": TENANT,
            "database_name": change.schema.database,
            "table_name": change.schema.table,
            "ddl_statement": change.ddl_statement,
            "event_ts": truncate_to_second(tx.commit_ts),
            "source_position": str(position),
            "transaction_id": tx.tx_id,
        }
        routing = f"{change.schema.database}.{change.schema.table}"
        return EncodedMessage(value, None, routing, tx.commit_ts, (expected,), is_row_message=False)

    @staticmethod
    def _key_texts(change: SourceChange, prev: dict[str, Any] | None, post: dict[str, Any] | None) -> list[str | None]:
        """The key's texts as sent, from the images as sent (`image` of before / after)."""
        sent = post if post is not None else prev
        assert sent is not None
        return [sent_text(sent[k]) for k in change.schema.primary_key]

    def _snapshot_row(self, change: SourceChange, tx: Transaction, index: int) -> EncodedMessage:
        post = self.image(change.schema, change.after)
        key_texts = self._key_texts(change, None, post)
        names = change.schema.primary_key
        checkpoint = dumps(dict(zip(names, key_texts, strict=True))) if names else None
        meta = self._meta(
            change.schema,
            checkpoint=checkpoint,
            source_identity=str(index),
            record_primary_value=KEY_SEPARATOR.join(key_texts) if names else None,
        )
        value = self._message(meta, "ROW", None, post)
        expected = self._expected_row(change, (None, post), "SNAPSHOT", None, None, checkpoint)
        return EncodedMessage(value, None, self._routing(change, key_texts), tx.commit_ts, (expected,))

    def _row(self, change: SourceChange, tx: Transaction, position: int) -> EncodedMessage:
        prev = self.image(change.schema, change.before) if change.before is not None else None
        post = self.image(change.schema, change.after) if change.after is not None else None
        key_texts = self._key_texts(change, prev, post)
        names = change.schema.primary_key
        seconds = str(int(tx.commit_ts.timestamp()))
        meta = self._meta(
            change.schema,
            checkpoint=seconds,
            record_primary_value=KEY_SEPARATOR.join(key_texts) if names else None,
            sequence=position,
            timestamp=seconds,
            unique_id=tx.tx_id,
        )
        value = self._message(meta, change.op, prev, post)
        event_ts = truncate_to_second(tx.commit_ts)
        expected = self._expected_row(change, (prev, post), change.op, event_ts, tx.tx_id, str(position))
        return EncodedMessage(value, None, self._routing(change, key_texts), tx.commit_ts, (expected,))

    def _routing(self, change: SourceChange, key_texts: list[str | None]) -> str:
        table = f"{change.schema.database}.{change.schema.table}"
        return f"{table}|{KEY_SEPARATOR.join(str(k) for k in key_texts)}" if key_texts else table

    def _expected_row(
        self,
        change: SourceChange,
        sent: tuple[dict[str, Any] | None, dict[str, Any] | None],
        op: str,
        event_ts: dt.datetime | None,
        transaction_id: str | None,
        source_position: str | None,
    ) -> dict[str, Any]:
        """`sent`: the images as sent (`image` of before and after)."""
        schema = change.schema
        before = self.expected_image(schema, change.before, sent[0]) if change.before is not None else None
        after = self.expected_image(schema, change.after, sent[1]) if change.after is not None else None
        key = [coalesce_key(after, before, k) for k in schema.primary_key]
        return {
            "row_index": 0,
            "event_kind": "ROW",
            "op": op,
            "tenant_name": TENANT,
            "database_name": schema.database,
            "table_name": schema.table,
            "primary_key_columns": list(schema.primary_key),
            "primary_key_source": "message" if schema.primary_key else "none",
            "primary_key": key_json(key) if schema.primary_key else None,
            "before": before,
            "after": after,
            "before_is_partial": False,
            "after_is_partial": False,
            "event_ts": event_ts,
            "source_position": source_position,
            "transaction_id": transaction_id,
        }

    # -------------------------------------------------------- malformed messages
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        if kind in ("invalid_utf8", "invalid_json"):
            return broken_bytes(message.value, kind, rng)
        doc = loads_exact(message.value)
        if kind == "missing_field":
            self._drop_required_field(doc, rng)
        elif kind == "unknown_op":
            doc["recordType"] = rng.choice(("UPSERT", "MERGE", "REPLACE"))
        elif kind == "wrong_value_type":
            self._spoil_value(doc, rng)
        elif kind == "wrong_shape":
            return self._wrong_shape(doc, rng)
        else:
            raise ValueError(f"{self.dialect} cannot make a {kind!r} message")
        return dumps(doc).encode("utf-8")

    @staticmethod
    def _required_images(doc: dict[str, Any]) -> list[str]:
        return [name for name in ("prevStruct", "postStruct") if doc.get(name) is not None]

    def _drop_required_field(self, doc: dict[str, Any], rng: random.Random) -> None:
        choice = rng.choice(("recordType", "allMetaData", "image", "db", "table_name"))
        if choice in ("recordType", "allMetaData"):
            del doc[choice]
        elif choice == "image":
            del doc[rng.choice(self._required_images(doc))]
        else:
            doc["allMetaData"].pop(choice)

    def _spoil_value(self, doc: dict[str, Any], rng: random.Random) -> None:
        """A column value no OMS type mapping produces: a JSON object (values are scalars)."""
        image = doc[rng.choice(self._required_images(doc))]
        column = rng.choice([c for c in image if c != "__light_type"])
        image[column] = {"value": image[column]}

    def _wrong_shape(self, doc: dict[str, Any], rng: random.Random) -> bytes:
        choice = rng.choice(("array", "image", "meta"))
        if choice == "array":
            return dumps([doc]).encode("utf-8")
        if choice == "image":
            name = rng.choice(self._required_images(doc))
            doc[name] = dumps(doc[name])  # the image as a JSON string instead of an object
        else:
            doc["allMetaData"] = list(doc["allMetaData"].values())
        return dumps(doc).encode("utf-8")


ENCODER = OmsDefaultEncoder()
