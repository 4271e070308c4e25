"""`cdc-unify sql-server start|stop|status`: a JDBC/ODBC endpoint on the project's warehouse (docs/sql-server.md).

The endpoint is Spark's Thrift server (HiveThriftServer2, shipped in the pyspark distribution),
started with spark-submit as a background process over the same warehouse and embedded Derby
metastore that dbt and `cdc-unify sql` use, so BI tools and beeline see the marts. Derby admits
one process per metastore: while the server runs, dbt and the CLI cannot open that warehouse.

The server's pid and log live in `<warehouse>/.sql-server/`, so `stop` finds the server of a
warehouse without any other state. Also runnable as `python -m cdc_unify.commands.sql_server`.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
APP_NAME = "cdc-unify-sql-server"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 10000
DEFAULT_SCHEMA = "cdc_unify"
DRIVER_MEMORY_ENV = "CDC_UNIFY_DRIVER_MEMORY"
DEFAULT_DRIVER_MEMORY = "2g"
STATE_DIR = ".sql-server"
START_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 60.0
POLL_S = 0.5
LOG_REASON_LINES = 8
# Derby's error when another process holds the metastore.
DERBY_IN_USE = "XSDB6"


@dataclass(frozen=True)
class ServerFiles:
    """Where the server of one warehouse keeps its pid, port and log."""

    root: Path

    @property
    def pid(self) -> Path:
        return self.root / "pid"

    @property
    def port(self) -> Path:
        return self.root / "port"

    @property
    def log(self) -> Path:
        return self.root / "server.log"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sql-server",
        help="start/stop the Spark Thrift server (JDBC/ODBC) on the local warehouse",
        description=(
            "Run Spark's Thrift server (HiveThriftServer2) in the background over the warehouse dbt builds "
            "(env CDC_UNIFY_WAREHOUSE, default <project>/.warehouse), so beeline and any Hive JDBC/ODBC client "
            "can query the marts. The embedded Derby metastore admits one process: stop the server before "
            "running dbt or cdc-unify on the same warehouse."
        ),
    )
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument("--warehouse", default=None, help="warehouse folder (default: env CDC_UNIFY_WAREHOUSE)")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default: {DEFAULT_PORT})")
    parser.add_argument("--master", default=None, help="Spark master (default: local[*])")
    parser.add_argument(
        "--driver-memory",
        default=os.environ.get(DRIVER_MEMORY_ENV, DEFAULT_DRIVER_MEMORY),
        help=f"the server's JVM heap (default: env {DRIVER_MEMORY_ENV} or {DEFAULT_DRIVER_MEMORY})",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cdc_unify.spark import warehouse_dir

    files = server_files(warehouse_dir(args.warehouse))
    if args.action == "start":
        return start(args, files)
    if args.action == "stop":
        return stop(files)
    return status(files)


def server_files(warehouse: str) -> ServerFiles:
    """The state folder of a warehouse's server: beside its Derby metastore (a local folder)."""
    from cdc_unify.spark import is_uri, warehouse_dir

    return ServerFiles(Path(warehouse_dir(".warehouse") if is_uri(warehouse) else warehouse) / STATE_DIR)


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package (bin/spark-submit, bin/beeline, jars/).

    Not $SPARK_HOME: another Spark installation there may be another version than the session's.
    """
    import pyspark

    return Path(pyspark.__file__).parent


def thrift_server_command(home: Path, conf: Mapping[str, str], host: str, port: int, driver_memory: str) -> list[str]:
    """spark-submit of HiveThriftServer2 with the session settings the project's Spark uses."""
    command = [str(home / "bin" / "spark-submit"), "--class", THRIFT_SERVER_CLASS, "--driver-memory", driver_memory]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    command += ["--hiveconf", f"hive.server2.thrift.bind.host={host}"]
    command += ["--hiveconf", f"hive.server2.thrift.port={port}"]
    # spark-submit's placeholder resource for classes that ship with Spark itself.
    return [*command, "spark-internal"]


def jdbc_url(host: str, port: int, schema: str = DEFAULT_SCHEMA) -> str:
    return f"jdbc:hive2://{host}:{port}/{schema}"


def beeline_command(home: Path, host: str, port: int, *beeline_args: str) -> list[str]:
    """beeline (shipped with pyspark) connected to the server; e.g. `-e "<sql>"`, `--outputformat=csv2`."""
    # The server does not authenticate (hive.server2.authentication NONE); the name only labels the session.
    user = os.environ.get("USER", "cdc")
    return [str(home / "bin" / "beeline"), "-u", jdbc_url(host, port), "-n", user, *beeline_args]


def spark_env(home: Path) -> dict[str, str]:
    # Spark's scripts take their jars from SPARK_HOME when it is set: point it at the same distribution.
    return {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable}


