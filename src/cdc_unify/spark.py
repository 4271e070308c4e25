"""The one SparkSession of a process: dbt's `sparksession` adapter and the CLI both use it.

Locally everything lives in ONE folder (env `CDC_UNIFY_WAREHOUSE`, default `<project>/.warehouse`):
the Parquet tables and the embedded Derby metastore that remembers them.  Derby allows one
process per metastore, so concurrent runs need different warehouse folders: a lock file in the
folder, taken before the JVM starts, turns a second process into one clear error line instead of
pages of Derby stack traces (README.md, "One process per warehouse").
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shlex
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from py4j.protocol import Py4JError
from pyspark import SparkContext
from pyspark.errors import PySparkException
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from cdc_unify import jvm

WAREHOUSE_ENV = "CDC_UNIFY_WAREHOUSE"
# Whitespace-separated key=value Spark settings that win over the profile's: one-off overrides
# (benchmarks, a cluster's tuning) without editing profiles/profiles.yml.
SPARK_CONF_ENV = "CDC_UNIFY_SPARK_CONF"
DEFAULT_MASTER = "local[*]"
DEFAULT_APP_NAME = "cdc-unify"
LOG4J2_CONFIG = Path(__file__).with_name("log4j2.properties")
# PySpark logs every SQL error it raises, as JSON with the whole JVM stack trace; the raised
# exception already carries the message, so these duplicates only bury dbt's and the CLI's output.
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
METASTORE_URL = "spark.hadoop.javax.jdo.option.ConnectionURL"
LOCK_FILE = ".cdc-unify.lock"
# A killed or finished process's lock goes with it, but its Spark JVM exits only once it notices
# (stdin EOF, then shutdown hooks) and holds Derby until then: a new process waits this long for
# it, saying so every JVM_WAIT_PROGRESS_S. On a starved machine (a niced bench beside two busy
# jobs on two cores) a finished build's JVM took more than 30 s.
JVM_EXIT_WAIT_S = 180.0
JVM_WAIT_PROGRESS_S = 10.0
# Columns that hold a new value in nearly every row they are written in (the staged contract's
# ids, positions, times, key texts and image values, and the tables built from them). Parquet
# starts every column chunk with a dictionary and falls back to plain values once the dictionary
# stops paying or outgrows its page; in the staged tables it did for these, after building it for
# their first pages, so that work was thrown away: the mixed:1M staging layer 86.6 -> 80.4 s, files
# 0.3% larger (docs/benchmarks.md, "Per-row columns written without a dictionary"). A column of the
# same name in any table is written the same way; every other column keeps its dictionary.
PER_ROW_COLUMNS = (
    "event_id",
    "sequence",
    "raw_value",
    "landing_offset",
    "landing_timestamp",
    "event_ts",
    "emitted_ts",
    "primary_key",
    "source_position",
    "before.key_value.value",
    "after.key_value.value",
)
# Open lock files of this process, by warehouse folder: held until the process ends.
_HELD_LOCKS: dict[Path, int] = {}
# The settings of the last session get_spark built or configured, and that session.
_CONFIGURED: dict[str, Any] = {}
# dbt's threads open their connections at once: one takes the lock, the others find it held.
_LOCKING = threading.Lock()


class WarehouseInUse(RuntimeError):
    """Another process holds the warehouse's embedded metastore; the message says which and what to do."""


def project_root() -> Path:
    """The dbt project folder: the checkout this package is installed from, else the working dir."""
    checkout = Path(__file__).resolve().parents[2]
    return checkout if (checkout / "dbt_project.yml").is_file() else Path.cwd()


def is_uri(location: str) -> bool:
    """hdfs://…, s3a://…, file:/… rather than a local path."""
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", location) is not None


def warehouse_dir(configured: str | None = None) -> str:
    """Absolute warehouse location: argument, else env, else `<project>/.warehouse`.

    A URI (hdfs://, s3a://, file:/…) is kept as is; a plain path is made absolute against the
    project root so that dbt and the CLI agree whatever their working directory.
    """
    location = configured or os.environ.get(WAREHOUSE_ENV) or ".warehouse"
    if is_uri(location):
        return location
    path = Path(location).expanduser()
    return str(path if path.is_absolute() else (project_root() / path).resolve())


# Options every JVM reads from the environment: a collector chosen there must not meet another one
# (the JVM refuses to start with two).
JVM_ENV_OPTIONS = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")
CHOSEN_COLLECTOR = re.compile(r"-XX:\+Use\w+GC\b")


