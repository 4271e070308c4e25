"""Delivery faults: an encoder's messages as a Kafka topic would really hand them over.

`FaultInjector.run(messages)` takes an encoder's messages in source order and delivers
them, deterministically from the seed:
- partition = zlib.crc32(routing_key) % partitions; offsets count per partition and go on
  across batches; broker timestamps (milliseconds, non-decreasing per partition) lag the
  source time by a per-partition delay, so timestamps and landing order across partitions
  disagree with source order; the landing order interleaves partitions in random chunks;
- two batches: batch 2 holds the newest `tail_share` of the source time span plus a
  `late_share` of older row messages held back (some are older than batch-1 events of the
  same row, so a later run must repair history);
- extra messages, each listed in the side list (`faults`): redelivered duplicates (a real
  message again at a later offset, sometimes in the next batch, and the last message of
  every partition again when batch 2 starts, as after a producer restart), tombstones
  (value None, keyed) after deletes, and malformed messages (the encoder's own malformation
  of a row message, of every kind, placed right after it).  Nothing is replaced: every
  real message arrives, so the truth stays intact.  Only real messages are duplicated, and
  only those a copy of which is recognisably the same message (`Encoder.redeliverable`).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import heapq
import random
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE, EncodedMessage, Encoder
from cdc_unify.generator.truth import key_text

LATE_WINDOW = 512  # messages looked ahead to find held-back candidates with later same-row events
MIN_REPAIRING = 3  # held-back messages older than a batch-1 event of their row, if the stream allows
_MS = 1000


@dataclass(frozen=True)
class FaultOptions:
    partitions: int = 3
    duplicate_share: float = 0.02  # real messages redelivered later
    malformed_share: float = 0.01  # malformed messages added per row message
    late_share: float = 0.03  # older row messages held back into batch 2
    tombstone_share: float = 0.5  # deletes followed by a tombstone
    tail_share: float = 0.15  # newest share of the source time span delivered in batch 2

    def __post_init__(self) -> None:
        if self.partitions < 1:
            raise ValueError("partitions must be at least 1")
        for name in ("duplicate_share", "malformed_share", "late_share", "tombstone_share", "tail_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")


# A delivered record: (partition, offset, broker timestamp in epoch microseconds, key, value).
Record = tuple[int, int, int, bytes | None, bytes | None]


@dataclass
class BatchCounts:
    messages: int = 0
    source_messages: int = 0
    row_messages: int = 0
    non_row_messages: int = 0
    late_messages: int = 0
    duplicates: int = 0
    tombstones: int = 0
    malformed: int = 0
    expected_rows: int = 0


@dataclass
class Delivery:
    batches: dict[int, list[Record]]  # batch -> records in landing order
    counts: dict[int, BatchCounts]
    malformed_by_kind: Counter = field(default_factory=Counter)
    malformed_by_error_code: Counter = field(default_factory=Counter)
    late_older_than_batch1_same_row: int = 0
    identical_source_values: int = 0
    messages_without_expected: int = 0


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MICROSECOND = dt.timedelta(microseconds=1)


def _micros(value: dt.datetime) -> int:
    return (value - _EPOCH) // _MICROSECOND


def _timestamp(us: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=us)


@functools.lru_cache(maxsize=4096)  # the rows and messages of a transaction share their times
def iso_instant(value: dt.datetime) -> str:
    """canonical.fmt_instant of a microsecond datetime, at C speed (millions of lines are written)."""
    utc = value.astimezone(dt.timezone.utc)
    text = utc.isoformat(timespec="microseconds")[:26]  # YYYY-MM-DDTHH:MM:SS.ffffff
    return (text.rstrip("0") if utc.microsecond else text[:19]) + "Z"


@functools.lru_cache(maxsize=64)  # landing times advance slowly: most share their second
def _second_text(seconds: int) -> str:
    return _timestamp(seconds * 1_000_000).isoformat()[:19]


def landing_text(us: int) -> str:
    """iso_instant(_timestamp(us)), without building a datetime for each of millions of records."""
    seconds, fraction = divmod(us, 1_000_000)
    return _second_text(seconds) + (f".{fraction:06d}".rstrip("0") if fraction else "") + "Z"


def _row_keys(message: EncodedMessage) -> tuple[tuple[str, str, str], ...]:
    """(database, table, primary key) of every keyed row the message changes, old key included."""
    keys = []
    for row in message.expected:
        if row.get("event_kind") != "ROW":
            continue
        table = (row.get("database_name"), row.get("table_name"))
        if row.get("primary_key") is not None:
            keys.append((*table, row["primary_key"]))
        columns, before = row.get("primary_key_columns"), row.get("before")
        if columns and before and all(c in before for c in columns):  # the old key of a key change
            keys.append((*table, key_text(before[c] for c in columns)))
    return tuple(dict.fromkeys(keys))


def _is_delete(message: EncodedMessage) -> bool:
    return any(r.get("event_kind") == "ROW" and r.get("op") == "DELETE" for r in message.expected)


def _may_be_late(message: EncodedMessage) -> bool:
    rows = message.expected
    return (
        message.is_row_message
        and bool(rows)
        and all(r.get("event_kind") == "ROW" and r.get("op") != "TRUNCATE" for r in rows)
    )


@dataclass
class _Pending:
    """A message waiting in the look-ahead window."""

    message: EncodedMessage
    row_keys: tuple[tuple[str, str, str], ...]


class FaultInjector:
    def __init__(
        self,
        encoder: Encoder,
        options: FaultOptions,
        seed: int,
        topic: str,
        tail_from: dt.datetime,
        on_expected: Callable[[dict[str, Any]], None],
        on_fault: Callable[[dict[str, Any]], None],
    ) -> None:
        self.encoder = encoder
        self.opt = options
        self.topic = topic
        self.tail_from = tail_from
        self.on_expected = on_expected
        self.on_fault = on_fault
        self.rng = random.Random(f"faults:{seed}:{encoder.dialect}")
        self.malform_rng = random.Random(f"malform:{seed}:{encoder.dialect}")
        self.kinds = tuple(dict.fromkeys(COMMON_MALFORMED_KINDS + tuple(encoder.extra_malformed_kinds)))
        n = options.partitions
        self.lag_us = [self.rng.randrange(5_000, 3_000_000) for _ in range(n)]
        self.next_offset = [0] * n
        self.last_ts = [0] * n
        self.last_real: list[tuple[EncodedMessage, dict[str, int]] | None] = [None] * n
        self.parts: dict[int, list[list[tuple[int, int, bytes | None, bytes | None]]]] = {
            1: [[] for _ in range(n)],
            2: [[] for _ in range(n)],
        }
        self.pending_dups: list[list[tuple[int, int, EncodedMessage, dict[str, int]]]] = [[] for _ in range(n)]
        self.dup_seq = 0
        self.counts = {1: BatchCounts(), 2: BatchCounts()}
        self.result = Delivery({}, self.counts)
        self.real_digests: set[bytes] = set()
        self.malformed_digests: set[bytes] = set()
        self.row_message_index = 0
        self.tombstoned_any = False
        self.forced_late = 0
        # row key -> held-back messages (by number) still waiting for a later batch-1 event of that row
        self.awaiting_repair: dict[tuple[str, str, str], list[int]] = {}
        self.repaired: set[int] = set()

    # ------------------------------------------------------------ main loop
    def run(self, messages: Iterable[EncodedMessage]) -> Delivery:
        window: deque[_Pending] = deque()
        in_window: Counter = Counter()
        batch2: list[tuple[EncodedMessage, bool]] = []
        for message in messages:
            pending = _Pending(message, _row_keys(message))
            window.append(pending)
            in_window.update(pending.row_keys)
            if len(window) > LATE_WINDOW:
                self._leave_window(window.popleft(), in_window, batch2)
        while window:
            self._leave_window(window.popleft(), in_window, batch2)
        self._start_batch2()
        for message, late in batch2:
            self._deliver_source(2, message, late)
        for p in range(self.opt.partitions):
            while self.pending_dups[p]:
                _, _, message, origin = heapq.heappop(self.pending_dups[p])
                self._deliver_duplicate(2, p, message, origin)
        collisions = self.real_digests & self.malformed_digests
        if collisions:
            raise ValueError(f"{self.encoder.dialect}: {len(collisions)} malformed value(s) equal a real message")
        self.result.late_older_than_batch1_same_row = len(self.repaired)
        self.result.batches = {b: self._interleave(self.parts[b]) for b in (1, 2)}
        return self.result

    def _leave_window(self, pending: _Pending, in_window: Counter, batch2: list) -> None:
        message = pending.message
        for key in pending.row_keys:  # deleting spent keys keeps the counter as small as the window
            if in_window[key] > 1:
                in_window[key] -= 1
            else:
                del in_window[key]
        if message.event_ts >= self.tail_from:
            batch2.append((message, False))
            return
        if _may_be_late(message) and self.opt.late_share > 0:
            # A few held-back messages are chosen among those with a later event of the same
            # row coming up, so that even a small stream makes the later run repair history.
            repairable = any(in_window[k] > 0 for k in pending.row_keys)
            forced = repairable and self.forced_late < MIN_REPAIRING and self.rng.random() < 0.2
            if forced or self.rng.random() < self.opt.late_share:
                self.forced_late += forced
                self.counts[2].late_messages += 1
                for key in pending.row_keys:
                    self.awaiting_repair.setdefault(key, []).append(self.counts[2].late_messages)
                batch2.append((message, True))
                return
        self._deliver_source(1, message, False)
        for key in pending.row_keys:
            self.repaired.update(self.awaiting_repair.pop(key, ()))

    # ------------------------------------------------------------ delivery
    def _partition(self, message: EncodedMessage) -> int:
        return zlib.crc32(message.routing_key.encode("utf-8")) % self.opt.partitions

    def _append(self, batch: int, p: int, key: bytes | None, value: bytes | None, ts_us: int) -> dict[str, int]:
        self._release_due(batch, p)
        ts_us = max(self.last_ts[p], ts_us - ts_us % _MS)
        self.last_ts[p] = ts_us
        offset = self.next_offset[p]
        self.next_offset[p] += 1
        self.parts[batch][p].append((offset, ts_us, key, value))
        self.counts[batch].messages += 1
        return {"batch": batch, "partition": p, "offset": offset, "timestamp_us": ts_us}

    def _release_due(self, batch: int, p: int) -> None:
        heap = self.pending_dups[p]
        while heap and heap[0][0] <= self.next_offset[p]:
            _, _, message, origin = heapq.heappop(heap)
            self._deliver_duplicate(batch, p, message, origin)

    def _deliver_source(self, batch: int, message: EncodedMessage, late: bool) -> None:
        p = self._partition(message)
        if late:
            ts = self.last_ts[p] + self.rng.randrange(0, 20_000)
        else:
            ts = _micros(message.event_ts) + self.lag_us[p] + self.rng.randrange(0, 50_000)
        coords = self._append(batch, p, message.key, message.value, ts)
        counts = self.counts[batch]
        counts.source_messages += 1
        if message.is_row_message:
            counts.row_messages += 1
        else:
            counts.non_row_messages += 1
        self._emit_expected(message, coords, late)
        redeliverable = self.encoder.redeliverable(message)
        if redeliverable:
            self.last_real[p] = (message, coords)
        if message.value is not None:
            digest = hashlib.blake2b(message.value, digest_size=16).digest()
            if digest in self.real_digests:
                self.result.identical_source_values += 1
            self.real_digests.add(digest)
        # Drawn for every message, so the random stream does not depend on which ones can be redelivered.
        if self.opt.duplicate_share and self.rng.random() < self.opt.duplicate_share and redeliverable:
            self.dup_seq += 1
            due = self.next_offset[p] + self.rng.randint(1, 40)
            heapq.heappush(self.pending_dups[p], (due, self.dup_seq, message, coords))
        if (
            _is_delete(message)
            and self.opt.tombstone_share
            and (not self.tombstoned_any or self.rng.random() < self.opt.tombstone_share)
        ):
            self._deliver_tombstone(batch, p, message, coords)
        if message.is_row_message and message.value is not None:
            self._maybe_malform(batch, p, message, coords)

    def _emit_expected(self, message: EncodedMessage, coords: dict[str, int], late: bool) -> None:
        if not message.expected:
            self.result.messages_without_expected += 1
        landing = {**self._landing(coords), "late": late}
        for row in message.expected:
            # An encoder's own tombstone (Debezium's) says so; every other expected row is decoded.
            line = {"message_status": "decoded", **row, **landing}
            if isinstance(line.get("event_ts"), dt.datetime):
                line["event_ts"] = iso_instant(line["event_ts"])
            self.on_expected(line)
        self.counts[coords["batch"]].expected_rows += len(message.expected)

    def _landing(self, coords: dict[str, int]) -> dict[str, Any]:
        return {
            "batch": coords["batch"],
            "landing_topic": self.topic,
            "landing_partition": coords["partition"],
            "landing_offset": coords["offset"],
            "landing_timestamp": landing_text(coords["timestamp_us"]),
        }

    def _fault(self, fault: str, coords: dict[str, int], origin: dict[str, int], **extra: Any) -> None:
        self.on_fault(
            {
                **self._landing(coords),
                "fault": fault,
                **extra,
                "of": {
                    "batch": origin["batch"],
                    "landing_partition": origin["partition"],
                    "landing_offset": origin["offset"],
                },
            }
        )

    def _deliver_duplicate(self, batch: int, p: int, message: EncodedMessage, origin: dict[str, int]) -> None:
        coords = self._append(batch, p, message.key, message.value, self.last_ts[p] + self.rng.randrange(0, 5_000))
        self.counts[batch].duplicates += 1
        self._fault("duplicate", coords, origin)

    def _deliver_tombstone(self, batch: int, p: int, message: EncodedMessage, origin: dict[str, int]) -> None:
        key = message.key if message.key is not None else message.routing_key.encode("utf-8")
        coords = self._append(batch, p, key, None, self.last_ts[p] + self.rng.randrange(0, 2_000))
        self.counts[batch].tombstones += 1
        self.tombstoned_any = True
        self._fault("tombstone", coords, origin)

    def _maybe_malform(self, batch: int, p: int, message: EncodedMessage, origin: dict[str, int]) -> None:
        if not self.opt.malformed_share:
            return
        self.row_message_index += 1
        made = sum(self.result.malformed_by_kind.values())
        # Every kind at least once, early, even in a tiny stream; then at the configured share.
        forced = made < len(self.kinds) and self.row_message_index % 5 == 0
        if not forced and self.rng.random() >= self.opt.malformed_share:
            return
        kind = self.kinds[made % len(self.kinds)]
        value = self.encoder.malform(message, kind, self.malform_rng)
        digest = hashlib.blake2b(value, digest_size=16).digest()
        if digest in self.malformed_digests:  # identical to an earlier malformed message: counts would blur
            return
        self.malformed_digests.add(digest)
        coords = self._append(batch, p, message.key, value, self.last_ts[p] + self.rng.randrange(0, 2_000))
        code = MALFORMED_ERROR_CODE[kind]
        self.counts[batch].malformed += 1
        self.result.malformed_by_kind[kind] += 1
        self.result.malformed_by_error_code[code] += 1
        self._fault("malformed", coords, origin, kind=kind, error_code=code)

    def _start_batch2(self) -> None:
        """Batch 2 is a later run: its broker times follow batch 1, and the producer, restarted,
        sends the last (redeliverable) message of every partition again."""
        start = max(self.last_ts) + 60_000_000
        for p in range(self.opt.partitions):
            self.last_ts[p] = start
            if self.opt.duplicate_share and self.last_real[p] is not None:
                message, origin = self.last_real[p]
                self._deliver_duplicate(2, p, message, origin)

    def _interleave(self, parts: list[list[tuple[int, int, bytes | None, bytes | None]]]) -> list[Record]:
        """Landing order: partitions interleaved in random chunks, as consumers of several
        partitions would write them."""
        rng = self.rng
        cursors = [0] * len(parts)
        active = [p for p, recs in enumerate(parts) if recs]
        out: list[Record] = []
        while active:
            p = active[rng.randrange(len(active))]
            start = cursors[p]
            end = min(len(parts[p]), start + rng.randint(1, 64))
            out.extend((p, *rec) for rec in parts[p][start:end])
            cursors[p] = end
            if end == len(parts[p]):
                active.remove(p)
        return out
