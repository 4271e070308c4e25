"""`generate(...)`: workload -> truth -> every dialect's messages with faults -> files.

Layout under `out_dir`:
- `manifest.json`: seed, options, workload summary, per dialect the message counts per
  batch (source, row, non-row, late, duplicates, tombstones, malformed), malformed counts
  per kind and per expected error code;
- `truth/`: `tables.json` and per table `<db>.<table>.state.jsonl` / `.history.jsonl`
  (one set for the workload, shared by every dialect);
- `<dialect>/batch-1.parquet`, `batch-2.parquet`: landing records (topic, partition,
  offset, timestamp, key, value) in landing order;
- `<dialect>/expected-events.jsonl`: the staged rows every real message must decode to,
  with its landing coordinates; `<dialect>/faults.jsonl`: every injected extra message
  (duplicate, tombstone, malformed) with its coordinates and the message it derives from.

After the workload is built, the truth and each dialect are independent tasks: with
`jobs` > 1 they run in forked worker processes (which inherit the workload instead of
receiving a pickled copy), one fresh process per task so each one's memory goes back to
the system when it ends.  Every task seeds its own random streams, so the files do not
depend on `jobs` or on the order tasks finish in.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import importlib.util
import multiprocessing
import os
import random
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from cdc_unify.canonical import fmt_instant
from cdc_unify.contract import DIALECTS
from cdc_unify.generator import GENERATOR_VERSION
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder
from cdc_unify.generator.faults import FaultInjector, FaultOptions
from cdc_unify.generator.model import Workload
from cdc_unify.generator.truth import TRUTH_DIR, compute_truth, write_truth
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from cdc_unify.generator.writer import JsonLines, write_json, write_landing

Log = Callable[[str], None]
PROGRESS_FROM = 50_000  # report progress every 10% from this many events on


def available_dialects() -> tuple[str, ...]:
    """Dialects whose encoder module exists, in contract order."""
    found = []
    for dialect in DIALECTS:
        try:
            spec = importlib.util.find_spec(f"cdc_unify.generator.encoders.{dialect}")
        except ModuleNotFoundError:
            spec = None
        if spec is not None:
            found.append(dialect)
    return tuple(found)


def topic_for(dialect: str) -> str:
    return f"cdc.{dialect}"


def tail_start(workload: Workload, share: float) -> dt.datetime:
    """Source time from which messages belong to batch 2 (the newest `share` of the span)."""
    if share <= 0 or not workload.transactions:
        return dt.datetime.max.replace(tzinfo=dt.timezone.utc)
    first = workload.transactions[0].commit_ts
    last = workload.transactions[-1].commit_ts
    return last - (last - first) * share


class _Progress:
    """Every 10% of a known total: done/total and the rate since start."""

    def __init__(self, label: str, total: int, log: Log | None) -> None:
        self.label, self.total, self.log = label, max(total, 1), log
        self.started = time.monotonic()
        self.next_tenth = 1

    def update(self, done: int) -> None:
        if self.log is None:
            return
        while done * 10 >= self.next_tenth * self.total and self.next_tenth <= 10:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            self.log(f"{self.label}: {self.next_tenth * 10}% ({done:,}/{self.total:,}, {done / elapsed:,.0f}/s)")
            self.next_tenth += 1


def _tracked(messages: Iterable[EncodedMessage], workload: Workload, progress: _Progress) -> Iterator[EncodedMessage]:
    """Progress by source time: messages come in source order, so their event_ts tells how far we are."""
    first = workload.transactions[0].commit_ts.timestamp()
    span = max(workload.transactions[-1].commit_ts.timestamp() - first, 1)
    count = 0
    for message in messages:
        count += 1
        if count % 4096 == 0:
            progress.update(int((message.event_ts.timestamp() - first) * progress.total / span))
        yield message
    progress.update(progress.total)


def _workload_summary(workload: Workload, tail_from: dt.datetime) -> dict[str, Any]:
    changes: Counter = Counter()
    row_changes = 0
    for tx in workload.transactions:
        for change in tx.changes:
            changes[(f"{change.schema.database}.{change.schema.table}", change.op)] += 1
            row_changes += change.op not in ("DDL", "TRUNCATE")
    per_table: dict[str, dict[str, int]] = {}
    for (table, op), n in sorted(changes.items()):
        per_table.setdefault(table, {})[op] = n
    return {
        "row_changes": row_changes,
        "transactions": len(workload.transactions),
        "snapshot_transactions": sum(tx.is_snapshot for tx in workload.transactions),
        "multi_change_transactions": sum(len(tx.changes) > 1 for tx in workload.transactions),
        "heartbeats": len(workload.heartbeat_times),
        "first_commit": fmt_instant(workload.transactions[0].commit_ts),
        "last_commit": fmt_instant(workload.transactions[-1].commit_ts),
        "batch2_tail_from": fmt_instant(tail_from) if tail_from.year < 9999 else None,
        "changes": per_table,
    }


def _generate_dialect(
    encoder: Encoder,
    workload: Workload,
    seed: int,
    faults: FaultOptions,
    tail_from: dt.datetime,
    out_dir: Path,
    log: Log | None,
    events: int,
) -> dict[str, Any]:
    dialect = encoder.dialect
    topic = topic_for(dialect)
    target = out_dir / dialect
    progress = _Progress(f"[generate] {dialect}", events, log if events >= PROGRESS_FROM else None)
    started = time.monotonic()
    with JsonLines(target / "expected-events.jsonl") as expected, JsonLines(target / "faults.jsonl") as side:
        injector = FaultInjector(encoder, faults, seed, topic, tail_from, expected.write, side.write)
        messages = encoder.encode(workload, random.Random(f"encode:{seed}:{dialect}"))
        delivery = injector.run(_tracked(messages, workload, progress))
    files = {}
    for batch in sorted(delivery.batches):  # each batch's records freed once written
        name = f"batch-{batch}.parquet"
        files[name] = write_landing(target / name, topic, delivery.batches.pop(batch))
    batches = {str(b): dataclasses.asdict(c) for b, c in sorted(delivery.counts.items())}
    totals = {k: sum(c[k] for c in batches.values()) for k in next(iter(batches.values()))}
    if log:
        log(f"[generate] {dialect}: {totals['messages']:,} messages in {time.monotonic() - started:.1f}s")
    return {
        "topic": topic,
        "partitions": faults.partitions,
        "extra_malformed_kinds": list(encoder.extra_malformed_kinds),
        "files": files,
        "batches": batches,
        "totals": totals,
        "malformed_by_kind": dict(sorted(delivery.malformed_by_kind.items())),
        "malformed_by_error_code": dict(sorted(delivery.malformed_by_error_code.items())),
        "late_older_than_batch1_same_row": delivery.late_older_than_batch1_same_row,
        "identical_source_values": delivery.identical_source_values,
        "messages_without_expected": delivery.messages_without_expected,
    }


@dataclasses.dataclass(frozen=True)
class _Tasks:
    """Everything a task needs, built once before the tasks run (and inherited by forked workers)."""

    workload: Workload
    seed: int
    faults: FaultOptions
    tail_from: dt.datetime
    out_dir: Path
    log: Log | None
    events: int
    encoders: Mapping[str, Encoder]

    def run(self, name: str) -> dict[str, Any]:
        """Write the truth files (task TRUTH_DIR) or one dialect's files; returns its part of the manifest."""
        if name == TRUTH_DIR:
            started = time.monotonic()
            counts = write_truth(compute_truth(self.workload), self.out_dir / TRUTH_DIR)
            if self.log:
                self.log(f"[generate] truth written in {time.monotonic() - started:.1f}s")
            return counts
        encoder = self.encoders.get(name) or encoder_for(name)
        args = (self.workload, self.seed, self.faults, self.tail_from, self.out_dir, self.log, self.events)
        return _generate_dialect(encoder, *args)


