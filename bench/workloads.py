"""Benchmark workloads: which dialects, how many messages, generated once and kept for reuse.

A workload spec is `DIALECTS:SIZE`: `mixed:1M` = about a million messages over all dialects
(the same simulated source workload encoded by each), `canal_json:1M` = about a million messages
of one dialect.  The generator counts row changes (events), not messages; a small probe run
measures messages per event so the requested message count is met closely.

Batch 2 of the generator (the newest share of the source time span plus some older late
messages) is the ~1% the incremental run appends after the full build of batch 1.  With a delta
of N messages (`--delta`), batch 1 holds about the requested size, batch 2 is generated about
1.5 N messages large with the same mix, and `cut_delta` cuts it to exactly N (see
`delta_keep`), so the same N lands the same kind of messages on any history size.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from cdc_unify.contract import DIALECTS
from cdc_unify.generator.faults import FaultOptions
from cdc_unify.generator.run import generate

MIXED = "mixed"
# Batch 2 is ~1% of the messages: 0.8% of the time span plus 0.2% late older messages.
BENCH_FAULTS = FaultOptions(tail_share=0.008, late_share=0.002)
PROBE_EVENTS = 2000
# With --delta N, batch 2 is generated this much larger than N, so that it still holds N messages
# where the source's messages are sparser than average in time, and then cut to N.
DELTA_MARGIN = 1.5
# A delta's batch 2 may hold at most this share of a workload: beyond it, batch 1 is no history.
MAX_DELTA_SHARE = 0.5
_SUFFIXES = {"": 1, "k": 1_000, "m": 1_000_000}


@dataclass(frozen=True)
class WorkloadSpec:
    dialects: tuple[str, ...]
    messages: int  # requested total over both batches; with a delta, of batch 1
    label: str  # as written on the command line, e.g. mixed:100k
    delta: int | None = None  # messages the incremental run lands (None: all of batch 2, ~1%)

    @property
    def name(self) -> str:
        return self.label.replace(":", "-").lower() + (f"-delta{self.delta}" if self.delta else "")

    @property
    def faults(self) -> FaultOptions:
        """Today's ~1% batch 2, or with a delta a batch 2 of DELTA_MARGIN x delta messages in the
        same 4:1 split of newest and late messages."""
        if self.delta is None:
            return BENCH_FAULTS
        share = DELTA_MARGIN * self.delta / self.generated_messages
        scale = share / (BENCH_FAULTS.tail_share + BENCH_FAULTS.late_share)
        return dataclasses.replace(
            BENCH_FAULTS, tail_share=BENCH_FAULTS.tail_share * scale, late_share=BENCH_FAULTS.late_share * scale
        )

    @property
    def generated_messages(self) -> int:
        """Messages over both batches: with a delta, batch 1's requested size plus batch 2."""
        return self.messages + round(DELTA_MARGIN * self.delta) if self.delta else self.messages


