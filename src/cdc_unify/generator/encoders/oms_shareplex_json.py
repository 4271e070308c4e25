"""OceanBase OMS SharePlex JSON (spec 003, "SharePlex JSON 消息格式"): the workload as OMS writes it.

One row change per message: `data` (INSERT / DELETE: the full row; UPDATE: only the changed
columns), `key` (UPDATE only: the full before image) and `meta` with `op` ins/upd/del,
`table` `{database}.{table}`, `rowid` `{database}.{table}-{key values joined by \\u0001}`,
`time` / `posttime` as wall clock `YYYY-MM-DDTHH:mm:ss`, `trans`, `scn`, `seq`, `idx`, `size`.
Values are written as in OMS Default JSON (spec 003 appendix); the message declares no types,
so the expected text of every column is the value as sent.

Choices where the spec is silent (docs/dialects/oms_shareplex_json.md):
- `time` / `posttime` are wall clock in SOURCE_TIME_ZONE, the default of the dbt var
  `source_time_zone` the staging model reads them with;
- the format has no DDL, TRUNCATE or heartbeat message: those workload events are not sent;
- an UPDATE that changes the primary key is sent as `del` of the old row then `ins` of the new
  one: the only row identity is `meta.rowid`, which cannot name two keys;
- full-load rows are `ins` messages without `scn`, `seq` and `trans` (incremental-only fields);
- a table without a primary key gets an empty value part (`shop.audit_log-`);
- `seq` is the message's 1-based index in its transaction, `idx` is `seq/size`.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from cdc_unify.generator.encoders.base import EncodedMessage, Encoder
from cdc_unify.generator.encoders.oms_default_json import (
    KEY_SEPARATOR,
    StoreSequence,
    broken_bytes,
    dumps,
    key_json,
    loads_exact,
    sent_text,
    truncate_to_second,
    vendor_value,
)
from cdc_unify.generator.model import SourceChange, TableSchema, Transaction, Workload

# Must equal the default of the dbt var `source_time_zone` (dbt_project.yml); a test checks it.
SOURCE_TIME_ZONE = "Asia/Shanghai"
_WALL_CLOCK = "%Y-%m-%dT%H:%M:%S"
_MAX_POST_DELAY_MS = 3_000
_OPS = {"INSERT": "ins", "SNAPSHOT": "ins", "UPDATE": "upd", "DELETE": "del"}
_STAGED_OPS = {"ins": "INSERT", "upd": "UPDATE", "del": "DELETE"}


@dataclass(frozen=True)
class _Record:
    op: str  # ins / upd / del
    schema: TableSchema
    before: dict[str, Any] | None
    after: dict[str, Any] | None


def _records(change: SourceChange) -> list[_Record]:
    """The SharePlex messages of one workload change (none for DDL and TRUNCATE)."""
    if change.op not in _OPS:
        return []
    if change.op == "UPDATE" and change.key_of(change.before) != change.key_of(change.after):
        return [_Record("del", change.schema, change.before, None), _Record("ins", change.schema, None, change.after)]
    return [_Record(_OPS[change.op], change.schema, change.before, change.after)]


def _image(schema: TableSchema, row: dict[str, Any] | None) -> dict[str, Any] | None:
    """The row's values as OMS writes them, in column order."""
    return None if row is None else {c.name: vendor_value(c.logical_type, row.get(c.name)) for c in schema.columns}


def _texts(image: dict[str, Any] | None) -> dict[str, str | None] | None:
    """The texts a decoder keeps of an image as sent."""
    return None if image is None else {name: sent_text(value) for name, value in image.items()}


def wall_clock(value: dt.datetime) -> str:
    return value.astimezone(ZoneInfo(SOURCE_TIME_ZONE)).strftime(_WALL_CLOCK)


