"""Config write_distributed_by: one file per partition folder and write (src/dbt/include/
sparksession/macros/python_model.sql, macro sparksession_distributed).

A fixture project writes 400 rows in 8 partitions from an input of 4 Spark partitions, so every
write task holds rows of every partition. A model without the config is the control: its write
leaves 4 files in each partition folder (one per task), which is what int_row_changes and
cdc_row_history did with their 64 key_buckets, and each later scan of the table listed and
opened them all. The same model with the config, as an incremental model (its full build and an
incremental insert_overwrite run), as a table and as a Python model, leaves exactly one file in
each folder, with the same rows.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from dbt.cli.main import dbtRunner

from harness import REPO_ROOT, profile_schema, spark_session, write_fixture_project

SCHEMA = "write_distribution"
ROWS, PARTITIONS, TASKS = 400, 8, 4
QUERY = f"select id, cast(id % {PARTITIONS} as int) as bucket from range(0, {ROWS}, 1, {TASKS})"
INCREMENTAL = "materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['bucket']"
MODELS = {
    "undistributed": f"{{{{ config({INCREMENTAL}) }}}}\n{QUERY}\n",
    "distributed": f"{{{{ config({INCREMENTAL}, write_distributed_by=['bucket']) }}}}\n{QUERY}\n",
    "distributed_table": (
        "{{ config(materialized='table', partition_by=['bucket'], write_distributed_by='bucket') }}\n" + QUERY + "\n"
    ),
}
PYTHON_MODEL = f"""
def model(dbt, spark):
    dbt.config(materialized="table", partition_by=["bucket"], write_distributed_by=["bucket"])
    return spark.range(0, {ROWS}, 1, {TASKS}).selectExpr("id", "cast(id % {PARTITIONS} as int) as bucket")
"""


def write_models(root: Path) -> None:
    write_fixture_project(root, "write_distribution_fixture", {"+file_format": "parquet"})
    for name, sql in MODELS.items():
        (root / "models" / f"{name}.sql").write_text(sql, encoding="utf-8")
    (root / "models" / "distributed_python.py").write_text(PYTHON_MODEL, encoding="utf-8")


def run(root: Path, *args: str) -> Any:
    cli = [*args, "--project-dir", str(root), "--profiles-dir", str(REPO_ROOT / "profiles")]
    result = dbtRunner().invoke(cli + ["--target-path", str(root / "target"), "--log-path", str(root / "logs")])
    if not result.success:
        raise AssertionError(f"dbt {' '.join(args)} failed: {result.exception or result.result}")
    return result


def files_per_folder(model: str) -> Counter[str]:
    files = spark_session().table(f"{SCHEMA}.{model}").inputFiles()
    return Counter(Path(file).parent.name for file in files)


def rows_per_bucket(model: str) -> dict[int, int]:
    rows = spark_session().sql(f"select bucket, count(*) as n from {SCHEMA}.{model} group by bucket").collect()
    return {row["bucket"]: row["n"] for row in rows}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Counter[str]]]:
    """Files per partition folder of each model after its full build and after an incremental run."""
    root = tmp_path_factory.mktemp("write_distribution_project")
    write_models(root)
    spark_session()
    models = [*MODELS, "distributed_python"]
    files = {}
    with profile_schema(SCHEMA):
        for step, flags in (("full", ["--full-refresh"]), ("incremental", [])):
            run(root, "run", *flags)
            files[step] = {model: files_per_folder(model) for model in models}
    return files


@pytest.mark.spark
def test_without_the_config_every_task_writes_a_file_into_every_folder(project) -> None:
    for step in ("full", "incremental"):
        assert project[step]["undistributed"] == {f"bucket={b}": TASKS for b in range(PARTITIONS)}


@pytest.mark.spark
@pytest.mark.parametrize("model", ["distributed", "distributed_table", "distributed_python"])
def test_with_the_config_each_folder_gets_one_file_per_write(project, model: str) -> None:
    for step in ("full", "incremental"):
        assert project[step][model] == {f"bucket={b}": 1 for b in range(PARTITIONS)}, step
    assert rows_per_bucket(model) == {b: ROWS // PARTITIONS for b in range(PARTITIONS)}
