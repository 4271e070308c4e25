"""Oracle GoldenGate for Big Data, JSON formatter (operation modeled), through the Kafka handler.

One message per operation: `table`, `op_type` (I / U / D / T), `op_ts` (the commit time, zone-less
`YYYY-MM-DD HH:MM:SS.ffffff`), `current_ts` (when the formatter ran, `YYYY-MM-DDTHH:MM:SS.ffffff`),
`pos` (the trail position: trail sequence number and RBA, zero-padded to 20 digits),
`primary_keys` and `before` / `after` images.  The messages carry no column types: the staged text
of every column is the value as sent.

The simulated source is MySQL, captured by GoldenGate's MySQL Extract; choices where Oracle's
documentation is silent or leaves it to configuration (docs/dialects/ogg_json.md):
- `table` is `{database}.{table}` (a MySQL schema is its database), names as in the source;
- the handler is configured with `includePrimaryKeys` (a keyless table sends `[]`), no tokens, no
  `_isMissing` flags, and the default one-letter op keys;
- `op_ts` and `current_ts` are wall clock in SOURCE_TIME_ZONE, the default of the dbt var
  `source_time_zone` the staging model reads them with; MySQL binlog times are whole seconds, so
  `op_ts` always ends in `.000000`;
- updates are compressed: `after` holds the key columns and the changed ones, `before` the whole
  row; a keyless table logs every column, so its `after` is whole;
- a primary-key update is one `U` operation whose `before` has the old key and `after` the new;
- full-load rows are `I` operations of the initial-load trail, before the change stream;
- DDL is not sent (the formatter applies it to its metadata only); TRUNCATE is a `T` operation
  without images;
- numeric values (integers, decimals at their scale, float/double, boolean 1/0) are JSON numbers,
  everything else a JSON string in MySQL's text form (ckafka_value_text: bytes as base64, TIMESTAMP
  as the source wall clock);
- a trail file holds TRAIL_FILE_BYTES bytes; each operation advances the RBA by its JSON length.
The Kafka key is the primary key values joined by `|` (standing in for the handler's
`${primaryKeys}` key template, whose exact rendering the documentation does not fix), null for a
truncate; messages are partitioned by table and that key.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

from cdc_unify.canonical import base_type
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder
from cdc_unify.generator.encoders.canal_json import canal_value_text
from cdc_unify.generator.encoders.ckafka_json import ckafka_value_text
from cdc_unify.generator.encoders.oms_default_json import (
    RawNumber,
    broken_bytes,
    dumps,
    key_json,
    loads_exact,
    sent_text,
)
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload

# Must equal the default of the dbt var `source_time_zone` (dbt_project.yml); a test checks it.
SOURCE_TIME_ZONE = "Asia/Shanghai"
TRAIL_FILE_BYTES = 500_000
OP_TYPES = {"INSERT": "I", "SNAPSHOT": "I", "UPDATE": "U", "DELETE": "D", "TRUNCATE": "T"}
STAGED_OPS = {"I": "INSERT", "U": "UPDATE", "D": "DELETE", "T": "TRUNCATE"}
_NUMERIC = frozenset({"boolean", "tinyint", "smallint", "int", "bigint", "ubigint", "decimal", "float", "double"})
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_MAX_FORMAT_DELAY_MS = 2_000


def ogg_value(column: Column, value: Any) -> RawNumber | str | None:
    """A true value as the JSON formatter writes it: a JSON number for numeric columns."""
    if value is not None and base_type(column.logical_type) in _NUMERIC:
        text = canal_value_text(column, value)
        assert text is not None
        # NaN / Infinity are no JSON numbers: the formatter can only send them as text.
        return RawNumber(text) if _JSON_NUMBER.fullmatch(text) else text
    return ckafka_value_text(column, value)


def wall_clock(value: dt.datetime, separator: str = " ") -> str:
    """`YYYY-MM-DD HH:MM:SS.ffffff` in SOURCE_TIME_ZONE."""
    return value.astimezone(ZoneInfo(SOURCE_TIME_ZONE)).strftime(f"%Y-%m-%d{separator}%H:%M:%S.%f")


class TrailPosition:
    """`pos`: the trail file's sequence number and the operation's RBA, each zero-padded to 10 digits."""

    def __init__(self) -> None:
        self._seqno = 0
        self._rba = 0

    def next(self, size: int) -> str:
        if self._rba + size > TRAIL_FILE_BYTES:
            self._seqno, self._rba = self._seqno + 1, 0
        position = f"{self._seqno:010d}{self._rba:010d}"
        self._rba += size
        return position


def _image(schema: TableSchema, row: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if row is None else {c.name: ogg_value(c, row.get(c.name)) for c in schema.columns}


def _compressed_after(schema: TableSchema, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The after image of a compressed update: key columns and changed columns (all of a keyless table)."""
    if not schema.primary_key:
        return after
    return {c: v for c, v in after.items() if c in schema.primary_key or sent_text(v) != sent_text(before[c])}


