"""Rows past a model's watermarks counted from Parquet footers (dbt/adapters/sparksession/new_rows.py):
exactly the count of the query the macros would send, or None (the query is then sent) wherever the
statistics cannot tell it. Files written by pyarrow and checked against a count over their rows in
Python; tables written by Spark and checked against Spark's own query."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dbt.adapters.spark.relation import SparkRelation

from cdc_unify.contract import NO_FEED
from dbt.adapters.sparksession import new_rows, pending_writes
from dbt.adapters.sparksession.new_rows import Past, file_count
from dbt.adapters.sparksession.newest_values import partition_values
from footer_files import UTC, micros, write
from harness import spark_session

Row = tuple[str | None, int | None]  # feed, landed_at hour


def truth(rows: list[Row], past: Past) -> dict[str | None, int]:
    """The query's count, in Python: a row of a feed not held counts, one of a held feed when its
    time is past the feed's watermark; a feed null or empty is NO_FEED."""
    counts: dict[str | None, int] = {}
    for feed, hour in rows:
        key = past.key(feed)
        if past.only is not None and key not in past.only:
            continue
        if key in past.held and (hour is None or micros(hour) <= past.held[key]):
            continue
        counts[key] = counts.get(key, 0) + 1
    return counts


def by_feed(held: dict[str | None, int], only: list[str | None] | None = None) -> Past:
    return Past("feed", "landed_at", held, None if only is None else frozenset(only), NO_FEED)


def test_loads_of_one_feed_each_are_counted_without_their_rows(tmp_path: Path) -> None:
    groups: list[list[Row]] = [[("a", 1), ("a", 1)], [("b", 2)], [("a", 5), ("a", 5), ("a", 5)], [("c", 3)]]
    footer = write(tmp_path / "f.parquet", groups)
    rows = [row for group in groups for row in group]
    for past in (
        by_feed({"a": micros(2)}),
        by_feed({"a": micros(2), "b": micros(2)}),
        by_feed({}),
        by_feed({"a": micros(9), "c": micros(1)}),
        by_feed({"a": micros(2)}, only=["a"]),
    ):
        found = file_count(footer, past, {})
        assert found is not None
        assert {key: rows for key, rows in found.items() if rows} == truth(rows, past)


def test_feeds_without_a_name_are_counted_as_the_no_feed_feed(tmp_path: Path) -> None:
    groups: list[list[Row]] = [[(None, 1), (None, 4)], [("", 4)], [(NO_FEED, 6)]]
    footer = write(tmp_path / "f.parquet", groups)
    assert file_count(footer, by_feed({}), {}) == {NO_FEED: 4}
    assert file_count(footer, by_feed({NO_FEED: micros(5)}), {}) == {NO_FEED: 1}
    assert file_count(footer, by_feed({"a": micros(5)}, only=["a"]), {}) == {}


def test_a_null_time_of_a_held_feed_is_never_past_its_watermark(tmp_path: Path) -> None:
    footer = write(tmp_path / "f.parquet", [[("a", 7), ("a", None), ("a", 8)], [("a", None)]])
    assert file_count(footer, by_feed({"a": micros(6)}), {}) == {"a": 2}
    assert file_count(footer, by_feed({}), {}) == {"a": 4}  # a feed not held counts every row


@pytest.mark.parametrize(
    ("groups", "held"),
    [
        ([[("a", 1), ("a", 5)]], {"a": micros(3)}),  # a row group straddling the watermark
        ([[("a", 1), ("b", 5)]], {}),  # two feeds in one row group
        ([[("a", 1), (None, 5)]], {}),  # a null feed beside a feed
    ],
    ids=["straddles", "two-feeds", "null-beside-a-feed"],
)
def test_what_the_statistics_cannot_tell_is_left_to_the_query(
    tmp_path: Path, groups: list[list[Row]], held: dict[str | None, int]
) -> None:
    assert file_count(write(tmp_path / "f.parquet", groups), by_feed(held), {}) is None


