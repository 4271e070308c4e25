"""DataWorks "sync whole database to Kafka" JSON, versions 0.0.1 / 1.0.0 (spec 001).

One message per row change, in the spec's shapes, a deterministic mix drawn from the rng:
- `version` "0.0.1" (the samples' shape: no `scn`, no `dbVersion`) or "1.0.0" (the overall
  format's: `scn` and `dbVersion` present);
- an UPDATE is either two messages sharing one `sequenceId` (`UPDATE_BEFOR` with the
  before image, then `UPDATE_AFTER` with the after image: "update 变更对应一条 Kafka 记录"
  unticked) or one `UPDATE_AFTER` carrying both images (ticked);
- full-load snapshot rows are INSERTs (DataWorks merges full and incremental data by
  `sequenceId`); DDL uses the DDL op names (DROP = ERASE, CINDEX/DINDEX) with `ddl.text`
  and the table's columns and key after the DDL in `schema`; TRUNCATE is op TRUNCATE;
- some transactions are wrapped in TRANSACTION_BEGIN / TRANSACTION_END and preceded by a
  GTID event; heartbeats are MHEARTBEAT messages in the spec's exact heartbeat shape;
- `sequenceId` is the task's start in epoch ms followed by a 6-digit counter (the samples:
  `1620457642589000000`, `...001`, ...); `eventTime` / `checkpointTime` are the commit time
  and `systemTime` the processing time, all 13-digit epoch ms;
- a table without a primary key has `primaryKey: null`; for MySQL such tables DataWorks adds
  the synthetic `#alibaba_rds_row_id#` LONG column, which every row of it carries.

Values follow the six types of the spec (字段类型): integers LONG, FLOAT/DOUBLE DOUBLE (Java
text), booleans BOOLEAN, BLOB/BINARY BYTES (base64), DATE/DATETIME/TIMESTAMP and zoned values
DATE (epoch ms, wall clocks read in the source time zone), everything else STRING: DECIMAL as
its plain text (a double would lose digits), TIME as `HH:MM:SS[.ffffff]`, intervals in
Oracle's text.  The Kafka key is not documented: none is sent.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import random
from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

from cdc_unify.canonical import base_type, fmt_instant, to_canonical
from cdc_unify.generator.encoders import _dataworks as dw
from cdc_unify.generator.encoders.base import EncodedMessage, PerSchema
from cdc_unify.generator.jsontext import RawJson, dump_json
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload

# The dbt var `source_time_zone` default: the zone DataWorks read the source's wall clocks in.
SOURCE_TIME_ZONE = ZoneInfo("Asia/Shanghai")
ROW_ID_COLUMN = "#alibaba_rds_row_id#"
SPLIT_UPDATE_SHARE = 0.5
TRANSACTION_MARKER_SHARE = 0.3
GTID_SHARE = 0.2
_INTEGERS = ("tinyint", "smallint", "int", "bigint", "ubigint")


def column_type(column: Column) -> str:
    """The dataColumn type DataWorks declares for a column (BOOLEAN, DOUBLE, DATE, BYTES, LONG, STRING)."""
    return _declared_type(column.logical_type)


@functools.cache  # asked for every value sent
def _declared_type(logical_type: str) -> str:
    kind = base_type(logical_type)
    if kind in _INTEGERS:
        return "LONG"
    return {"boolean": "BOOLEAN", "float": "DOUBLE", "double": "DOUBLE", "binary": "BYTES", "date": "DATE",
            "datetime": "DATE", "timestamp": "DATE", "zoned_datetime": "DATE"}.get(kind, "STRING")  # fmt: skip


def _instant(column: Column, value: Any) -> dt.datetime:
    """The instant DataWorks sends for a temporal value (wall clocks read in the source zone)."""
    kind = base_type(column.logical_type)
    if kind == "date":
        return dt.datetime(value.year, value.month, value.day, tzinfo=SOURCE_TIME_ZONE)
    if kind == "datetime":
        return value.replace(tzinfo=SOURCE_TIME_ZONE)
    return value


def _string_text(column: Column, value: Any) -> str:
    kind = base_type(column.logical_type)
    if kind == "decimal":
        return format(value, "f")  # BigDecimal.toPlainString: scale kept
    if kind == "time":
        return dw.time_text(value)
    if kind in ("interval_ym", "interval_ds"):
        return dw.oracle_interval_text(value)
    return value


def json_value(column: Column, value: Any) -> Any:
    """A true value as DataWorks writes it in `dataColumn` (None = JSON null)."""
    if value is None:
        return None
    declared = column_type(column)
    if declared == "LONG":
        return RawJson(str(value))
    if declared == "BOOLEAN":
        return bool(value)
    if declared == "DOUBLE":
        return dw.json_number(value, single=base_type(column.logical_type) == "float")
    if declared == "BYTES":
        return base64.b64encode(value).decode("ascii")
    if declared == "DATE":
        return RawJson(str(dw.epoch_ms(_instant(column, value))))
    return _string_text(column, value)


def expected_text(column: Column, value: Any) -> str | None:
    """Canonical text decoding must give, from the true value and the declared type."""
    if value is None:
        return None
    declared = column_type(column)
    if declared == "DATE":
        return fmt_instant(dw.truncate_to_ms(_instant(column, value)))
    if declared == "DOUBLE":
        # A FLOAT travels as its shortest 32-bit digits and is read back as a double.
        return to_canonical("double", float(to_canonical(column.logical_type, value)))
    if declared == "STRING":
        return _string_text(column, value)
    return to_canonical(column.logical_type, value)


class DataWorksJsonEncoder(dw.DataWorksFamilyEncoder):
    dialect = "dataworks_json"
    image_field = "dataColumn"
    schema_columns_field = "dataColumn"
    untyped_types = ("STRING",)
    unknown_ops = ("UPSERT", "insert", "UPDATE", "MERGE")
    retype_to = "LONG"

    def stream(self, workload: Workload, rng: random.Random) -> _Stream:
        first = workload.transactions[0].commit_ts if workload.transactions else dw.EPOCH
        return _Stream(rng, dw.epoch_ms(first))


def _columns(schema: TableSchema) -> list[Column]:
    if schema.primary_key:
        return list(schema.columns)
    return [*schema.columns, Column(ROW_ID_COLUMN, "bigint", "bigint(20)", nullable=False)]


def _schema(schema: TableSchema, version: str) -> dict:
    source = {"dbType": "MySQL", "dbVersion": "8.0.28", "dbName": schema.database, "tableName": schema.table}
    if version == "0.0.1":
        del source["dbVersion"]
    return {
        "dataColumn": [{"name": c.name, "type": column_type(c)} for c in _columns(schema)],
        "primaryKey": list(schema.primary_key) or None,
        "source": source,
    }


# Per table schema (and message version): what every row message of the table repeats.
columns_of = PerSchema(_columns)
schema_json = PerSchema(lambda schema, version: dump_json(_schema(schema, version)))
_NO_SCHEMA_JSON = dump_json({"dataColumn": None, "primaryKey": None, "source": None})


class _Stream:
    """sequenceId counter, per-table row ids and the rng of one encoded stream."""

    def __init__(self, rng: random.Random, task_start_ms: int) -> None:
        self.rng = rng
        self.sequence = task_start_ms * 1_000_000
        self.row_ids: dict[tuple[str, str, tuple], list[int]] = {}
        self.last_row_id = 0

    def _next_sequence(self) -> str:
        self.sequence += 1
        return str(self.sequence)

    def _payload(self, version: str, when: dt.datetime, op: str, **fields: Any) -> dict:
        payload = {"before": None, "after": None, "sequenceId": self._next_sequence()}
        if version == "1.0.0":
            payload["scn"] = None
        payload["timestamp"] = {"eventTime": dw.epoch_ms(when),
                                "systemTime": dw.epoch_ms(when) + self.rng.randrange(5, 2000),
                                "checkpointTime": dw.epoch_ms(when)}  # fmt: skip
        payload.update(op=op, ddl=None)
        payload.update(fields)
        return payload

    def _message(
        self, doc: tuple[str, dict, str], routing_key: str, when: dt.datetime, expected: dict, row: bool
    ) -> EncodedMessage:
        """`doc`: the schema's JSON text (written once per table), the payload and the version."""
        schema_json, payload, version = doc
        value = f'{{"schema":{schema_json},"payload":{dump_json(payload)},"version":"{version}"}}'
        expected = {"row_index": 0, "event_ts": dw.truncate_to_ms(when), **expected}
        return EncodedMessage(value.encode("utf-8"), None, routing_key, when, (expected,), row)

    def heartbeat(self, when: dt.datetime) -> EncodedMessage:
        ms = dw.epoch_ms(when)
        payload = {"before": None, "after": None, "sequenceId": None,
                   "timestamp": {"eventTime": ms, "checkpointTime": ms}, "op": "MHEARTBEAT", "ddl": None}  # fmt: skip
        doc = (_NO_SCHEMA_JSON, payload, "0.0.1")
        return self._message(doc, "", when, {"event_kind": "HEARTBEAT", "op": "HEARTBEAT"}, False)

    def _marker(self, when: dt.datetime, op: str, staged_op: str, version: str) -> EncodedMessage:
        doc = (_NO_SCHEMA_JSON, self._payload(version, when, op), version)
        return self._message(doc, "", when, {"event_kind": "TRANSACTION", "op": staged_op}, False)

    def transaction(self, tx: Transaction) -> Iterator[EncodedMessage]:
        version = self.rng.choice(("0.0.1", "1.0.0"))
        when = tx.commit_ts
        markers = not tx.is_snapshot and tx.changes[0].op not in ("DDL", "TRUNCATE")
        wrap = markers and self.rng.random() < TRANSACTION_MARKER_SHARE
        if markers and self.rng.random() < GTID_SHARE:
            yield self._marker(when, "GTID", "GTID", version)
        if wrap:
            yield self._marker(when, "TRANSACTION_BEGIN", "BEGIN", version)
        for change in tx.changes:
            yield from self.change(change, when, version)
        if wrap:
            yield self._marker(when, "TRANSACTION_END", "COMMIT", version)

    def _row_id_images(self, change: SourceChange) -> tuple[dict | None, dict | None]:
        """The images with `#alibaba_rds_row_id#` for a table without a key: every inserted row
        gets a new id; an update or delete of one of several identical rows takes the oldest
        copy's id, as the truth ends the copy that started first."""
        schema = change.schema
        if schema.primary_key:
            return change.before, change.after
        table = (schema.database, schema.table)
        row_id = None
        if change.before is not None:
            copies = self.row_ids.get((*table, _identity(change.before)), [])
            row_id = copies.pop(0) if copies else None
        if row_id is None:
            self.last_row_id += 1
            row_id = self.last_row_id
        if change.after is not None:
            self.row_ids.setdefault((*table, _identity(change.after)), []).append(row_id)
        return tuple(None if image is None else {**image, ROW_ID_COLUMN: row_id}
                     for image in (change.before, change.after))  # fmt: skip

    def _image(self, columns: list[Column], image: dict[str, Any] | None) -> tuple[dict | None, dict | None]:
        if image is None:
            return None, None
        sent = {"dataColumn": {c.name: json_value(c, image[c.name]) for c in columns}}
        return sent, {c.name: expected_text(c, image[c.name]) for c in columns}

    def change(self, change: SourceChange, when: dt.datetime, version: str) -> Iterator[EncodedMessage]:
        schema = change.schema
        routing_key = f"{schema.database}.{schema.table}"
        columns = columns_of(schema)
        pk = list(schema.primary_key)
        if change.op in ("DDL", "TRUNCATE"):
            statement = change.ddl_statement or f"TRUNCATE TABLE `{schema.database}`.`{schema.table}`"
            kind = change.ddl_kind or "TRUNCATE"
            ddl = {"text": statement, "ddlMeta": base64.b64encode(b"\xac\xed\x00\x05" + statement.encode()).decode()}
            payload = self._payload(version, when, dw.DDL_OP_NAMES[kind], ddl=ddl)
            doc = (schema_json(schema, version), payload, version)
            expected = {"event_kind": "DDL", "op": kind, "database_name": schema.database,
                        "table_name": schema.table, "primary_key_columns": pk, "ddl_statement": statement}  # fmt: skip
            yield self._message(doc, routing_key, when, expected, False)
            return
        before_image, after_image = self._row_id_images(change)
        before, before_text = self._image(columns, before_image)
        after, after_text = self._image(columns, after_image)
        base = {"event_kind": "ROW", "database_name": schema.database, "table_name": schema.table,
                "primary_key_columns": pk, "before_is_partial": False, "after_is_partial": False}  # fmt: skip
        if change.op == "UPDATE" and self.rng.random() < SPLIT_UPDATE_SHARE:
            before_payload = self._payload(version, when, "UPDATE_BEFOR", before=before)
            after_payload = self._payload(version, when, "UPDATE_AFTER", after=after)
            after_payload["sequenceId"] = before_payload["sequenceId"]  # the pair shares it (spec 001)
            halves = ((before_payload, "UPDATE_BEFORE", before_text, None), (after_payload, "UPDATE_AFTER", None,
                                                                              after_text))  # fmt: skip
            for payload, staged_op, want_before, want_after in halves:
                doc = (schema_json(schema, version), payload, version)
                expected = {**base, "op": staged_op, "primary_key": dw.staged_key(pk, want_before, want_after),
                            "before": want_before, "after": want_after}  # fmt: skip
                yield self._message(doc, routing_key, when, expected, True)
            return
        op = {"INSERT": "INSERT", "SNAPSHOT": "INSERT", "UPDATE": "UPDATE_AFTER", "DELETE": "DELETE"}[change.op]
        payload = self._payload(version, when, op, before=before, after=after)
        doc = (schema_json(schema, version), payload, version)
        staged_op = "INSERT" if change.op == "SNAPSHOT" else change.op
        expected = {**base, "op": staged_op, "primary_key": dw.staged_key(pk, before_text, after_text),
                    "before": before_text, "after": after_text}  # fmt: skip
        yield self._message(doc, routing_key, when, expected, True)


def _identity(image: dict[str, Any]) -> tuple:
    return tuple(repr(image[name]) for name in sorted(image))


ENCODER = DataWorksJsonEncoder()
