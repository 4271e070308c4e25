"""Peak resident memory and CPU time of a process tree, sampled from /proc (Linux).

A dbt run is one Python process, its Spark JVM (a child) and PySpark's Python workers (children
of the JVM): the driver is the first two, the tree all three.  CPU time is the sum over every
process seen in the tree of its own user + system time at its last sample: on a shared machine
it measures the work done, where wall time also measures everybody else's load.  A process that
lives shorter than one sampling interval is missed.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcessInfo:
    parent: int
    name: str
    rss_kib: int
    cpu_seconds: float  # user + system time of the process itself


def process_table() -> dict[int, ProcessInfo]:
    """Every readable process by pid."""
    table = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            statm = (entry / "statm").read_text()
        except OSError:  # the process ended while we looked
            continue
        # comm is in parentheses and may itself contain spaces or parentheses.
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        # fields[0] is field 3 of proc(5): state; ppid = field 4, utime = 14, stime = 15.
        cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        table[int(entry.name)] = ProcessInfo(int(fields[1]), name, int(statm.split()[1]) * PAGE_KIB, cpu)
    return table


def tree(root: int, table: dict[int, ProcessInfo]) -> list[tuple[int, int]]:
    """(pid, depth) of `root` and its descendants in one process table."""
    children: dict[int, list[int]] = {}
    for pid, info in table.items():
        children.setdefault(info.parent, []).append(pid)
    found, pending = [], [(root, 0)]
    while pending:
        pid, depth = pending.pop()
        if pid in table:
            found.append((pid, depth))
            pending.extend((child, depth + 1) for child in children.get(pid, ()))
    return found


def tree_usage(root: int, table: dict[int, ProcessInfo]) -> tuple[float, float, float]:
    """(driver, tree, JVM) resident MiB of `root`'s tree: driver = root + a JVM among its children."""
    driver = whole = jvm = 0
    for pid, depth in tree(root, table):
        info = table[pid]
        whole += info.rss_kib
        is_jvm = info.name == "java"
        if depth == 0 or (depth == 1 and is_jvm):
            driver += info.rss_kib
        if is_jvm:
            jvm += info.rss_kib
    return driver / 1024, whole / 1024, jvm / 1024


def tree_cpu(root: int, table: dict[int, ProcessInfo]) -> dict[int, float]:
    """CPU seconds of each live process of `root`'s tree."""
    return {pid: table[pid].cpu_seconds for pid, _ in tree(root, table)}


@dataclass
class Peaks:
    """Highest resident sums seen (MiB) and the tree's CPU seconds over time."""

    driver_mib: float = 0.0
    tree_mib: float = 0.0
    jvm_mib: float = 0.0
    cpu_by_pid: dict[int, float] = field(default_factory=dict)
    cpu_series: list[tuple[float, float]] = field(default_factory=list)  # (epoch seconds, CPU seconds so far)

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu_by_pid.values())

    def cpu_at(self, epoch: float) -> float:
        """CPU seconds the tree had used at `epoch` (the last sample before it)."""
        times = [t for t, _ in self.cpu_series]
        index = bisect.bisect_right(times, epoch) - 1
        return self.cpu_series[index][1] if index >= 0 else 0.0


class PeakSampler:
    """Samples the tree of `pid` every `interval` seconds in a daemon thread until stop()."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid, self.interval = pid, interval
        self.peaks = Peaks()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> PeakSampler:
        self._thread.start()
        return self

    def sample(self) -> None:
        table = process_table()
        driver, whole, jvm = tree_usage(self.pid, table)
        peaks = self.peaks
        peaks.driver_mib = max(peaks.driver_mib, driver)
        peaks.tree_mib = max(peaks.tree_mib, whole)
        peaks.jvm_mib = max(peaks.jvm_mib, jvm)
        peaks.cpu_by_pid.update(tree_cpu(self.pid, table))
        peaks.cpu_series.append((time.time(), peaks.cpu_seconds))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def stop(self) -> Peaks:
        self._stop.set()
        self._thread.join()
        return self.peaks
