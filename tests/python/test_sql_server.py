"""`make sql-server`: the Spark Thrift server over the project's warehouse, queried with beeline.

The slow test writes a small mart with the project's own Spark settings into a fresh warehouse,
starts the server there on a free port, queries it with the beeline shipped in pyspark, stops
it and checks the warehouse is usable again (Derby admits one process at a time). The others
check the command's guards without starting a JVM.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_unify.commands import sql_server
from cdc_unify.spark import session_conf

SERVER = [sys.executable, "-m", "cdc_unify.commands.sql_server"]
BEELINE_TIMEOUT_S = 300
# beeline echoes its prompt before the first result line of `-e`, even with --silent.
PROMPT = re.compile(r"^\d+: jdbc:hive2://\S+> ")
MART_ROWS = [("feed_a", '["1"]', "Ada"), ("feed_a", '["2"]', "Grace"), ("feed_b", '["1"]', "李雷")]
CREATE_MART = f"""
from cdc_unify.spark import get_spark

spark = get_spark(master="local[1]")
spark.sql("create database if not exists cdc_unify")
spark.createDataFrame({MART_ROWS!r}, "feed string, primary_key string, name string").selectExpr(
    "feed", "primary_key", "map('name', name) as row_values"
).write.saveAsTable("cdc_unify.cdc_current_rows")
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((sql_server.DEFAULT_HOST, 0))
        return probe.getsockname()[1]


def beeline_rows(port: int, query: str) -> list[list[str]]:
    home = sql_server.spark_home()
    args = ("--silent=true", "--showHeader=false", "--outputformat=tsv2", "-e", query)
    done = subprocess.run(
        sql_server.beeline_command(home, sql_server.DEFAULT_HOST, port, *args),
        env=sql_server.spark_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BEELINE_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [PROMPT.sub("", line).split("\t") for line in done.stdout.splitlines() if line.strip()]


@pytest.mark.spark
@pytest.mark.slow
def test_beeline_queries_a_mart_and_stop_frees_the_warehouse(sandbox_factory) -> None:
    sandbox = sandbox_factory("sql_server")
    created = sandbox.run([sys.executable, "-c", CREATE_MART])
    assert created.returncode == 0, created.output
    port = free_port()
    warehouse = ["--warehouse", str(sandbox.warehouse)]
    server = [*SERVER, "start", *warehouse, "--port", str(port), "--master", "local[1]", "--driver-memory", "1g"]
    started = sandbox.run(server)
    try:
        assert started.returncode == 0, started.output
        assert f"jdbc:hive2://{sql_server.DEFAULT_HOST}:{port}/cdc_unify" in started.stdout
        again = sandbox.run(server)
        assert again.returncode == 1 and "already running" in again.stderr
        rows = beeline_rows(port, "select feed, primary_key, row_values['name'] from cdc_current_rows order by 1, 2")
        assert [tuple(row) for row in rows] == sorted(MART_ROWS)
    finally:
        stopped = sandbox.run([*SERVER, "stop", *warehouse])
    assert stopped.returncode == 0, stopped.output
    assert not sql_server.port_open(sql_server.DEFAULT_HOST, port)
    assert sandbox.run([*SERVER, "status", *warehouse]).returncode == 3
    # The Derby metastore is free again: the project's own Spark opens it.
    counted = sandbox.cli("sql", "--format", "csv", "select count(*) as n from cdc_current_rows")
    assert counted.returncode == 0, counted.output
    assert counted.stdout.splitlines() == ["n", str(len(MART_ROWS))]


def test_command_uses_the_project_session_settings(tmp_path: Path) -> None:
    conf = session_conf("local[2]", str(tmp_path))
    command = sql_server.thrift_server_command(Path("/spark"), conf, "127.0.0.1", 10123, "1g")
    assert command[:3] == ["/spark/bin/spark-submit", "--class", sql_server.THRIFT_SERVER_CLASS]
    assert command[-1] == "spark-internal"
    pairs = {command[i + 1] for i, arg in enumerate(command) if arg == "--conf"}
    assert pairs == {f"{key}={value}" for key, value in conf.items()}
    assert f"spark.sql.warehouse.dir={tmp_path}" in pairs
    assert any(p.endswith(f"databaseName={tmp_path / 'metastore_db'};create=true") for p in pairs)
    hive = {command[i + 1] for i, arg in enumerate(command) if arg == "--hiveconf"}
    assert hive == {"hive.server2.thrift.bind.host=127.0.0.1", "hive.server2.thrift.port=10123"}


def test_start_refuses_a_port_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind((sql_server.DEFAULT_HOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert sql_server.main(["start", "--warehouse", str(tmp_path), "--port", str(port)]) == 1
    assert "already in use" in capsys.readouterr().err
    assert not sql_server.server_files(str(tmp_path)).pid.exists()


def test_a_stale_pid_file_is_not_a_running_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The pid file names a live process that is not a Thrift server (a recycled pid): nothing is stopped."""
    files = sql_server.server_files(str(tmp_path))
    files.root.mkdir(parents=True)
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as bystander:
        try:
            files.pid.write_text(f"{bystander.pid}\n")
            assert sql_server.main(["status", "--warehouse", str(tmp_path)]) == 3
            assert sql_server.main(["stop", "--warehouse", str(tmp_path)]) == 0
            assert bystander.poll() is None
            assert not files.pid.exists()
        finally:
            bystander.kill()
    assert "not running" in capsys.readouterr().out


def test_a_failed_start_says_why(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    trace = ["\tat org.apache.derby.impl.Some.frame(Some.java:1)"] * 50
    log.write_text("\n".join(["26/11/22 06:18:42 ERROR Schema: Failed initialising database.", *trace]))
    assert "ERROR Schema: Failed initialising database." in sql_server.failure_summary(log)
    log.write_text("\n".join([*trace, "Caused by: ERROR XSDB6: Another instance of Derby may have booted ...", *trace]))
    summary = sql_server.failure_summary(log)
    assert "metastore is open in another process" in summary and str(log) in summary
    assert "frame" not in summary
