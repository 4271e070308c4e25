"""How long `cdc-unify generate` takes, how much CPU and memory it needs and how much it writes.

Runs the generator as its own process (with `--jobs` worker processes) and reports wall time,
CPU time (user + system of the process and its workers), the peak resident memory of the whole
process tree (sampled from /proc: the parent holding the workload plus its concurrent workers;
`/usr/bin/time -v` shows only the largest single process) and the output size.  The generator's
progress lines pass through on stderr.

    nice -n 10 .venv/bin/python bench/generate_speed.py --events 1000000 --out /tmp/gen-1m --delete
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from procmem import PeakSampler

BIN = Path(sys.executable).parent


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(events: int, seed: int, out: Path, jobs: int | None, dialects: list[str] | None) -> dict[str, float]:
    """Run one generation into `out` (emptied first) and return its figures."""
    shutil.rmtree(out, ignore_errors=True)
    command = [str(BIN / "cdc-unify"), "generate", "--events", str(events), "--seed", str(seed), "--out", str(out)]
    command += ["--jobs", str(jobs)] if jobs else []
    command += ["--dialects", *dialects] if dialects else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    sampler = PeakSampler(process.pid, interval=1.0).start()
    code = process.wait()
    wall = time.monotonic() - started
    peaks = sampler.stop()
    if code != 0:
        raise SystemExit(f"generate exited with {code}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "events": events,
        "jobs": jobs or len(os.sched_getaffinity(0)),
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
        "peak_tree_rss_mib": round(peaks.tree_mib),
        # ru_maxrss of the children (KiB on Linux): the largest single process, as time -v reports.
        "peak_process_rss_mib": round(after.ru_maxrss / 1024),
        "output_mib": round(folder_bytes(out) / 2**20, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="row changes (default 100000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None, help="generator worker processes (default: its default)")
    parser.add_argument("--dialects", nargs="+", default=None, help="default: every dialect")
    parser.add_argument("--out", type=Path, required=True, help="output folder (emptied first)")
    parser.add_argument("--delete", action="store_true", help="delete the output afterwards (it is large)")
    args = parser.parse_args()
    try:
        figures = measure(args.events, args.seed, args.out, args.jobs, args.dialects)
    finally:
        if args.delete:
            shutil.rmtree(args.out, ignore_errors=True)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