def collector_options(environ: Mapping[str, str]) -> list[str]:
    """The driver's garbage collector: the parallel one, unless the environment's JVM options choose
    one. A build is a batch job on few cores, and G1 (the JVM's default) takes CPU from it with
    concurrent marking, refinement threads and write barriers: mixed:1M on 2 cores, the +10,000
    run replayed 120-122 s -> 105 s (the serial collector 114 s), in `make bench` 101 -> 96 s and
    the full build 679 -> 632 CPU s (docs/benchmarks.md, "The parallel collector")."""
    if any(CHOSEN_COLLECTOR.search(environ.get(name, "")) for name in JVM_ENV_OPTIONS):
        return []
    return ["-XX:+UseParallelGC"]


def session_conf(
    master: str | None = None,
    warehouse: str | None = None,
    extra_conf: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Every setting of the session; `extra_conf` (the profile's `spark_conf`) wins over the defaults."""
    location = warehouse_dir(warehouse)
    # Derby needs a local folder; with a remote warehouse it stays under the project unless
    # extra_conf points at a real metastore (hive.metastore.uris / javax.jdo.option.*).
    local_dir = Path(warehouse_dir(".warehouse") if is_uri(location) else location)
    conf = {
        "spark.master": master or DEFAULT_MASTER,
        "spark.app.name": DEFAULT_APP_NAME,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": location,
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={local_dir / 'metastore_db'};create=true"
        ),
        "spark.driver.extraJavaOptions": " ".join(
            [
                *collector_options(os.environ),
                f"-Dderby.system.home={local_dir}",
                f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}",
            ]
        ),
        "spark.sql.sources.default": "parquet",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        # Spark writes timestamps as INT96 by default, and Parquet keeps no min/max for INT96: a
        # filter on landed_at or built_at (an incremental run's watermarks) then reads every row
        # group of the history. As TIMESTAMP_MICROS the files carry statistics and the scan skips
        # every file older than the watermark. Files written before stay readable.
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        # Parquet's per-column setting, by column path (PER_ROW_COLUMNS).
        **{f"spark.hadoop.parquet.enable.dictionary#{column}": "false" for column in PER_ROW_COLUMNS},
        # Spark hands an `in` list of more than 10 values to the Parquet scan as nothing at all, so
        # `feed not in (<every held feed>)` (a model's count of new rows when the feeds with new
        # ones are not known beforehand, over a union of landing or staging tables) read every
        # stored row. Those tables hold one dialect's feeds each, so row-group statistics decide
        # the filter once it reaches the scan; it is evaluated per row group, never per row.
        # The 5M bench warehouse, 13 feeds: 2.6-2.9 s -> 0.6-1.0 s per count (docs/benchmarks.md).
        "spark.sql.parquet.pushdown.inFilterThreshold": "1024",
        # A broadcast join's hash table of string keys is built on the driver in pages of this size
        # and kept there, whole, while the query's plan lives: Spark's default here is 16 MiB (a
        # share of the heap per core), so a broadcast of 11 keys held 16 MiB, and ten broadcasts in a
        # query (an incremental int_row_changes plans 18) 160 MiB of a 2g driver, per dbt thread. Sorts
        # and aggregations take pages of this size too: 4 MiB leaves a task up to 32 GiB of them
        # (Spark's table holds 8,192 pages a task). docs/benchmarks.md, "Broadcast pages".
        "spark.buffer.pageSize": "4m",
        # A write into a partitioned table sorted every row by its partition first (Spark's planned
        # write), though each task of the project's writes holds few partitions (is_split_half; one
        # event_slice; the key buckets its distribute gave it): a sort of the wide rows, interpreted,
        # that no reader needs. Up to 16 partitions a task are written through open files instead;
        # past that a task sorts the rest, as before. mixed:1M full build, warm: the five big
        # intermediate tables' writes 9-11% faster (docs/benchmarks.md, "Partitioned writes without
        # the sort"). The open files' row groups are buffered on the heap, so Parquet's share of it
        # is capped at a quarter (its default is 95%): past the cap its writers flush smaller row
        # groups.
        "spark.sql.maxConcurrentOutputFileWriters": "16",
        "spark.hadoop.parquet.memory.pool.ratio": "0.25",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": sys.executable,
        # pandas <-> Spark through Arrow, never the row-by-row fallback: with pandas 3 that path
        # turns a missing string into the text 'nan'.
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
        # Constraint propagation infers predicates from every filter through every projection; over
        # the staging models' wide projections of map/variant expressions an explode followed by a
        # filter sent it into exponential time (stg_canal_json__changes with posexplode: optimizer
        # still running after 10 min with it, 7 s without; the models as written: same time either way).
        "spark.sql.constraintPropagation.enabled": "false",
        # Queries interpreted, no Java generated per query: a dbt invocation is a new JVM, and each
        # query's generated code was compiled (Janino, then HotSpot) to run once, while the staging
        # models' higher-order, variant and Python functions run interpreted inside it anyway.
        # mixed:1M, same day: empty build 99 -> 85 s, full 1,062 -> 971, +10,000 messages 401 -> 373,
        # staging node s -31% (docs/benchmarks.md, "Queries interpreted"). factoryMode is internal to
        # Spark (pinned in pyproject.toml); the test suite has run with it since it began.
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    }
    # An empty value (e.g. an unset env var in the profile) means "not set".
    conf.update({str(key): str(value) for key, value in (extra_conf or {}).items() if str(value) != ""})
    conf.update(env_conf(os.environ.get(SPARK_CONF_ENV, "")))
    # The project's JVM functions (cdc_unify.jvm), before any jars the profile or env adds.
    jars = [str(jvm.functions_jar()), conf.get("spark.jars", "")]
    conf["spark.jars"] = ",".join(jar for jar in jars if jar)
    return conf