@pytest.mark.parametrize(
    ("time_type", "options"),
    [
        (pa.timestamp("us"), {}),  # a local time (not adjusted to UTC)
        (pa.timestamp("ns", tz="UTC"), {"use_deprecated_int96_timestamps": True}),
        (pa.timestamp("us", tz="UTC"), {"write_statistics": False}),
    ],
    ids=["local-time", "int96", "no-statistics"],
)
def test_times_the_statistics_do_not_order_are_left_to_the_query(tmp_path: Path, time_type: Any, options: dict) -> None:
    footer = write(tmp_path / "f.parquet", [[("a", 5)]], time_type=time_type, **options)
    if options.get("write_statistics") is False:
        assert file_count(footer, by_feed({}), {}) is None  # not even the feed is recorded
    else:
        assert file_count(footer, by_feed({}), {}) == {"a": 1}  # a feed not held needs no time
    assert file_count(footer, by_feed({"a": micros(1)}), {}) is None


def test_a_feed_that_partitions_the_table_comes_from_the_folder(tmp_path: Path) -> None:
    schema = pa.schema([("landed_at", pa.timestamp("us", tz="UTC"))])
    path = tmp_path / "f.parquet"
    times = [dt.datetime(2024, 1, 1, hour, tzinfo=UTC) for hour in (2, 4)]
    pq.write_table(pa.table({"landed_at": times}, schema=schema), path)
    footer = pq.read_metadata(path)
    assert file_count(footer, by_feed({"a/b:c": micros(3)}), partition_values("feed=a%2Fb%3Ac/f.parquet")) is None
    assert file_count(footer, by_feed({"a/b:c": micros(1)}), partition_values("feed=a%2Fb%3Ac/f.parquet")) == {
        "a/b:c": 2
    }
    assert file_count(footer, by_feed({}), partition_values("feed=__HIVE_DEFAULT_PARTITION__/f.parquet")) == {
        NO_FEED: 2
    }
    assert file_count(footer, by_feed({}), partition_values("bucket=1/f.parquet")) is None  # no feed anywhere


@pytest.mark.parametrize("seed", range(40))
def test_a_count_given_is_the_querys_count(tmp_path: Path, seed: int) -> None:
    """Random files of loads (one feed and one time per load, as loaders write them) and of mixed
    row groups, random watermarks: where the footers give a count it is the query's, and loads that
    each lie wholly before or past their watermark always give one."""
    rng = random.Random(seed)
    feeds = ["a", "b", None, "", NO_FEED]
    clean = rng.random() < 0.5
    groups: list[list[Row]] = []
    for _ in range(rng.randint(1, 6)):
        if clean:
            feed, hour = rng.choice(feeds), rng.choice([1, 3, 5, 7, None])
            groups.append([(feed, hour)] * rng.randint(1, 4))
        else:
            groups.append([(rng.choice(feeds), rng.choice([1, 3, 5, 7, None])) for _ in range(rng.randint(1, 4))])
    held = {key: micros(rng.choice([2, 4, 6])) for key in ("a", "b", NO_FEED) if rng.random() < 0.6}
    only = rng.choice([None, ["a"], ["b", NO_FEED], []])
    past = by_feed(held, only)
    footer = write(tmp_path / "f.parquet", groups)
    found = file_count(footer, past, {})
    rows = [row for group in groups for row in group]
    if found is not None:
        assert {key: rows for key, rows in found.items() if rows} == truth(rows, past)
    groups_of_one_feed = all(len({past.key(feed) for feed, _ in group}) == 1 for group in groups)
    if clean and groups_of_one_feed:
        assert found is not None


def test_a_file_that_is_not_parquet_is_left_to_the_query(tmp_path: Path) -> None:
    (tmp_path / "part-0.json").write_text("{}")
    files = pending_writes.LocalFiles()
    assert new_rows.count(files, str(tmp_path), files.file_entries(str(tmp_path)), by_feed({})) is None


# -------------------------------------------------------------------- tables Spark wrote and read

SCHEMA = "new_rows_test"


def relation(name: str) -> SparkRelation:
    return SparkRelation.create(schema=SCHEMA, identifier=name)