def _texts(image: dict[str, Any] | None) -> dict[str, str | None] | None:
    return None if image is None else {name: sent_text(value) for name, value in image.items()}


class OggJsonEncoder(Encoder):
    dialect = "ogg_json"
    extra_malformed_kinds = ("wrong_shape",)

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        trail = TrailPosition()
        for tx in workload.transactions:
            for change in tx.changes:
                if change.op in OP_TYPES:
                    formatted = tx.commit_ts + dt.timedelta(microseconds=rng.randrange(_MAX_FORMAT_DELAY_MS * 1000))
                    yield self._message(change, tx, trail, formatted)

    def _message(
        self, change: SourceChange, tx: Transaction, trail: TrailPosition, formatted: dt.datetime
    ) -> EncodedMessage:
        schema = change.schema
        op_type = OP_TYPES[change.op]
        before = _image(schema, change.before) if op_type in ("U", "D") else None
        after = _image(schema, change.after) if op_type in ("I", "U") else None
        if op_type == "U":
            assert before is not None and after is not None
            after = _compressed_after(schema, before, after)
        op_ts = tx.commit_ts.replace(microsecond=0)
        doc: dict[str, Any] = {
            "table": f"{schema.database}.{schema.table}",
            "op_type": op_type,
            "op_ts": wall_clock(op_ts),
            "current_ts": wall_clock(formatted, "T"),
            "pos": "",
            "primary_keys": list(schema.primary_key),
        }
        if before is not None:
            doc["before"] = before
        if after is not None:
            doc["after"] = after
        doc["pos"] = trail.next(len(dumps(doc)))
        before_texts, after_texts = _texts(before), _texts(after)
        key_texts = [(after_texts or {}).get(k, (before_texts or {}).get(k)) for k in schema.primary_key]
        expected = {
            "row_index": 0,
            "event_kind": "DDL" if op_type == "T" else "ROW",
            "op": STAGED_OPS[op_type],
            "source_db_type": None,
            "database_name": schema.database,
            "schema_name": None,
            "table_name": schema.table,
            "primary_key_columns": list(schema.primary_key),
            "primary_key_source": "message" if schema.primary_key else "none",
            "primary_key": key_json(key_texts) if key_texts and op_type != "T" else None,
            "before": before_texts,
            "after": after_texts,
            "before_is_partial": None if before is None else False,
            "after_is_partial": None if after is None else op_type == "U",
            "event_ts": op_ts,
            "event_ts_precision": "us",
            "emitted_ts": formatted,
            "source_position": doc["pos"],
            "transaction_id": None,
        }
        if op_type == "T":
            expected["ddl_statement"] = None
        kafka_key = "|".join(t or "" for t in key_texts) if op_type != "T" else None
        return EncodedMessage(
            dumps(doc).encode("utf-8"),
            None if kafka_key is None else kafka_key.encode("utf-8"),
            f"{doc['table']}|{kafka_key or ''}",
            tx.commit_ts,
            (expected,),
            is_row_message=op_type != "T",
        )

    # -------------------------------------------------------- malformed messages
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        if kind in ("invalid_utf8", "invalid_json"):
            return broken_bytes(message.value, kind, rng)
        doc = loads_exact(message.value)
        image_name = "after" if "after" in doc else "before"
        if kind == "missing_field":
            del doc[rng.choice(("op_type", "table", image_name))]
        elif kind == "unknown_op":
            doc["op_type"] = rng.choice(("X", "PK", "upsert"))
        elif kind == "wrong_value_type":
            image = doc[image_name]
            column = rng.choice(list(image))
            image[column] = {"value": image[column]}  # the formatter writes scalars only
        elif kind == "wrong_shape":
            choice = rng.choice(("array", "image", "primary_keys"))
            if choice == "array":
                return dumps([doc]).encode("utf-8")
            if choice == "image":
                doc[image_name] = dumps(doc[image_name])
            else:
                doc["primary_keys"] = ",".join(doc["primary_keys"])
        else:
            raise ValueError(f"{self.dialect} cannot make a {kind!r} message")
        return dumps(doc).encode("utf-8")


ENCODER = OggJsonEncoder()