@contextmanager
def _without_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: the generator makes no reference cycles, yet with
    millions of live objects the collector's passes over them cost a fifth of the run."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def default_jobs() -> int:
    """The CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _child(tasks: _Tasks, name: str, conn: Connection) -> None:
    """A forked worker: run one task and send (True, result) or (False, (exception, traceback))."""
    gc.disable()  # see _without_gc; this process ends with its task
    try:
        outcome: tuple[bool, Any] = (True, tasks.run(name))
    except BaseException as exc:  # every failure goes back to the parent, which raises it
        outcome = (False, (exc, traceback.format_exc()))
    try:
        conn.send(outcome)
    except Exception:  # an exception that does not pickle goes back as its text
        conn.send((False, (RuntimeError(repr(outcome[1][0])), outcome[1][1])))
    conn.close()


def _run_forked(tasks: _Tasks, names: Sequence[str], jobs: int) -> Iterator[tuple[str, Any]]:
    """(name, result) of every task as it finishes, each in a fresh forked process, at most `jobs`
    at a time.  A failed task stops the others and raises its exception; a worker that dies
    without an answer (e.g. killed for lack of memory) raises RuntimeError."""
    context = multiprocessing.get_context("fork")
    waiting = list(reversed(names))
    running: dict[Connection, tuple[str, multiprocessing.process.BaseProcess]] = {}
    # Frozen objects are skipped by the workers' garbage collector, which would otherwise touch
    # (and so copy) every page of the inherited workload.
    gc.freeze()
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                name = waiting.pop()
                reader, writer = context.Pipe(duplex=False)
                process = context.Process(target=_child, args=(tasks, name, writer), name=f"generate {name}")
                process.start()
                writer.close()
                running[reader] = (name, process)
            for reader in wait(list(running)):
                name, process = running.pop(reader)
                try:
                    ok, result = reader.recv()
                except EOFError:  # it ended without an answer
                    process.join()
                    raise RuntimeError(f"the worker generating {name} died (exit code {process.exitcode})") from None
                finally:
                    reader.close()
                process.join()
                if not ok:
                    exc, trace = result
                    exc.add_note(f"in the worker generating {name}:\n{trace}")
                    raise exc
                yield name, result
    finally:
        for _, process in running.values():
            process.terminate()
            process.join()
        gc.unfreeze()


def _run_all(tasks: _Tasks, names: Sequence[str], jobs: int) -> Iterator[tuple[str, Any]]:
    """(name, result) of every task, in the order they finish."""
    if jobs > 1 and len(names) > 1 and "fork" in multiprocessing.get_all_start_methods():
        return _run_forked(tasks, names, jobs)
    return _run_here(tasks, names)


def _run_here(tasks: _Tasks, names: Sequence[str]) -> Iterator[tuple[str, Any]]:
    for name in names:
        with _without_gc():
            result = tasks.run(name)
        yield name, result


def generate(
    events: int,
    seed: int,
    out_dir: Path | str,
    dialects: Sequence[str] | None = None,
    faults: FaultOptions | None = None,
    encoders: Mapping[str, Encoder] | None = None,
    log: Log | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """Write every output file for `dialects` (default: every dialect with an encoder) and
    return the manifest.  `encoders` overrides the encoder looked up for a dialect name;
    `jobs` > 1 writes the truth and the dialects in that many worker processes."""
    out_dir = Path(out_dir)
    faults = faults or FaultOptions()
    encoders = dict(encoders or {})
    names = list(dialects) if dialects is not None else [*available_dialects(), *sorted(encoders)]
    names = list(dict.fromkeys(names))
    if not names:
        raise ValueError("no dialect to generate: no encoder module exists yet")
    if TRUTH_DIR in names:
        raise ValueError(f"{TRUTH_DIR!r} is the folder of the truth files, not a dialect")
    out_dir.mkdir(parents=True, exist_ok=True)

    started = time.monotonic()
    workload_progress = _Progress("[generate] workload", events, log if events >= PROGRESS_FROM else None)
    with _without_gc():
        workload = build_workload(WorkloadOptions(events=events), seed, workload_progress.update)
    if log:
        log(f"[generate] workload: {len(workload.transactions):,} transactions in {time.monotonic() - started:.1f}s")
    tail_from = tail_start(workload, faults.tail_share)

    tasks = _Tasks(workload, seed, faults, tail_from, out_dir, log, events, encoders)
    all_names = [TRUTH_DIR, *names]
    results = {}
    for name, result in _run_all(tasks, all_names, jobs):
        results[name] = result
        if log and jobs > 1:
            log(f"[generate] {len(results)}/{len(all_names)} done ({name}), {time.monotonic() - started:.0f}s")

    manifest = {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "events": events,
        "dialects": names,
        "fault_options": dataclasses.asdict(faults),
        "workload": _workload_summary(workload, tail_from),
        "truth": results[TRUTH_DIR],
        "per_dialect": {name: results[name] for name in names},
    }
    write_json(out_dir / "manifest.json", manifest)
    return manifest
