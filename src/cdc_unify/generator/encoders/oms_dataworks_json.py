"""OceanBase OMS "Dataworks" serialization, version 2.0 (spec 003, Dataworks JSON 消息格式).

One message per row change, in the shape of the spec's INSERT/UPDATE/DELETE samples:
`version` "2.0"; `schema.source` {dbType `ob_mysql`, dbVersion (sometimes null, as in the
samples), dbName, schema null, table}; `schema.column` [{name, type}] with the samples'
type names; `schema.pk` (left out for a table without a key: "否则可以不填");
`payload.before/after.data`; `op` INSERT/UPDATE/DELETE; `timestamp` {eventTime and
systemTime in epoch ms, checkpointTime in epoch **seconds** as the samples show};
`ddl` null or {text}; `scn` an increasing id as text (sometimes the text "null", as in the
samples); `extend` {load_fm} on some messages.  DDL events use the DDL op names (DROP =
ERASE, CINDEX/DINDEX); some transactions are wrapped in TRANSACTION_BEGIN/END; heartbeats
are the spec's minimal `{"version":"2.0","payload":{"timestamp":{...},"op":"HEARTBEAT"}}`.

Values follow OMS's text mapping for an OceanBase MySQL tenant (spec 003, 数据库传输到文本协议的
格式说明): integers and DECIMAL as JSON numbers with exact digits (trailing zeros kept),
FLOAT/DOUBLE as JSON numbers, BOOLEAN as 1/0, binary as base64, DATE/TIME/DATETIME as text
with only the non-zero fraction digits, TIMESTAMP as `<epoch seconds>.<fraction>`, zoned
values as `YYYY-MM-DD HH:MM:SS.f <zone>` (the offset instead of the zone name when the wall
clock is ambiguous in a DST overlap), intervals as SQL literals (`INTERVAL '3' DAY`,
`INTERVAL '1-2' YEAR TO MONTH`).  The Kafka key is not documented: none is sent.
"""

from __future__ import annotations

import base64
import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

from cdc_unify.canonical import IntervalYM, base_type, fmt_date, fmt_fraction, to_canonical
from cdc_unify.generator.encoders import _dataworks as dw
from cdc_unify.generator.encoders.base import EncodedMessage, PerSchema
from cdc_unify.generator.jsontext import RawJson, dump_json
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload

TRANSACTION_MARKER_SHARE = 0.3
NULL_SCN_SHARE = 0.1
EXTEND_SHARE = 0.5
_TYPE_NAMES = {
    "boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT", "bigint": "BIGINT",
    "ubigint": "BIGINT", "decimal": "DECIMAL", "float": "FLOAT", "double": "DOUBLE", "string": "VARCHAR",
    "json": "JSON", "binary": "BLOB", "date": "DATE", "time": "TIME", "datetime": "DATETIME",
    "timestamp": "TIMESTAMP", "zoned_datetime": "ZONED_DATETIME", "interval_ds": "INTERVAL_DAY_TO_SECOND",
    "interval_ym": "INTERVAL_YEAR_TO_MONTH",
}  # fmt: skip


def column_type(column: Column) -> str:
    return _TYPE_NAMES[base_type(column.logical_type)]


def _clock(value: dt.datetime | dt.time) -> str:
    """`HH:MM:SS` and only the fraction's non-zero digits ("会显示出所有非 0 的数值")."""
    return f"{value:%H:%M:%S}{fmt_fraction(value.microsecond * 1000)}"


def _is_ambiguous(value: dt.datetime) -> bool:
    first = value.replace(tzinfo=None).replace(tzinfo=value.tzinfo, fold=0)
    return first.utcoffset() != value.utcoffset()