def derby_dir(conf: Mapping[str, str]) -> Path | None:
    """The local folder whose embedded Derby metastore a session with `conf` opens; None when the
    settings point at a metastore service or another database (which admit many processes)."""
    match = re.fullmatch(r"jdbc:derby:;databaseName=(.+)/metastore_db;create=true", conf.get(METASTORE_URL, ""))
    if match is None or conf.get("spark.hadoop.hive.metastore.uris") or conf.get("hive.metastore.uris"):
        return None
    return Path(match.group(1))


def lock_warehouse(folder: Path, holder: str | None = None) -> int:
    """Take the warehouse folder's lock for the rest of this process's life and return its file
    descriptor; raise WarehouseInUse if another process holds it.

    flock, not a pid file: the OS releases it when the process dies however it dies (SIGKILL
    included), so a lock is never stale. A child given the descriptor (the SQL server) holds it
    too, until both have exited. `holder` (default: this command line) is what a refused process
    is told; the holder's pid comes first.
    """
    folder = folder.resolve()
    with _LOCKING:
        if folder not in _HELD_LOCKS:
            _HELD_LOCKS[folder] = take_lock(folder)
            record_holder(folder, holder or f"pid {os.getpid()}, {command_line()}")
        return _HELD_LOCKS[folder]


def take_lock(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise WarehouseInUse(in_use_message(folder, lock_holder(path))) from None
    try:
        wait_for_previous_jvm(folder, lock_fields(os.pread(fd, 4096, 0)))
    except WarehouseInUse:
        os.close(fd)
        raise
    return fd


def record_holder(folder: Path, holder: str, jvm_pid: int | None = None) -> None:
    """Write who holds the lock into the lock file (read by refused processes; the lock is the flock)."""
    fd = _HELD_LOCKS[folder.resolve()]
    text = f"holder={holder}\n" + (f"jvm={jvm_pid}\n" if jvm_pid else "")
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode(), 0)


def release_warehouse(folder: Path) -> None:
    """Close this process's lock descriptor (a child it was handed to keeps the lock)."""
    fd = _HELD_LOCKS.pop(folder.resolve(), None)
    if fd is not None:
        os.close(fd)


def command_line() -> str:
    words = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    text = shlex.join(words)
    return text if len(text) <= 120 else text[:117] + "..."


def lock_fields(data: bytes) -> dict[str, str]:
    fields = {}
    for line in data.decode(errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key] = value
    return fields


def lock_holder(path: Path) -> str:
    try:
        return lock_fields(path.read_bytes()).get("holder", "")
    except OSError:
        return ""


def in_use_message(folder: Path, holder: str) -> str:
    who = f" ({holder})" if holder else ""
    return (
        f"the warehouse {folder} is in use by another process{who}: its embedded metastore admits one process "
        f"at a time; wait for that process to finish or stop it, or use another warehouse ({WAREHOUSE_ENV})"
    )


