"""CloudCanal JSON messages (spec 000, "CloudCanal Json").

One message per batch of row changes of one table and one action: `data` holds the rows
(the new image; for DELETE the deleted row), `before` the full previous images of an UPDATE,
in the same order.  Batches of 1..4 consecutive changes are drawn from the rng ("supports
batched messages").  DDL (CREATE/ALTER/TRUNCATE) is a message with `isDdl` true, the
statement in `sql`, and for CREATE/ALTER the table's columns and key in `tableChanges`
(`pks` is empty there, as in the spec's DDL example).  After some transactions an
`entryType` TRANSACTIONEND message marks the commit.  `execTs` is the commit time and
`sendTs` the emission time, both epoch milliseconds.

Values are JSON strings in the MySQL text forms Canal-style tools write (the spec's sample
sends strings); `TIMESTAMP` columns as wall clock in the source time zone, binary as base64,
zoned datetimes as `yyyy-MM-dd HH:mm:ss.ffffff Zone/Id`, intervals as Oracle's interval text
(`+01-02`, `-03 04:05:06.500000`).  CloudCanal has no heartbeat message, so heartbeats are
not encoded.  docs/dialects/cloudcanal_json.md lists the choices where the spec is silent.
"""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from cdc_unify.canonical import to_canonical
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder, PerSchema
from cdc_unify.generator.encoders.debezium_json import java_number_text, jdbc_type_code, type_args
from cdc_unify.generator.jsontext import plain_dumps
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload
from cdc_unify.generator.truth import key_text

# The project's default `source_time_zone` (dbt_project.yml): the zone MySQL TIMESTAMP text is written in.
SOURCE_TIME_ZONE = "Asia/Shanghai"
# Column types whose text a decoder validates (a wrong value there must be quarantined).
_TYPED_VALUE_PREFIXES = (
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "decimal",
    "float",
    "double",
    "date",
    "time",
    "timestamp",
    "interval",
)
# CloudCanal's values are all strings: no number needs its digits kept verbatim.
dumps = plain_dumps()
ROW_ACTIONS = {"INSERT": "INSERT", "SNAPSHOT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE"}


def _fraction(micros: int, fsp: int) -> str:
    return f".{micros:06d}"[: fsp + 1] if fsp else ""


def _fsp(column: Column) -> int:
    args = type_args(column.mysql_type)
    return int(args[0]) if args and args[0].isdigit() else 0


def _wall_clock(value: dt.datetime, fsp: int) -> str:
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}{_fraction(value.microsecond, fsp)}"
    )


def value_text(column: Column, value: Any) -> str | None:
    """A value as CloudCanal writes it in `data`/`before`."""
    if value is None:
        return None
    kind = column.logical_type.split("(")[0]
    if kind == "boolean":
        return "1" if value else "0"
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return str(value)
    if kind == "decimal":
        return format(Decimal(value), "f")
    if kind in ("float", "double"):
        return java_number_text(value, single=kind == "float")
    if kind == "binary":
        return base64.b64encode(value).decode("ascii")
    if kind == "date":
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if kind == "time":
        return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}{_fraction(value.microsecond, _fsp(column))}"
    if kind == "datetime":
        return _wall_clock(value, _fsp(column))
    if kind == "timestamp":
        return _wall_clock(value.astimezone(ZoneInfo(SOURCE_TIME_ZONE)), _fsp(column))
    if kind == "zoned_datetime":
        return f"{_wall_clock(value, 6)} {value.tzinfo.key}"
    if kind == "interval_ym":
        sign = "-" if value.months < 0 else "+"
        years, months = divmod(abs(value.months), 12)
        return f"{sign}{years:02d}-{months:02d}"
    if kind == "interval_ds":
        sign = "-" if value < dt.timedelta(0) else "+"
        total = abs(value) // dt.timedelta(microseconds=1)
        days, rem = divmod(total, 86_400_000_000)
        secs, micros = divmod(rem, 1_000_000)
        return f"{sign}{days:02d} {secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}.{micros:06d}"
    return str(value)


def expected_text(column: Column, value: Any) -> str | None:
    """Canonical text decoding must give.  A TIMESTAMP travels as wall clock in the source
    zone: a wall time a DST fall-back repeats reads as its first occurrence."""
    if value is not None and column.logical_type == "timestamp":
        zone = ZoneInfo(SOURCE_TIME_ZONE)
        wall = value.astimezone(zone).replace(tzinfo=None)
        return to_canonical("timestamp", wall.replace(tzinfo=zone, fold=0))
    return to_canonical(column.logical_type, value)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MILLISECOND = dt.timedelta(milliseconds=1)


