"""A `cdc-unify load` killed (SIGKILL) at any point of its commit protocol leaves the whole load
or none of it, the ledger agrees with the table, and running the same load again does the right
thing (docs/landing.md "What nothing half-written means").

The load stops at a named point (test hook CDC_UNIFY_TEST_PAUSE_AT) and is SIGKILLed there; only
its Python process is killed, as `kill -9 <pid>` would: its Spark JVM exits by itself and the
rerun waits for it (cdc_unify.spark.wait_for_previous_jvm). The warehouse is then read with
pyarrow straight from its folders, not through Spark, as an independent check of what a reader
sees. Each case starts two JVMs (~30 s): the key case (killed between the rows and the ledger
entries, the gap of the old protocol) always runs, the other points with CDC_UNIFY_FAULT_TESTS=1.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from cdc_unify.landing import LOADS_DIR, PAUSE_ENV, PAUSE_POINTS
from conftest import BIN, Sandbox

pytestmark = pytest.mark.spark

FILES = {"a.jsonl": b'{"id": 1}\n\n{"id": 2}\n', "b.jsonl": b'{"id": 3}\n{"id": 4}\n{"id": 5}'}
ALL_POINTS = os.environ.get("CDC_UNIFY_FAULT_TESTS") == "1"


def load_command(paths: list[Path]) -> list[str]:
    return [str(BIN / "cdc-unify"), "load", "--dialect", "canal_json", "--feed", "daily", *map(str, paths)]


def kill_at(sandbox: Sandbox, point: str, paths: list[Path]) -> str:
    """Run the load until it pauses at `point`, SIGKILL it there; return what it printed."""
    env = {**sandbox.env(), PAUSE_ENV: point}
    with subprocess.Popen(load_command(paths), env=env, stderr=subprocess.PIPE, text=True) as load:
        seen = []
        for line in load.stderr:
            seen.append(line)
            if f"paused at {point}" in line:
                os.kill(load.pid, signal.SIGKILL)
                break
        load.wait()
    assert load.returncode == -signal.SIGKILL, "".join(seen)
    return "".join(seen)


def folder_rows(folder: Path) -> list[dict]:
    """The rows a reader of the table sees: its Parquet files (hidden `_`/`.` names are not the table's)."""
    return ds.dataset(folder, format="parquet").to_table().to_pylist() if folder.exists() else []


def check_landed_once(sandbox: Sandbox) -> None:
    """Table and ledger agree, each holding the whole load once, and nothing is left staged."""
    database = sandbox.warehouse / "landing.db"
    rows = [row for row in folder_rows(database / "canal_json") if row["feed"] == "daily"]
    entries = folder_rows(database / "load_ledger")
    assert not (database / LOADS_DIR).exists() or not any((database / LOADS_DIR).iterdir())
    assert sorted(Path(e["file_path"]).name for e in entries) == sorted(FILES)
    assert sum(e["rows"] for e in entries) == len(rows)
    by_offset = {row["offset"]: row["value"] for row in rows}
    assert len(by_offset) == len(rows)  # no two records share coordinates
    assert by_offset == {
        entry["first_offset"] + number: line
        for entry in entries
        for number, line in enumerate(FILES[Path(entry["file_path"]).name].split(b"\n"))
        if line
    }


# Every pause point of the protocol, and whether the load had committed (its rows in the table) there.
COMMITTED_AT = {"ledger-staged": False, "staged": False, "committed": True, "ledger-written": True}
KEY_POINT = "committed"


def test_every_point_of_the_protocol_is_covered():
    assert tuple(COMMITTED_AT) == PAUSE_POINTS


@pytest.mark.parametrize(
    ("point", "committed"),
    [
        pytest.param(
            point,
            committed,
            marks=pytest.mark.skipif(point != KEY_POINT and not ALL_POINTS, reason="CDC_UNIFY_FAULT_TESTS=1"),
        )
        for point, committed in COMMITTED_AT.items()
    ],
)
def test_a_killed_load_converges_and_its_rerun_does_the_right_thing(sandbox_factory, point, committed):
    sandbox = sandbox_factory(f"kill-{point}")
    paths = []
    for name, content in FILES.items():
        paths.append(sandbox.root / name)
        paths[-1].write_bytes(content)
    kill_at(sandbox, point, paths)
    rerun = sandbox.run(load_command(paths))
    if committed:
        # The rows had landed: the rerun completes the ledger, then refuses the files as loaded.
        assert rerun.returncode == 1, rerun.output
        assert "already loaded into canal_json for feed 'daily'" in rerun.stderr
        # Killed after the ledger entries moved (while cleaning up): nothing was left to finish.
        finished = "finished interrupted load" if point == KEY_POINT else "removed the staging folder of load"
        assert finished in rerun.stdout, rerun.output
    else:
        # Nothing had landed: the rerun discards the leftovers and lands the files.
        assert rerun.returncode == 0, rerun.output
        assert "discarded interrupted load" in rerun.stdout
        assert "loaded 5 rows from 2 files" in rerun.stdout
    assert "Traceback" not in rerun.output
    check_landed_once(sandbox)
