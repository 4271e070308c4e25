"""The newest values read from Parquet footers (dbt/adapters/sparksession/newest_values.py,
footer_newest): exactly what the query finds in a file's rows, or None (the table is then queried)
wherever the statistics cannot tell it. Files written here by pyarrow, without Spark;
tests/python/test_newest_values.py checks the same against Spark's query on tables Spark wrote."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dbt.adapters.sparksession.newest_values import Newest, footer_newest, partition_values
from footer_files import UTC, micros, write

BY_FEED = Newest("feed", "landed_at")
OVERALL = Newest(None, "landed_at")


def test_row_groups_of_one_feed_each_give_each_feeds_newest(tmp_path: Path) -> None:
    footer = write(tmp_path / "f.parquet", [[("a", 1), ("a", 3)], [("b", 2)], [("a", 2), ("a", None)], [(None, 9)]])
    # A row group of null feeds only is left out, as the query leaves its rows out.
    assert footer_newest(footer, BY_FEED, {}) == {"a": micros(3), "b": micros(2)}
    assert footer_newest(footer, OVERALL, {}) == {None: micros(9)}


def test_a_row_group_of_null_times_only_gives_nothing(tmp_path: Path) -> None:
    footer = write(tmp_path / "f.parquet", [[("a", None)], [("b", 4)]])
    assert footer_newest(footer, BY_FEED, {}) == {"b": micros(4)}


@pytest.mark.parametrize(
    "rows",
    [[("a", 1), ("b", 2)], [("a", 1), (None, 2)]],
    ids=["two-feeds", "null-beside-a-feed"],
)
def test_a_row_group_of_several_feeds_cannot_tell(tmp_path: Path, rows: list[tuple[str | None, int]]) -> None:
    assert footer_newest(write(tmp_path / "f.parquet", [rows]), BY_FEED, {}) is None


def test_milliseconds_are_scaled_to_microseconds(tmp_path: Path) -> None:
    footer = write(tmp_path / "f.parquet", [[("a", 5)]], time_type=pa.timestamp("ms", tz="UTC"))
    assert footer_newest(footer, BY_FEED, {}) == {"a": micros(5)}


@pytest.mark.parametrize(
    ("time_type", "options"),
    [
        (pa.timestamp("us"), {}),  # a local time (not adjusted to UTC): not what Spark's TIMESTAMP holds
        (pa.timestamp("ns", tz="UTC"), {"use_deprecated_int96_timestamps": True}),  # INT96: no order kept
        (pa.timestamp("us", tz="UTC"), {"write_statistics": False}),
    ],
    ids=["local-time", "int96", "no-statistics"],
)
def test_times_the_statistics_do_not_order_cannot_tell(tmp_path: Path, time_type: Any, options: dict) -> None:
    footer = write(tmp_path / "f.parquet", [[("a", 5)]], time_type=time_type, **options)
    assert footer_newest(footer, BY_FEED, {}) is None


def test_a_feed_that_partitions_the_table_comes_from_the_folder(tmp_path: Path) -> None:
    schema = pa.schema([("landed_at", pa.timestamp("us", tz="UTC"))])
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"landed_at": [dt.datetime(2024, 1, 1, 7, tzinfo=UTC)]}, schema=schema), path)
    footer = pq.read_metadata(path)
    assert footer_newest(footer, BY_FEED, partition_values("feed=a%2Fb%3Ac/bucket=1/f.parquet")) == {"a/b:c": micros(7)}
    assert footer_newest(footer, BY_FEED, partition_values("feed=__HIVE_DEFAULT_PARTITION__/f.parquet")) == {}
    assert footer_newest(footer, BY_FEED, partition_values("bucket=1/f.parquet")) is None  # no feed anywhere


def test_partition_values_unescape_hives_escapes() -> None:
    assert partition_values("feed=it's %2520/bucket=3/part-0.parquet") == {"feed": "it's %20", "bucket": "3"}
    assert partition_values("part-0.parquet") == {}
