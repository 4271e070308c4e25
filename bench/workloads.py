"""Benchmark workloads: which dialects, how many messages, generated once and kept for reuse.

A workload spec is `DIALECTS:SIZE`: `mixed:1M` = about a million messages over all 11 dialects
(the same simulated source workload encoded by each), `canal_json:1M` = about a million messages
of one dialect.  The generator counts row changes (events), not messages; a small probe run
measures messages per event so the requested message count is met closely.

Batch 2 of the generator (the newest share of the source time span plus some older late
messages) is the ~1% the incremental run appends after the full build of batch 1.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_unify.contract import DIALECTS
from cdc_unify.generator.faults import FaultOptions
from cdc_unify.generator.run import generate

MIXED = "mixed"
# Batch 2 is ~1% of the messages: 0.8% of the time span plus 0.2% late older messages.
BENCH_FAULTS = FaultOptions(tail_share=0.008, late_share=0.002)
PROBE_EVENTS = 2000
_SUFFIXES = {"": 1, "k": 1_000, "m": 1_000_000}


@dataclass(frozen=True)
class WorkloadSpec:
    dialects: tuple[str, ...]
    messages: int  # requested total over both batches
    label: str  # as written on the command line, e.g. mixed:100k

    @property
    def name(self) -> str:
        return self.label.replace(":", "-").lower()


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


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def messages_per_event(dialects: tuple[str, ...], seed: int) -> float:
    """Messages (all dialects, both batches, faults included) per simulated row change."""
    with tempfile.TemporaryDirectory(prefix="cdc-unify-bench-probe-") as probe:
        manifest = generate(PROBE_EVENTS, seed, probe, dialects, BENCH_FAULTS)
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
        and manifest.get("fault_options", {}).get("tail_share") == BENCH_FAULTS.tail_share
        and manifest.get("fault_options", {}).get("late_share") == BENCH_FAULTS.late_share
    )


def ensure_generated(spec: WorkloadSpec, seed: int, data_root: Path) -> tuple[Path, dict[str, Any], float | None]:
    """(data dir, manifest, generation seconds or None if reused) of a workload."""
    data_dir = data_root / f"{spec.name}-seed{seed}"
    manifest_path = data_dir / "manifest.json"
    if is_reusable(manifest_path, spec, seed):
        log(f"[generate] {spec.label}: reusing {data_dir}")
        return data_dir, json.loads(manifest_path.read_text()), None
    started = time.monotonic()
    ratio = messages_per_event(spec.dialects, seed)
    events = max(1, round(spec.messages / ratio))
    log(f"[generate] {spec.label}: {events:,} row changes ({ratio:.2f} messages each over the dialects) -> {data_dir}")
    # The files do not depend on the number of jobs (test_jobs_do_not_change_the_files).
    manifest = generate(events, seed, data_dir, spec.dialects, BENCH_FAULTS, log=log, jobs=os.cpu_count() or 1)
    return data_dir, manifest, time.monotonic() - started
