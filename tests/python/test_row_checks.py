"""A model's tests of each row (not_null, accepted_values, expression_is_true) counted by one query
(src/dbt/adapters/sparksession/row_checks.py). Which tests go together and the conditions they
count are plain Python; the adapter's shared count runs on the local Spark session. End to end,
in dbt: tests/python/test_test_scope.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.sparksession import row_checks
from dbt.adapters.sparksession.impl import SparkSessionAdapter
from dbt.adapters.sparksession.row_checks import Check
from dbt.adapters.sparksession.run_state import RunState
from harness import spark_session

MODEL = "model.p.orders"


def checked_test(name: str, column: str, model: str = MODEL, where: str | None = None, **kwargs: Any) -> dict[str, Any]:
    return {
        "resource_type": "test",
        "attached_node": model,
        "config": {"where": where},
        "test_metadata": {"name": name, "namespace": None, "kwargs": {"column_name": column, **kwargs}},
    }


NODES = {
    MODEL: {"resource_type": "model"},
    "test.p.id_not_null": checked_test("not_null", "id"),
    "test.p.status_accepted": checked_test("accepted_values", "status", values=["ok", "late"]),
    "test.p.amount_accepted": checked_test("accepted_values", "amount", values=[1, 2], quote=False),
    "test.p.status_not_null_where": checked_test("not_null", "status", where="id <> '6'"),
    "test.p.amount_positive": checked_test("expression_is_true", None, expression="amount > 0"),
    "test.p.id_unique": {**checked_test("not_null", "id"), "test_metadata": {"name": "unique", "kwargs": {}}},
    "test.p.other_model": checked_test("not_null", "id", model="model.p.other"),
}
ALL = set(NODES)


def test_the_conditions_are_the_tests_own() -> None:
    """As dbt's default__test_not_null and default__test_accepted_values write them."""
    assert row_checks.failing_condition(NODES["test.p.id_not_null"]["test_metadata"]) == "id is null"
    assert (
        row_checks.failing_condition(NODES["test.p.status_accepted"]["test_metadata"])
        == "(status) not in ('ok', 'late')"
    )
    assert row_checks.failing_condition(NODES["test.p.amount_accepted"]["test_metadata"]) == "(amount) not in (1, 2)"
    assert (
        row_checks.failing_condition(NODES["test.p.amount_positive"]["test_metadata"])
        == "not coalesce((amount > 0), false)"
    )
    on_column = {"name": "expression_is_true", "kwargs": {"column_name": "amount", "expression": ">= 1"}}
    assert row_checks.failing_condition(on_column) == "not coalesce((amount >= 1), false)"


@pytest.mark.parametrize(
    "metadata",
    [
        {"name": "unique", "kwargs": {"column_name": "id"}},
        {"name": "not_null", "namespace": "dbt_utils", "kwargs": {"column_name": "id"}},
        {"name": "expression_is_true", "namespace": "dbt_utils", "kwargs": {"expression": "a > 0"}},
        {"name": "expression_is_true", "kwargs": {"expression": "id in (select id from t)"}},
        {"name": "expression_is_true", "kwargs": {"expression": "id in ({{ ref('t') }})"}},
        {"name": "not_null", "kwargs": {"column_name": "{{ var('c') }}"}},
        {"name": "accepted_values", "kwargs": {"column_name": "s", "values": "{{ var('v') }}"}},
        {"name": "accepted_values", "kwargs": {"column_name": "s", "values": ["{{ var('v') }}"]}},
        {"name": "accepted_values", "kwargs": {"column_name": "s", "values": ["a"], "quote": "{{ q }}"}},
    ],
)
def test_other_tests_and_templated_arguments_are_left_to_their_own_query(metadata: dict[str, Any]) -> None:
    assert row_checks.failing_condition(metadata) is None


def test_the_checks_of_a_model_go_together_by_where_and_selection() -> None:
    together = row_checks.checks_with(NODES, "test.p.id_not_null", ALL)
    assert [check.test_id for check in together] == [
        "test.p.amount_accepted",
        "test.p.amount_positive",
        "test.p.id_not_null",
        "test.p.status_accepted",
    ]
    assert [c.test_id for c in row_checks.checks_with(NODES, "test.p.status_not_null_where", ALL)] == [
        "test.p.status_not_null_where"
    ]
    selected = row_checks.checks_with(NODES, "test.p.id_not_null", {"test.p.status_accepted"})
    assert [check.test_id for check in selected] == ["test.p.id_not_null", "test.p.status_accepted"]
    assert row_checks.checks_with(NODES, "test.p.id_unique", ALL) == []


class CountingSession:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def sql(self, text: str) -> Any:
        self.queries.append(text)
        return spark_session().sql(text)


def adapter(session: CountingSession) -> Any:
    return SimpleNamespace(_session=lambda: session, _run=RunState())


@pytest.fixture(scope="module")
def orders() -> str:
    rows = [("1", "ok", 1), ("2", "bogus", 2), (None, "late", 3)]
    spark_session().createDataFrame(rows, "id string, status string, amount int").createOrReplaceTempView("cc_orders")
    return "(select * from cc_orders where amount >= 1)"


@pytest.mark.spark
def test_one_query_counts_every_check_of_the_scope(orders: str) -> None:
    session = CountingSession()
    fake = adapter(session)
    checked = ("test.p.id_not_null", "test.p.status_accepted", "test.p.amount_accepted", "test.p.amount_positive")
    passes = {
        test_id: SparkSessionAdapter.passes_row_check(fake, "run-1", NODES, test_id, orders, sorted(ALL))
        for test_id in checked
    }
    # A null id, a bogus status, an amount of 3: one failing row each; every amount is positive.
    assert passes == dict.fromkeys(checked[:3], False) | {"test.p.amount_positive": True}
    assert len(session.queries) == 1
    counts = fake._run.row_check_failures("run-1", session.queries[0], lambda: pytest.fail("queried again"))
    assert counts == dict.fromkeys(checked[:3], 1) | {"test.p.amount_positive": 0}
    passing = "(select * from cc_orders where id = '1')"
    assert SparkSessionAdapter.passes_row_check(fake, "run-1", NODES, "test.p.id_not_null", passing, sorted(ALL))
    assert len(session.queries) == 2


@pytest.mark.spark
def test_a_failing_shared_query_leaves_every_test_to_its_own(orders: str) -> None:
    """A test of a column the relation does not have makes the shared query fail: no test is
    passed by it, so each runs its own query and that one test errors alone."""
    nodes = {**NODES, "test.p.missing_not_null": checked_test("not_null", "no_such_column")}
    session = CountingSession()
    fake = adapter(session)
    passing = "(select * from cc_orders where id = '1')"
    for test_id in ("test.p.id_not_null", "test.p.missing_not_null"):
        assert not SparkSessionAdapter.passes_row_check(fake, "run-1", nodes, test_id, passing, sorted(nodes))
    assert len(session.queries) == 1


def test_the_shared_query_counts_each_condition() -> None:
    checks = [Check("a", "id is null"), Check("b", "(s) not in ('x')")]
    assert row_checks.query("t", checks) == (
        "select\n    count_if(id is null) as check_0,\n    count_if((s) not in ('x')) as check_1\nfrom t as cdc_checked"
    )