def _offset_text(offset: dt.timedelta) -> str:
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(offset) // dt.timedelta(minutes=1)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def interval_literal(value: IntervalYM | dt.timedelta) -> str:
    """An interval as the SQL literal OMS writes (`INTERVAL '3' DAY`, `INTERVAL '-1-2' YEAR TO MONTH`)."""
    if isinstance(value, IntervalYM):
        sign = "-" if value.months < 0 else ""
        years, months = divmod(abs(value.months), 12)
        if months == 0:
            return f"INTERVAL '{sign}{years}' YEAR"
        return f"INTERVAL '{sign}{years}-{months}' YEAR TO MONTH"
    sign = "-" if value < dt.timedelta(0) else ""
    micros = abs(value) // dt.timedelta(microseconds=1)
    secs, frac = divmod(micros, 1_000_000)
    days, rem = divmod(secs, 86400)
    if rem == 0 and frac == 0:
        return f"INTERVAL '{sign}{days}' DAY"
    clock = f"{rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}{fmt_fraction(frac * 1000)}"
    return f"INTERVAL '{sign}{days} {clock}' DAY TO SECOND"


def json_value(column: Column, value: Any) -> Any:
    """A true value as OMS writes it in `data` (None = JSON null)."""
    if value is None:
        return None
    kind = base_type(column.logical_type)
    if kind == "boolean":
        return RawJson("1" if value else "0")
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return RawJson(str(value))
    if kind == "decimal":
        return RawJson(format(value, "f"))
    if kind in ("float", "double"):
        return dw.json_number(value, single=kind == "float")
    if kind == "binary":
        return base64.b64encode(value).decode("ascii")
    if kind == "date":
        return fmt_date(value)
    if kind == "time":
        return _clock(value)
    if kind == "datetime":
        return f"{fmt_date(value)} {_clock(value)}"
    if kind == "timestamp":
        seconds = dw.epoch_ms(value) // 1000
        return f"{seconds}{fmt_fraction(value.microsecond * 1000)}"
    if kind == "zoned_datetime":
        zone = _offset_text(value.utcoffset()) if _is_ambiguous(value) else value.tzinfo.key
        return f"{fmt_date(value)} {_clock(value)} {zone}"
    if kind in ("interval_ym", "interval_ds"):
        return interval_literal(value)
    return value


def expected_text(column: Column, value: Any) -> str | None:
    """Canonical text decoding must give, from the true value."""
    if value is not None and base_type(column.logical_type) == "zoned_datetime" and _is_ambiguous(value):
        return to_canonical("zoned_datetime", value.astimezone(dt.timezone(value.utcoffset())))
    return to_canonical(column.logical_type, value)


class OmsDataworksJsonEncoder(dw.DataWorksFamilyEncoder):
    dialect = "oms_dataworks_json"
    image_field = "data"
    schema_columns_field = "column"
    untyped_types = ("VARCHAR", "JSON")
    unknown_ops = ("UPSERT", "insert", "UPDATE_BEFOR", "MERGE")
    retype_to = "BIGINT"

    def stream(self, workload: Workload, rng: random.Random) -> _Stream:
        return _Stream(rng)


def _schema(schema: TableSchema, db_version: str | None) -> dict:
    source = {"dbType": "ob_mysql", "dbVersion": db_version, "dbName": schema.database, "schema": None,
              "table": schema.table}  # fmt: skip
    doc = {"source": source, "column": [{"name": c.name, "type": column_type(c)} for c in schema.columns]}
    if schema.primary_key:
        doc["pk"] = list(schema.primary_key)
    return doc


schema_json = PerSchema(lambda schema, db_version: dump_json(_schema(schema, db_version)))


