"""The interface between the workload simulator and the dialect encoders.

The simulator (cdc_unify.generator.workload) produces a `Workload`; an encoder turns it
into `EncodedMessage`s in source order; the fault injector (cdc_unify.generator.faults)
then assigns partitions and offsets, redelivers, reorders, adds tombstones, splits off a
late batch and swaps some messages for malformed ones, asking the encoder for the
dialect-specific malformations.  Encoders never decide delivery.

`expected` is the oracle at the event level: the staged rows (docs/staged-contract.md)
that decoding this message must produce, computed from the workload's true values with
`cdc_unify.canonical.to_canonical`, never by re-reading the encoded bytes.  Each dict
holds a subset of staged columns: always `row_index`, `event_kind`, `op`; for row
events `database_name`, `table_name`, `primary_key_columns`, `primary_key`, `before`,
`after` (dict of canonical text or None), `before_is_partial`, `after_is_partial`,
`event_ts` (aware UTC datetime truncated to the precision the dialect sends);
`ddl_statement` for DDL events.
"""

from __future__ import annotations

import datetime as dt
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from cdc_unify.generator.model import TableSchema, Transaction, Workload

T = TypeVar("T")

# Malformation kinds every dialect supports (the injector may ask for any of them).
COMMON_MALFORMED_KINDS = ("invalid_json", "invalid_utf8", "missing_field", "unknown_op", "wrong_value_type")
# The quarantine error code (cdc_unify.contract.ERROR_CODES) each kind must produce.
MALFORMED_ERROR_CODE = {
    "invalid_json": "invalid_json",
    "invalid_utf8": "invalid_utf8",
    "missing_field": "missing_field",
    "unknown_op": "unknown_op",
    "wrong_value_type": "invalid_value",
    "wrong_shape": "wrong_shape",
    "truncated_avro": "invalid_avro",
}


@dataclass(frozen=True)
class EncodedMessage:
    value: bytes | None  # None only for tombstones (the injector's, or the dialect's own)
    key: bytes | None  # Kafka key as the tool would set it (Debezium: the key JSON), or None
    routing_key: str  # what the tool partitions by (e.g. "db.table" or "db.table|pk"); the injector hashes it
    event_ts: dt.datetime  # source commit time of the (first) change in the message
    expected: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    is_row_message: bool = True  # False for heartbeats, transaction markers, DDL


class PerSchema(Generic[T]):
    """`build(schema, *args)`, computed once per table schema object and arguments.

    The workload shares one schema object among all changes of a table until its next DDL,
    and whatever an encoder derives from the schema alone (column mappings, a schema's JSON
    text) is the same for each of them.  The cache holds the schema, so its id stays unique.
    """

    def __init__(self, build: Callable[..., T]) -> None:
        self._build = build
        self._cache: dict[tuple[Any, ...], tuple[TableSchema, T]] = {}

    def __call__(self, schema: TableSchema, *args: Hashable) -> T:
        key = (id(schema), *args)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = (schema, self._build(schema, *args))
        return hit[1]


class EventStream(Protocol):
    """An encoder's writer of one workload: each transaction's messages, a heartbeat at a time."""

    def heartbeat(self, when: dt.datetime) -> EncodedMessage: ...

    def transaction(self, tx: Transaction) -> Iterator[EncodedMessage]: ...


def stream_in_source_order(stream: EventStream, workload: Workload) -> Iterator[EncodedMessage]:
    """The workload's transactions through `stream`, each heartbeat before the first transaction
    committed after it."""
    heartbeats = sorted(workload.heartbeat_times)
    for tx in workload.transactions:
        while heartbeats and heartbeats[0] <= tx.commit_ts:
            yield stream.heartbeat(heartbeats.pop(0))
        yield from stream.transaction(tx)
    for beat in heartbeats:
        yield stream.heartbeat(beat)


class Encoder(ABC):
    dialect: str
    # What the dialect's spec allows a malformed message to look like, beyond the common kinds.
    extra_malformed_kinds: tuple[str, ...] = ()

    @abstractmethod
    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        """Every transaction, snapshot row, DDL and heartbeat of the workload, in source
        order, exactly as the dialect's spec shapes them (batched/multi-row messages,
        split updates, partial images, transaction markers where the spec has them)."""

    def redeliverable(self, message: EncodedMessage) -> bool:
        """Whether a copy of `message` at another offset is recognisably the same message.  Not
        so for a message without content of its own (a tombstone), whose staged identity is its
        landing offset: a copy of it is simply another such message."""
        return message.value is not None

    @abstractmethod
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        """A malformed replacement value of the given kind for a row message.  The
        decoder must quarantine it with MALFORMED_ERROR_CODE[kind]."""
