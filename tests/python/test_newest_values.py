"""The newest values kept with a table (dbt/adapters/sparksession/newest_values.py): an incremental
model's watermarks read without scanning its history, and never a stale one: checked against the
maximum of the rows each table was built from, through appending and replacing writes, a write
killed halfway, and a table changed behind the adapter's back. A write that replaces partitions
keeps them as high-water marks (the newest its writes have held)."""

from __future__ import annotations

from typing import Any

import pytest
from dbt.adapters.spark.relation import SparkRelation

from dbt.adapters.sparksession import newest_values, pending_writes
from harness import spark_session

pytestmark = [pytest.mark.spark]

SCHEMA = "newest_values_test"
BY_FEED = newest_values.Newest("feed", "landed_at")
OVERALL = newest_values.Newest(None, "landed_at")
Row = tuple[str | None, int | None, int]  # feed, landed_at in microseconds, bucket


@pytest.fixture(autouse=True)
def keep_every_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables here are tiny: keep their values as if they were large."""
    monkeypatch.setattr(newest_values, "KEEP_FROM_BYTES", 0)


class Killed(Exception):
    """Stands for the process dying: nothing after the step runs."""


def relation(name: str) -> SparkRelation:
    return SparkRelation.create(schema=SCHEMA, identifier=name)


def table(name: str) -> str:
    return pending_writes.quoted(relation(name))


def create(name: str, rows: list[Row], partitioned: bool) -> None:
    """Table `name` of `rows`, in several files (per partition when `partitioned`)."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {table(name)}")
    partitioning = "partitioned by (bucket)" if partitioned else ""
    spark.sql(f"create table {table(name)} (feed string, landed_at timestamp, bucket int) using parquet {partitioning}")
    insert(name, rows)


def insert(name: str, rows: list[Row]) -> None:
    frame = spark_session().createDataFrame(rows, "feed string, micros long, bucket int")
    frame = frame.selectExpr("feed", "timestamp_micros(micros) as landed_at", "bucket").repartition(2)
    frame.write.insertInto(table(name))


def pend(rows: list[Row], partitioned: bool, files: int = 2) -> None:
    """The pending write of `rows` for table `target`, in `files` files (per partition when
    `partitioned`; one row each when there are as many rows as files)."""
    frame = spark_session().createDataFrame(rows, "feed string, micros long, bucket int")
    frame = frame.repartitionByRange(files, "micros").selectExpr(
        "feed", "timestamp_micros(micros) as landed_at", "bucket"
    )
    partition_by = ("bucket",) if partitioned else ()
    pending_writes.write_pending(spark_session(), frame, relation("target"), partition_by, "parquet", "fail")


# The view of the pending rows that newest_values queries (pending_writes.pending_rows).
PENDING_VIEW = newest_values.quoted_name(pending_writes.pending_view_name(relation("target")))


def truth(rows: list[Row], grouped: bool = True) -> dict[str | None, int]:
    """What the kept value must be: the maximum over the rows put into the table, in Python."""
    newest: dict[str | None, int] = {}
    for feed, micros, _ in rows:
        if micros is not None and (feed is not None or not grouped):
            key = feed if grouped else None
            newest[key] = max(newest.get(key, micros), micros)
    return newest


def table_folder(name: str) -> tuple[Any, Any]:
    """The file operations of table `name` and its folder."""
    spark = spark_session()
    location = pending_writes.table_location(spark, relation(name))
    files = pending_writes.table_files(spark, location)
    return files, files.root(location)


def newest(name: str, kept: newest_values.Newest = BY_FEED) -> dict[str | None, int]:
    files, root = table_folder(name)
    return newest_values.newest_values(spark_session(), files, table(name), root, kept)


