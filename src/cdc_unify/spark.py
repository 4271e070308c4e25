"""The one SparkSession of a process: dbt's `sparksession` adapter and the CLI both use it.

Locally everything lives in ONE folder (env `CDC_UNIFY_WAREHOUSE`, default `<project>/.warehouse`):
the Parquet tables and the embedded Derby metastore that remembers them.  Derby allows one
process per metastore, so concurrent runs need different warehouse folders.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from cdc_unify import udfs

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
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={local_dir} -Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}"
        ),
        "spark.sql.sources.default": "parquet",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
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
    }
    # An empty value (e.g. an unset env var in the profile) means "not set".
    conf.update({str(key): str(value) for key, value in (extra_conf or {}).items() if str(value) != ""})
    conf.update(env_conf(os.environ.get(SPARK_CONF_ENV, "")))
    return conf


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
    if not is_uri(conf["spark.sql.warehouse.dir"]):
        Path(conf["spark.sql.warehouse.dir"]).mkdir(parents=True, exist_ok=True)
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
    udfs.register(spark)
    return spark


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