def _ms(ts: dt.datetime) -> int:
    return (ts - _EPOCH) // _MILLISECOND


def _floor_ms(ts: dt.datetime) -> dt.datetime:
    return ts.replace(microsecond=ts.microsecond // 1000 * 1000)


# Per table schema, shared by its messages and expected rows (which nothing modifies).
_types = PerSchema(
    lambda table: ({c.name: c.mysql_type for c in table.columns}, {c.name: jdbc_type_code(c) for c in table.columns})
)
_column_types = PerSchema(lambda table: {c.name: c.logical_type for c in table.columns})


def _batches(changes: tuple[SourceChange, ...], rng: random.Random) -> Iterator[list[SourceChange]]:
    """Consecutive row changes of one table and action, cut into batches of 1..4; DDL alone."""
    run: list[SourceChange] = []
    limit = rng.randint(1, 4)
    for change in changes:
        same = (
            run
            and change.op in ROW_ACTIONS
            and (
                run[-1].op in ROW_ACTIONS
                and ROW_ACTIONS[run[-1].op] == ROW_ACTIONS[change.op]
                and run[-1].schema.table == change.schema.table
            )
        )
        if run and (not same or len(run) >= limit):
            yield run
            run, limit = [], rng.randint(1, 4)
        run.append(change)
    if run:
        yield run


class CloudCanalJsonEncoder(Encoder):
    dialect = "cloudcanal_json"
    extra_malformed_kinds = ("wrong_shape",)

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        bids = itertools.count()  # BatchEventBuffer batch ids
        for tx in workload.transactions:
            send_ts = tx.commit_ts + dt.timedelta(milliseconds=rng.randrange(2, 900))
            for batch in _batches(tx.changes, rng):
                if batch[0].op in ROW_ACTIONS:
                    yield self._rows(tx, batch, send_ts, next(bids))
                else:
                    yield self._ddl(tx, batch[0], send_ts, next(bids))
            if not tx.is_snapshot and any(c.op in ROW_ACTIONS for c in tx.changes) and rng.random() < 0.5:
                yield self._transaction_end(tx, send_ts, next(bids))

    @staticmethod
    def _envelope(tx: Transaction, table: TableSchema | None, send_ts: dt.datetime, bid: int, **fields: Any) -> dict:
        db_val_type, jdbc_type = _types(table) if table else ({}, {})
        message = {
            "action": fields.pop("action"),
            "before": fields.pop("before", []),
            "bid": bid,
            "data": fields.pop("data", []),
            "db": table.database if table else "",
            "dbValType": db_val_type,
            "isDdl": fields.pop("isDdl", False),
            "entryType": fields.pop("entryType", "ROWDATA"),
            "execTs": _ms(tx.commit_ts),
            "jdbcType": jdbc_type,
            "pks": fields.pop("pks", []),
            "schema": table.database if table else "",
            "sendTs": _ms(send_ts),
            "sql": fields.pop("sql", ""),
            "table": table.table if table else "",
        }
        message.update(fields)
        return message

    def _rows(self, tx: Transaction, batch: list[SourceChange], send_ts: dt.datetime, bid: int) -> EncodedMessage:
        table = batch[-1].schema
        action = ROW_ACTIONS[batch[0].op]

        def texts(image: dict[str, Any]) -> dict[str, str | None]:
            return {c.name: value_text(c, image[c.name]) for c in table.columns}

        def canonical(image: dict[str, Any] | None) -> dict[str, str | None] | None:
            return None if image is None else {c.name: expected_text(c, image[c.name]) for c in table.columns}

        data = [texts(c.before if action == "DELETE" else c.after) for c in batch]
        before = [texts(c.before) for c in batch] if action == "UPDATE" else []
        message = self._envelope(
            tx, table, send_ts, bid, action=action, data=data, before=before, pks=list(table.primary_key)
        )
        expected = []
        for i, change in enumerate(batch):
            exp_before = canonical(change.before if action in ("UPDATE", "DELETE") else None)
            exp_after = canonical(change.after if action != "DELETE" else None)
            key_image = exp_after or exp_before or {}
            expected.append(
                {
                    "row_index": i,
                    "message_status": "decoded",
                    "event_kind": "ROW",
                    "op": action,
                    "database_name": table.database,
                    "schema_name": table.database,
                    "table_name": table.table,
                    "primary_key_columns": list(table.primary_key),
                    "primary_key_source": "message" if table.primary_key else "none",
                    "primary_key": key_text(key_image.get(k) for k in table.primary_key) if table.primary_key else None,
                    "before": exp_before,
                    "after": exp_after,
                    "before_is_partial": False,
                    "after_is_partial": False,
                    "event_ts": _floor_ms(tx.commit_ts),
                    "event_ts_precision": "ms",
                    "emitted_ts": _floor_ms(send_ts),
                    "column_types": _column_types(table),
                }
            )
        routing = f"{table.database}.{table.table}"
        return EncodedMessage(dumps(message).encode("utf-8"), None, routing, tx.commit_ts, tuple(expected))

    def _ddl(self, tx: Transaction, change: SourceChange, send_ts: dt.datetime, bid: int) -> EncodedMessage:
        table = change.schema
        kind = change.ddl_kind or "QUERY"
        described = kind in ("CREATE", "ALTER")
        extra: dict[str, Any] = {}
        if described:
            extra["tableChanges"] = {
                "table": {
                    "columns": [
                        {
                            "jdbcType": jdbc_type_code(c),
                            "name": c.name,
                            "position": i,
                            "typeExpression": c.mysql_type,
                            "typeName": c.mysql_type.split("(")[0].split()[0],
                        }
                        for i, c in enumerate(table.columns)
                    ],
                    "primaryKeyColumnNames": list(table.primary_key),
                },
                "type": kind,
            }
        message = self._envelope(
            tx, table, send_ts, bid, action=kind, isDdl=True, sql=change.ddl_statement or "", **extra
        )
        expected = {
            "row_index": 0,
            "message_status": "decoded",
            "event_kind": "DDL",
            "op": kind,
            "database_name": table.database,
            "table_name": table.table,
            "ddl_statement": change.ddl_statement,
            "primary_key_columns": list(table.primary_key) if described else [],
            "primary_key_source": "ddl" if described and table.primary_key else "none",
            "primary_key": None,
            "column_types": {c.name: c.logical_type for c in table.columns},
            "event_ts": _floor_ms(tx.commit_ts),
            "event_ts_precision": "ms",
        }
        return EncodedMessage(
            dumps(message).encode("utf-8"), None, table.database, tx.commit_ts, (expected,), is_row_message=False
        )

    def _transaction_end(self, tx: Transaction, send_ts: dt.datetime, bid: int) -> EncodedMessage:
        database = tx.changes[-1].schema.database
        message = self._envelope(tx, None, send_ts, bid, action=None, entryType="TRANSACTIONEND")
        message["db"] = message["schema"] = database
        expected = {
            "row_index": 0,
            "message_status": "decoded",
            "event_kind": "TRANSACTION",
            "op": "TRANSACTIONEND",
            "database_name": database,
            "event_ts": _floor_ms(tx.commit_ts),
            "event_ts_precision": "ms",
        }
        return EncodedMessage(
            dumps(message).encode("utf-8"), None, database, tx.commit_ts, (expected,), is_row_message=False
        )

    # ------------------------------------------------------------ malformed messages
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        assert message.value is not None
        text = message.value.decode("utf-8")
        if kind == "invalid_utf8":
            cut = rng.randrange(len(message.value))
            return message.value[:cut] + b"\xff" + message.value[cut:]
        if kind == "invalid_json":
            return text[: rng.randrange(1, len(text) - 1)].encode("utf-8")
        doc = json.loads(text)
        if kind == "missing_field":
            field = rng.choice(("action", "table", "execTs", "data"))
            if field == "data":
                doc["data"] = doc["before"] = []
            else:
                del doc[field]
        elif kind == "unknown_op":
            doc["action"] = rng.choice(("UPSERT", "insert", "MERGE", "X"))
        elif kind == "wrong_value_type":
            row = rng.randrange(len(doc["data"]))
            candidates = [c for c, t in doc["dbValType"].items() if t.startswith(_TYPED_VALUE_PREFIXES)]
            column = rng.choice(sorted(candidates))
            doc["data"][row][column] = "not a " + doc["dbValType"][column]
        elif kind == "wrong_shape":
            choice = rng.randrange(3)
            if choice == 0:
                doc = [doc]
            elif choice == 1:
                doc["data"] = doc["data"][0]
            else:
                doc["dbValType"] = list(doc["dbValType"])
        else:
            raise ValueError(f"unsupported malformation {kind!r}")
        return dumps(doc).encode("utf-8")


ENCODER = CloudCanalJsonEncoder()
