"""The sparksession adapter's kill-safe writes (dbt/adapters/sparksession/pending_writes.py), step by
step: a write stopped at any step (as by a killed process) and applied again gives the table the
rows of a write that was never stopped; one stopped before its pending files are all written is
discarded. The whole build killed at chosen points: tests/python/test_kill_rerun.py (opt-in)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from dbt.adapters.spark.relation import SparkRelation

from dbt.adapters.sparksession import pending_writes
from harness import spark_session

pytestmark = [pytest.mark.spark]

SCHEMA = "pending_writes_test"


@pytest.fixture(autouse=True, params=["local-files-by-python", "files-by-hadoop"])
def file_operations(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write both ways: a local warehouse's folders by Python, a cluster's by Hadoop."""
    monkeypatch.setattr(pending_writes, "LOCAL_FILES_BY_PYTHON", request.param == "local-files-by-python")


class Killed(Exception):
    """Stands for the process dying: nothing after the step runs."""


def relation(name: str) -> SparkRelation:
    return SparkRelation.create(schema=SCHEMA, identifier=name)


def rows(name: str) -> Counter[str]:
    frame = spark_session().table(f"{SCHEMA}.{name}")
    return Counter(json.dumps(row.asDict(), sort_keys=True) for row in frame.collect())


def create(name: str, values: list[tuple[int, str]], partitioned: bool) -> None:
    """Table `name` of (bucket, value) rows, in several files per partition."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {SCHEMA}.{name}")
    partitioning = "partitioned by (bucket)" if partitioned else ""
    spark.sql(f"create table {SCHEMA}.{name} (value string, bucket int) using parquet {partitioning}")
    frame = spark.createDataFrame(values, "bucket int, value string").select("value", "bucket")
    frame.repartition(2).write.insertInto(f"{SCHEMA}.{name}")


def pend(values: list[tuple[int, str]], partitioned: bool, on_schema_change: str = "fail") -> None:
    """The pending write of (bucket, value) rows for table `target`, in several files per partition."""
    frame = spark_session().createDataFrame(values, "bucket int, value string").select("value", "bucket")
    pending_writes.write_pending(
        spark_session(),
        frame.repartition(2),
        relation("target"),
        ("bucket",) if partitioned else (),
        "parquet",
        on_schema_change,
    )


def pending_folder() -> Path:
    return Path(urlparse(pending_writes.table_location(spark_session(), relation("target"))).path) / "_cdc_pending"


TARGET = [(1, "a"), (1, "b"), (2, "c"), (3, "d")]
BUCKETS_REPLACED = pending_writes.Layout(("bucket",), replace=True)
PENDING = [(1, "e"), (3, "f"), (3, "g"), (4, "h")]


def as_rows(values: list[tuple[int, str]]) -> Counter[str]:
    return Counter(json.dumps({"bucket": b, "value": v}, sort_keys=True) for b, v in values)


def expected(replace: bool) -> Counter[str]:
    """What the write gives: insert_overwrite replaces the partitions it has rows for."""
    replaced = {bucket for bucket, _ in PENDING} if replace else set()
    return as_rows([(b, v) for b, v in TARGET if b not in replaced] + PENDING)


def after_first_call(step: Callable[..., Any]) -> Callable[..., Any]:
    """`step` that dies when called a second time, before doing anything."""
    calls = []

    def stopped(*args: Any) -> Any:
        if calls:
            raise Killed
        calls.append(args)
        return step(*args)

    return stopped


def delete_then_die(files: pending_writes.TableFiles, source: Any, target: Any) -> None:
    """replace_folder killed between the old partition's delete and the new one's move."""
    files.remove(target)
    raise Killed


def one_file_then_die(files: pending_writes.TableFiles, source: Any, target: Any) -> None:
    """move_files killed after moving one file of several."""
    name, first, _, _ = files.entries(source)[0]
    files.rename(first, files.child(target, name))
    raise Killed


def die(*args: Any, **kwargs: Any) -> None:
    raise Killed


KILLS = {
    "overwrite-between-partitions": (True, True, "replace_folder", after_first_call),
    "overwrite-inside-a-partition": (True, True, "replace_folder", lambda real: delete_then_die),
    "append-between-partitions": (False, True, "move_files", after_first_call),
    "append-between-files": (False, False, "move_files", lambda real: one_file_then_die),
    "overwrite-after-the-moves": (True, True, "finish", lambda real: die),
    "append-after-the-moves": (False, False, "finish", lambda real: die),
}


@pytest.mark.parametrize("kill", KILLS)
def test_a_killed_write_applied_again_gives_the_whole_write(kill: str, monkeypatch: pytest.MonkeyPatch) -> None:
    replace, partitioned, step, killed = KILLS[kill]
    spark = spark_session()
    create("target", TARGET, partitioned)
    pend(PENDING, partitioned)
    layout = pending_writes.Layout(("bucket",) if partitioned else (), replace)
    owner = pending_writes if step == "finish" else pending_writes.TableFiles
    with monkeypatch.context() as patch:
        patch.setattr(owner, step, killed(getattr(owner, step)))
        with pytest.raises(Killed):
            pending_writes.apply_pending(spark, relation("target"), layout)
    assert pending_writes.apply_pending(spark, relation("target"), layout)
    assert rows("target") == expected(replace)
    assert not pending_folder().exists()


@pytest.mark.parametrize("killed", [False, True], ids=["whole", "killed-in-the-appended-partition"])
def test_an_overwrite_adds_to_its_appended_partitions(killed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """insert_overwrite with `appended` partitions (int_change_events' `event_slice=final`): those
    keep their stored rows and gain the new ones, every other partition of the write is replaced;
    killed while moving the appended partition's files, applied again, the same."""
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    pend(PENDING, partitioned=True)
    apply = [spark, relation("target"), pending_writes.Layout(("bucket",), True, ("bucket=3",))]
    if killed:
        with monkeypatch.context() as patch:
            patch.setattr(pending_writes.TableFiles, "move_files", lambda *args: one_file_then_die(*args))
            with pytest.raises(Killed):
                pending_writes.apply_pending(*apply)
    assert pending_writes.apply_pending(*apply)
    replaced = {bucket for bucket, _ in PENDING} - {3}
    assert rows("target") == as_rows([(b, v) for b, v in TARGET if b not in replaced] + PENDING)
    assert not pending_folder().exists()


def test_no_pending_write_is_nothing_to_apply() -> None:
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    assert not pending_writes.apply_pending(spark, relation("target"), BUCKETS_REPLACED)
    assert rows("target") == as_rows(TARGET)


def test_a_write_killed_before_its_marker_is_discarded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its files may be all there or not (Spark's job commit moves them one by one): without the
    marker nothing of it is applied, and the next write starts from an empty pending folder."""
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    with monkeypatch.context() as patch:
        patch.setattr(pending_writes.TableFiles, "write_text", die)
        patch.setattr(pending_writes.LocalFiles, "write_text", die)
        patch.setattr(pending_writes.HadoopFiles, "write_text", die)
        with pytest.raises(Killed):
            pend(PENDING, partitioned=True)
    assert any(pending_folder().rglob("*.parquet"))
    assert not pending_writes.apply_pending(spark, relation("target"), BUCKETS_REPLACED)
    assert not pending_folder().exists()
    assert rows("target") == as_rows(TARGET)
    pend(PENDING, partitioned=True)
    assert pending_writes.apply_pending(spark, relation("target"), BUCKETS_REPLACED)
    assert rows("target") == expected(replace=True)


@pytest.mark.parametrize("killed", [False, True], ids=["whole", "killed-before-the-drop"])
def test_a_pending_table_of_an_earlier_version_is_applied(killed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed run of a version before pending folders left `<model>__dbt_pending`: its rows are
    not lost; it becomes the table's pending write and its table goes, also when the take-over was
    itself killed after its folder moved."""
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    create("target__dbt_pending", PENDING, partitioned=True)
    legacy = pending_writes.table_location(spark, relation("target__dbt_pending"))
    if killed:
        session = KilledAt(spark, "drop table")
        with pytest.raises(Killed):
            pending_writes.adopt_legacy_pending(session, relation("target"), legacy)
        assert spark.catalog.tableExists(f"{SCHEMA}.target__dbt_pending")
    pending_writes.adopt_legacy_pending(spark, relation("target"), legacy)
    assert not spark.catalog.tableExists(f"{SCHEMA}.target__dbt_pending")
    assert pending_writes.apply_pending(spark, relation("target"), BUCKETS_REPLACED)
    assert rows("target") == expected(replace=True)


@pytest.mark.parametrize("on_schema_change", ["fail", "ignore"])
def test_a_write_whose_columns_changed_is_refused_before_it_is_written(on_schema_change: str) -> None:
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    frame = spark.createDataFrame([(1, "e", 2)], "bucket int, value string, extra int")
    write = [spark, frame, relation("target"), ("bucket",), "parquet", on_schema_change]
    if on_schema_change == "ignore":
        pending_writes.write_pending(*write)
        assert pending_writes.apply_pending(spark, relation("target"), BUCKETS_REPLACED)
        assert rows("target") == as_rows([(b, v) for b, v in TARGET if b != 1] + [(1, "e")])
        return
    with pytest.raises(pending_writes.SchemaChanged, match="new column extra"):
        pending_writes.write_pending(*write)
    retyped = spark.createDataFrame([(1, 5)], "bucket int, value int")
    with pytest.raises(pending_writes.SchemaChanged, match="value is int, was string"):
        pending_writes.write_pending(spark, retyped, relation("target"), ("bucket",), "parquet", "fail")
    assert not pending_folder().exists()
    assert rows("target") == as_rows(TARGET)


@pytest.mark.parametrize("partitioned", [False, True])
def test_an_empty_write_adds_no_file(partitioned: bool) -> None:
    """A run with nothing new writes a pending write without rows (one file holding the schema):
    the target keeps its files, so a feed that stays quiet does not grow its table run by run."""
    spark = spark_session()
    create("target", TARGET, partitioned)
    pend([], partitioned)
    before = set(spark.table(f"{SCHEMA}.target").inputFiles())
    layout = pending_writes.Layout(("bucket",) if partitioned else ())
    assert pending_writes.apply_written(spark, relation("target"), layout).rows == 0
    spark.sql(f"refresh table {SCHEMA}.target")
    assert set(spark.table(f"{SCHEMA}.target").inputFiles()) == before
    assert rows("target") == as_rows(TARGET)
    assert not pending_folder().exists()


def test_local_folders_read_by_python_as_by_hadoop() -> None:
    """A local warehouse's listings and footers are read by Python; a cluster's storage (hdfs, s3a)
    by Hadoop's FileSystem in the JVM: both see the same partitions, files, sizes and rows."""
    spark = spark_session()
    create_tiered("pending", TIERED_TARGET)
    location = pending_writes.table_location(spark, relation("pending"))
    seen = []
    for files in (pending_writes.LocalFiles(), pending_writes.HadoopFiles(spark)):
        root = files.root(location)
        partitions = files.leaves(root, 2)
        found = {
            (partition, name, size, files.parquet_rows(path))
            for partition in partitions
            for name, path, is_folder, size in files.entries(files.partition_folder(root, partition))
            if not is_folder
        }
        seen.append((sorted(partitions), found, files.file_entries(root)))
    assert seen[0] == seen[1]
    partitions, found, entries = seen[0]
    assert partitions == sorted({f"bucket={b}/tier={t}" for b, t, _ in TIERED_TARGET})
    assert sum(rows for *_, rows in found) == len(TIERED_TARGET)
    assert entries == {f"{partition}/{name}:{size}" for partition, name, size, _ in found}


def test_a_written_write_with_rows_is_applied_and_counted() -> None:
    """The count (from the written files' footers) tells the data tests how many keys to look up."""
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    pend(PENDING, partitioned=True)
    assert pending_writes.apply_written(spark, relation("target"), BUCKETS_REPLACED).rows == len(PENDING)
    assert rows("target") == expected(replace=True)
    assert not pending_folder().exists()


def test_a_written_write_names_the_files_it_added_to_the_partitions_it_appended_to() -> None:
    """What the merge of small files after a write leaves alone (compaction.py): the files the write
    just added, in the partitions it added to; none of a partition it replaced."""
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    pend(PENDING, partitioned=True)
    pending_files = {(file.parent.name, file.name) for file in pending_folder().rglob("part-*")}
    layout = pending_writes.Layout(("bucket",), True, ("bucket=3",))
    written = pending_writes.apply_written(spark, relation("target"), layout)
    assert written.appended == {"bucket=3": {name for folder, name in pending_files if folder == "bucket=3"}}
    assert written.appended["bucket=3"] and written.rows == len(PENDING)


def test_create_table_as_over_a_killed_ones_folder() -> None:
    """A folder left by a killed `create table as` (files, no table) is removed; a table's is kept."""
    spark = spark_session()
    create("target", TARGET, partitioned=False)
    spark.sql(f"drop table if exists {SCHEMA}.orphan")
    leftover = pending_writes.default_location(spark, relation("orphan"))
    spark.createDataFrame([(9,)], "x int").write.parquet(f"{leftover}/_temporary/0")
    with pytest.raises(Exception, match="LOCATION_ALREADY_EXISTS|not empty|already exists"):
        spark.sql(f"create table {SCHEMA}.orphan using parquet as select 1 as x")
    assert pending_writes.clear_unregistered_location(spark, relation("orphan"))
    spark.sql(f"create table {SCHEMA}.orphan using parquet as select 1 as x")
    assert [row.x for row in spark.table(f"{SCHEMA}.orphan").collect()] == [1]
    assert not pending_writes.clear_unregistered_location(spark, relation("target"))
    assert rows("target") == as_rows(TARGET)


class KilledAt:
    """The session, dying at the first statement that starts with `prefix`."""

    def __init__(self, spark: Any, prefix: str) -> None:
        self._spark = spark
        self._prefix = prefix

    def sql(self, statement: str, *args: Any, **kwargs: Any) -> Any:
        if statement.startswith(self._prefix):
            raise Killed
        return self._spark.sql(statement, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._spark, name)


class RecordingSession:
    """The session, remembering every statement sent through `sql`."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark
        self.statements: list[str] = []

    def sql(self, statement: str, *args: Any, **kwargs: Any) -> Any:
        self.statements.append(statement)
        return self._spark.sql(statement, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._spark, name)


@pytest.mark.parametrize("adds_a_partition", [False, True], ids=["existing-partitions", "a-new-partition"])
def test_a_write_registers_the_partitions_it_adds_by_name(adds_a_partition: bool) -> None:
    """`recover partitions` lists every file of the table, a cost that grows with its history: a
    write registers the partitions it adds by name, and one into partitions the table has registers
    none; either way its rows are read."""
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    written = [(1, "e"), (3, "f")] + ([(4, "h")] if adds_a_partition else [])
    pend(written, partitioned=True)
    session = RecordingSession(spark)
    assert pending_writes.apply_written(session, relation("target"), BUCKETS_REPLACED).rows
    registered = [statement for statement in session.statements if "partition" in statement]
    assert registered == (
        [f"alter table `{SCHEMA}`.`target` add if not exists partition (`bucket` = '4')"] if adds_a_partition else []
    )
    assert rows("target") == as_rows([(2, "c"), *written])


def test_a_partition_named_with_escapes_is_registered_with_its_value() -> None:
    """Hive escapes a partition value's special characters in its folder name (`%3A`); the
    partition is registered under the value itself, and a null value's folder by a relisting."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {SCHEMA}.target")
    spark.sql(f"create table {SCHEMA}.target (n int, feed string) using parquet partitioned by (feed)")
    spark.createDataFrame([(0, "a")], "n int, feed string").write.insertInto(f"{SCHEMA}.target")
    frame = spark.createDataFrame([(0, "a"), (1, "x:y/z 'q'"), (2, None)], "n int, feed string")
    pending_writes.write_pending(spark, frame, relation("target"), ("feed",), "parquet", "fail")
    assert pending_writes.partition_spec("feed=x%3Ay%2Fz %27q%27") == "partition (`feed` = 'x:y/z \\'q\\'')"
    assert pending_writes.partition_spec("feed=__HIVE_DEFAULT_PARTITION__") is None
    session = RecordingSession(spark)
    pending_writes.apply_written(session, relation("target"), pending_writes.Layout(("feed",)))
    assert any("recover partitions" in statement for statement in session.statements)
    got = sorted((row.n, row.feed) for row in spark.table(f"{SCHEMA}.target").collect())
    assert got == sorted([(0, "a"), (0, "a"), (1, "x:y/z 'q'"), (2, None)])
    shown = {row.partition for row in spark.sql(f"show partitions {SCHEMA}.target").collect()}
    assert "feed=x%3Ay%2Fz %27q%27" in shown


def create_tiered(name: str, values: list[tuple[int, str, str]]) -> None:
    """Table `name` of (bucket, tier, value) rows partitioned by bucket, then tier (int_row_changes'
    key_bucket and build_tier)."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {SCHEMA}.{name}")
    spark.sql(
        f"create table {SCHEMA}.{name} (value string, bucket int, tier string) using parquet partitioned by (bucket, tier)"
    )
    frame = spark.createDataFrame(values, "bucket int, tier string, value string").select("value", "bucket", "tier")
    frame.repartition(2).write.insertInto(f"{SCHEMA}.{name}")


def pend_tiered(values: list[tuple[int, str, str]]) -> None:
    """The pending write of (bucket, tier, value) rows for table `target` (create_tiered's layout)."""
    frame = spark_session().createDataFrame(values, "bucket int, tier string, value string")
    pending_writes.write_pending(
        spark_session(), frame.repartition(2), relation("target"), ("bucket", "tier"), "parquet", "fail"
    )


def tiered_rows(values: list[tuple[int, str, str]]) -> Counter[str]:
    return Counter(json.dumps({"bucket": b, "tier": t, "value": v}, sort_keys=True) for b, t, v in values)


TIERED = pending_writes.Layout(("bucket", "tier"), replace=True, appended=("bucket=*/tier=delta",), replace_depth=1)
TIERED_TARGET = [(1, "base", "a"), (1, "delta", "b"), (2, "base", "c"), (2, "delta", "d"), (3, "base", "e")]
# Bucket 1 gains a delta row, bucket 2 is rewritten as one base (its delta goes), bucket 4 is new.
TIERED_PENDING = [(1, "delta", "f"), (2, "base", "g"), (4, "delta", "h")]


@pytest.mark.parametrize("kill", [None, "replace_folder", "move_files"])
def test_a_write_rewrites_a_bucket_whole_by_its_base_and_appends_to_the_other_buckets_deltas(
    kill: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Layout of int_row_changes: a written `tier=delta` partition is appended to; a written
    `tier=base` one replaces its whole bucket folder (replace_depth 1), so the bucket's stored
    deltas go with its old base. Killed in either move and applied again: the same."""
    spark = spark_session()
    create_tiered("target", TIERED_TARGET)
    pend_tiered(TIERED_PENDING)
    apply = [spark, relation("target"), TIERED]
    if kill:
        dying = delete_then_die if kill == "replace_folder" else one_file_then_die
        with monkeypatch.context() as patch:
            patch.setattr(pending_writes.TableFiles, kill, lambda *args: dying(*args))
            with pytest.raises(Killed):
                pending_writes.apply_pending(*apply)
    assert pending_writes.apply_pending(*apply)
    assert rows("target") == tiered_rows([(1, "base", "a"), (1, "delta", "b"), (3, "base", "e"), *TIERED_PENDING])
    assert not pending_folder().exists()


def test_partition_sizes_are_the_bytes_of_each_partitions_files() -> None:
    spark = spark_session()
    create_tiered("target", TIERED_TARGET)
    sizes = pending_writes.partition_sizes(spark, relation("target"), 2)
    assert sorted(sizes) == sorted(f"bucket={b}/tier={t}" for b, t, _ in TIERED_TARGET)
    on_disk = Counter[str]()
    for file in spark.table(f"{SCHEMA}.target").inputFiles():
        path = Path(urlparse(file).path)
        on_disk[f"{path.parent.parent.name}/{path.parent.name}"] += path.stat().st_size
    assert sizes == dict(on_disk)


def test_the_pending_rows_view_is_named_by_a_plain_identifier() -> None:
    """The view newest_values queries is made by name (createOrReplaceTempView parses it): a schema
    or model name Spark must quote cannot break it."""
    name = pending_writes.pending_view_name(pending_writes.Named("cdc-unify", "stg.x"))
    assert re.fullmatch(r"cdc_pending__cdc_unify__stg_x__[0-9a-f]{12}", name), name
    assert name != pending_writes.pending_view_name(pending_writes.Named("cdc_unify", "stg_x"))
    assert name != pending_writes.pending_view_name(pending_writes.Named("cdc-unify", "stg-x"))
    spark = spark_session()
    spark.range(1).createOrReplaceTempView(name)
    assert spark.table(name).count() == 1
    spark.catalog.dropTempView(name)


def test_table_details_are_what_describe_shows(tmp_path: Path) -> None:
    """table_details (one metastore call) gives a table's Location and Provider as `describe table
    extended` does: managed and partitioned tables, a table in a folder whose name URIs escape, a
    name in capitals; a view has no location, and a missing table is an error."""
    spark = spark_session()
    create("target", TARGET, partitioned=True)
    outside = tmp_path / "a folder, 100% ü"
    spark.sql(f"drop table if exists {SCHEMA}.elsewhere")
    spark.sql(f"create table {SCHEMA}.elsewhere (x int) using parquet location '{outside}'")
    spark.sql(f"drop table if exists {SCHEMA}.`Mixed_Case`")
    spark.sql(f"create table {SCHEMA}.`Mixed_Case` (x int) using parquet")
    for name in ("target", "elsewhere", "Mixed_Case"):
        described = {
            row.col_name: row.data_type for row in spark.sql(f"describe table extended {SCHEMA}.`{name}`").collect()
        }
        details = pending_writes.table_details(spark, relation(name))
        assert details == {key: described[key] for key in ("Location", "Provider")}, name
    assert pending_writes.table_location(spark, relation("elsewhere")).endswith("a folder, 100% ü")
    spark.sql(f"create or replace view {SCHEMA}.a_view as select 1 as x")
    for missing in ("a_view", "no_such_table"):
        with pytest.raises(Exception, match="(?i)location|not found|cannot be found"):
            pending_writes.table_details(spark, relation(missing))
