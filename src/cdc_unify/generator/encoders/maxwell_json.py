"""Maxwell's daemon JSON (zendesk/maxwell: MySQL binlog -> Kafka), docs/dialects/maxwell_json.md.

One Kafka message per row change: `database`, `table`, `type` (insert/update/delete), `ts` (epoch
seconds), `xid`, `xoffset` on every row of a transaction but its last, which has `commit: true`
instead (RowMap.toJSON), `position` (`file:offset`, output_binlog_position), `server_id`,
`thread_id`, `data` (the whole row; for delete the deleted row) and, on update, `old` (the previous
values of the columns that changed, an explicit null where one was NULL; absent when none changed).
The Kafka key names the primary key: the hash form `{"database":..,"table":..,"pk.<col>":..}` or the
array form `["db","table",[{"<col>":..}]]` (kafka_key_format), column names lower-cased, `_uuid` (a
random UUID) for a table without a key.

Choices where the spec is silent or a deployment chooses, a deterministic mix from the rng:
- half of the row messages carry `primary_key` / `primary_key_columns` (output_primary_keys,
  output_primary_key_columns); a quarter of the keys use the array form;
- the full-load rows are a bootstrap: `bootstrap-start`, `bootstrap-insert` rows, `bootstrap-complete`
  per table, without xid/commit (bootstrapping.md), with the binlog position they were read at;
- DDL (output_ddl): CREATE -> table-create (`def` with `primary-key`), DROP -> table-drop, every other
  schema change -> table-alter (`old`/`def`); `ts` in milliseconds as in the dataformat samples; key a
  bare UUID (DDLMap.pkToJson). Statements Maxwell does not resolve (QUERY) and TRUNCATE (not a
  schema change) are not sent, as Maxwell sends none; neither does it send heartbeats.

Values as Maxwell's JSON writer spells them: integers and booleans (tinyint(1)) as JSON numbers,
DECIMAL as Java's BigDecimal.toString at the column's scale (`0E-10`, `1.5E-7`), FLOAT/DOUBLE as
Java's Float/Double.toString, BLOB/BINARY as base64, DATETIME/TIME with the column's fraction digits,
TIMESTAMP as the UTC wall clock (compat.md: TIMESTAMP columns are treated as UTC), JSON columns as
embedded JSON. MySQL has no zoned or interval types: those columns use the Canal encoder's texts.
Staged values are these texts typed `string`; an embedded JSON value is Spark's compact text of it
(keys sorted).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from cdc_unify.canonical import base_type, fmt_date
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder
from cdc_unify.generator.encoders.canal_json import (
    canal_value_text,
    ddl_statement,
    dump_json,
    epoch_ms,
    java_float_text,
    key_json,
    load_json,
    mysql_wall_text,
    routing_key,
    truncate_to_ms,
    truncated,
)
from cdc_unify.generator.encoders.ckafka_json import truncate_to_s
from cdc_unify.generator.jsontext import RawJson
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload

ROW_TYPES = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete", "SNAPSHOT": "bootstrap-insert"}
DDL_TYPES = {"CREATE": "table-create", "DROP": "table-drop"}  # every other resolved change: table-alter
SERVER_ID = 23042
FIRST_XID = 23396


def decimal_text(value: Decimal, logical_type: str) -> str:
    """Java's BigDecimal.toString of the value at the column's scale (Python's str follows the
    same rules: scientific when the exponent is below -6 or the value is 0 at a scale)."""
    scale = int(logical_type.split(",")[1].rstrip(")")) if "," in logical_type else 0
    sign, digits, exponent = value.as_tuple()
    if -exponent < scale:
        digits, exponent = digits + (0,) * (scale + exponent), -scale
    return str(Decimal((sign, digits, exponent)))


def sorted_json_text(text: str) -> str:
    """An embedded JSON value as the staging model writes it: compact, keys sorted, numbers as sent
    (the message holds this module's json.dumps of them, which this repeats)."""
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def maxwell_value(column: Column, value: Any) -> Any:
    """A true value as Maxwell writes it: a JSON number (RawJson text), string or embedded JSON."""
    if value is None:
        return None
    kind = base_type(column.logical_type)
    if kind == "boolean":
        return RawJson("1" if value else "0")
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return RawJson(str(value))
    if kind == "decimal":
        return RawJson(decimal_text(value, column.logical_type))
    if kind in ("float", "double"):
        return RawJson(java_float_text(value, single=kind == "float"))
    if kind == "binary":
        return base64.b64encode(value).decode("ascii")
    if kind == "json":
        return RawJson(json.dumps(json.loads(value), separators=(",", ":"), ensure_ascii=False))
    if kind == "timestamp":
        return mysql_wall_text(value.astimezone(dt.UTC).replace(tzinfo=None), column.mysql_type)
    if kind == "date":
        return fmt_date(value)
    return canal_value_text(column, value)


def staged_text(column: Column, value: Any) -> str | None:
    """The staged text of a true value: the JSON scalar's exact text, an embedded value's JSON text."""
    sent = maxwell_value(column, value)
    if sent is not None and base_type(column.logical_type) == "json":
        return sorted_json_text(sent)
    return sent if sent is None else str(sent)


def kafka_key(schema: TableSchema, data: dict[str, Any], array_form: bool) -> bytes:
    """RowIdentity.toKeyJson: key column names lower-cased; `_uuid` for a table without a key."""
    names = schema.primary_key
    if array_form:
        key: Any = [schema.database, schema.table, [{n.lower(): data[n]} for n in names]]
    else:
        key = {"database": schema.database, "table": schema.table}
        key.update({f"pk.{n.lower()}": data[n] for n in names} or {"_uuid": str(uuid.UUID(int=0))})
    return dump_json(key).encode("utf-8")


class MaxwellJsonEncoder(Encoder):
    dialect = "maxwell_json"
    extra_malformed_kinds = ("wrong_shape",)
    key_fields_share = 0.5  # row messages with primary_key / primary_key_columns
    array_key_share = 0.25  # Kafka keys in kafka_key_format=array

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        for tx in workload.transactions:
            if tx.is_snapshot:
                yield from self.bootstrap(tx, rng)
                continue
            changes = [c for c in tx.changes if c.op not in ("TRUNCATE",) and (c.op != "DDL" or c.ddl_kind != "QUERY")]
            for index, change in enumerate(changes):
                if change.op == "DDL":
                    yield self.ddl_message(change, tx, rng)
                else:
                    yield self.row_message(change, tx, index, index == len(changes) - 1, rng)

    # ------------------------------------------------------------ rows
    def row_message(
        self, change: SourceChange, tx: Transaction, xoffset: int, commit: bool, rng: random.Random
    ) -> EncodedMessage:
        schema = change.schema
        image = change.before if change.op == "DELETE" else change.after
        data = {c.name: maxwell_value(c, image[c.name]) for c in schema.columns}
        msg: dict[str, Any] = {
            "database": schema.database,
            "table": schema.table,
            "type": ROW_TYPES[change.op],
            "ts": RawJson(str(epoch_ms(tx.commit_ts) // 1000)),
        }
        if not tx.is_snapshot:
            msg["xid"] = RawJson(str(FIRST_XID + tx.seq))
            if commit:
                msg["commit"] = True
            else:
                msg["xoffset"] = RawJson(str(xoffset))
        msg["position"] = f"{change.position.file_name}:{change.position.offset}"
        if not tx.is_snapshot:
            msg["server_id"] = RawJson(str(SERVER_ID))
            msg["thread_id"] = RawJson(str(100 + tx.seq % 7))
        if rng.random() < self.key_fields_share:
            msg["primary_key"] = [data[n] for n in schema.primary_key]
            msg["primary_key_columns"] = list(schema.primary_key)
        msg["data"] = data
        if change.op == "UPDATE":
            old = {
                c.name: maxwell_value(c, change.before[c.name])
                for c in schema.columns
                if change.before[c.name] != change.after[c.name]
            }
            if old:
                msg["old"] = old
        key = kafka_key(schema, data, rng.random() < self.array_key_share)
        before = self.texts(schema, change.before) if change.op in ("UPDATE", "DELETE") else None
        after = self.texts(schema, change.after) if change.op != "DELETE" else None
        expected = {
            "row_index": 0,
            "event_kind": "ROW",
            "op": change.op,
            "source_db_type": "mysql",
            "database_name": schema.database,
            "table_name": schema.table,
            "primary_key_columns": list(schema.primary_key),
            "primary_key_source": "message" if schema.primary_key else "none",
            "primary_key": key_json(schema.primary_key, before, after),
            "before": before,
            "after": after,
            "before_is_partial": False if before is not None else None,
            "after_is_partial": False if after is not None else None,
            "column_types": {c.name: "string" for c in schema.columns},
            "event_ts": truncate_to_s(tx.commit_ts),
            "event_ts_precision": "s",
            "emitted_ts": None,
            "source_position": msg["position"],
            "transaction_id": None if tx.is_snapshot else str(FIRST_XID + tx.seq),
        }
        value = dump_json(msg).encode("utf-8")
        return EncodedMessage(value, key, routing_key(change), tx.commit_ts, (expected,))

    @staticmethod
    def texts(schema: TableSchema, image: dict[str, Any]) -> dict[str, str | None]:
        return {c.name: staged_text(c, image[c.name]) for c in schema.columns}

    # ------------------------------------------------------------ bootstrap and DDL
    def bootstrap(self, tx: Transaction, rng: random.Random) -> Iterator[EncodedMessage]:
        """A snapshot transaction as bootstraps: start and complete around each table's rows."""
        index = 0
        while index < len(tx.changes):
            schema = tx.changes[index].schema
            end = index
            while end < len(tx.changes) and tx.changes[end].schema == schema:
                end += 1
            yield self.bootstrap_marker("bootstrap-start", schema, tx, rng)
            for change in tx.changes[index:end]:
                yield self.row_message(change, tx, 0, False, rng)
            yield self.bootstrap_marker("bootstrap-complete", schema, tx, rng)
            index = end

    def bootstrap_marker(self, kind: str, schema: TableSchema, tx: Transaction, rng: random.Random) -> EncodedMessage:
        msg = {
            "database": schema.database,
            "table": schema.table,
            "type": kind,
            "ts": RawJson(str(epoch_ms(tx.commit_ts) // 1000)),
            "data": {},
        }
        expected = {
            "row_index": 0,
            "event_kind": "OTHER",
            "op": kind.upper(),
            "database_name": schema.database,
            "table_name": schema.table,
            "event_ts": truncate_to_s(tx.commit_ts),
            "event_ts_precision": "s",
        }
        key = kafka_key(schema, dict.fromkeys(schema.primary_key), False)
        value = dump_json(msg).encode("utf-8")
        return EncodedMessage(value, key, f"{schema.database}.{schema.table}", tx.commit_ts, (expected,), False)

    def ddl_message(self, change: SourceChange, tx: Transaction, rng: random.Random) -> EncodedMessage:
        schema = change.schema
        kind = DDL_TYPES.get(change.ddl_kind, "table-alter")
        table_def = {
            "database": schema.database,
            "charset": "utf8mb4",
            "table": schema.table,
            "columns": [{"type": c.mysql_type.split("(")[0], "name": c.name} for c in schema.columns],
            "primary-key": list(schema.primary_key),
        }
        msg: dict[str, Any] = {"type": kind, "database": schema.database, "table": schema.table}
        if kind != "table-drop":
            msg["def"] = table_def
        msg["ts"] = RawJson(str(epoch_ms(tx.commit_ts)))
        msg["sql"] = ddl_statement(change)
        msg["position"] = f"{change.position.file_name}:{change.position.offset}"
        keyed = kind != "table-drop" and bool(schema.primary_key)
        expected = {
            "row_index": 0,
            "event_kind": "DDL",
            "op": change.ddl_kind,
            "database_name": schema.database,
            "table_name": schema.table,
            "ddl_statement": ddl_statement(change),
            "primary_key_columns": list(schema.primary_key) if keyed else [],
            "primary_key_source": "ddl" if keyed else "none",
            "event_ts": truncate_to_ms(tx.commit_ts),
            "event_ts_precision": "ms",
            "source_position": msg["position"],
        }
        key = str(uuid.UUID(int=rng.getrandbits(128), version=4)).encode("ascii")
        value = dump_json(msg).encode("utf-8")
        return EncodedMessage(value, key, routing_key(change), tx.commit_ts, (expected,), is_row_message=False)

    # ------------------------------------------------------------ malformed
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        value = message.value
        if kind == "invalid_json":
            return truncated(value, rng)
        if kind == "invalid_utf8":
            cut = rng.randrange(1, len(value) - 1)
            return value[:cut] + b"\xc3\x28" + value[cut:]
        msg = load_json(value)
        if kind == "missing_field":
            msg.pop(rng.choice(("type", "ts", "database", "table", "data")))
        elif kind == "unknown_op":
            msg["type"] = rng.choice(("upsert", "replace", "heartbeat", "i"))
        elif kind == "wrong_shape":
            msg["data"] = rng.choice((list(msg["data"].values()), "not an object"))
        elif kind == "wrong_value_type":
            # Maxwell's `old` holds previous values of columns `data` has: one it lacks is no value.
            msg["old"] = {**msg.get("old", {}), f"no_such_column_{rng.randrange(10**6)}": RawJson("1")}
        else:
            raise ValueError(f"unsupported malformation kind {kind!r}")
        return dump_json(msg).encode("utf-8")


ENCODER = MaxwellJsonEncoder()
