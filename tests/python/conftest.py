"""Shared fixtures: run dbt and `cdc-unify` in subprocesses against an isolated warehouse.

Each sandbox has its own warehouse (tables + Derby metastore), dbt target and log folders, so
tests never touch the project's `.warehouse` nor collide with each other. Every dbt or CLI call
starts a JVM (~10 s): build once per session and assert many things on the result.

    def test_something(sandbox_factory):
        sandbox = sandbox_factory("mine")
        result = sandbox.dbt("build", "--select", "my_model")
        assert result.returncode == 0, result.output
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SUBPROCESS_TIMEOUT_S = 900
HARNESS_IMPORT = re.compile(r"^\s*(from harness import|import harness\b)", re.M)


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class Sandbox:
    """An isolated warehouse + dbt target/log folders under `root`."""

    root: Path

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse"

    @property
    def target(self) -> Path:
        return self.root / "target"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "CDC_UNIFY_WAREHOUSE": str(self.warehouse),
            "DBT_TARGET_PATH": str(self.target),
            "DBT_LOG_PATH": str(self.root / "logs"),
            "DBT_USE_COLORS": "false",
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "PYSPARK_PYTHON": sys.executable,
        }

    def run(self, command: list[str], cwd: Path = REPO_ROOT) -> Result:
        done = subprocess.run(
            command, cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def dbt(self, *args: str, project_dir: Path = REPO_ROOT, profiles_dir: Path | None = None) -> Result:
        """`dbt <args>` on a project (default: this one, with its profiles/)."""
        profiles = profiles_dir or project_dir / "profiles"
        return self.run([str(BIN / "dbt"), *args, "--profiles-dir", str(profiles)], cwd=project_dir)

    def cli(self, *args: str) -> Result:
        """`cdc-unify <args>` on this sandbox's warehouse."""
        return self.run([str(BIN / "cdc-unify"), *args])


@pytest.fixture(scope="session")
def sandbox_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Sandbox]:
    return lambda name: Sandbox(tmp_path_factory.mktemp(name))


@pytest.fixture(scope="session")
def workload() -> dict:
    """The generated workload of every dialect, landed in two runs and built through every layer
    (tests/python/harness.py `workload_build`): snapshots after each build, `out_dir`, `manifest`."""
    from harness import workload_build

    return workload_build()


# xdist asks for every test id of every worker's collection: each file is read once.
@functools.cache
def shares_the_session(test_file: Path) -> bool:
    """Whether the tests of `test_file` may use the process's SparkSession: the module imports
    tests/python/harness.py, which builds it (and the shared workload). A module that does not
    starts Spark only in subprocesses (the CLI, dbt, the SQL server), if at all."""
    return bool(HARNESS_IMPORT.search(test_file.read_text(encoding="utf-8")))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Two units of work for pytest-xdist (`make test`: `-n 2`): the tests that may use the
    process's SparkSession, which one worker runs in its one JVM (a second session would compile
    the same query code again on the same two cores, docs/test-suite.md), and every other test,
    which the second worker runs meanwhile. A scheduler of its own, as `--dist loadgroup` no longer
    groups anything with pytest 9.2 (pytest-dev/pytest-xdist#1386: the group rides on a node id
    that pytest no longer lets a plugin change)."""
    from xdist.scheduler import LoadScopeScheduling

    class SessionScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            test_file = REPO_ROOT / nodeid.split("::", 1)[0]
            return "session" if shares_the_session(test_file) else "subprocesses"

    return SessionScheduling(config, log)
