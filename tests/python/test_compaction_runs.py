"""Small files merged inside dbt runs (dbt/adapters/sparksession/compaction.py): a generated
canal_json workload landed in four loads (batch 1 in three of about equal size, then batch 2),
each built incrementally after the first with the merge made eager (var cdc_compact_fan_in 2:
two small files within a factor 2 of each other merge), gives every table the live rows of a full refresh of the
same input, while the appended tables hold fewer files than the loads that appended to them. The
merge step by step and killed: tests/python/test_compaction.py."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from dbt.adapters.spark.relation import SparkRelation

from cdc_unify import landing
from dbt.adapters.sparksession import compaction, pending_writes
from harness import (
    REPO_ROOT,
    _land,
    comparable,
    dbt_target,
    harness_root,
    live_rows,
    run_dbt,
    spark_session,
    table_rows,
)

sys.path.insert(0, str(REPO_ROOT / "bench"))
import workloads  # noqa: E402  (bench/ is a folder of scripts, not a package)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DIALECT = "canal_json"
FEED = "compaction_runs"
SCHEMA = "cdc_compaction"
SCHEMAS = (SCHEMA, f"{SCHEMA}_staging", f"{SCHEMA}_intermediate")
DBT_VARS = {"cdc_dialects": [DIALECT], "cdc_row_buckets": 4, "cdc_compact_fan_in": 2}
SELECTION = (f"stg_{DIALECT}__changes", "path:models/intermediate", "path:models/marts")
BATCH_1_SLICES = 3


def loads(out_dir: Path) -> list[pa.Table]:
    """Batch 1 in BATCH_1_SLICES runs of offsets per partition, in order, as the bench's successive
    runs land a delta (bench/workloads.py split_runs), then batch 2 (late messages, redeliveries)."""
    names = workloads.split_runs(out_dir, [DIALECT], "batch-1.parquet", BATCH_1_SLICES)
    return [landing.parquet_records((out_dir / DIALECT / name).read_bytes())[0] for name in [*names, "batch-2.parquet"]]


def tables() -> dict[str, str]:
    spark = spark_session()
    found = {}
    for schema in SCHEMAS:
        views = {row["viewName"] for row in spark.sql(f"show views in {schema}").collect()}
        for row in spark.sql(f"show tables in {schema}").collect():
            if not row["isTemporary"] and row["tableName"] not in views:
                found[row["tableName"]] = f"{schema}.{row['tableName']}"
    return found


def data_files(relation: str) -> list[str]:
    spark = spark_session()
    spark.sql(f"refresh table {relation}")
    return list(spark.table(relation).inputFiles())


@pytest.fixture(scope="module")
def built() -> dict[str, Any]:
    from cdc_unify.generator.run import generate

    out_dir = harness_root() / "compaction_runs"
    generate(events=300, seed=7, out_dir=out_dir, dialects=[DIALECT])
    files: list[dict[str, int]] = []
    for number, records in enumerate(loads(out_dir)):
        landed_at = dt.datetime(2024, 8, 1, number + 1, tzinfo=dt.UTC)
        _land(DIALECT, records, FEED, landed_at, replace=number == 0, one_file=True)
        flags = ["--full-refresh"] if number == 0 else []
        run_dbt("run", *flags, "--select", *SELECTION, dbt_vars=DBT_VARS, schema=SCHEMA)
        files.append({name: len(data_files(relation)) for name, relation in tables().items()})
    incremental = {name: table_rows(relation) for name, relation in tables().items()}
    # Every shuffle's partitions kept (not coalesced into one for so few rows): the full build then
    # writes a file per task, as one over millions of messages does.
    spark = spark_session()
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    try:
        # Its manifest.json tells layouts() each model's config.
        run_dbt("run", "--full-refresh", "--select", *SELECTION, dbt_vars=DBT_VARS, schema=SCHEMA, write_json=True)
    finally:
        spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
    full = {name: table_rows(relation) for name, relation in tables().items()}
    written = layouts()
    left = {
        name: mergeable_partitions(written[name], relation) for name, relation in tables().items() if name in written
    }
    return {"files": files, "incremental": incremental, "full": full, "loads": len(files), "left_by_full": left}


def layouts() -> dict[str, pending_writes.Layout]:
    """Each model's write layout, as the incremental materialization derives it from its config."""
    manifest = json.loads((dbt_target(SCHEMA, DBT_VARS) / "manifest.json").read_text())
    found = {}
    for node in manifest["nodes"].values():
        config = node["config"]
        if node["resource_type"] == "model" and config["materialized"] == "incremental":
            partition_by = config.get("partition_by") or []
            found[node["alias"]] = pending_writes.Layout(
                tuple([partition_by] if isinstance(partition_by, str) else partition_by),
                config.get("incremental_strategy") == "insert_overwrite",
                tuple(config.get("appended_partitions") or ()),
            )
    return found


def mergeable_partitions(layout: pending_writes.Layout, relation: str) -> list[str]:
    """The partitions of `relation` its model appends to (`layout`) that hold small files the merge
    would take."""
    spark = spark_session()
    schema, identifier = relation.split(".")
    files, root = pending_writes.table_folder(spark, SparkRelation.create(schema=schema, identifier=identifier))
    return [
        partition
        for partition in files.leaves(root, len(layout.partition_by))
        if not layout.replaces(partition)
        and compaction.files_to_merge(
            {files.name(path): size for path, size in files.data_files(files.partition_folder(root, partition))},
            DBT_VARS["cdc_compact_fan_in"],
        )
    ]


