"""Small appended files merged (dbt/adapters/sparksession/compaction.py): which files a partition
merges, that a merge keeps every row and the files a write just added, and that one stopped at any
step (as by a killed process) is finished or undone by the next run, never losing or doubling a row.
The merge inside dbt builds, a killed one included: tests/python/test_compaction_runs.py."""

from __future__ import annotations

import functools
import json
import math
import random
import shutil
from collections import Counter
from typing import Any

import pytest
from dbt.adapters.spark.relation import SparkRelation

from dbt.adapters.sparksession import compaction, newest_values, pending_writes
from harness import spark_session

SCHEMA = "compaction_test"
KIB = 1024


def test_no_fan_in_files_within_a_factor_fan_in_merge_nothing() -> None:
    sizes = {"a": 5 * KIB, "b": 6 * KIB, "c": 40 * KIB, "d": 300 * KIB}
    assert compaction.files_to_merge(sizes, 4) == []


def test_the_smallest_window_of_fan_in_sizes_merges_with_every_smaller_file() -> None:
    # 20-60 KiB: four files within a factor 4 of 20 KiB; 5 KiB is smaller, 300 KiB is not in it.
    sizes = {"tiny": 5 * KIB, "t1": 20 * KIB, "t2": 30 * KIB, "t3": 40 * KIB, "t4": 60 * KIB, "big": 300 * KIB}
    assert compaction.files_to_merge(sizes, 4) == ["t1", "t2", "t3", "t4", "tiny"]


def test_files_of_about_one_size_merge_whichever_side_of_a_power_of_fan_in_they_fall() -> None:
    # 16 KiB = 4^7: fixed tiers put three of these in one tier and the fourth in the next, and
    # merged none of them (the run files of int_row_changes' buckets, docs/benchmarks.md).
    sizes = {"r1": 15 * KIB, "r2": 14 * KIB, "r3": 15 * KIB + 512, "r4": 17 * KIB}
    assert compaction.files_to_merge(sizes, 4) == ["r1", "r2", "r3", "r4"]
    assert compaction.files_to_merge({"r1": 15 * KIB, "r2": 14 * KIB, "r4": 17 * KIB}, 4) == []


def test_every_small_file_within_the_window_merges_not_just_fan_in_of_them() -> None:
    sizes = {f"r{i}": 10 * KIB + i for i in range(6)} | {"m": 39 * KIB, "big": 41 * KIB}
    assert compaction.files_to_merge(sizes, 4) == sorted([f"r{i}" for i in range(6)] + ["m"])


def test_large_files_are_never_merged() -> None:
    large = compaction.SMALL_FILE_BYTES
    assert compaction.files_to_merge({str(i): large + i for i in range(10)}, 2) == []
    assert compaction.files_to_merge({"a": 10, "b": 11, "c": large}, 2) == ["a", "b"]


def test_fan_in_below_two_merges_nothing() -> None:
    assert compaction.files_to_merge({"a": 10, "b": 10}, 1) == []
    assert compaction.files_to_merge({"a": 10, "b": 10}, 0) == []


@pytest.mark.parametrize(
    "run_bytes",
    [lambda rng: 10 * KIB, lambda rng: rng.randint(11_000, 21_000), lambda rng: rng.randint(1_000, 100_000)],
    ids=["equal", "straddling-16-KiB", "spread"],
)
def test_each_byte_is_merged_a_bounded_number_of_times_and_files_stay_few(run_bytes) -> None:
    """Runs appending one file each to a partition: the files it holds stay below (fan_in - 1) per
    factor fan_in of sizes plus two, and each appended byte is rewritten at most once per such
    factor between the smallest run file and all the runs' bytes."""
    fan_in, rng = 4, random.Random(7)
    files: dict[str, int] = {}
    rewritten = appended = most = 0
    smallest = compaction.SMALL_FILE_BYTES
    for run in range(2000):
        merged = compaction.files_to_merge(files, fan_in)
        rewritten += sum(files[name] for name in merged)
        if merged:
            files[f"m{run}"] = sum(files.pop(name) for name in merged)
        files[f"r{run}"] = size = run_bytes(rng)
        appended, smallest, most = appended + size, min(smallest, size), max(most, len(files))
    factors = math.ceil(math.log(appended / smallest, fan_in))
    assert most <= (fan_in - 1) * factors + 2
    assert rewritten <= factors * appended


@pytest.fixture(params=["local-files-by-python", "files-by-hadoop"])
def file_operations(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending_writes, "LOCAL_FILES_BY_PYTHON", request.param == "local-files-by-python")


