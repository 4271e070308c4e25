"""A model's data tests of each row on its own (`not_null`, `accepted_values`, the project's
`expression_is_true`) checked by one query instead of one each.

Each of dbt's data tests is a query of its own, and most of what such a query costs is fixed: the
table's listing, every file's footer, a Spark job (0.1-0.25 s a test at mixed:1M), while the
project's models carry 206 `not_null` and `accepted_values` tests (up to 19 on one model) and 20
`expression_is_true`. Here, when such a test compiles, the failing rows of every such test on the
same model, with the same `where`, selected in the invocation, are counted at once over the scope
the test reads (macros/test_scope.sql: one `count_if` per test, one scan), once per invocation and
scope. A test whose count is 0 then reads an empty relation (no scan), and so finds nothing, as its
own query would have. A test whose count is not 0 runs its own query unchanged, so that dbt
reports and stores its real failing rows; so does every test when the shared query fails (a test
of a column that does not exist errors alone, as before).

The conditions are the tests' own, written as their queries write them, which is what makes their
`where` clauses and these counts agree: a row fails dbt 1.11's `default__test_not_null` when
`column is null` (the column unparenthesised, as there), `default__test_accepted_values` when
`(column) not in (values)` (it groups by the column's whole expression; values quoted as it quotes
them, by `quote`), and macros/generic_tests.sql `expression_is_true` when
`not coalesce((column expression), false)`. An expression with a subquery is left to its own query
(Spark takes no subquery inside an aggregate), as is any test whose arguments are still Jinja.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

# dbt's own tests and the project's (macros/generic_tests.sql): none of another package.
CHECKED = ("not_null", "accepted_values", "expression_is_true")
SUBQUERY = re.compile(r"\bselect\b", re.IGNORECASE)


@dataclass(frozen=True)
class Check:
    """A test (`test_id`) and the condition its failing rows meet."""

    test_id: str
    fails: str


def failing_condition(test_metadata: Mapping[str, Any]) -> str | None:
    """The condition a failing row of a test of CHECKED meets; None for any other test, or one whose
    arguments are not plain values (left to its own query)."""
    name = test_metadata.get("name")
    if test_metadata.get("namespace") is not None or name not in CHECKED:
        return None
    kwargs = test_metadata.get("kwargs") or {}
    column = kwargs.get("column_name")
    if name == "expression_is_true":
        return expression_fails(kwargs.get("expression"), column)
    if not isinstance(column, str) or not column or templated(column):
        return None
    if name == "not_null":
        return f"{column} is null"
    values = kwargs.get("values")
    quote = kwargs.get("quote", True)
    if not isinstance(values, list) or not values or not isinstance(quote, bool):
        return None
    if any(not isinstance(value, str | int | float | bool) or templated(str(value)) for value in values):
        return None
    # Rendered as dbt's test renders them, so that both conditions are one and the same.
    rendered = ", ".join(f"'{value}'" if quote else str(value) for value in values)
    return f"({column}) not in ({rendered})"


def expression_fails(expression: Any, column: Any) -> str | None:
    if not isinstance(expression, str) or not expression.strip() or templated(expression):
        return None
    if SUBQUERY.search(expression) or (column is not None and (not isinstance(column, str) or templated(column))):
        return None
    return f"not coalesce(({column + ' ' if column else ''}{expression}), false)"


def templated(text: str) -> bool:
    return "{{" in text or "{%" in text


def checks_with(nodes: Mapping[str, Mapping[str, Any]], test_id: str, selected: Collection[str]) -> list[Check]:
    """The tests checked together with test `test_id` (graph `nodes`, dbt's flat graph): the tests
    of its model with the same `where` whose failing condition is known (failing_condition), among
    those `selected` in the invocation (the test itself always); none unless it is one of them."""
    test = nodes.get(test_id) or {}
    if failing_condition(test.get("test_metadata") or {}) is None:
        return []
    model, where = test.get("attached_node"), (test.get("config") or {}).get("where")
    checks = []
    for node_id, node in nodes.items():
        if node.get("resource_type") != "test" or node.get("attached_node") != model:
            continue
        if (node.get("config") or {}).get("where") != where or (node_id != test_id and node_id not in selected):
            continue
        condition = failing_condition(node.get("test_metadata") or {})
        if condition is not None:
            checks.append(Check(node_id, condition))
    return sorted(checks, key=lambda check: check.test_id)


def query(scoped: str, checks: list[Check]) -> str:
    """One row: the failing rows of each check in relation (or subquery) `scoped`, in order."""
    counts = ",\n    ".join(f"count_if({check.fails}) as check_{i}" for i, check in enumerate(checks))
    return f"select\n    {counts}\nfrom {scoped} as cdc_checked"


def failures(row: Any, checks: list[Check]) -> dict[str, int]:
    return {check.test_id: int(row[i]) for i, check in enumerate(checks)}
