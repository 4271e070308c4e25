"""How many rows of a table lie past a model's watermarks, counted from the footers of its Parquet
files where their statistics tell it exactly, instead of by a Spark job.

An incremental model counts, while it compiles, the rows of its inputs past its watermarks
(macros/summaries.sql `cdc_held_watermarks`, macros/intermediate.sql `cdc_built_since`): to write
nothing when there are none, to name only the feeds that have some, and to choose whether its key
sets are broadcast. As a query each count is a Spark job (0.1-0.6 s at mixed:1M: about 20 of them
in a +10,000 run, docs/benchmarks.md) although the answer is mostly in the footers: each load of a
feed is its own files (one `landed_at`; one `built_at` per run), so a row group lies wholly before
or wholly past a watermark, and its row count, its group's one value and its value's minimum and
maximum are recorded there.

`count` gives the count per group, as the query's `group by` would after a feed without a name is
taken as `no_feed` (the macros do the same with the query's rows), or None where the footers do
not tell: a file that is not Parquet, storage whose footers are not read from Python, a row group
holding several groups or straddling a watermark, statistics not recorded. The caller then runs
the query. Rows are counted as the query counts them: a row of a group not held counts whatever its
value; one of a held group counts when its value is past the group's watermark (a null value never
is); with `only`, rows of other groups count nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.sparksession.newest_values import (
    NOTHING,
    each_footer,
    footer_row_groups,
    micros_scale,
    partition_values,
)


@dataclass(frozen=True)
class Past:
    """The rows to count: grouped by column `group` (None: one group, None), those of a group not in
    `held` and those of a held group whose `value` (a timestamp column) is past its watermark
    (microseconds); with `only`, of those groups alone. A group whose text is null or empty is
    `no_feed`."""

    group: str | None
    value: str
    held: dict[str | None, int]
    only: frozenset[str | None] | None = None
    no_feed: str | None = None

    def key(self, text: str | None) -> str | None:
        if self.group is None:
            return None
        return self.no_feed if text is None or text == "" else text


def count(files: Any, root: Any, entries: set[str], past: Past) -> dict[str | None, int] | None:
    """The rows of data files `entries` (TableFiles.file_entries) of table folder `root` that
    `past` counts, per group; None where a footer does not tell it exactly (file_count)."""
    found: dict[str | None, int] = {}
    for relative, metadata in each_footer(files, root, entries):
        counts = None if metadata is None else file_count(metadata, past, partition_values(relative))
        if counts is None:
            return None
        for key, rows in counts.items():
            found[key] = found.get(key, 0) + rows
    return {key: rows for key, rows in found.items() if rows}


def file_count(metadata: Any, past: Past, partitions: dict[str, str | None]) -> dict[str | None, int] | None:
    """`past`'s count of one Parquet file (pyarrow FileMetaData) per group, from its row groups'
    statistics; None where they do not tell it: a group column holding several texts (or a null
    beside other rows) in one row group, or a row group of a held group that straddles its
    watermark or whose value statistics are not a timestamp adjusted to UTC."""
    row_groups = footer_row_groups(metadata, past.group, past.value, partitions)
    if row_groups is None:
        return None
    found: dict[str | None, int] = {}
    for rows, statistics, text in row_groups:
        if past.group is not None and text is None:
            return None
        key = past.key(None if text is NOTHING else text)
        if past.only is not None and key not in past.only:
            continue
        counted = rows if key not in past.held else rows_past(statistics, rows, past.held[key])
        if counted is None:
            return None
        found[key] = found.get(key, 0) + counted
    return found


def rows_past(statistics: Any, rows: int, watermark: int) -> int | None:
    """How many of a row group's `rows` hold a timestamp past `watermark` (microseconds), from the
    column's statistics; None where they do not tell (a range that straddles it, or a minimum and
    maximum not recorded as a timestamp adjusted to UTC)."""
    if statistics is None or statistics.null_count is None:
        return None
    if statistics.null_count == rows:
        return 0
    scale = micros_scale(statistics)
    if scale is None:
        return None
    if int(statistics.min_raw) * scale > watermark:
        return rows - statistics.null_count
    if int(statistics.max_raw) * scale <= watermark:
        return 0
    return None
