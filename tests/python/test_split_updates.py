"""A DataWorks update split into UPDATE_BEFOR and UPDATE_AFTER messages whose halves land in
different runs: the first run keeps the lone half as an unpaired event (nothing lost, no version
from half an update); the next, incremental, run pairs the halves into one UPDATE and repairs the
history, exactly as a full refresh of the same input does. The next run also gets a redelivery of
the first run's INSERT, and runs with a broadcast limit below its new rows, so its key sets are
shuffled (what a backfill does) and must give the same tables.

The messages are the DataWorks spec's own examples (tests/fixtures/spec_examples/dataworks_json:
04 INSERT, 05 UPDATE_BEFOR, 06 UPDATE_AFTER of a table without a primary key), built into a
schema of their own so the shared workload's marts stay untouched.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness import comparable, land_messages, run_dbt, table_rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples" / "dataworks_json"
DIALECT = "dataworks_json"
FEED = "split_updates"
SCHEMA = "cdc_split"
RUN_1 = dt.datetime(2024, 7, 1, 1, tzinfo=dt.UTC)
RUN_2 = dt.datetime(2024, 7, 1, 2, tzinfo=dt.UTC)


def spec_message(name: str) -> bytes:
    return (SPEC / f"{name}.json").read_bytes()


SELECTION = (f"stg_{DIALECT}__changes", "path:models/intermediate", "path:models/marts")
# The models whose incremental runs broadcast or shuffle their key sets (cdc_may_broadcast).
KEYED_MODELS = ("int_staged_events", "int_change_events", "int_row_changes")


def build(full_refresh: bool = False, broadcast_key_limit: int | None = None) -> dict[str, Any]:
    """The marts' rows of FEED after `dbt run`, and (key `compiled`) the SQL the keyed models ran."""
    flags = ["--full-refresh"] if full_refresh else []
    dbt_vars: dict[str, Any] = {"cdc_dialects": [DIALECT]}
    if broadcast_key_limit is not None:
        dbt_vars["cdc_broadcast_key_limit"] = broadcast_key_limit
    result = run_dbt("run", *flags, "--select", *SELECTION, dbt_vars=dbt_vars, schema=SCHEMA)
    marts = ("cdc_change_events", "cdc_row_history", "cdc_current_rows")
    return {
        **{
            name: [r for r in table_rows(f"{SCHEMA}.{name}") if r.get("source_name", r.get("feed")) == FEED]
            for name in marts
        },
        "compiled": compiled_code(result),
    }


def compiled_code(result: Any) -> dict[str, str]:
    return {r.node.name: r.node.compiled_code for r in result.result.results if r.node.name in KEYED_MODELS}


def row_ops(events: list[dict[str, Any]]) -> list[str]:
    return sorted(e["op"] for e in events if e["event_kind"] == "ROW")


def values(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r["row_values"], sort_keys=True) for r in rows if not r.get("is_deleted", False))


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, list[dict[str, Any]]]]:
    land_messages(DIALECT, [spec_message("04_insert"), spec_message("05_update_before")], FEED, RUN_1, replace=True)
    first = build(full_refresh=True)
    land_messages(
        DIALECT,
        [spec_message("06_update_after"), spec_message("04_insert")],
        FEED,
        RUN_2,
        replace=False,
        first_offset=2,
    )
    # Two new staged rows (a redelivered insert, an AFTER half) with a limit of one: int_staged_events
    # and int_change_events, whose key sets come from them, shuffle; int_row_changes gets one changed
    # event (the paired update: a redelivery changes no event) and broadcasts.
    second = build(broadcast_key_limit=1)
    # Nothing new since: compiled (not run) with the default limit, the key sets are broadcast.
    rerun_compiled = compiled_code(
        run_dbt("compile", "--select", *KEYED_MODELS, dbt_vars={"cdc_dialects": [DIALECT]}, schema=SCHEMA)
    )
    return {
        "first": first,
        "second": second,
        "rerun_compiled": rerun_compiled,
        "full_refresh": build(full_refresh=True),
    }


def test_a_lone_half_waits_as_an_event_and_makes_no_version(runs) -> None:
    first = runs["first"]
    assert row_ops(first["cdc_change_events"]) == ["INSERT", "UPDATE_BEFORE"]
    assert len(first["cdc_row_history"]) == 1
    assert [json.loads(v)["sex"] for v in values(first["cdc_current_rows"])] == ["man"]


def test_the_next_run_pairs_the_halves_into_one_update(runs) -> None:
    second = runs["second"]
    assert row_ops(second["cdc_change_events"]) == ["INSERT", "UPDATE"]
    update = next(e for e in second["cdc_change_events"] if e["op"] == "UPDATE")
    assert update["before"]["sex"] == "man" and update["after"]["sex"] == "woman"
    assert update["split_before_event_id"] is not None
    assert [json.loads(v)["sex"] for v in values(second["cdc_current_rows"])] == ["woman"]
    live = [v for v in second["cdc_row_history"] if not v["is_deleted"]]
    assert sorted(v["row_values"]["sex"] for v in live) == ["man", "woman"]


def test_the_redelivered_insert_counts_once(runs) -> None:
    inserts = [e for e in runs["second"]["cdc_change_events"] if e["op"] == "INSERT"]
    assert [e["delivery_count"] for e in inserts] == [2]


def test_incremental_pairing_equals_a_full_refresh(runs) -> None:
    for name, rows in runs["second"].items():
        if name != "compiled":
            assert comparable(rows) == comparable(runs["full_refresh"][name]), name


def test_key_sets_are_broadcast_up_to_the_limit_and_shuffled_above_it(runs) -> None:
    assert sorted(runs["second"]["compiled"]) == sorted(KEYED_MODELS)
    for name in KEYED_MODELS:
        broadcast = name == "int_row_changes"
        assert ("/*+ broadcast(" in runs["second"]["compiled"][name]) == broadcast, name
        assert "/*+ broadcast(" in runs["rerun_compiled"][name], name


def test_watermarks_are_constants_and_a_run_with_nothing_new_reads_nothing(runs) -> None:
    """An incremental run compares its input with watermarks read when it starts, written in as
    constants (a filter the Parquet scan applies: no subquery of `this` is read with every row);
    with nothing new since, the filter of its new rows is `false`, so Spark plans an empty input."""
    second, rerun = runs["second"]["compiled"], runs["rerun_compiled"]
    assert "landed_at > timestamp_micros(" in second["int_change_events"]
    assert "built_at > timestamp_micros(" in second["int_row_changes"]
    assert "map_from_entries" not in second["int_change_events"]
    assert "coalesce(max(built_at)" not in second["int_row_changes"]
    for name in KEYED_MODELS:
        assert re.search(r"\bwhere\s+false\b", rerun[name]) and not re.search(r"\bwhere\s+false\b", second[name]), name
