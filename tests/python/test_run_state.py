"""The adapter's per-invocation memory of its incremental writes (dbt/adapters/sparksession/run_state.py):
plain Python, no Spark."""

from __future__ import annotations

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


def test_writes_are_remembered_per_invocation() -> None:
    state = RunState()
    state.record_write("run-1", relation("stg_a"), rows=False)
    state.record_write("run-1", relation("stg_b"), rows=True)
    assert state.wrote_rows("run-1", relation("stg_a")) is False
    assert state.wrote_rows("run-1", relation("stg_b")) is True
    assert state.wrote_rows("run-1", relation("stg_c")) is None
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
    state.record_write("run-1", relation("cdc_row_history"), rows=True)
    assert state.newest_built_at("run-1", relation("cdc_row_history"), query("history", 7)) == 7
    assert state.newest_built_at("run-2", relation("cdc_row_history"), query("history", 8)) == 8
