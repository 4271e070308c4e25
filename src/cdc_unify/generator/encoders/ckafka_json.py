"""Tencent CKafka connector, "official format one" (spec 002).

DML: one message per row change with `BINLOG_NAME`, `BINLOG_POS`, `DATABASE`, `TABLE`,
`TYPE` (`I`/`U`/`D`; full-load rows are `I`), `TIME` (`yyyyMMddHHmmss`, the source server's
wall clock, here Asia/Shanghai = the dbt var `source_time_zone` default), `GLOBAL_ID` (the
GTID: the simulated server runs with GTID on), `EVENT_SERVER_ID` / `GROUP_ID` null, and
`NEW_VALUES` / `OLD_VALUES` as full row images (UPDATE carries both, DELETE only the old one).

Format one carries no column types: every value is a JSON string in MySQL's text form (the
spec's `"id": "1004"`); bytes are base64 (JSON cannot carry raw bytes), TIMESTAMP is the source
wall clock, zoned values and intervals use the Canal encoder's texts.  Staged values are
these texts, typed `string` (docs/staged-contract.md).

DDL arrives in Canal shape on the same topic, as in the spec's samples: `es`/`ts` in 10-digit
seconds, except a share in 13-digit milliseconds (the spec's RENAME sample), `id` 0, `data`,
`old`, `mysqlType`, `sqlType`, `pkNames` null.  The format has no heartbeat.

Primary keys: format one names none.  The staged key comes from the dbt var
`ckafka_primary_keys`, else from the CREATE TABLE on the feed that governs the row's second
(the workload creates every table first, so the expectation is the table's key from its CREATE
statement).
"""

from __future__ import annotations

import base64
import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

from cdc_unify.canonical import base_type
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder
from cdc_unify.generator.encoders.canal_json import (
    CANAL_DDL_TYPES,
    SOURCE_TIME_ZONE,
    canal_value_text,
    ddl_op,
    ddl_statement,
    dump_json,
    dump_plain_json,
    epoch_ms,
    key_json,
    load_json,
    routing_key,
    truncate_to_ms,
    truncated,
)
from cdc_unify.generator.model import Column, SourceChange, Transaction, Workload

TYPE_CODES = {"INSERT": "I", "SNAPSHOT": "I", "UPDATE": "U", "DELETE": "D"}
STAGED_OPS = {"I": "INSERT", "U": "UPDATE", "D": "DELETE"}
DDL_MILLIS_SHARE = 0.2  # Canal-shaped DDL with 13-digit es/ts instead of 10-digit seconds


def ckafka_value_text(column: Column, value: Any) -> str | None:
    if value is not None and base_type(column.logical_type) == "binary":
        return base64.b64encode(value).decode("ascii")
    return canal_value_text(column, value)


def time_text(value: dt.datetime) -> str:
    """`TIME`: the source wall clock, to the second."""
    return value.astimezone(SOURCE_TIME_ZONE).strftime("%Y%m%d%H%M%S")


def truncate_to_s(value: dt.datetime) -> dt.datetime:
    return value.replace(microsecond=0)