class Killed(Exception):
    """Stands for the process dying: nothing after the step runs."""


TARGET = SparkRelation.create(schema=SCHEMA, identifier="target")
PARTITION_BY = ("bucket", "feed")
# Appended one write at a time: bucket 1's and the escaped feed's partitions gain five small files
# each, bucket 2 one.
WRITES = [[(1, "a", f"v{i}"), (7, "x:y/z 'q'", f"w{i}")] for i in range(5)] + [[(2, "a", "u")]]


def create_table(name: str) -> None:
    spark_session().sql(
        f"create table {SCHEMA}.{name} (value string, at timestamp, bucket int, feed string)"
        " using parquet partitioned by (bucket, feed)"
    )


@functools.cache
def written_template() -> str:
    """The location of a table holding WRITES, written once per process: the six writes are a Spark
    job and a metastore update each (about 2.5 s), and a copy of their files is what a test needs."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {SCHEMA}.written_template")
    create_table("written_template")
    for i, written in enumerate(WRITES):
        frame = spark.createDataFrame(written, "bucket int, feed string, value string")
        frame = frame.selectExpr("value", f"timestamp_seconds({i}) as at", "bucket", "feed")
        frame.coalesce(1).write.insertInto(f"{SCHEMA}.written_template")
    return pending_writes.table_location(spark, SparkRelation.create(schema=SCHEMA, identifier="written_template"))


def create_target() -> None:
    """Table `target` as the WRITES leave it: the template's files (names and sizes kept) copied
    into a new table's folder, its partitions recovered into the metastore."""
    template = written_template()
    spark = spark_session()
    for name in ("target", f"target{compaction.LEGACY_SUFFIX}"):
        spark.sql(f"drop table if exists {SCHEMA}.{name}")
    create_table("target")
    local = pending_writes.LocalFiles()
    target = pending_writes.table_location(spark, TARGET)
    shutil.copytree(local.root(template), local.root(target), dirs_exist_ok=True)
    spark.sql(f"alter table {SCHEMA}.target recover partitions")


def rows() -> Counter[str]:
    spark = spark_session()
    spark.sql(f"refresh table {SCHEMA}.target")
    frame = spark.table(f"{SCHEMA}.target").selectExpr("value", "unix_seconds(at) as at", "bucket", "feed")
    return Counter(json.dumps(row.asDict(), sort_keys=True) for row in frame.collect())


def expected_rows() -> Counter[str]:
    return Counter(
        json.dumps({"at": i, "bucket": b, "feed": f, "value": v}, sort_keys=True)
        for i, w in enumerate(WRITES)
        for b, f, v in w
    )


def table_root() -> tuple[pending_writes.TableFiles, Any]:
    spark = spark_session()
    location = pending_writes.table_location(spark, TARGET)
    files = pending_writes.table_files(spark, location)
    return files, files.root(location)


def merge_left() -> bool:
    """Whether a merge's folder is left in the table's."""
    files, root = table_root()
    return bool(files.exists(files.child(root, compaction.FOLDER)))


def partition_files() -> dict[str, set[str]]:
    files, root = table_root()
    return {
        partition: {files.name(path) for path, _ in files.data_files(files.partition_folder(root, partition))}
        for partition in files.leaves(root, 2)
    }


ESCAPED = "bucket=7/feed=x%3Ay%2Fz %27q%27"


def last_written(stored: dict[str, set[str]]) -> dict[str, set[str]]:
    """What the newest write appended: one file of bucket 1's partition (its newest by name order is
    as good as any: the merge must leave whichever it is told of)."""
    return {"bucket=1/feed=a": {max(stored["bucket=1/feed=a"])}, ESCAPED: set(), "bucket=2/feed=a": set()}