def queried_tables(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables newest_values reads from their data from now on (footers or a query), rather than
    as kept with them."""
    tables: list[str] = []
    real = newest_values.from_data

    def recording(spark: Any, files: Any, name: str, *args: Any) -> dict[str | None, int]:
        tables.append(name)
        return real(spark, files, name, *args)

    monkeypatch.setattr(newest_values, "from_data", recording)
    return tables


def spark_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables newest_values sends a Spark query from now on."""
    tables: list[str] = []
    real = newest_values.compute

    def recording(spark: Any, name: str, kept: newest_values.Newest) -> dict[str | None, int]:
        tables.append(name)
        return real(spark, name, kept)

    monkeypatch.setattr(newest_values, "compute", recording)
    return tables


STORED: list[Row] = [("a", 100, 1), ("a", 300, 2), ("b", 200, 2), (None, 900, 3), ("c", None, 3)]
APPENDED: list[Row] = [("a", 250, 1), ("b", 400, 4), ("d", 50, 2)]


@pytest.mark.parametrize("kept", [BY_FEED, OVERALL], ids=["per-feed", "overall"])
def test_a_kept_value_is_read_without_a_query_until_the_files_change(
    kept: newest_values.Newest, monkeypatch: pytest.MonkeyPatch
) -> None:
    create("target", STORED, partitioned=True)
    queried = queried_tables(monkeypatch)
    grouped = kept.group is not None
    assert newest("target", kept) == truth(STORED, grouped)
    assert newest("target", kept) == truth(STORED, grouped)
    assert queried == [table("target")]
    insert("target", [("b", 700, 1)])  # behind the adapter's back: a file it did not write
    spark_session().sql(f"refresh table {table('target')}")
    assert newest("target", kept) == truth([*STORED, ("b", 700, 1)], grouped)
    assert queried == [table("target")] * 2


def kept(name: str, newest_kept: newest_values.Newest = BY_FEED) -> dict[str | None, int] | None:
    spark = spark_session()
    return newest_values.kept(
        spark, table(name), newest_kept, lambda: pending_writes.table_folder(spark, relation(name))
    )


def test_a_reader_gets_the_kept_value_only_while_it_matches_the_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a downstream model asks of a table it reads: the kept value, or None (it then counts by
    a scan); never a query, never a value stored on its behalf."""
    create("target", STORED, partitioned=True)
    queried = queried_tables(monkeypatch)
    assert kept("target") is None
    assert newest_values.stored(spark_session(), table("target")) == {}
    assert newest("target") == truth(STORED)
    assert kept("target") == truth(STORED)
    insert("target", [("b", 700, 1)])  # behind the adapter's back: a file it did not write
    spark_session().sql(f"refresh table {table('target')}")
    assert kept("target") is None
    assert queried == [table("target")]
    spark_session().sql(f"create or replace view {table('landing')} as select * from {table('target')}")
    assert kept("landing") is None  # a view: no folder, no value


def test_a_table_without_rows_has_no_newest_value() -> None:
    create("target", [], partitioned=False)
    assert newest("target") == {}
    assert newest("target", OVERALL) == {}


@pytest.mark.parametrize("partitioned", [False, True])
def test_an_appending_write_carries_the_kept_values_without_reading_the_table(
    partitioned: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    create("target", STORED, partitioned)
    assert newest("target") == truth(STORED)
    assert newest("target", OVERALL) == truth(STORED, grouped=False)
    pend(APPENDED, partitioned)
    read = queried_tables(monkeypatch)
    queried = spark_queries(monkeypatch)
    layout = pending_writes.Layout(("bucket",) if partitioned else ())
    assert pending_writes.apply_written(spark_session(), relation("target"), layout).rows
    assert newest("target") == truth(STORED + APPENDED)
    assert newest("target", OVERALL) == truth(STORED + APPENDED, grouped=False)
    # Unpartitioned, one pending file holds feeds d and a: its footer cannot give each feed's value,
    # so the pending rows are queried; partitioned, every file holds one feed (the test below).
    assert set(queried) == (set() if partitioned else {PENDING_VIEW})
    assert read == []


# One feed per pending file, as an incremental model's write of one feed's new rows is.
ONE_FEED_A_FILE: list[Row] = [("a", 250, 1), ("a", 260, 1), ("b", 400, 4), ("b", 410, 2)]


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_pending_write_of_one_feed_a_file_is_carried_from_its_footers(
    partitioned: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pending rows' values come from their files' footers where each row group holds one feed:
    no Spark query, the same values as the query (the test above, with feeds mixed in a file, is the
    query's case); one pending row of a null feed beside others sends the query again."""
    create("target", STORED, partitioned)
    assert newest("target") == truth(STORED)
    assert newest("target", OVERALL) == truth(STORED, grouped=False)
    pend(ONE_FEED_A_FILE, partitioned)  # ranged by micros into 2 files: a's rows, then b's
    queried = spark_queries(monkeypatch)
    layout = pending_writes.Layout(("bucket",) if partitioned else ())
    assert pending_writes.apply_written(spark_session(), relation("target"), layout).rows
    assert queried == []
    assert newest("target") == truth(STORED + ONE_FEED_A_FILE)
    assert newest("target", OVERALL) == truth(STORED + ONE_FEED_A_FILE, grouped=False)
    assert queried == []
    with_null_feed: list[Row] = [("b", 500, 1), (None, 900, 1)]
    pend(with_null_feed, partitioned, files=1)
    assert pending_writes.apply_written(spark_session(), relation("target"), layout).rows
    assert set(queried) == {PENDING_VIEW}
    assert newest("target") == truth(STORED + ONE_FEED_A_FILE + with_null_feed)


def test_a_write_that_replaces_partitions_keeps_the_newest_values_written_without_a_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bucket 2 held feed a's newest row (300); rewritten with an older one, a's kept value stays
    300: a watermark is what a model has taken in, not the newest row it still holds (the module's
    docstring). Feed e comes with the write and b's newest moves on. The value is read without a
    query, under the token of the files the write left: a later file behind the adapter's back
    still makes it queried again."""
    create("target", STORED, partitioned=True)
    assert newest("target") == truth(STORED)
    assert newest("target", OVERALL) == truth(STORED, grouped=False)
    rewritten: list[Row] = [("a", 120, 2), ("b", 500, 2), ("e", 40, 3)]
    pend(rewritten, partitioned=True)
    read = queried_tables(monkeypatch)
    queried = spark_queries(monkeypatch)
    layout = pending_writes.Layout(("bucket",), replace=True)
    assert pending_writes.apply_written(spark_session(), relation("target"), layout).rows
    held = [row for row in STORED if row[2] not in (2, 3)] + rewritten
    assert newest("target") == {**truth(held), "a": 300} == truth(STORED + rewritten)
    assert newest("target", OVERALL) == truth(STORED + rewritten, grouped=False)
    assert queried == []  # each pending file holds one feed: its footer tells the values
    assert read == []
    spark_session().sql(f"refresh table {table('target')}")
    assert sorted(spark_session_rows("target")) == sorted(held)
    insert("target", [("b", 700, 1)])  # behind the adapter's back: a file it did not write
    spark_session().sql(f"refresh table {table('target')}")
    assert newest("target") == truth([*held, ("b", 700, 1)])
    assert read == [table("target")]


def test_only_the_files_of_replaced_folders_leave_the_token() -> None:
    entries = {"bucket=1/a:1", "bucket=10/b:2", "bucket=2/build_tier=delta/c:3", "d:4"}
    assert newest_values.remaining(entries, []) == entries
    assert newest_values.remaining(entries, ["bucket=1"]) == {"bucket=10/b:2", "bucket=2/build_tier=delta/c:3", "d:4"}
    assert newest_values.remaining(entries, ["bucket=2", "bucket=10"]) == {"bucket=1/a:1", "d:4"}
    assert newest_values.remaining(entries, ["."]) == set()


def one_file_then_die(files: pending_writes.TableFiles, source: Any, target: Any) -> None:
    """move_files killed after moving one file of several."""
    name, first, _, _ = files.entries(source)[0]
    files.rename(first, files.child(target, name))
    raise Killed


def test_a_write_killed_halfway_is_not_trusted_until_applied_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after the kept values learned the pending rows and one file moved: the table holds
    part of the write, so its newest values are queried; once the write is applied again, kept."""
    create("target", STORED, partitioned=False)
    assert newest("target") == truth(STORED)
    late: list[Row] = [("a", 950, 1), ("b", 400, 1), ("e", 5, 1)]  # each a newest value, in a file of its own
    pend(late, partitioned=False, files=len(late))
    layout = pending_writes.Layout()
    with monkeypatch.context() as patch:
        patch.setattr(pending_writes.TableFiles, "move_files", lambda *args: one_file_then_die(*args))
        with pytest.raises(Killed):
            pending_writes.apply_pending(spark_session(), relation("target"), layout)
    spark_session().sql(f"refresh table {table('target')}")
    left = [row for row in late if row not in spark_session_rows("target")]
    moved = truth([row for row in STORED + late if row not in left])
    assert newest("target") == moved != truth(STORED + late)
    assert pending_writes.apply_pending(spark_session(), relation("target"), layout)
    assert newest("target") == truth(STORED + late)


def spark_session_rows(name: str) -> list[Row]:
    """The rows of table `name`."""
    rows = spark_session().sql(f"select feed, unix_micros(landed_at), bucket from {table(name)}").collect()
    return [(row[0], row[1], row[2]) for row in rows]


def test_feed_names_are_kept_as_they_are() -> None:
    """Names come from message content: quotes and backslashes reach the property and come back."""
    odd: list[Row] = [("it's", 1, 1), ("back\\slash", 2, 1), ('"quoted"', 3, 1), ("ünï", 4, 1)]
    create("target", odd, partitioned=False)
    assert newest("target") == truth(odd)
    assert newest_values.stored(spark_session(), table("target"))
    assert newest("target") == truth(odd)


def test_stored_properties_are_what_show_tblproperties_shows() -> None:
    """stored (one metastore call) gives the properties under a prefix as `show tblproperties`
    does, with quotes, backslashes and non-ASCII text in them, for a table and for a view."""
    spark = spark_session()
    create("target", [("a", 1, 1)], partitioned=False)
    spark.sql(f"create or replace view {table('a_view')} as select 1 as x")
    texts = {f"{newest_values.PREFIX}.one": "it's", f"{newest_values.PREFIX}.two": 'back\\slash "ü"'}
    for name in ("target", "a_view"):
        kind = "view" if name == "a_view" else "table"
        pairs = ", ".join(f"{newest_values.sql_string(k)} = {newest_values.sql_string(v)}" for k, v in texts.items())
        spark.sql(f"alter {kind} {table(name)} set tblproperties ({pairs}, 'other.key' = 'x')")
        shown = {row.key: row.value for row in spark.sql(f"show tblproperties {table(name)}").collect()}
        assert newest_values.stored(spark, table(name)) == texts == {k: v for k, v in shown.items() if k in texts}
        assert newest_values.stored(spark, table(name), "other") == {"other.key": "x"}
    with pytest.raises(Exception, match="(?i)not found|cannot be found"):
        newest_values.stored(spark, table("no_such_table"))


def test_a_small_table_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below KEEP_FROM_BYTES the scan costs less than keeping the value: queried every time, and a
    value kept while the table was large is dropped."""
    create("target", STORED, partitioned=False)
    assert newest("target") == truth(STORED)
    assert newest_values.stored(spark_session(), table("target"))
    insert("target", APPENDED)
    spark_session().sql(f"refresh table {table('target')}")
    monkeypatch.setattr(newest_values, "KEEP_FROM_BYTES", 10**12)
    monkeypatch.setattr(newest_values, "KEEP_FROM_FILES", 10**6)
    queried = queried_tables(monkeypatch)
    assert newest("target") == truth(STORED + APPENDED)
    assert newest("target") == truth(STORED + APPENDED)
    assert queried == [table("target")] * 2
    assert newest_values.stored(spark_session(), table("target")) == {}


def data_files(name: str) -> int:
    files, root = table_folder(name)
    return len(files.file_entries(root))


def test_a_table_of_many_small_files_keeps_its_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below KEEP_FROM_BYTES a table of KEEP_FROM_FILES data files keeps its values: a scan of it
    opens every file's footer (int_current_rows at a million messages: 112 MB in 128 files); with
    one file fewer than that, it is queried every time."""
    monkeypatch.setattr(newest_values, "KEEP_FROM_BYTES", 10**12)
    create("target", STORED, partitioned=True)
    files = data_files("target")
    assert files > 1
    queried = queried_tables(monkeypatch)
    monkeypatch.setattr(newest_values, "KEEP_FROM_FILES", files + 1)
    assert newest("target") == truth(STORED)
    assert newest_values.stored(spark_session(), table("target")) == {}
    monkeypatch.setattr(newest_values, "KEEP_FROM_FILES", files)
    assert newest("target") == truth(STORED)
    assert newest("target") == truth(STORED)
    assert queried == [table("target")] * 2
    assert newest_values.stored(spark_session(), table("target"))


def test_what_a_model_read_is_raised_never_lowered_and_kept_apart() -> None:
    """newest_values.read_until: how far a model has read a table it keeps some rows of, one value
    per table read. A store raises it per feed (a later run that read less of a feed, or none of
    it, lowers nothing); it is kept apart from the table's newest values (another property, no
    token of files), and a table without one reads {}."""
    create("reader", [("a", 5, 0)], partitioned=False)
    spark, reader = spark_session(), table("reader")
    files, root = pending_writes.table_folder(spark, relation("reader"))
    newest_values.store_computed(spark, files, reader, root, [BY_FEED])
    kept_before = newest_values.stored(spark, reader)
    assert kept_before
    assert newest_values.read_until(spark, reader, "s.input") == {}
    newest_values.store_read_until(spark, reader, "s.input", {"a": 10, "b": 3})
    newest_values.store_read_until(spark, reader, "s.input", {"a": 7, "c": 4})
    newest_values.store_read_until(spark, reader, "s.other", {"a": 1})
    assert newest_values.read_until(spark, reader, "s.input") == {"a": 10, "b": 3, "c": 4}
    assert newest_values.read_until(spark, reader, "s.other") == {"a": 1}
    assert newest_values.stored(spark, reader) == kept_before


def create_by_feed(name: str, rows: list[Row], partitioned_by_feed: bool = False) -> None:
    """Table `name` of `rows`, each feed's rows written by an insert of their own (files of one feed
    each), or partitioned by feed."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {table(name)}")
    if partitioned_by_feed:
        spark.sql(
            f"create table {table(name)} (landed_at timestamp, bucket int, feed string) using parquet partitioned by (feed)"
        )
        frame = spark.createDataFrame(rows, "feed string, micros long, bucket int")
        frame.selectExpr("timestamp_micros(micros) as landed_at", "bucket", "feed").write.insertInto(table(name))
        return
    spark.sql(f"create table {table(name)} (feed string, landed_at timestamp, bucket int) using parquet")
    for feed in sorted({row[0] for row in rows}, key=str):
        insert(name, [row for row in rows if row[0] == feed])


ONE_FEED_FILES: list[Row] = [("a", 100, 1), ("a", 300, 2), ("b", 200, 2), ("b", None, 3), (None, 900, 3)]


@pytest.mark.parametrize("kept", [BY_FEED, OVERALL], ids=["per-feed", "overall"])
def test_files_of_one_feed_each_tell_their_newest_values_from_their_footers(
    kept: newest_values.Newest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file's row groups hold one feed (or only null feeds, which the query leaves out): the
    footers' statistics give what the query gives, and no query is sent."""
    monkeypatch.setattr(newest_values, "KEEP_FROM_BYTES", 10**12)
    create_by_feed("target", ONE_FEED_FILES)
    queried = spark_queries(monkeypatch)
    assert newest("target", kept) == truth(ONE_FEED_FILES, kept.group is not None)
    assert newest("target", kept) == newest_values.compute(spark_session(), table("target"), kept)
    assert queried == [table("target")]  # the comparison's own query alone


def test_a_feed_that_partitions_the_table_is_read_from_the_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Feed names come from message content: a name Hive escapes in a folder name comes back as it
    is, and the null feed's folder (Hive's default partition) is left out, as by the query."""
    monkeypatch.setattr(newest_values, "KEEP_FROM_BYTES", 10**12)
    rows: list[Row] = [("a/b:c", 100, 1), ("a/b:c", 400, 1), ("it's %20", 300, 2), (None, 900, 3)]
    create_by_feed("target", rows, partitioned_by_feed=True)
    queried = spark_queries(monkeypatch)
    assert newest("target") == truth(rows) == {"a/b:c": 400, "it's %20": 300}
    assert queried == []


@pytest.mark.parametrize(
    "rows",
    [
        [("a", 100, 1), ("b", 300, 1)],  # two feeds in one row group
        [("a", 100, 1), (None, 900, 1)],  # a null feed beside a feed: its newer time is not a's
    ],
    ids=["two-feeds", "null-beside-a-feed"],
)
def test_a_row_group_of_several_feeds_is_queried(rows: list[Row], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(newest_values, "KEEP_FROM_BYTES", 10**12)
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {table('target')}")
    spark.sql(f"create table {table('target')} (feed string, landed_at timestamp, bucket int) using parquet")
    frame = spark.createDataFrame(rows, "feed string, micros long, bucket int").coalesce(1)
    frame.selectExpr("feed", "timestamp_micros(micros) as landed_at", "bucket").write.insertInto(table("target"))
    queried = spark_queries(monkeypatch)
    assert newest("target") == truth(rows)
    assert queried == [table("target")]
