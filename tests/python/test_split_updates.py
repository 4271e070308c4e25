"""A DataWorks update split into UPDATE_BEFOR and UPDATE_AFTER messages whose halves land in
different runs: the first run keeps the lone half as an unpaired event (nothing lost, no version
from half an update); the next, incremental, run pairs the halves into one UPDATE and repairs the
history, exactly as a full refresh of the same input does.

The messages are the DataWorks spec's own examples (tests/fixtures/spec_examples/dataworks_json:
04 INSERT, 05 UPDATE_BEFOR, 06 UPDATE_AFTER of a table without a primary key), built into a
schema of their own so the shared workload's marts stay untouched.
"""

from __future__ import annotations

import datetime as dt
import json
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


def build(full_refresh: bool = False) -> dict[str, list[dict[str, Any]]]:
    flags = ["--full-refresh"] if full_refresh else []
    selection = [f"stg_{DIALECT}__changes", "path:models/intermediate", "path:models/marts"]
    run_dbt("run", *flags, "--select", *selection, dbt_vars={"cdc_dialects": [DIALECT]}, schema=SCHEMA)
    marts = ("cdc_change_events", "cdc_row_history", "cdc_current_rows")
    return {
        name: [r for r in table_rows(f"{SCHEMA}.{name}") if r.get("source_name", r.get("feed")) == FEED]
        for name in marts
    }


def row_ops(events: list[dict[str, Any]]) -> list[str]:
    return sorted(e["op"] for e in events if e["event_kind"] == "ROW")


def values(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r["row_values"], sort_keys=True) for r in rows if not r.get("is_deleted", False))


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, list[dict[str, Any]]]]:
    land_messages(DIALECT, [spec_message("04_insert"), spec_message("05_update_before")], FEED, RUN_1, replace=True)
    first = build(full_refresh=True)
    land_messages(DIALECT, [spec_message("06_update_after")], FEED, RUN_2, replace=False, first_offset=2)
    second = build()
    return {"first": first, "second": second, "full_refresh": build(full_refresh=True)}


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


def test_incremental_pairing_equals_a_full_refresh(runs) -> None:
    for name, rows in runs["second"].items():
        assert comparable(rows) == comparable(runs["full_refresh"][name]), name
