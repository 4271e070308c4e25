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

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SUBPROCESS_TIMEOUT_S = 900


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Groups for pytest-xdist workers (`make test PYTEST_PARALLEL="-n 2 --dist loadgroup"`; `make
    test` itself runs one process, the Makefile says why): a group runs on one worker. Every test that reads the shared workload is in one group, as each worker process would
    build the workload (four dbt builds) again; any other test goes with its module, whose
    module-scoped fixtures then run once."""
    for item in items:
        group = "workload" if "workload" in getattr(item, "fixturenames", ()) else item.module.__name__
        item.add_marker(pytest.mark.xdist_group(group))