def compact(fan_in: int = 4) -> int:
    stored = partition_files()
    return compaction.compact(spark_session(), TARGET, PARTITION_BY, last_written(stored), fan_in)


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
def test_a_merge_keeps_every_row_and_the_files_just_written() -> None:
    create_target()
    before = partition_files()
    assert [len(before[p]) for p in ("bucket=1/feed=a", ESCAPED, "bucket=2/feed=a")] == [5, 5, 1]
    assert compact() == 9
    after = partition_files()
    kept = max(before["bucket=1/feed=a"])
    assert kept in after["bucket=1/feed=a"] and len(after["bucket=1/feed=a"]) == 2
    assert len(after[ESCAPED]) == 1 and after["bucket=2/feed=a"] == before["bucket=2/feed=a"]
    assert rows() == expected_rows()
    assert not merge_left()
    assert compact() == 0


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
def test_a_full_build_merges_its_own_small_files_in_every_partition_it_appends_to() -> None:
    """As a full build leaves it, no file is the newest write's: all of a partition's merge."""
    create_target()
    before = partition_files()
    layout = pending_writes.Layout(PARTITION_BY, compact_fan_in=4)
    assert compaction.compact_built(spark_session(), TARGET, layout) == 10
    after = partition_files()
    assert len(after["bucket=1/feed=a"]) == len(after[ESCAPED]) == 1
    assert after["bucket=2/feed=a"] == before["bucket=2/feed=a"]
    assert rows() == expected_rows()
    assert not merge_left()


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
def test_a_full_build_leaves_the_partitions_it_replaces_and_merges_nothing_at_fan_in_zero() -> None:
    create_target()
    before = partition_files()
    spark = spark_session()
    replacing = pending_writes.Layout(PARTITION_BY, replace=True, appended=("bucket=7/*",), compact_fan_in=4)
    assert compaction.compact_built(spark, TARGET, pending_writes.Layout(PARTITION_BY)) == 0
    assert compaction.compact_built(spark, TARGET, replacing) == 5
    after = partition_files()
    assert after["bucket=1/feed=a"] == before["bucket=1/feed=a"] and len(after[ESCAPED]) == 1
    assert rows() == expected_rows()


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
def test_stored_newest_values_follow_the_merged_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(newest_values, "KEEP_FROM_BYTES", 0)
    create_target()
    spark = spark_session()
    location = pending_writes.table_location(spark, TARGET)
    files = pending_writes.table_files(spark, location)
    root, table = files.root(location), pending_writes.quoted(TARGET)
    newest = newest_values.Newest("feed", "at")
    newest_values.store_computed(spark, files, table, root, [newest])
    compact()
    stored_token, values = newest_values.decode(newest_values.stored(spark, table)[newest.key])
    assert stored_token == newest_values.token(files.file_entries(root))
    assert values == newest_values.compute(spark, table, newest)


def die(*args: Any, **kwargs: Any) -> None:
    raise Killed


def after_calls(count: int, step: Any) -> Any:
    calls: list[Any] = []

    def stopped(*args: Any) -> Any:
        if len(calls) == count:
            raise Killed
        calls.append(args)
        return step(*args)

    return stopped


# Where a merge dies, and whether the next run finds it undone (True: the table untouched) or
# finished (False).
KILLS = {
    "writing-the-merged-rows": ("parquet", True),
    "before-the-list": ("write_text_atomically", True),
    "between-removals": ("remove", False),
    "between-moves": ("move_files", False),
    "before-the-folder-is-removed": ("finish", False),
}


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
@pytest.mark.parametrize("kill", KILLS)
def test_a_killed_merge_is_finished_or_undone_by_the_next_run(kill: str, monkeypatch: pytest.MonkeyPatch) -> None:
    step, undone = KILLS[kill]
    create_target()
    before = partition_files()
    spark = spark_session()
    with monkeypatch.context() as patch:
        if step == "parquet":
            from pyspark.sql.readwriter import DataFrameWriter

            write = DataFrameWriter.parquet

            def half_written(writer: Any, path: str) -> None:
                # Killed before Spark committed the write: files in its _temporary folder only.
                write(writer, f"{path}/_temporary/0")
                raise Killed

            patch.setattr(DataFrameWriter, "parquet", half_written)
        elif step == "finish":
            patch.setattr(compaction, "finish", then_die(compaction.finish))
        elif step == "write_text_atomically":
            patch.setattr(pending_writes.TableFiles, step, die)
        else:
            for kind in (pending_writes.LocalFiles, pending_writes.HadoopFiles):
                patch.setattr(kind, step, after_calls(1, getattr(kind, step)))
        with pytest.raises(Killed):
            compact()
    assert merge_left()
    assert compaction.apply_killed(spark, TARGET, len(PARTITION_BY))
    assert rows() == expected_rows()
    after = partition_files()
    if undone:
        assert after == before
    else:
        assert len(after["bucket=1/feed=a"]) == 2 and len(after[ESCAPED]) == 1
    assert not merge_left()
    assert not compaction.apply_killed(spark, TARGET, len(PARTITION_BY))
    assert compact() == (9 if undone else 0)
    assert rows() == expected_rows()


def then_die(step: Any) -> Any:
    """`step` run whole, then the process dies (before what its caller does next)."""

    def stopped(*args: Any) -> None:
        step(*args)
        raise Killed

    return stopped