class OmsSharePlexEncoder(Encoder):
    dialect = "oms_shareplex_json"
    extra_malformed_kinds = ("wrong_shape",)

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        scn = StoreSequence()
        for tx in workload.transactions:
            records = [record for change in tx.changes for record in _records(change)]
            for index, record in enumerate(records, start=1):
                position = None if tx.is_snapshot else scn.next(tx.commit_ts)
                posted = tx.commit_ts + dt.timedelta(milliseconds=rng.randrange(_MAX_POST_DELAY_MS))
                yield self._message(record, tx, index, len(records), position, posted)

    def _message(
        self, record: _Record, tx: Transaction, index: int, size: int, position: int | None, posted: dt.datetime
    ) -> EncodedMessage:
        schema = record.schema
        table = f"{schema.database}.{schema.table}"
        sent_before, sent_after = _image(schema, record.before), _image(schema, record.after)
        identity = sent_after if record.op != "del" else sent_before
        assert identity is not None
        key_texts = [sent_text(identity[k]) for k in schema.primary_key]
        rowid = f"{table}-{KEY_SEPARATOR.join(key_texts)}"
        meta: dict[str, Any] = {
            "posttime": wall_clock(posted),
            "op": record.op,
            "size": size,
            "time": wall_clock(tx.commit_ts),
            "idx": f"{index}/{size}",
        }
        if position is not None:
            meta["seq"] = index
        meta["table"] = table
        meta["rowid"] = rowid
        if position is not None:
            meta["trans"] = tx.tx_id
            meta["scn"] = str(position)
        before, after = _texts(sent_before), _texts(sent_after)
        if record.op == "upd":
            # `data` holds only the changed columns, `key` the whole before image.
            assert before is not None and after is not None and sent_after is not None
            after = {column: text for column, text in after.items() if text != before[column]}
            doc = {"data": {c: v for c, v in sent_after.items() if c in after}, "meta": meta, "key": sent_before}
        else:
            doc = {"data": sent_after if record.op == "ins" else sent_before, "meta": meta}
        expected = {
            "row_index": 0,
            "event_kind": "ROW",
            "op": _STAGED_OPS[record.op],
            "tenant_name": None,
            "database_name": schema.database,
            "table_name": schema.table,
            "primary_key_columns": [],
            "primary_key_source": "none",
            "primary_key": key_json(key_texts) if key_texts else None,
            "before": before,
            "after": after,
            "before_is_partial": False,
            "after_is_partial": record.op == "upd",
            "event_ts": truncate_to_second(tx.commit_ts),
            "emitted_ts": truncate_to_second(posted),
            "source_position": meta.get("scn"),
            "transaction_id": meta.get("trans"),
        }
        routing = f"{table}|{KEY_SEPARATOR.join(key_texts)}"
        return EncodedMessage(dumps(doc).encode("utf-8"), None, routing, tx.commit_ts, (expected,))

    # -------------------------------------------------------- malformed messages
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        if kind in ("invalid_utf8", "invalid_json"):
            return broken_bytes(message.value, kind, rng)
        doc = loads_exact(message.value)
        if kind == "missing_field":
            choice = rng.choice(("meta", "data", "op", "table", "rowid") + (("key",) if "key" in doc else ()))
            if choice in ("meta", "data", "key"):
                del doc[choice]
            else:
                del doc["meta"][choice]
        elif kind == "unknown_op":
            doc["meta"]["op"] = rng.choice(("ups", "merge", "replace"))
        elif kind == "wrong_value_type":
            image = doc["data"] if doc["data"] else doc["key"]
            column = rng.choice(list(image))
            image[column] = {"value": image[column]}  # OMS values are scalars
        elif kind == "wrong_shape":
            choice = rng.choice(("array", "data", "meta"))
            if choice == "array":
                return dumps([doc]).encode("utf-8")
            if choice == "data":
                doc["data"] = dumps(doc["data"])
            else:
                doc["meta"] = list(doc["meta"].values())
        else:
            raise ValueError(f"{self.dialect} cannot make a {kind!r} message")
        return dumps(doc).encode("utf-8")


ENCODER = OmsSharePlexEncoder()
