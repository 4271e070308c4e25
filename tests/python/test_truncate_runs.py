"""A TRUNCATE landing in an incremental run, and a table built before truncates had a partition.

int_change_events keeps every TRUNCATE in partition `event_slice=truncate`, and int_row_changes
reads a table's truncates from there alone when int_change_events carries the table property
`cdc_unify.truncate_slice` (set when it is built whole); a table built before keeps its earlier
truncates in `event_slice=final`, so without the property int_row_changes reads every event's op.

The messages are GoldenGate's spec examples (tests/fixtures/spec_examples/ogg_json: 01 INSERT and
04 TRUNCATE of QASOURCE.TCUSTORD, a table without a key) and copies of the insert with other
values and positions: run 1 lands the insert; run 2 the truncate and an insert after it; run 3
another truncate and an insert after that (the partition is appended to, not replaced); then the
warehouse is made as a build before the partition left it (the truncates' files moved to `final`,
the property dropped), and run 4 lands an insert whose position lies before the first truncate's,
so its row must end at that truncate, found in `final`. Each run is compared with a full refresh
of the same input. Built into a schema of their own so the shared workload's marts stay untouched.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from harness import SPEC_EXAMPLES, comparable, land_messages, one_feed_selection, run_dbt, spark_session, table_rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DIALECT = "ogg_json"
SPEC = SPEC_EXAMPLES / DIALECT
SELECTION = one_feed_selection(DIALECT)
FEED = "truncate_runs"
SCHEMA = "cdc_truncates"
EVENTS = f"{SCHEMA}_intermediate.int_change_events"
RUNS = [dt.datetime(2024, 8, 1, hour, tzinfo=dt.UTC) for hour in (1, 2, 3, 4)]
# The spec's truncate is at position 00000000000000005480, its insert at ...2928.
AFTER_TRUNCATE = "00000000000000006000"
SECOND_TRUNCATE = "00000000000000007000"
AFTER_SECOND_TRUNCATE = "00000000000000008000"
BEFORE_TRUNCATE = "00000000000000001000"


def spec_message(name: str, **changes: Any) -> bytes:
    message = json.loads((SPEC / f"{name}.json").read_text(encoding="utf-8"))
    after = changes.pop("after", {})
    message.update(changes)
    message.get("after", {}).update(after)
    return json.dumps(message).encode()


def build(full_refresh: bool = False) -> dict[str, Any]:
    """FEED's rows of the marts and of int_change_events after `dbt run`, and (key `truncates`) the
    `truncate_events` CTE int_row_changes ran, whitespace collapsed."""
    flags = ["--full-refresh"] if full_refresh else []
    result = run_dbt("run", *flags, "--select", *SELECTION, dbt_vars={"cdc_dialects": [DIALECT]}, schema=SCHEMA)
    (compiled,) = [r.node.compiled_code for r in result.result.results if r.node.name == "int_row_changes"]
    match = re.search(r"truncate_events as \((.*?)\n\),", compiled, re.S)
    assert match, compiled
    rows = {
        name: [r for r in table_rows(relation) if r.get("source_name", r.get("feed")) == FEED]
        for name, relation in (
            ("cdc_row_history", f"{SCHEMA}.cdc_row_history"),
            ("cdc_current_rows", f"{SCHEMA}.cdc_current_rows"),
            ("int_change_events", EVENTS),
        )
    }
    return {**rows, "truncates": " ".join(match.group(1).split())}


def as_built_before_the_truncate_partition() -> None:
    """int_change_events as a build before the partition existed leaves it: its truncates in
    `event_slice=final`, no property."""
    spark = spark_session()
    (location,) = [
        row.data_type for row in spark.sql(f"describe formatted {EVENTS}").collect() if row.col_name == "Location"
    ]
    root = Path(urlparse(location).path)
    # A write names its files alike in every partition: the moved one takes a name of its own.
    for data_file in (root / "event_slice=truncate").glob("*.parquet"):
        data_file.rename(root / "event_slice=final" / f"legacy-{data_file.name}")
        data_file.with_name(f".{data_file.name}.crc").unlink(missing_ok=True)
    spark.sql(f"alter table {EVENTS} drop partition (event_slice = 'truncate')")
    spark.sql(f"alter table {EVENTS} unset tblproperties ('cdc_unify.truncate_slice')")
    spark.sql(f"refresh table {EVENTS}")


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, Any]]:
    land_messages(DIALECT, [spec_message("01_insert")], FEED, RUNS[0], replace=True)
    first = build(full_refresh=True)
    after = spec_message("01_insert", pos=AFTER_TRUNCATE, after={"CUST_CODE": "AFTER"})
    land_messages(DIALECT, [spec_message("04_truncate"), after], FEED, RUNS[1], replace=False, first_offset=1)
    second = build()
    second_refreshed = build(full_refresh=True)
    truncate = spec_message("04_truncate", pos=SECOND_TRUNCATE, op_ts="2015-11-05 18:45:40.000000")
    last = spec_message("01_insert", pos=AFTER_SECOND_TRUNCATE, after={"CUST_CODE": "LAST"})
    land_messages(DIALECT, [truncate, last], FEED, RUNS[2], replace=False, first_offset=3)
    third = build()
    third_refreshed = build(full_refresh=True)
    as_built_before_the_truncate_partition()
    late = spec_message("01_insert", pos=BEFORE_TRUNCATE, after={"CUST_CODE": "LATE"})
    land_messages(DIALECT, [late], FEED, RUNS[3], replace=False, first_offset=5)
    fourth = build()
    return {
        "first": first,
        "second": second,
        "second_refreshed": second_refreshed,
        "third": third,
        "third_refreshed": third_refreshed,
        "fourth": fourth,
        "fourth_refreshed": build(full_refresh=True),
    }


def customers(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(r["row_values"]["CUST_CODE"] for r in rows)


def test_a_truncate_lands_in_its_own_partition_and_ends_the_rows_before_it(runs) -> None:
    events = runs["second"]["int_change_events"]
    assert sorted((e["op"], e["event_slice"]) for e in events) == [
        ("INSERT", "final"), ("INSERT", "final"), ("TRUNCATE", "truncate"),
    ]  # fmt: skip
    assert "where event_slice = 'truncate' and op = 'TRUNCATE'" in runs["second"]["truncates"]
    assert customers(runs["first"]["cdc_current_rows"]) == ["WILL"]
    assert customers(runs["second"]["cdc_current_rows"]) == ["AFTER"]
    for name in ("cdc_row_history", "cdc_current_rows", "int_change_events"):
        assert comparable(runs["second"][name]) == comparable(runs["second_refreshed"][name]), name


def test_a_later_truncate_is_appended_to_the_partition(runs) -> None:
    """Run 3's truncate joins the one stored, which stays: the partition is appended to."""
    events = runs["third"]["int_change_events"]
    assert sorted(e["source_position"] for e in events if e["event_slice"] == "truncate") == [
        "00000000000000005480", SECOND_TRUNCATE,
    ]  # fmt: skip
    assert customers(runs["third"]["cdc_current_rows"]) == ["LAST"]
    for name in ("cdc_row_history", "cdc_current_rows", "int_change_events"):
        assert comparable(runs["third"][name]) == comparable(runs["third_refreshed"][name]), name


def test_a_table_built_before_the_partition_finds_its_truncates_by_op(runs) -> None:
    """Run 4's late insert lies before the first truncate, which the table holds in `final`: found
    by the op of every event, it ends the late row, as the full refresh does."""
    reads = runs["fourth"]["truncates"]
    assert "where op = 'TRUNCATE'" in reads and "event_slice" not in reads, reads
    assert customers(runs["fourth"]["cdc_current_rows"]) == ["LAST"]
    late = [v for v in runs["fourth"]["cdc_row_history"] if (v["row_values"] or {}).get("CUST_CODE") == "LATE"]
    assert late and all(v["valid_to"] is not None or v["is_deleted"] for v in late), late
    for name in ("cdc_row_history", "cdc_current_rows"):
        assert comparable(runs["fourth"][name]) == comparable(runs["fourth_refreshed"][name]), name


def test_a_full_refresh_moves_the_truncates_back_into_their_partition(runs) -> None:
    slices = [e["event_slice"] for e in runs["fourth_refreshed"]["int_change_events"] if e["op"] == "TRUNCATE"]
    assert slices == ["truncate", "truncate"]
    assert "where event_slice = 'truncate' and op = 'TRUNCATE'" in runs["fourth_refreshed"]["truncates"]