@pytest.mark.spark
def test_a_table_whose_schema_does_not_exist_yet_has_no_merge_to_finish() -> None:
    """The first run's on-run-start hook asks before dbt has created the model's schema."""
    missing = SparkRelation.create(schema="compaction_test_never_created", identifier="target")
    assert not compaction.apply_killed(spark_session(), missing, 1)


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
def test_a_full_build_drops_a_killed_merge() -> None:
    create_target()
    spark = spark_session()
    files, root = table_root()
    files.make_folder(files.child(root, compaction.FOLDER))
    files.write_text(files.child(root, f"{compaction.FOLDER}/{compaction.SUPERSEDED}"), "bucket=2/feed=a/x:1")
    spark.sql(f"create table {SCHEMA}.target{compaction.LEGACY_SUFFIX} using parquet as select 1 as x")
    compaction.drop(spark, TARGET)
    assert not merge_left()
    assert not spark.catalog.tableExists(f"{SCHEMA}.target{compaction.LEGACY_SUFFIX}")
    assert rows() == expected_rows()


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
def test_a_killed_merge_of_the_version_that_wrote_a_table_is_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the hidden folder the merged rows went to `<table>__dbt_compacting` (a managed table,
    its list in its folder): one a killed run left, files already removed, is finished, not lost."""
    create_target()
    spark = spark_session()
    with monkeypatch.context() as patch:
        for kind in (pending_writes.LocalFiles, pending_writes.HadoopFiles):
            patch.setattr(kind, "remove", after_calls(2, kind.remove))
        with pytest.raises(Killed):
            compact()
    files, root = table_root()
    folder = files.child(root, compaction.FOLDER)
    legacy = f"{SCHEMA}.target{compaction.LEGACY_SUFFIX}"
    merged = spark.read.option("basePath", files.uri(folder)).parquet(files.uri(folder))
    merged.write.partitionBy(*PARTITION_BY).saveAsTable(legacy)
    legacy_root = files.root(pending_writes.table_location(spark, compaction.legacy_table(TARGET)))
    files.write_text(
        files.child(legacy_root, compaction.SUPERSEDED), files.read_text(files.child(folder, compaction.SUPERSEDED))
    )
    files.remove(folder)
    assert rows() != expected_rows()
    assert compaction.apply_killed(spark, TARGET, len(PARTITION_BY))
    assert rows() == expected_rows()
    assert not spark.catalog.tableExists(legacy)
    assert not compaction.apply_killed(spark, TARGET, len(PARTITION_BY))


@pytest.mark.spark
@pytest.mark.usefixtures("file_operations")
def test_the_run_start_hook_finds_what_a_killed_merge_left_from_one_look_at_the_schema(tmp_path: Any) -> None:
    """compaction.killed_left_work, what the hook's apply_killed_writes decides by: locations as
    `describe` gives them (an external table in a folder with a space included, views left out),
    and work left exactly when the merge folder or a compacting table of the version before is."""
    create_target()
    spark = spark_session()
    external = tmp_path / "a folder"
    spark.sql(f"drop table if exists {SCHEMA}.elsewhere")
    spark.sql(f"create table {SCHEMA}.elsewhere (x int) using parquet location '{external}'")
    spark.sql(f"create or replace view {SCHEMA}.a_view as select 1 as x")
    locations = pending_writes.table_locations(spark, {SCHEMA, "no_such_schema"})
    tables = [TARGET, SparkRelation.create(schema=SCHEMA, identifier="elsewhere")]
    for table in tables:
        assert locations[(SCHEMA, table.identifier)] == pending_writes.table_location(spark, table)
    assert (SCHEMA, "a_view") not in locations
    assert "a folder" in locations[(SCHEMA, "elsewhere")]
    assert not compaction.killed_left_work(spark, TARGET, locations)
    missing = SparkRelation.create(schema=SCHEMA, identifier="not_built")
    assert not compaction.killed_left_work(spark, missing, locations)

    files, root = table_root()
    files.make_folder(files.child(root, compaction.FOLDER))
    assert compaction.killed_left_work(spark, TARGET, locations)
    files.remove(files.child(root, compaction.FOLDER))
    spark.sql(f"create table {SCHEMA}.not_built{compaction.LEGACY_SUFFIX} using parquet as select 1 as x")
    assert compaction.killed_left_work(spark, missing, pending_writes.table_locations(spark, {SCHEMA}))
    spark.sql(f"drop table {SCHEMA}.not_built{compaction.LEGACY_SUFFIX}")
    spark.sql(f"drop table {SCHEMA}.elsewhere")
    spark.sql(f"drop view {SCHEMA}.a_view")