def parse_size(text: str) -> int:
    """`100k`, `1M`, `5m`, `2500` -> a positive number of messages."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", text.strip())
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a size like 100k, 1M or 2500")
    return int(float(match.group(1)) * _SUFFIXES[match.group(2).lower()])


def parse_spec(text: str) -> WorkloadSpec:
    """`mixed:100k` or `<dialect>:<size>`."""
    which, sep, size = text.partition(":")
    if not sep:
        raise ValueError(f"{text!r} is not DIALECT:SIZE (e.g. mixed:100k, canal_json:1M)")
    if which == MIXED:
        dialects = DIALECTS
    elif which in DIALECTS:
        dialects = (which,)
    else:
        raise ValueError(f"unknown dialect {which!r}; use {MIXED} or one of: {', '.join(DIALECTS)}")
    return WorkloadSpec(dialects, parse_size(size), text)


def with_delta(spec: WorkloadSpec, delta: int | None) -> WorkloadSpec:
    """`spec` whose incremental run lands `delta` messages; refused where they would not be a
    small part of the workload."""
    if delta is not None and DELTA_MARGIN * delta > MAX_DELTA_SHARE * spec.messages:
        limit = int(MAX_DELTA_SHARE * spec.messages / DELTA_MARGIN)
        raise ValueError(f"--delta {delta:,} is too large for {spec.label}: at most {limit:,}")
    return dataclasses.replace(spec, delta=delta)


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def messages_per_event(dialects: tuple[str, ...], seed: int, faults: FaultOptions) -> float:
    """Messages (all dialects, both batches, faults included) per simulated row change."""
    with tempfile.TemporaryDirectory(prefix="cdc-unify-bench-probe-") as probe:
        manifest = generate(PROBE_EVENTS, seed, probe, dialects, faults)
    return total_messages(manifest) / PROBE_EVENTS


def total_messages(manifest: dict[str, Any]) -> int:
    return sum(info["totals"]["messages"] for info in manifest["per_dialect"].values())


def batch_messages(manifest: dict[str, Any], batch: int) -> int:
    return sum(info["batches"].get(str(batch), {}).get("messages", 0) for info in manifest["per_dialect"].values())


def is_reusable(manifest_path: Path, spec: WorkloadSpec, seed: int) -> bool:
    """A complete earlier generation of the same spec (the generator writes the manifest last)."""
    if not manifest_path.is_file():
        return False
    manifest = json.loads(manifest_path.read_text())
    return (
        manifest.get("seed") == seed
        and tuple(manifest.get("dialects", ())) == spec.dialects
        and manifest.get("fault_options", {}).get("tail_share") == spec.faults.tail_share
        and manifest.get("fault_options", {}).get("late_share") == spec.faults.late_share
    )


def ensure_generated(spec: WorkloadSpec, seed: int, data_root: Path) -> tuple[Path, dict[str, Any], float | None]:
    """(data dir, manifest, generation seconds or None if reused) of a workload."""
    data_dir = data_root / f"{spec.name}-seed{seed}"
    manifest_path = data_dir / "manifest.json"
    if is_reusable(manifest_path, spec, seed):
        log(f"[generate] {spec.label}: reusing {data_dir}")
        return data_dir, json.loads(manifest_path.read_text()), None
    started = time.monotonic()
    ratio = messages_per_event(spec.dialects, seed, spec.faults)
    events = max(1, round(spec.generated_messages / ratio))
    log(f"[generate] {spec.label}: {events:,} row changes ({ratio:.2f} messages each over the dialects) -> {data_dir}")
    # The files do not depend on the number of jobs (test_jobs_do_not_change_the_files).
    manifest = generate(events, seed, data_dir, spec.dialects, spec.faults, log=log, jobs=os.cpu_count() or 1)
    return data_dir, manifest, time.monotonic() - started


def delta_file(delta: int) -> str:
    """A dialect's landing records of a delta, next to its batch-1.parquet and batch-2.parquet."""
    return f"delta-{delta}.parquet"


def run_file(file_name: str, run: int, runs: int) -> str:
    """A dialect's landing records of run `run` of `runs` successive runs landing `file_name`."""
    return f"{file_name.removesuffix('.parquet')}-run{run}of{runs}.parquet"