class CkafkaJsonEncoder(Encoder):
    dialect = "ckafka_json"
    extra_malformed_kinds = ("wrong_shape",)

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        for tx in workload.transactions:
            for change in tx.changes:
                if change.op in ("DDL", "TRUNCATE"):
                    yield self.ddl_message(change, tx, rng)
                else:
                    yield self.row_message(change, tx)

    def row_message(self, change: SourceChange, tx: Transaction) -> EncodedMessage:
        schema = change.schema
        code = TYPE_CODES[change.op]
        new = self.image(change, change.after) if code != "D" else None
        old = self.image(change, change.before) if code != "I" else None
        msg = {
            "BINLOG_NAME": change.position.file_name,
            "BINLOG_POS": change.position.offset,
            "DATABASE": schema.database,
            "EVENT_SERVER_ID": None,
            "GLOBAL_ID": tx.tx_id,
            "GROUP_ID": None,
            "NEW_VALUES": new,
            "OLD_VALUES": old,
            "TABLE": schema.table,
            "TIME": time_text(tx.commit_ts),
            "TYPE": code,
        }
        expected = {
            "row_index": 0,
            "event_kind": "ROW",
            "op": STAGED_OPS[code],
            "source_db_type": "mysql",
            "database_name": schema.database,
            "table_name": schema.table,
            "primary_key_columns": list(schema.primary_key),
            "primary_key_source": "ddl" if schema.primary_key else "none",
            "primary_key": key_json(schema.primary_key, old, new),
            "before": old,
            "after": new,
            "before_is_partial": False if old is not None else None,
            "after_is_partial": False if new is not None else None,
            "column_types": {c.name: "string" for c in schema.columns},
            "event_ts": truncate_to_s(tx.commit_ts),
            "event_ts_precision": "s",
            "emitted_ts": None,
            "source_position": f"{change.position.file_name}:{change.position.offset}",
            "transaction_id": tx.tx_id,
        }
        value = dump_plain_json(msg).encode("utf-8")  # its values are all strings
        return EncodedMessage(value, None, routing_key(change), tx.commit_ts, (expected,))

    def image(self, change: SourceChange, image: dict[str, Any]) -> dict[str, str | None]:
        return {c.name: ckafka_value_text(c, image[c.name]) for c in change.schema.columns}

    def ddl_message(self, change: SourceChange, tx: Transaction, rng: random.Random) -> EncodedMessage:
        schema = change.schema
        millis = rng.random() < DDL_MILLIS_SHARE
        at = epoch_ms(tx.commit_ts) if millis else epoch_ms(tx.commit_ts) // 1000
        kind = ddl_op(change)
        msg = {
            "data": None,
            "database": schema.database,
            "es": at,
            "id": 0,
            "isDdl": True,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": ddl_statement(change),
            "sqlType": None,
            "table": schema.table,
            "ts": at,
            "type": CANAL_DDL_TYPES[kind],
        }
        expected = {
            "row_index": 0,
            "event_kind": "DDL",
            "op": kind,
            "database_name": schema.database,
            "table_name": schema.table,
            "ddl_statement": ddl_statement(change),
            "primary_key_columns": list(schema.primary_key),
            "primary_key_source": "ddl" if schema.primary_key else "none",
            "event_ts": truncate_to_ms(tx.commit_ts) if millis else truncate_to_s(tx.commit_ts),
            "event_ts_precision": "ms" if millis else "s",
        }
        value = dump_plain_json(msg).encode("utf-8")
        return EncodedMessage(value, None, routing_key(change), tx.commit_ts, (expected,), is_row_message=False)

    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        return malform_format_one(message.value, kind, rng)


def malform_format_one(value: bytes, kind: str, rng: random.Random) -> bytes:
    """A malformed variant of a format-one DML message."""
    if kind == "invalid_json":
        return truncated(value, rng)
    if kind == "invalid_utf8":
        cut = rng.randrange(1, len(value) - 1)
        return value[:cut] + b"\xc3\x28" + value[cut:]
    msg = load_json(value)
    image = "OLD_VALUES" if msg["TYPE"] == "D" else "NEW_VALUES"
    if kind == "missing_field":
        msg.pop(rng.choice(("TYPE", "TIME", "TABLE", image)))
    elif kind == "unknown_op":
        msg["TYPE"] = rng.choice(("X", "R", "UPSERT", "i"))
    elif kind == "wrong_shape":
        msg[image] = rng.choice((list(msg[image].values()), "not an object"))
    elif kind == "wrong_value_type":
        column = rng.choice(sorted(msg[image]))
        msg[image][column] = {"unexpected": [rng.randrange(10**6)]}
    else:
        raise ValueError(f"unsupported malformation kind {kind!r}")
    return dump_json(msg).encode("utf-8")


ENCODER = CkafkaJsonEncoder()
