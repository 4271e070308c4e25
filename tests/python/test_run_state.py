"""The adapter's per-invocation memory of its incremental writes (dbt/adapters/sparksession/run_state.py):
plain Python, no Spark."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from dbt.adapters.sparksession.run_state import RunState


def relation(name: str, schema: str = "Cdc_Unify") -> SimpleNamespace:
    return SimpleNamespace(schema=schema, identifier=name)


def test_a_nothing_new_mark_is_taken_once_and_only_for_its_model() -> None:
    state = RunState()
    state.mark_nothing_new("run-1", relation("stg_a"))
    assert not state.take_nothing_new("run-1", relation("stg_b"))
    assert state.take_nothing_new("run-1", relation("STG_A", "cdc_unify"))
    assert not state.take_nothing_new("run-1", relation("stg_a"))


def test_what_a_model_read_is_taken_once_by_its_write_and_not_by_another_invocation() -> None:
    state = RunState()
    state.will_have_read("run-1", relation("int_q"), "s.input", {"a": 5})
    state.will_have_read("run-1", relation("int_q"), "s.input", {"a": 7})  # compiled again: the later call
    state.will_have_read("run-1", relation("cdc_s"), "s.other", {"b": 1})
    assert state.take_read("run-1", relation("INT_Q", "cdc_unify")) == ("s.input", {"a": 7})
    assert state.take_read("run-1", relation("int_q")) is None
    assert state.take_read("run-2", relation("cdc_s")) is None


def test_writes_are_remembered_per_invocation() -> None:
    state = RunState()
    state.record_write("run-1", relation("stg_a"), rows=0)
    state.record_write("run-1", relation("stg_b"), rows=3)
    assert state.wrote_rows("run-1", relation("stg_a")) is False
    assert state.wrote_rows("run-1", relation("stg_b")) is True
    assert state.written_rows("run-1", relation("stg_b")) == 3
    assert state.wrote_rows("run-1", relation("stg_c")) is None
    assert state.written_rows("run-1", relation("stg_c")) is None
    state.mark_nothing_new("run-1", relation("stg_c"))
    # Another invocation in the same process (dbt's Python API) starts from nothing.
    assert state.wrote_rows("run-2", relation("stg_b")) is None
    assert not state.take_nothing_new("run-2", relation("stg_c"))


def test_the_newest_built_at_is_queried_once_per_relation_until_it_is_written() -> None:
    state = RunState()
    queries: list[str] = []

    def query(name: str, micros: int | None):
        def run() -> int | None:
            queries.append(name)
            return micros

        return run

    assert state.newest_built_at("run-1", relation("cdc_row_history"), query("history", 5)) == 5
    assert state.newest_built_at("run-1", relation("cdc_row_history"), query("history", 6)) == 5
    assert state.newest_built_at("run-1", relation("empty"), query("empty", None)) is None
    assert state.newest_built_at("run-1", relation("empty"), query("empty", 1)) is None
    assert queries == ["history", "empty"]
    state.record_write("run-1", relation("cdc_row_history"), rows=2)
    assert state.newest_built_at("run-1", relation("cdc_row_history"), query("history", 7)) == 7
    assert state.newest_built_at("run-2", relation("cdc_row_history"), query("history", 8)) == 8


def test_rows_of_a_relation_are_counted_once_until_it_is_written_and_apart_from_its_newest_built_at() -> None:
    state = RunState()
    counts: list[int] = []

    def count(rows: int):
        def run() -> int:
            counts.append(rows)
            return rows

        return run

    assert state.newest_built_at("run-1", relation("cdc_change_events"), lambda: 9) == 9
    assert state.counted_rows("run-1", relation("cdc_change_events"), count(4)) == 4
    assert state.counted_rows("run-1", relation("cdc_change_events"), count(5)) == 4
    assert state.newest_built_at("run-1", relation("cdc_change_events"), lambda: 10) == 9
    state.record_write("run-1", relation("cdc_change_events"), rows=6)
    assert state.counted_rows("run-1", relation("cdc_change_events"), count(7)) == 7
    assert state.counted_rows("run-2", relation("cdc_change_events"), count(8)) == 8
    assert counts == [4, 7, 8]


def test_concurrent_callers_wait_for_the_one_query_of_a_relation() -> None:
    """Tests of one model compile in parallel threads: the second caller waits for the first one's
    query instead of running its own (a view's newest built_at evaluates the whole view)."""
    state = RunState()
    started, release = threading.Event(), threading.Event()
    queries: list[str] = []

    def slow_query() -> int:
        queries.append("history")
        started.set()
        release.wait(timeout=10)
        return 5

    answers: list[int | None] = []
    first = threading.Thread(target=lambda: answers.append(state.newest_built_at("run-1", relation("h"), slow_query)))
    first.start()
    assert started.wait(timeout=10)
    second = threading.Thread(target=lambda: answers.append(state.newest_built_at("run-1", relation("h"), slow_query)))
    second.start()
    second.join(timeout=0.2)
    assert second.is_alive()  # waiting for the first query, not running its own
    release.set()
    first.join(timeout=10)
    second.join(timeout=10)
    assert answers == [5, 5]
    assert queries == ["history"]


def test_a_view_follows_its_parents_only_when_re_created_with_its_former_sql() -> None:
    state = RunState()
    state.record_view("run-1", relation("cdc_row_history"), same_sql=True)
    state.record_view("run-1", relation("customers_history"), same_sql=False)
    assert state.view_follows_parents("run-1", relation("cdc_row_history"))
    assert not state.view_follows_parents("run-1", relation("customers_history"))
    assert not state.view_follows_parents("run-1", relation("order_items_history"))
    assert not state.view_follows_parents("run-2", relation("cdc_row_history"))


def test_killed_writes_count_as_applied_only_in_the_invocation_whose_hook_applied_them() -> None:
    state = RunState()
    assert not state.killed_writes_applied("run-1")
    state.mark_killed_writes_applied("run-1")
    state.record_write("run-1", relation("stg_a"), rows=2)
    assert state.killed_writes_applied("run-1")
    # A later invocation in the same process runs its own hook first.
    assert not state.killed_writes_applied("run-2")