def start(args: argparse.Namespace, files: ServerFiles) -> int:
    from cdc_unify.spark import (
        WarehouseInUse,
        derby_dir,
        lock_warehouse,
        record_holder,
        release_warehouse,
        session_conf,
    )

    running = running_pid(files)
    if running is not None:
        return fail(f"already running (pid {running}, port {read_int(files.port)}); stop it first")
    if port_open(args.host, args.port):
        return fail(f"{args.host}:{args.port} is already in use; choose another port (--port / SQL_SERVER_PORT)")
    conf = {**session_conf(args.master, args.warehouse), "spark.app.name": APP_NAME}
    metastore = derby_dir(conf)
    try:
        # The server inherits the warehouse lock (pass_fds) and holds it until it exits.
        locks = (lock_warehouse(metastore),) if metastore is not None else ()
    except WarehouseInUse as exc:
        return fail(str(exc))
    home = spark_home()
    files.root.mkdir(parents=True, exist_ok=True)
    with files.log.open("wb") as log:
        # A session of its own: the server outlives this command and a Ctrl-C in its terminal.
        process = subprocess.Popen(
            thrift_server_command(home, conf, args.host, args.port, args.driver_memory),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=spark_env(home),
            start_new_session=True,
            pass_fds=locks,
        )
    if metastore is not None:
        # spark-submit execs the JVM: the server's pid is the JVM's.
        record_holder(metastore, f"pid {process.pid}, the Spark Thrift server on port {args.port}", process.pid)
        release_warehouse(metastore)
    files.pid.write_text(f"{process.pid}\n")
    files.port.write_text(f"{args.port}\n")
    print(f"starting the Spark Thrift server on {args.host}:{args.port} (pid {process.pid}, log {files.log}) ...")
    deadline = time.monotonic() + START_TIMEOUT_S
    while not port_open(args.host, args.port):
        if process.poll() is not None:
            clear(files)
            return fail(f"the server exited with code {process.returncode}: {failure_summary(files.log)}")
        if time.monotonic() > deadline:
            terminate(process.pid)
            clear(files)
            return fail(f"the server did not listen within {START_TIMEOUT_S:.0f} s: {failure_summary(files.log)}")
        time.sleep(POLL_S)
    print(f"ready: {jdbc_url(args.host, args.port)} (warehouse {conf['spark.sql.warehouse.dir']})")
    print(f"  query: {' '.join(beeline_command(home, args.host, args.port))} -e 'show tables'")
    print(f"  stop it before running dbt on this warehouse: {stop_hint(args)}")
    return 0


def stop(files: ServerFiles) -> int:
    pid = running_pid(files)
    if pid is None:
        clear(files)
        print("the Spark Thrift server is not running")
        return 0
    if not terminate(pid):
        return fail(f"pid {pid} did not stop within {STOP_TIMEOUT_S:.0f} s after SIGTERM and SIGKILL")
    clear(files)
    print(f"stopped the Spark Thrift server (pid {pid})")
    return 0


def status(files: ServerFiles) -> int:
    pid = running_pid(files)
    if pid is None:
        print("the Spark Thrift server is not running")
        return 3
    print(f"running: pid {pid}, port {read_int(files.port)}, log {files.log}")
    return 0


def stop_hint(args: argparse.Namespace) -> str:
    warehouse = f" --warehouse {args.warehouse}" if args.warehouse else ""
    return f"{sys.executable} -m cdc_unify.commands.sql_server stop{warehouse}"


def running_pid(files: ServerFiles) -> int | None:
    """The pid in the pid file if that process is still this warehouse's Thrift server."""
    pid = read_int(files.pid)
    return pid if pid is not None and is_thrift_server(pid) else None


def is_thrift_server(pid: int) -> bool:
    """True while `pid` runs HiveThriftServer2: a recycled pid or an exited (zombie) server is not it."""
    # -ww: ps cuts the command line at $COLUMNS when that is set (pytest-xdist workers set 80), and
    # the class name comes after the JVM's long classpath.
    found = subprocess.run(["ps", "-ww", "-p", str(pid), "-o", "args="], capture_output=True, text=True, check=False)
    return found.returncode == 0 and THRIFT_SERVER_CLASS in found.stdout


def terminate(pid: int) -> bool:
    """SIGTERM the server's process group (the JVM is its leader), SIGKILL if it lingers; True once gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            if not is_thrift_server(pid):
                return True
            time.sleep(POLL_S)
    return False


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def clear(files: ServerFiles) -> None:
    files.pid.unlink(missing_ok=True)
    files.port.unlink(missing_ok=True)


def failure_summary(log: Path) -> str:
    """Why the server did not come up, from its log: Spark prints one failure as pages of stack traces."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    if any(DERBY_IN_USE in line for line in lines):
        reason = "its Derby metastore is open in another process (dbt, cdc-unify, another server): stop that first"
    else:
        errors = [line.strip() for line in lines if line.startswith("Caused by:") or " ERROR " in line]
        reason = "\n".join(list(dict.fromkeys(errors))[-LOG_REASON_LINES:] or lines[-LOG_REASON_LINES:])
    return f"{reason}\n(full log: {log})"


def fail(message: str) -> int:
    print(f"cdc-unify sql-server: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cdc_unify.commands.sql_server")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(["sql-server", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