def query_count(name: str, past: Past) -> dict[str | None, int]:
    """Spark's count of the rows `past` counts, written as the macros' predicates are."""
    key = f"case when feed is null or feed = '' then '{NO_FEED}' else feed end"
    held = " or ".join(
        f"({key} = '{feed}' and landed_at > timestamp_micros({until}))" for feed, until in past.held.items()
    )
    not_held = ", ".join(f"'{feed}'" for feed in past.held)
    where = f"({key} not in ({not_held}))" if past.held else "true"
    where = f"({where} or {held})" if held else where
    if past.only is not None:
        where += f" and {key} in ({', '.join(repr(feed) for feed in past.only) or 'null'})"
    sql = f"select {key}, count(*) from {pending_writes.quoted(relation(name))} where {where} group by 1"
    return {row[0]: row[1] for row in spark_session().sql(sql).collect()}


def create(name: str, loads: list[list[tuple[str | None, int]]], partitioned: bool = False) -> None:
    """Table `name`, one insert per load ((feed, microseconds) rows), as the loader appends them."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"drop table if exists {pending_writes.quoted(relation(name))}")
    partitioning = "partitioned by (bucket)" if partitioned else ""
    spark.sql(
        f"create table {pending_writes.quoted(relation(name))} (feed string, landed_at timestamp, bucket int)"
        f" using parquet {partitioning}"
    )
    for rows in loads:
        frame = spark.createDataFrame([(feed, at, 1) for feed, at in rows], "feed string, micros long, bucket int")
        frame.selectExpr("feed", "timestamp_micros(micros) as landed_at", "bucket").coalesce(1).write.insertInto(
            pending_writes.quoted(relation(name))
        )


LOADS = [[("a", 100), ("a", 100)], [("b", 200)], [(None, 300), (None, 300)], [("a", 400)], [("", 500)]]


@pytest.mark.spark
@pytest.mark.parametrize("partitioned", [False, True], ids=["plain", "partitioned"])
@pytest.mark.parametrize(
    "past",
    [by_feed({}), by_feed({"a": 150}), by_feed({"a": 100, "b": 200, NO_FEED: 300}), by_feed({"a": 150}, ["a"])],
    ids=["nothing-held", "a-held", "all-held", "only-a"],
)
def test_spark_tables_are_counted_as_spark_counts_them(partitioned: bool, past: Past) -> None:
    create("target", LOADS, partitioned)
    found = pending_writes.rows_past(spark_session(), relation("target"), past, partitioned=partitioned)
    assert found == query_count("target", past)


@pytest.mark.spark
def test_views_and_missing_tables_are_left_to_the_query() -> None:
    create("target", LOADS)
    spark = spark_session()
    spark.sql(f"create or replace view {SCHEMA}.target_view as select * from {SCHEMA}.target")
    assert pending_writes.rows_past(spark, relation("target_view"), by_feed({})) is None
    assert pending_writes.rows_past(spark, relation("no_such_table"), by_feed({})) is None


@pytest.mark.spark
def test_a_partitioned_table_is_counted_only_when_the_caller_says_its_partitions_are_its_folders(
    tmp_path: Path,
) -> None:
    """Spark reads the partitions the metastore lists, wherever they are: a partition added at
    another location holds rows the footers under the table's folder miss, so a partitioned table
    is left to the query unless the caller knows it is a model of this project (cdc_built_since)."""
    create("target", LOADS, partitioned=True)
    spark = spark_session()
    elsewhere = tmp_path / "elsewhere"
    spark.createDataFrame([("a", 900)], "feed string, micros long").selectExpr(
        "feed", "timestamp_micros(micros) as landed_at"
    ).write.parquet(str(elsewhere))
    spark.sql(f"alter table {SCHEMA}.target add partition (bucket = 7) location '{elsewhere}'")
    past = by_feed({"a": 400, "b": 200, NO_FEED: 500})
    assert query_count("target", past) == {"a": 1}
    assert pending_writes.rows_past(spark, relation("target"), past) is None
    assert pending_writes.rows_past(spark, relation("target"), past, partitioned=True) == {}  # what it would miss