def test_runs_that_merge_small_files_equal_a_full_refresh(built: dict[str, Any]) -> None:
    assert sorted(built["incremental"]) == sorted(built["full"])
    for name, rows in built["incremental"].items():
        assert comparable(live_rows(name, built["full"][name])) == comparable(live_rows(name, rows)), name


def test_appended_tables_hold_fewer_files_than_their_loads(built: dict[str, Any]) -> None:
    """Every load (one file, as `cdc-unify load` lands it) brings rows to the staging table and
    int_staged_events: without the merge each would gain at least a file per load. (The staging
    model writes a file per task, and reads a small file in one: landed in a file per partition of
    the session, two files a load, the table would gain two.)"""
    for name in (f"stg_{DIALECT}__changes", "int_staged_events"):
        counts = [files[name] for files in built["files"]]
        assert counts[-1] < built["loads"], (name, counts)


def test_a_full_build_leaves_no_small_files_for_the_next_run_to_merge(built: dict[str, Any]) -> None:
    """The full refresh, its shuffles' partitions kept, writes a file per task into the partitions
    its models append to (the staging table, int_staged_events, cdc_schema_changes...): without its
    own merge they would wait for the first incremental run's."""
    assert built["left_by_full"] == dict.fromkeys(built["left_by_full"], []), built["left_by_full"]


def test_a_merge_killed_between_its_removals_is_finished_when_the_next_run_starts(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every partition of int_row_changes merged (made so whatever their files' sizes) by a merge
    that dies after removing one file; the next `dbt run`, with nothing new, finishes it in its
    on-run-start hook: every row once, one file per partition, no merge folder left."""
    relation = SparkRelation.create(schema=f"{SCHEMA}_intermediate", identifier="int_row_changes")
    name = f"{relation.schema}.{relation.identifier}"
    spark = spark_session()
    partitions = [row.partition for row in spark.sql(f"show partitions {name}").collect()]
    before = comparable(table_rows(name), without=())
    assert len(partitions) > 1
    with monkeypatch.context() as patch:
        patch.setattr(compaction, "files_to_merge", lambda sizes, fan_in: sorted(sizes))
        remove = pending_writes.LocalFiles.remove
        removed: list[Any] = []

        def remove_then_die(files: Any, path: Any) -> None:
            if removed:
                raise Killed
            removed.append(path)
            remove(files, path)

        patch.setattr(pending_writes.LocalFiles, "remove", remove_then_die)
        with pytest.raises(Killed):
            compaction.compact(spark, relation, ("key_bucket", "build_tier"), dict.fromkeys(partitions, set()), 2)
    location = pending_writes.table_location(spark, relation)
    files = pending_writes.table_files(spark, location)
    folder = files.child(files.root(location), compaction.FOLDER)
    assert files.exists(folder)
    run_dbt("run", "--select", *SELECTION, dbt_vars=DBT_VARS, schema=SCHEMA)
    assert not files.exists(folder)
    assert comparable(table_rows(name), without=()) == before
    assert len(data_files(name)) == len(partitions)


class Killed(Exception):
    """Stands for the process dying: nothing after the step runs."""


# The models whose tables are laid out by var cdc_row_buckets (macro cdc_row_buckets_layout).
BUCKETED = ("int_change_events", "int_row_changes", "int_row_versions", "int_current_rows")
LAYOUT_PROPERTY = "cdc_unify.layout.cdc_row_buckets"


def held_bucket_count(relation: str) -> str | None:
    found = spark_session().sql(f"show tblproperties {relation}").collect()
    return next((row.value for row in found if row.key == LAYOUT_PROPERTY), None)


def test_a_run_with_another_bucket_count_fails_before_it_writes(built: dict[str, Any]) -> None:
    """The full build keeps each bucketed table's count with it; an incremental run of each with
    another count fails naming both counts and the full refresh, and no table changes. Without the
    check the run would hash rows into other buckets and pair slices than the stored ones. A table
    that keeps no count (built before counts were kept) refuses a count smaller than its partitions
    show, and keeps the count of its next run."""
    count = DBT_VARS["cdc_row_buckets"]
    tables_now = tables()
    assert {model: held_bucket_count(tables_now[model]) for model in BUCKETED} == dict.fromkeys(BUCKETED, str(count))
    before = {name: sorted(data_files(relation)) for name, relation in tables_now.items()}
    for model in BUCKETED:
        message = failed_run(model, count * 2)
        assert f"cdc_row_buckets: {count} -> {count * 2}" in message, message
        assert f"--full-refresh --select {model}+" in message, message
    versions = tables_now["int_row_versions"]
    spark_session().sql(f"alter table {versions} unset tblproperties ('{LAYOUT_PROPERTY}')")
    message = failed_run("int_row_versions", count // 2)
    assert "holds partition key_bucket=" in message, message
    assert f"more buckets than this run's cdc_row_buckets ({count // 2})" in message, message
    assert held_bucket_count(versions) is None
    run_dbt("run", "--select", "int_row_versions", dbt_vars=DBT_VARS, schema=SCHEMA)
    assert held_bucket_count(versions) == str(count)
    assert {name: sorted(data_files(relation)) for name, relation in tables().items()} == before


def failed_run(model: str, buckets: int) -> str:
    """The message of an incremental `dbt run` of `model` with var cdc_row_buckets `buckets`, which must fail."""
    with pytest.raises(AssertionError) as failed:
        run_dbt("run", "--select", model, dbt_vars={**DBT_VARS, "cdc_row_buckets": buckets}, schema=SCHEMA)
    return str(failed.value)
