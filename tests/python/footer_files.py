"""Parquet files of (feed, landed_at) row groups written by pyarrow, without Spark, for the tests of
what the adapter reads from footers (test_newest_values_footers.py, test_new_rows.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

UTC = dt.timezone.utc


def micros(hour: int) -> int:
    """Hour `hour` of 2024-01-01 UTC in microseconds, as the files' landed_at holds it."""
    return int(dt.datetime(2024, 1, 1, hour, tzinfo=UTC).timestamp()) * 1_000_000


def write(path: Path, groups: list[list[tuple[str | None, int | None]]], time_type: Any = None, **options: Any) -> Any:
    """A file of one row group per entry of `groups` ((feed, hour) rows); its footer."""
    time_type = time_type or pa.timestamp("us", tz="UTC")
    schema = pa.schema([("feed", pa.string()), ("landed_at", time_type)])
    with pq.ParquetWriter(path, schema, **options) as writer:
        for rows in groups:
            times = [None if hour is None else dt.datetime(2024, 1, 1, hour, tzinfo=UTC) for _, hour in rows]
            if time_type.tz is None:
                times = [None if t is None else t.replace(tzinfo=None) for t in times]
            feeds = [feed for feed, _ in rows]
            writer.write_table(pa.table({"feed": feeds, "landed_at": pa.array(times, type=time_type)}, schema=schema))
    return pq.read_metadata(path)