def wait_for_previous_jvm(folder: Path, previous: Mapping[str, str]) -> None:
    """The previous holder's Spark JVM may still be shutting down (holding Derby): wait for it to
    exit, with a line on stderr every JVM_WAIT_PROGRESS_S, at most JVM_EXIT_WAIT_S."""
    pid = int(previous["jvm"]) if previous.get("jvm", "").isdigit() else None
    if pid is None:
        return
    holder = f"pid {pid}, the Spark JVM of {previous.get('holder') or 'an ended process'}"
    started = time.monotonic()
    told = 0
    while is_java_process(pid):
        waited = time.monotonic() - started
        if waited > JVM_EXIT_WAIT_S:
            raise WarehouseInUse(in_use_message(folder, holder))
        if waited >= (told + 1) * JVM_WAIT_PROGRESS_S:
            told += 1
            print(
                f"cdc-unify: waiting {waited:.0f} s (at most {JVM_EXIT_WAIT_S:.0f}) for {holder} to exit and "
                f"release the warehouse {folder}",
                file=sys.stderr,
                flush=True,
            )
        time.sleep(0.2)


def is_java_process(pid: int) -> bool:
    """True while `pid` runs a JVM (a recycled pid running something else is not the old holder)."""
    try:
        return b"java" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def env_conf(text: str) -> dict[str, str]:
    """`spark.a=1 spark.b=x` -> {"spark.a": "1", "spark.b": "x"}; a malformed entry is an error
    naming it, not a setting silently dropped."""
    settings = {}
    for entry in text.split():
        key, sep, value = entry.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"{SPARK_CONF_ENV}: {entry!r} is not key=value (e.g. spark.sql.shuffle.partitions=8)")
        settings[key] = value
    return settings


def get_spark(
    master: str | None = None,
    warehouse: str | None = None,
    extra_conf: Mapping[str, str] | None = None,
    app_name: str | None = None,
) -> SparkSession:
    """Build the process's SparkSession (or return the running one) with the project's functions registered.

    Static settings (master, warehouse, metastore) only take effect in the first call of a process.
    """
    conf = session_conf(master, warehouse, extra_conf)
    if app_name:
        conf["spark.app.name"] = app_name
    # PySpark starts Python workers with $PYSPARK_PYTHON: this interpreter (it has pandas, pyarrow
    # and cdc_unify) unless the profile names the executors' Python in spark.pyspark.python.
    os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
    configured = configured_session(conf)
    if configured is not None:
        return configured
    if not is_uri(conf["spark.sql.warehouse.dir"]):
        Path(conf["spark.sql.warehouse.dir"]).mkdir(parents=True, exist_ok=True)
    metastore = derby_dir(conf)
    starting = SparkContext._active_spark_context is None  # static settings (and the lock) apply
    if starting and metastore is not None:
        lock_warehouse(metastore)
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if starting and metastore is not None:
        record_holder(metastore, f"pid {os.getpid()}, {command_line()}", spark_jvm_pid(spark))
    spark.sparkContext.setLogLevel("ERROR")
    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
    jvm.register(spark)
    _CONFIGURED.update(conf=conf, session=spark)
    return spark


def configured_session(conf: dict[str, str]) -> SparkSession | None:
    """The running session, when the last get_spark gave it these same settings: it has them and the
    project's functions already. dbt asks for the session for every statement and adapter call, and
    configuring it again sets each of some thirty settings and registers each function once more,
    one call into the JVM apiece: 9% of a quiet build of the test suite's workload."""
    session = _CONFIGURED.get("session")
    if session is None or _CONFIGURED["conf"] != conf:
        return None
    if SparkContext._active_spark_context is None or session.sparkContext is not SparkContext._active_spark_context:
        return None
    return session


def spark_jvm_pid(spark: SparkSession) -> int | None:
    try:
        return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    except (AttributeError, Py4JError):
        return None


def spark_error_message(exc: BaseException) -> str | None:
    """The readable part of the Spark error in `exc`'s chain, or None if there is none.

    Without the JVM stack trace and without the logical plan Spark appends to analysis errors
    (often dozens of lines); both stay in the original exception.
    """
    for error in exception_chain(exc):
        if isinstance(error, PySparkException):
            origin = getattr(error, "_origin", None)
            try:
                # AnalysisException's message without the plan (but with the SQL position).
                return str(origin.getSimpleMessage())
            except (AttributeError, Py4JError):
                return str(error).split("\n\nJVM stacktrace:", 1)[0].strip()
        if isinstance(error, Py4JError) and getattr(error, "java_exception", None) is not None:
            return str(error.java_exception.toString())
    return None


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