def split_runs(data_dir: Path, dialects: Sequence[str], file_name: str, runs: int) -> list[str]:
    """Each dialect's `file_name` (a delta or batch 2) cut into `runs` files of successive offsets
    per partition, as successive runs of a deployment receive them (run_file); their names."""
    for dialect in dialects:
        path = data_dir / dialect / file_name
        if not path.is_file():
            continue
        table = pq.read_table(path)
        partitions, offsets = table["partition"].to_pylist(), table["offset"].to_pylist()
        run_of: dict[tuple[int, int], int] = {}
        for partition in set(partitions):
            ordered = sorted(o for p, o in zip(partitions, offsets, strict=True) if p == partition)
            run_of |= {(partition, o): i * runs // len(ordered) for i, o in enumerate(ordered)}
        for run in range(runs):
            kept = [run_of[record] == run for record in zip(partitions, offsets, strict=True)]
            pq.write_table(
                table.filter(kept), data_dir / dialect / run_file(file_name, run + 1, runs), compression="zstd"
            )
    return [run_file(file_name, run + 1, runs) for run in range(runs)]


def split_exactly(total: int, sizes: Sequence[int]) -> list[int]:
    """`total` (at most sum(sizes)) split in proportion to `sizes`, largest remainders first."""
    whole = sum(sizes)
    if total > whole:
        raise ValueError(f"cannot take {total:,} of {whole:,}")
    shares = [divmod(total * size, whole) if whole else (0, 0) for size in sizes]
    parts = [whole_part for whole_part, _ in shares]
    by_remainder = sorted(range(len(sizes)), key=lambda i: (-shares[i][1], i))
    for i in by_remainder[: total - sum(parts)]:
        parts[i] += 1
    return parts


def delta_keep(records: Sequence[tuple[int, int]], newest_from: dict[int, int], quota: int) -> set[tuple[int, int]]:
    """The `quota` of one dialect's batch-2 records (partition, offset) a delta lands.

    Per partition, the generator delivers batch 2 as two runs of offsets: first the producer's
    restart redelivery and the late messages (older messages held back, in source order), then,
    from offset `newest_from[partition]` on, the newest messages in source order; each message's
    extras (redeliveries, tombstone, malformed copy) follow it within a few offsets.  Every run
    keeps its first part, the parts in proportion to the runs' lengths: a delta holds late and
    newest messages and extras in batch 2's proportions, the newest ones those that directly
    follow batch 1 in time."""
    runs: dict[tuple[int, bool], list[int]] = {}
    for partition, offset in sorted(records):
        newest = partition in newest_from and offset >= newest_from[partition]
        runs.setdefault((partition, newest), []).append(offset)
    keys = sorted(runs)
    quotas = split_exactly(quota, [len(runs[key]) for key in keys])
    return {(key[0], offset) for key, kept in zip(keys, quotas, strict=True) for offset in runs[key][:kept]}


def _batch2_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The batch-2 lines of a generator JSON-lines file (compact, sorted keys), without parsing the rest."""
    with path.open("rb") as lines:
        for line in lines:
            if b'"batch":2,' in line and (row := json.loads(line))["batch"] == 2:
                yield row


def delta_composition(
    kept: set[tuple[int, int]], late: dict[tuple[int, int], bool], faults: dict[tuple[int, int], str]
) -> dict[str, int]:
    """What a delta holds: late and newest source messages, each kind of extra, and source
    messages that stage to no row (not in the expected events, e.g. empty transactions)."""

    def kind(key: tuple[int, int]) -> str:
        if key in faults:
            return faults[key]
        if key in late:
            return "late" if late[key] else "newest"
        return "without rows"

    return dict(sorted(Counter(map(kind, kept)).items()))


def cut_dialect(folder: Path, delta: int, quota: int) -> dict[str, Any]:
    """Write `quota` of one dialect's batch-2 records to delta_file(delta); what they hold."""
    table = pq.read_table(folder / "batch-2.parquet")
    records = list(zip(table["partition"].to_pylist(), table["offset"].to_pylist(), strict=True))
    late = {
        (r["landing_partition"], r["landing_offset"]): r["late"]
        for r in _batch2_lines(folder / "expected-events.jsonl")
    }
    faults = {(r["landing_partition"], r["landing_offset"]): r["fault"] for r in _batch2_lines(folder / "faults.jsonl")}
    newest_from: dict[int, int] = {}
    for (partition, offset), is_late in late.items():
        if not is_late:
            newest_from[partition] = min(offset, newest_from.get(partition, offset))
    kept = delta_keep(records, newest_from, quota)
    pq.write_table(table.filter([record in kept for record in records]), folder / delta_file(delta), compression="zstd")
    return {"messages": quota, "of_batch2": len(records), **delta_composition(kept, late, faults)}


def cut_delta(data_dir: Path, manifest: dict[str, Any], delta: int) -> dict[str, Any]:
    """Cut every dialect's batch 2 to a delta of `delta` messages over all dialects, each dialect's
    part in proportion to its batch 2; the figures of what it holds."""
    dialects = list(manifest["per_dialect"])
    sizes = [manifest["per_dialect"][d]["batches"].get("2", {}).get("messages", 0) for d in dialects]
    if delta > sum(sizes):
        raise RuntimeError(f"batch 2 holds {sum(sizes):,} messages, fewer than the delta of {delta:,}")
    started = time.monotonic()
    per_dialect = {
        dialect: cut_dialect(data_dir / dialect, delta, quota)
        for dialect, quota in zip(dialects, split_exactly(delta, sizes), strict=True)
    }
    total: Counter = Counter()
    for figures in per_dialect.values():
        total.update({k: v for k, v in figures.items() if k not in ("messages", "of_batch2")})
    return {
        "messages": delta,
        "of_batch2": sum(sizes),
        "composition": dict(sorted(total.items())),
        "per_dialect": per_dialect,
        "cut_seconds": round(time.monotonic() - started, 1),
    }