class _Stream:
    """The scn counter and the rng of one encoded stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.scn = 0

    def _scn(self) -> str:
        self.scn += 1
        return "null" if self.rng.random() < NULL_SCN_SHARE else str(self.scn)

    def _timestamp(self, when: dt.datetime) -> dict[str, int]:
        ms = dw.epoch_ms(when)
        return {"eventTime": ms, "systemTime": ms + self.rng.randrange(5, 2000), "checkpointTime": ms // 1000}

    def _message(self, value: str, routing_key: str, when: dt.datetime, expected: dict, row: bool) -> EncodedMessage:
        expected = {"row_index": 0, "event_ts": dw.truncate_to_ms(when), **expected}
        return EncodedMessage(value.encode("utf-8"), None, routing_key, when, (expected,), row)

    def heartbeat(self, when: dt.datetime) -> EncodedMessage:
        doc = {"version": "2.0", "payload": {"timestamp": {"eventTime": dw.epoch_ms(when)}, "op": "HEARTBEAT"}}
        return self._message(dump_json(doc), "", when, {"event_kind": "HEARTBEAT", "op": "HEARTBEAT"}, False)

    def _marker(self, when: dt.datetime, op: str, staged_op: str) -> EncodedMessage:
        doc = {"version": "2.0", "payload": {"op": op, "timestamp": self._timestamp(when), "scn": self._scn()}}
        return self._message(dump_json(doc), "", when, {"event_kind": "TRANSACTION", "op": staged_op}, False)

    def transaction(self, tx: Transaction) -> Iterator[EncodedMessage]:
        wrap = (not tx.is_snapshot and tx.changes[0].op not in ("DDL", "TRUNCATE")
                and self.rng.random() < TRANSACTION_MARKER_SHARE)  # fmt: skip
        if wrap:
            yield self._marker(tx.commit_ts, "TRANSACTION_BEGIN", "BEGIN")
        for change in tx.changes:
            yield self.change(change, tx.commit_ts)
        if wrap:
            yield self._marker(tx.commit_ts, "TRANSACTION_END", "COMMIT")

    def _doc(self, schema: TableSchema, payload: dict) -> str:
        """The value's JSON: version, schema (its text written once per table), payload, extend."""
        db_version = self.rng.choice((None, "4.2.1.2"))
        doc = f'{{"version":"2.0","schema":{schema_json(schema, db_version)},"payload":{dump_json(payload)}'
        if self.rng.random() < EXTEND_SHARE:
            doc += ',"extend":{"load_fm":"cdc-unify"}'
        return doc + "}"

    def change(self, change: SourceChange, when: dt.datetime) -> EncodedMessage:
        schema = change.schema
        routing_key = f"{schema.database}.{schema.table}"
        pk = list(schema.primary_key)
        if change.op in ("DDL", "TRUNCATE"):
            statement = change.ddl_statement or f"TRUNCATE TABLE `{schema.database}`.`{schema.table}`"
            kind = change.ddl_kind or "TRUNCATE"
            payload = {"before": None, "after": None, "op": dw.DDL_OP_NAMES[kind], "timestamp": self._timestamp(when),
                       "ddl": {"text": statement}, "scn": self._scn()}  # fmt: skip
            expected = {"event_kind": "DDL", "op": kind, "database_name": schema.database,
                        "table_name": schema.table, "primary_key_columns": pk, "ddl_statement": statement}  # fmt: skip
            return self._message(self._doc(schema, payload), routing_key, when, expected, False)
        images = {}
        texts = {}
        for side, image in (("before", change.before), ("after", change.after)):
            images[side] = None if image is None else {"data": {c.name: json_value(c, image[c.name])
                                                                for c in schema.columns}}  # fmt: skip
            texts[side] = None if image is None else {c.name: expected_text(c, image[c.name]) for c in schema.columns}
        op = "INSERT" if change.op == "SNAPSHOT" else change.op
        payload = {"before": images["before"], "after": images["after"], "op": op,
                   "timestamp": self._timestamp(when), "ddl": None, "scn": self._scn()}  # fmt: skip
        expected = {
            "event_kind": "ROW",
            "op": op,
            "database_name": schema.database,
            "table_name": schema.table,
            "primary_key_columns": pk,
            "primary_key": dw.staged_key(pk, texts["before"], texts["after"]),
            "before": texts["before"],
            "after": texts["after"],
            "before_is_partial": False,
            "after_is_partial": False,
        }
        return self._message(self._doc(schema, payload), routing_key, when, expected, True)


ENCODER = OmsDataworksJsonEncoder()
