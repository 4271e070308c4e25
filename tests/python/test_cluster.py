"""The same dbt run on a Spark standalone cluster (scripts/cluster-demo.sh: one master, two
workers on 127.0.0.1) and in-process (local[2]) gives the same marts.

One small generated workload of a SQL dialect (canal_json) and both Python-model dialects
(debezium_json: JSON decoded in Python; dts_avro: fastavro), so executors must run the Python
models and the Python UDF. Both sides land the same two batches with the same landing times
(bench/spark_steps.py `land`) and build from scratch.

Starting a cluster, landing through it and building twice takes several minutes on a 2-core
machine, more than the CI budget allows: the test runs only with CDC_UNIFY_CLUSTER_TEST=1.

    CDC_UNIFY_CLUSTER_TEST=1 .venv/bin/pytest tests/python/test_cluster.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pyspark.sql import DataFrame

from cdc_unify import landing
from cdc_unify.generator.run import generate
from harness import REPO_ROOT, comparable, run_dbt, spark_session

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("CDC_UNIFY_CLUSTER_TEST") != "1", reason="starts a Spark cluster: set CDC_UNIFY_CLUSTER_TEST=1"
    ),
]

DIALECTS = ("canal_json", "debezium_json", "dts_avro")
SCHEMA = "cdc_unify"
MARTS = (
    "cdc_change_events",
    "cdc_row_history",
    "cdc_current_rows",
    "cdc_schema_changes",
    "cdc_dead_letters",
    "cdc_dead_letter_counts",
    "cdc_feed_health",
)
SELECTION = [f"stg_{dialect}__changes+" for dialect in DIALECTS]
DBT_VARS = {"cdc_dialects": list(DIALECTS)}
# Not the default 7077, so a cluster someone runs by hand does not get in the way.
MASTER_PORT = "17077"


def spark_steps() -> ModuleType:
    """bench/spark_steps.py, whose `land` the cluster demo uses too."""
    spec = importlib.util.spec_from_file_location("spark_steps", REPO_ROOT / "bench" / "spark_steps.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def canonical_rows(frame: DataFrame) -> Counter[str]:
    """Rows as sorted-key JSON (maps compare by content), counted: order-free table equality. Without
    built_at: the cluster build and the local one are two runs."""
    return comparable([row.asDict(recursive=True) for row in frame.collect()])


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("cluster_workload")
    generate(events=200, seed=5, out_dir=out_dir, dialects=DIALECTS)
    return out_dir


@pytest.fixture(scope="module")
def cluster_warehouse(workload: Path, sandbox_factory) -> Path:
    """Marts built by `scripts/cluster-demo.sh run ...` (the cluster is stopped when it returns)."""
    sandbox = sandbox_factory("cluster_demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUSTER_DEMO_DIR", str(sandbox.root))
        patch.setenv("CLUSTER_DEMO_DATA", str(workload))
        patch.setenv("CLUSTER_MASTER_PORT", MASTER_PORT)
        result = sandbox.run(
            ["bash", str(REPO_ROOT / "scripts" / "cluster-demo.sh"), "run", "--select", *SELECTION,
             "--vars", json.dumps(DBT_VARS)]
        )  # fmt: skip
    assert result.returncode == 0, result.output[-5000:]
    assert "executors launched for it: 2" in result.output, result.output[-2000:]
    return sandbox.root / "warehouse"


# Reads every mart through the cluster warehouse's own metastore (views such as cdc_change_events
# have no files of their own) and writes it as Parquet where this process's session can read it.
EXPORT_MARTS = """
import sys
from cdc_unify.spark import get_spark
warehouse, out, schema, *marts = sys.argv[1:]
spark = get_spark(master="local[1]", warehouse=warehouse)
for mart in marts:
    spark.table(f"`{schema}`.`{mart}`").write.parquet(f"{out}/{mart}")
"""


@pytest.fixture(scope="module")
def cluster_marts(cluster_warehouse: Path, sandbox_factory) -> Path:
    """The marts of the cluster build as analysts see them there, one Parquet folder each."""
    sandbox = sandbox_factory("cluster_marts")
    out = sandbox.root / "marts"
    result = sandbox.run([sys.executable, "-c", EXPORT_MARTS, str(cluster_warehouse), str(out), SCHEMA, *MARTS])
    assert result.returncode == 0, result.output[-5000:]
    return out


@pytest.fixture(scope="module")
def local_build(workload: Path) -> None:
    """The same landing and dbt run in this process's local[2] session."""
    spark = spark_session()
    landing.create_landing_tables(spark)
    for dialect in DIALECTS:
        spark.sql(f"truncate table {landing.landing_table(dialect)}")
    land = spark_steps().land
    for batch in (1, 2):
        land(spark, workload, batch)
    run_dbt("run", "--full-refresh", "--select", *SELECTION, dbt_vars=DBT_VARS)


@pytest.mark.parametrize("mart", MARTS)
def test_cluster_marts_equal_local_marts(mart: str, cluster_marts: Path, local_build: None) -> None:
    spark = spark_session()
    local = spark.table(f"`{SCHEMA}`.`{mart}`")
    on_cluster = spark.read.parquet(str(cluster_marts / mart)).select(*local.columns)
    local_rows = canonical_rows(local)
    assert local_rows, f"{mart} is empty: the comparison would prove nothing"
    assert canonical_rows(on_cluster) == local_rows


def test_cluster_build_read_every_landed_message(cluster_marts: Path, workload: Path) -> None:
    health = spark_session().read.parquet(str(cluster_marts / "cdc_feed_health"))
    landed = {row.dialect: row.landed_messages for row in health.collect()}
    manifest = json.loads((workload / "manifest.json").read_text())
    expected: dict[str, Any] = {d: manifest["per_dialect"][d]["totals"]["messages"] for d in DIALECTS}
    assert landed == expected
