"""One process at a time per local warehouse (its embedded Derby metastore admits one): a second
`cdc-unify sql`, `cdc-unify load`, `cdc-unify sql-server start` or `dbt` fails with one line naming
the holder and the way out, before its JVM starts, so it never touches the metastore.

The holder here is a plain Python process that only takes the lock (no JVM, fast); the slow test
(CDC_UNIFY_FAULT_TESTS=1) holds the warehouse with a real Spark session that keeps working after
the refused attempt, and the warehouse is usable once it exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from cdc_unify import spark
from cdc_unify.spark import WarehouseInUse, lock_warehouse, release_warehouse
from conftest import BIN, REPO_ROOT, Sandbox

HOLD = """
import sys, time
from pathlib import Path
from cdc_unify.spark import get_spark, lock_warehouse
if sys.argv[2] == "spark":
    spark = get_spark(master="local[1]", warehouse=sys.argv[1])
    spark.sql("create schema if not exists held").collect()
else:
    lock_warehouse(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.readline()  # the test says when to go on
if sys.argv[2] == "spark":
    spark.sql("create table held.t as select 1 as x").collect()
    print(spark.sql("select sum(x) from held.t").first()[0], flush=True)
"""


@contextmanager
def holder(warehouse: Path, kind: str = "lock") -> Iterator[subprocess.Popen]:
    """A process holding the warehouse until its stdin gets a line (or it is killed)."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLD, str(warehouse), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    ) as process:
        try:
            assert process.stdout.readline() == "held\n"
            yield process
        finally:
            if process.poll() is None:
                process.kill()


def refusal(warehouse: Path, pid: int) -> str:
    return f"the warehouse {warehouse} is in use by another process (pid {pid}, "


def test_threads_of_one_process_share_its_lock(tmp_path, monkeypatch):
    """dbt's threads open their connections at once: none may find the lock held by its own process,
    even while the first is still waiting for a previous holder's JVM to exit."""
    monkeypatch.setattr(spark, "wait_for_previous_jvm", lambda *_: time.sleep(0.3))
    with ThreadPoolExecutor(8) as pool:
        taken = list(pool.map(lambda _: lock_warehouse(tmp_path), range(8)))
    release_warehouse(tmp_path)
    assert len(set(taken)) == 1


class FakeClock:
    """time.monotonic and time.sleep of a clock that advances only by the sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_previous_holders_jvm_is_waited_for_with_progress_lines_then_refused(tmp_path, monkeypatch, capsys):
    clock = FakeClock()
    monkeypatch.setattr(spark, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    previous = {"jvm": "4242", "holder": "pid 17, dbt build"}
    monkeypatch.setattr(spark, "is_java_process", lambda pid: pid == 4242 and clock.now < 25)
    spark.wait_for_previous_jvm(tmp_path, previous)
    told = capsys.readouterr().err.splitlines()
    assert len(told) == 2 and all("pid 4242, the Spark JVM of pid 17, dbt build" in line for line in told), told
    monkeypatch.setattr(spark, "is_java_process", lambda pid: True)
    with pytest.raises(WarehouseInUse) as refused:
        spark.wait_for_previous_jvm(tmp_path, previous)
    assert str(refused.value).startswith(refusal(tmp_path, 4242))
    assert clock.now - 25 >= spark.JVM_EXIT_WAIT_S
    told = capsys.readouterr().err.splitlines()
    assert abs(len(told) - spark.JVM_EXIT_WAIT_S / spark.JVM_WAIT_PROGRESS_S) <= 1, told


def test_the_lock_is_exclusive_and_dies_with_its_holder(tmp_path):
    with holder(tmp_path) as process:
        with pytest.raises(WarehouseInUse) as refused:
            lock_warehouse(tmp_path)
        assert str(refused.value).startswith(refusal(tmp_path, process.pid))
        assert "wait for that process to finish or stop it, or use another warehouse (CDC_UNIFY_WAREHOUSE)" in str(
            refused.value
        )
        os.kill(process.pid, signal.SIGKILL)  # no chance to clean up: the OS drops the lock
        process.wait()
        lock_warehouse(tmp_path)
        release_warehouse(tmp_path)


@pytest.mark.spark  # dbt parses the project (~15 s)
def test_commands_and_dbt_refuse_a_warehouse_in_use_with_one_line(sandbox_factory):
    sandbox = sandbox_factory("locked")
    messages = sandbox.root / "m.jsonl"
    messages.write_bytes(b"{}\n")
    with holder(sandbox.warehouse) as process:
        expected = refusal(sandbox.warehouse, process.pid)
        commands = {
            "sql": ["sql", "show tables"],
            "load": ["load", "--dialect", "canal_json", "--feed", "f", str(messages)],
            "sql-server": ["sql-server", "start", "--port", "1"],
        }
        for name, args in commands.items():
            result = sandbox.cli(*args)
            assert result.returncode == 1, result.output
            assert result.stdout == ""
            assert result.stderr.startswith(f"cdc-unify {name}: error: {expected}"), result.stderr
            assert result.stderr.count("\n") == 1, result.stderr
        build = sandbox.dbt("build")
    assert build.returncode == 2, build.output
    assert expected in build.output
    assert "Traceback" not in build.output and "\tat " not in build.output
    # No refused process started a JVM, so none touched the metastore.
    assert not (sandbox.warehouse / "metastore_db").exists()


@pytest.mark.spark
@pytest.mark.skipif(os.environ.get("CDC_UNIFY_FAULT_TESTS") != "1", reason="two JVMs: CDC_UNIFY_FAULT_TESTS=1")
def test_a_refused_command_leaves_the_holder_and_the_warehouse_working(sandbox_factory):
    sandbox: Sandbox = sandbox_factory("held")
    with holder(sandbox.warehouse, "spark") as process:
        refused = sandbox.run([str(BIN / "cdc-unify"), "sql", "show schemas"])
        assert refused.stderr.startswith("cdc-unify sql: error: " + refusal(sandbox.warehouse, process.pid))
        out, _ = process.communicate("go\n", timeout=300)
        assert out.strip() == "1"
        assert process.returncode == 0
    after = sandbox.cli("sql", "select x from held.t", "--format", "csv")
    assert (after.returncode, after.stdout) == (0, "x\n1\n"), after.output
