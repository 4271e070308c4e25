"""In-process test harness: one SparkSession for the whole pytest run, dbt through dbtRunner.

A dbt subprocess starts a JVM (~10 s); staging tests run dbt dozens of times, so they share
this process's session instead: the `sparksession` adapter's getOrCreate() returns it.

    rows = stage_messages("canal_json", [b'{"type": "INSERT", ...}', None])
    rows = stage_generated("canal_json", out_dir)
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_unify import landing
from cdc_unify.spark import get_spark

REPO_ROOT = Path(__file__).resolve().parents[2]
_STATE: dict[str, Any] = {}
# Landing rows of a test get a fixed landed_at, so staged output does not depend on the clock.
LANDED_AT = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


def harness_root() -> Path:
    if "root" not in _STATE:
        _STATE["root"] = Path(tempfile.mkdtemp(prefix="cdc-unify-harness-"))
    return _STATE["root"]


def spark_session() -> SparkSession:
    """The process's session, on a warehouse of its own (created on first use)."""
    root = harness_root()
    os.environ["CDC_UNIFY_WAREHOUSE"] = str(root / "warehouse")
    os.environ.setdefault("DBT_TARGET_PATH", str(root / "target"))
    os.environ.setdefault("DBT_LOG_PATH", str(root / "logs"))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    return get_spark(master="local[2]", warehouse=str(root / "warehouse"))


def run_dbt(*args: str, dbt_vars: dict | None = None) -> Any:
    """`dbt <args>` in this process on the project; raises with dbt's own message on failure."""
    spark_session()
    cli = [*args, "--project-dir", str(REPO_ROOT), "--profiles-dir", str(REPO_ROOT / "profiles")]
    if dbt_vars:
        cli += ["--vars", json.dumps(dbt_vars)]
    result = dbtRunner().invoke(cli)
    if not result.success:
        details = result.exception or [
            f"{r.node.name}: {r.message}" for r in getattr(result.result, "results", []) if r.status != "success"
        ]
        raise AssertionError(f"dbt {' '.join(args)} failed: {details}")
    return result


def _replace_landing(dialect: str, records: pa.Table, feed: str) -> None:
    spark = spark_session()
    landing.create_landing_tables(spark)
    spark.sql(f"truncate table {landing.landing_table(dialect)}")
    rows = landing.kafka_to_landing(spark.createDataFrame(records), feed, F.lit(LANDED_AT))
    landing.append_landing(rows, dialect)


def _run_staging(dialect: str, dbt_vars: dict | None) -> list[dict]:
    result = run_dbt("run", "--select", f"stg_{dialect}__changes", dbt_vars=dbt_vars)
    # results also hold the on-run-start hook: take the staging model's own result.
    relation = next(r.node.relation_name for r in result.result.results if r.node.name == f"stg_{dialect}__changes")
    staged = spark_session().table(relation).orderBy("landing_partition", "landing_offset", "row_index")
    return [row.asDict(recursive=True) for row in staged.collect()]


def stage_messages(
    dialect: str,
    values: list[bytes | None],
    keys: list[bytes | None] | None = None,
    feed: str = "test_feed",
    dbt_vars: dict | None = None,
) -> list[dict]:
    """Land `values` (offsets 0..n-1, partition 0) in a fresh landing table and stage them."""
    keys = keys if keys is not None else [None] * len(values)
    if len(keys) != len(values):
        raise ValueError("keys and values differ in length")
    records = pa.table(
        {
            "topic": pa.array([feed] * len(values), pa.string()),
            "partition": pa.array([0] * len(values), pa.int32()),
            "offset": pa.array(range(len(values)), pa.int64()),
            "timestamp": pa.array([LANDED_AT] * len(values), pa.timestamp("us", tz="UTC")),
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.binary()),
        }
    )
    _replace_landing(dialect, records, feed)
    return _run_staging(dialect, dbt_vars)


def stage_generated(
    dialect: str,
    out_dir: Path,
    batches: tuple[int, ...] = (1, 2),
    feed: str = "generated",
    dbt_vars: dict | None = None,
) -> list[dict]:
    """Land a generator output's batches for `dialect` in a fresh landing table and stage them."""
    tables = [
        landing.parquet_records((Path(out_dir) / dialect / f"batch-{n}.parquet").read_bytes())[0] for n in batches
    ]
    _replace_landing(dialect, pa.concat_tables(tables), feed)
    return _run_staging(dialect, dbt_vars)
