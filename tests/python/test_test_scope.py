"""Data tests scoped to what a run wrote (macros/test_scope.sql, docs/testing.md).

A fixture project with the project's macros: two incremental models stamp their rows with
cdc_built_at (the macro every model uses) and are built by two dbt runs, so each run's rows carry
that run's start; a table without built_at stands for a model that is always checked whole. The
second run writes bad rows of its own, and the first run's rows hold bad rows too. One `dbt test`
in the default scope and one with the full-check switch (var cdc_test_scope: all) must then fail
each test with exactly the failing rows counted by hand below: the second run's alone when scoped,
but for a key invariant the older rows of the keys the second run touched too; all of them in the
full check. A scope that were off, or that checked the new rows without their keys' older rows,
gives other counts. A third model appends builds of keys (config live_rows): its tests count the
live rows' failures only, never a superseded build's or a vacancy row's. A view of its live rows
(config shows_live_builds) is scoped to the last run's rows without a semi join: they are whole builds. A view over the first
model is scoped as its parent wrote: in a build that re-creates it with its former SQL, by what
the parent wrote (no query); otherwise by its newest built_at, read with one query. A first build
writes every row, so its tests read each model as it is, and find what the full check finds.
A lookup may read its parent's rows of the last run first (found_in's recent_parent_first) and the
rest of the parent only for the values it did not find there: it finds the same failing rows.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.cli.main import dbtRunner

from dbt.adapters.sparksession import impl
from harness import REPO_ROOT, profile_schema, spark_session
from harness import write_fixture_project as write_dbt_project

SCHEMA = "test_scope"
T0 = dt.datetime(2024, 1, 1)


def at(hour: int) -> dt.datetime:
    return T0 + dt.timedelta(hours=hour)


# (batch, id, status, parent_id, amount): batch 1 is what the first run writes, batch 2 the second.
ROWS = [
    (1, "1", "ok", "p1", 1),
    (1, "2", "bogus", "p1", 1),  # bad status
    (1, None, "ok", "p1", 1),  # null id
    (1, "4", "ok", "p9", 1),  # no such parent
    (1, "5", "ok", "p1", 1),  # id 5 twice
    (1, "5", "ok", "p1", 1),
    (1, "8", "ok", "p1", -1),  # negative amount: the only one
    (2, "6", "bogus", "p1", 1),  # bad status
    (2, None, "ok", "p2", 1),  # null id
    (2, "7", "ok", "p8", 1),  # no such parent
    (2, "1", "ok", "p1", 1),  # id 1 again: a duplicate only with the first run's row
    (4, None, "ok", "p1", 1),  # null id, built by the last tests only
    (4, "9", "ok", "p1", 1),
    (6, "10", "ok", "p1", 1),
    (6, "11", "ok", "p1", 1),
    (7, "12", "ok", "p1", 1),
    (7, "13", "ok", "p1", 1),
]
# (batch, parent_id) of a parent that stamps its rows: each run writes one parent.
PARENTS = [(1, "p1"), (2, "p2")]
# (batch, row_key, valid_from, valid_to, is_current)
VERSIONS = [
    (1, "a", at(1), None, True),
    (1, "b", at(1), at(2), False),  # b: two open versions, broken by the first run alone
    (1, "b", at(2), None, True),
    (1, "b", at(3), None, True),
    (2, "a", at(2), None, True),  # a's new version, but a's first version is left open
    (2, "c", at(1), None, True),
]


# (batch, build_key, action_id, status) of a model that appends builds (config live_rows): a key's
# live rows are its newest build's, a row without action_id is an empty build.
BUILDS = [
    (1, "k1", "x1", "ok"),
    (1, "k2", "x2", "bogus"),  # bad status, still live after the second run
    (1, "k3", "x3", "bogus"),  # bad status, superseded by the second run's build of k3
    (1, "k4", "x4", "ok"),
    (1, "k5", "d5", "ok"),  # d5 in two live builds: broken by the first run alone
    (1, "k6", "d5", "ok"),
    (2, "k3", "x3", "ok"),
    (2, "k4", None, None),  # k4's build is empty now: a vacancy row, no bad row
    (2, "k7", "x7", "bogus"),  # bad status
    (2, "k8", "x8", "ok"),  # x8 twice in one build
    (2, "k8", "x8", "ok"),
]


@dataclass(frozen=True)
class Expected:
    """Failures (rows dbt counts) of one data test in the last run's scope and in the full check."""

    last_run: int
    all: int


EXPECTED = {
    # Tests of each row: the second run's bad rows when scoped, everyone's in the full check.
    "rows_id_not_null": Expected(1, 2),
    "rows_status_ok": Expected(1, 2),
    # Tests of each row of one model are counted by one query (row_checks): a failing one still
    # counts its own rows (accepted_values: one per bad value, 'bogus' twice in the full check),
    # a passing one finds none, a `where` is kept.
    "rows_status_accepted": Expected(1, 1),
    "rows_status_accepted_but_6": Expected(0, 1),
    "rows_parent_not_null": Expected(0, 0),
    "rows_parent_exists": Expected(1, 2),  # relationships: the new child rows against every parent
    "rows_parent_found": Expected(1, 2),  # found_in: the same, the parent read where it holds them
    # found_in reading the parent's rows of the last run first: the second run's p2 is found among
    # them, its p1 only in the first run's parent rows (read for it alone), p8 nowhere.
    "rows_parent_found_recent": Expected(1, 2),
    # found_in with a condition on the parent: p2 and p8 (second run), p9 (first run) are not p1.
    "rows_parent_found_p1": Expected(2, 3),
    # Only the first run broke it: not checked when scoped.
    "rows_amount_not_negative": Expected(0, 1),
    # `where` still applies, within the scope: id 6 (the second run's bad status) is left out.
    "rows_status_ok_but_6": Expected(0, 1),
    # Key invariants: id 1 is duplicated only by the second run's row with the first run's one.
    "rows_id_unique": Expected(1, 2),
    "rows_id_parent_unique": Expected(1, 2),
    # a: the second run's version and the first run's open one are both current, and the older
    # one (the failing row) overlaps the new; b, broken by the first run alone, is not touched.
    "versions_one_current": Expected(1, 2),
    "versions_tile_time": Expected(1, 2),
    # A model without built_at is checked whole in either scope.
    "unmarked_id_not_null": Expected(2, 2),
    # A row test whose own warn_if fires on no failing row: it warns (failures 0 or not), so it
    # always runs its query (macros/test_scope.sql passes a test without one only as dbt counts).
    "rows_id_not_null_always_warns": Expected(1, 2),
    # A view of marked_rows: its newest rows are the second run's.
    "view_id_not_null": Expected(1, 2),
    "view_id_unique": Expected(1, 2),
    # Builds: the live rows only. The vacancy row is no null action_id; k3's superseded bogus row and
    # its x3, repeated by the newer build, count nowhere; d5 (first run only) only in the full check.
    "builds_action_not_null": Expected(0, 0),
    "builds_status_ok": Expected(1, 2),
    "builds_action_unique": Expected(1, 2),
    # A view of the builds' live rows (config shows_live_builds): the same rows, so the same counts.
    "live_view_action_unique": Expected(1, 2),
}

MODELS = {
    "marked_rows": (
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "select id, status, parent_id, amount, {{ cdc_built_at() }} as built_at\n"
        "from {{ source('fixture', 'scope_rows') }}\nwhere batch = {{ var('batch', 1) }}\n"
    ),
    "marked_versions": (
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "select row_key, valid_from, valid_to, is_current, {{ cdc_built_at() }} as built_at\n"
        "from {{ source('fixture', 'scope_versions') }}\nwhere batch = {{ var('batch', 1) }}\n"
    ),
    "marked_builds": (
        "{{ config(materialized='incremental', incremental_strategy='append',\n"
        "    live_rows={'build_key': ['build_key'], 'present': 'action_id'}) }}\n"
        "select build_key, action_id, status, {{ cdc_built_at() }} as built_at\n"
        "from {{ source('fixture', 'scope_builds') }}\nwhere batch = {{ var('batch', 1) }}\n"
    ),
    "marked_parents": (
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "select parent_id, {{ cdc_built_at() }} as built_at\n"
        "from {{ source('fixture', 'scope_parents') }}\nwhere batch = {{ var('batch', 1) }}\n"
    ),
    "marked_rows_view": (
        "{{ config(materialized='view') }}\n"
        "select id, status, built_at from {{ ref('marked_rows') }}\n"
        "where coalesce(id, '') <> '{{ var('hidden_id', '0') }}'\n"
    ),
    "marked_builds_live": (
        "{{ config(materialized='view', shows_live_builds=true) }}\n"
        "select build_key, action_id, status, built_at\n"
        "from ({{ cdc_live_rows(ref('marked_builds'), {'build_key': ['build_key'], 'present': 'action_id'}) }})"
        " as live\n"
    ),
    "unmarked": "select id from {{ source('fixture', 'scope_rows') }} where batch <= {{ var('batch', 1) }}\n",
    "parents": "select 'p1' as parent_id union all select 'p2' as parent_id\n",
}


def named(test: str, name: str, config: dict[str, Any] | None = None, **arguments: Any) -> dict[str, Any]:
    return {test: {"name": name, "arguments": arguments, **({"config": config} if config else {})}}


def models_yaml() -> dict[str, Any]:
    status_ok = {"expression": "status = 'ok'"}
    rows_columns = [
        {
            "name": "id",
            "data_tests": [
                named("not_null", "rows_id_not_null"),
                named("unique", "rows_id_unique"),
                named("not_null", "rows_id_not_null_always_warns", config={"warn_if": ">= 0"}),
            ],
        },
        {
            "name": "status",
            "data_tests": [
                named("accepted_values", "rows_status_accepted", values=["ok"]),
                named("accepted_values", "rows_status_accepted_but_6", config={"where": "id <> '6'"}, values=["ok"]),
            ],
        },
        {
            "name": "parent_id",
            "data_tests": [
                named("relationships", "rows_parent_exists", to="ref('parents')", field="parent_id"),
                named("found_in", "rows_parent_found", to="ref('parents')", field="parent_id"),
                named(
                    "found_in",
                    "rows_parent_found_recent",
                    to="ref('marked_parents')",
                    field="parent_id",
                    recent_parent_first=True,
                ),
                named(
                    "found_in",
                    "rows_parent_found_p1",
                    to="ref('parents')",
                    field="parent_id",
                    to_where="parent_id = 'p1'",
                ),
                named("not_null", "rows_parent_not_null"),
            ],
        },
        {"name": "amount", "data_tests": [named("expression_is_true", "rows_amount_not_negative", expression=">= 0")]},
        {"name": "built_at"},
    ]
    rows_tests = [
        named("expression_is_true", "rows_status_ok", **status_ok),
        named("expression_is_true", "rows_status_ok_but_6", config={"where": "id <> '6'"}, **status_ok),
        named(
            "unique_combination_of_columns",
            "rows_id_parent_unique",
            combination_of_columns=["id", "parent_id"],
            quote_columns=True,
        ),
    ]
    versions_tests = [
        named("one_current_version_per_key", "versions_one_current", key_columns=["row_key"]),
        named("no_overlapping_versions", "versions_tile_time", key_columns=["row_key"]),
    ]
    version_columns = ["row_key", "valid_from", "valid_to", "is_current", "built_at"]
    build_columns = [
        {"name": "build_key"},
        {
            "name": "action_id",
            "data_tests": [named("not_null", "builds_action_not_null"), named("unique", "builds_action_unique")],
        },
        {"name": "status"},
        {"name": "built_at"},
    ]
    return {
        "version": 2,
        "sources": [
            {
                "name": "fixture",
                "schema": "global_temp",
                "tables": [
                    {"name": "scope_rows"},
                    {"name": "scope_versions"},
                    {"name": "scope_builds"},
                    {"name": "scope_parents"},
                ],
            }
        ],
        "models": [
            {"name": "marked_rows", "columns": rows_columns, "data_tests": rows_tests},
            {
                "name": "marked_versions",
                "columns": [{"name": c} for c in version_columns],
                "data_tests": versions_tests,
            },
            {
                "name": "marked_builds",
                "columns": build_columns,
                "data_tests": [named("expression_is_true", "builds_status_ok", expression="status = 'ok'")],
            },
            {
                "name": "marked_builds_live",
                "columns": [
                    {"name": "build_key"},
                    {"name": "action_id", "data_tests": [named("unique", "live_view_action_unique")]},
                    {"name": "status"},
                    {"name": "built_at"},
                ],
            },
            {
                "name": "unmarked",
                "columns": [{"name": "id", "data_tests": [named("not_null", "unmarked_id_not_null")]}],
            },
            {"name": "parents", "columns": [{"name": "parent_id"}]},
            {"name": "marked_parents", "columns": [{"name": "parent_id"}, {"name": "built_at"}]},
            {
                "name": "marked_rows_view",
                "columns": [
                    {
                        "name": "id",
                        "data_tests": [named("not_null", "view_id_not_null"), named("unique", "view_id_unique")],
                    },
                    {"name": "status"},
                    {"name": "built_at"},
                ],
            },
        ],
    }


def write_fixture_project(root: Path) -> None:
    # The macros without their docs (macros/*.yml cite doc blocks of the models folder).
    shutil.copytree(REPO_ROOT / "macros", root / "macros", ignore=shutil.ignore_patterns("*.yml"))
    write_dbt_project(root, "test_scope_fixture", {"+file_format": "parquet", "+materialized": "table"})
    (root / "models" / "_fixture__models.yml").write_text(yaml.safe_dump(models_yaml()), encoding="utf-8")
    for name, sql in MODELS.items():
        (root / "models" / f"{name}.sql").write_text(sql, encoding="utf-8")


class FixtureDbt:
    """dbt in this process on the fixture project, its models in schema test_scope."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, *args: str, dbt_vars: str = "{}", callbacks: list | None = None) -> Any:
        cli = [*args, "--project-dir", str(self.root), "--profiles-dir", str(REPO_ROOT / "profiles")]
        cli += ["--target-path", str(self.root / "target"), "--log-path", str(self.root / "logs"), "--vars", dbt_vars]
        result = dbtRunner(callbacks=callbacks or []).invoke(cli)
        if result.exception is not None:
            raise result.exception
        return result


@pytest.fixture(scope="module")
def fixture_dbt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureDbt]:
    """The fixture project after its two runs (batch 1, then batch 2 appended)."""
    root = tmp_path_factory.mktemp("test_scope_project")
    write_fixture_project(root)
    spark = spark_session()
    spark.createDataFrame(
        ROWS, "batch int, id string, status string, parent_id string, amount int"
    ).createOrReplaceGlobalTempView("scope_rows")
    spark.createDataFrame(
        VERSIONS, "batch int, row_key string, valid_from timestamp, valid_to timestamp, is_current boolean"
    ).createOrReplaceGlobalTempView("scope_versions")
    spark.createDataFrame(
        BUILDS, "batch int, build_key string, action_id string, status string"
    ).createOrReplaceGlobalTempView("scope_builds")
    spark.createDataFrame(PARENTS, "batch int, parent_id string").createOrReplaceGlobalTempView("scope_parents")
    try:
        with profile_schema(SCHEMA):
            dbt = FixtureDbt(root)
            assert dbt("run", "--full-refresh", dbt_vars="{batch: 1}").success
            assert dbt("run", dbt_vars="{batch: 2}").success
            yield dbt
    finally:
        for view in ("scope_rows", "scope_versions", "scope_builds", "scope_parents"):
            spark.catalog.dropGlobalTempView(view)


def failures(result: Any) -> dict[str, int]:
    """Failing rows per data test; a test that errors instead of failing fails this test, and so
    does one that warns, but rows_id_not_null_always_warns (which warns instead of passing)."""
    statuses = {r.node.name: str(r.status) for r in result.result.results}
    allowed = {
        name: ("warn", "fail") if name == "rows_id_not_null_always_warns" else ("pass", "fail") for name in statuses
    }
    assert not [name for name, status in statuses.items() if status not in allowed[name]], statuses
    return {r.node.name: r.failures for r in result.result.results}


def queried_nodes(fixture_dbt: FixtureDbt, *args: str, **kwargs: Any) -> tuple[Any, set[str]]:
    """fixture_dbt(*args) and the names of the nodes that sent Spark a statement."""
    sent: set[str] = set()

    def collect(event: Any) -> None:
        if event.info.name == "SQLQuery" and event.data.node_info.node_name:
            sent.add(event.data.node_info.node_name)

    return fixture_dbt(*args, callbacks=[collect], **kwargs), sent


@pytest.mark.spark
def test_each_run_stamps_its_rows_with_its_start(fixture_dbt: FixtureDbt) -> None:
    stamps = spark_session().sql(
        f"select built_at, count(*) as n from {SCHEMA}.marked_rows group by built_at order by built_at"
    )
    assert [row["n"] for row in stamps.collect()] == [7, 4]


@pytest.mark.spark
@pytest.mark.parametrize("scope", ["last_run", "all"])
def test_a_scoped_test_checks_what_the_last_run_wrote_and_the_switch_checks_all(
    fixture_dbt: FixtureDbt, scope: str
) -> None:
    # `dbt test` without the var is the default scope, the one every build runs.
    result = fixture_dbt("test") if scope == "last_run" else fixture_dbt("test", dbt_vars="{cdc_test_scope: all}")
    assert failures(result) == {name: getattr(expected, scope) for name, expected in EXPECTED.items()}


@pytest.mark.spark
@pytest.mark.parametrize("scope", ["last_run", "all"])
def test_row_checks_of_a_model_share_one_query(fixture_dbt: FixtureDbt, scope: str) -> None:
    """The tests of each row of a model with the same `where` (not_null, accepted_values,
    expression_is_true) are counted by one query (their counts are asserted by the test above):
    those without a failing row then read an empty relation and send no query, those with failing
    rows their scope, to report them. A test alone on its model (`unmarked`, the view) runs its own query; so does
    every key test."""
    result, queried = queried_nodes(fixture_dbt, "test", dbt_vars=f"{{cdc_test_scope: {scope}}}")
    narrowed = {r.node.name for r in result.result.results if "as cdc_checked where false" in r.node.compiled_code}
    passing_with_others = {"rows_parent_not_null", "builds_action_not_null"}
    if scope == "last_run":
        passing_with_others |= {"rows_amount_not_negative", "rows_status_accepted_but_6", "rows_status_ok_but_6"}
    assert narrowed == passing_with_others
    # Those pass without sending their query (the adapter's test materialization); every other test sends its own.
    assert not narrowed & queried
    assert set(EXPECTED) - narrowed <= queried
    assert {r.node.name for r in result.result.results if r.adapter_response.get("code") == "NO QUERY"} == narrowed


@pytest.mark.spark
def test_compile_shows_each_row_checks_own_query(fixture_dbt: FixtureDbt) -> None:
    """`dbt compile` (and the docs site built from it) runs no shared count: a passing test's
    compiled SQL is its own query over its scope."""
    compiled = {r.node.name: r.node.compiled_code for r in fixture_dbt("compile").result.results}
    assert "cdc_checked where false" not in compiled["rows_parent_not_null"]
    assert "built_at = timestamp" in compiled["rows_parent_not_null"]


@pytest.mark.spark
def test_compile_before_the_first_build_shows_each_tests_whole_query(tmp_path: Path) -> None:
    """`dbt compile` (and `dbt docs generate`) where the models were never built: there is no run
    to scope a test to, so each test's compiled SQL checks every row, and nothing reads a table
    that does not exist (a compile error there before)."""
    write_fixture_project(tmp_path)
    spark_session()
    with profile_schema("test_scope_unbuilt"):
        compiled = {r.node.name: r.node.compiled_code for r in FixtureDbt(tmp_path)("compile").result.results}
    assert set(EXPECTED) <= set(compiled)
    for name in ("rows_parent_not_null", "rows_id_unique", "rows_parent_found", "versions_one_current"):
        assert "test_scope_unbuilt." in compiled[name], name
        assert "built_at" not in compiled[name], name


def write_warning_fixture_project(root: Path) -> None:
    """The fixture project with its data tests warning instead of failing, so that a build still
    builds the views downstream of failing tests."""
    write_fixture_project(root)
    project = yaml.safe_load((root / "dbt_project.yml").read_text(encoding="utf-8"))
    project["data_tests"] = {"+severity": "warn"}
    (root / "dbt_project.yml").write_text(yaml.safe_dump(project), encoding="utf-8")


@pytest.mark.spark
def test_a_first_build_checks_every_row_as_written(fixture_dbt: FixtureDbt, tmp_path: Path) -> None:
    """A first `dbt build` (no --full-refresh) writes every row of its incremental models, so its
    tests read them as they are: no filter on the newest built_at, no semi join of the table with
    itself for the keys the run touched (what doubled the key tests of the mixed:1M full build), no
    window for the newest build of each key; a view of such models alike. They find what the full
    check finds. The next build is scoped again. (fixture_dbt: the source views.)"""
    write_warning_fixture_project(tmp_path)
    dbt = FixtureDbt(tmp_path)
    with profile_schema("test_scope_first_build"):
        first = dbt("build", dbt_vars="{batch: 1}")
        full_check = dbt("test", dbt_vars="{batch: 1, cdc_test_scope: all}")
        second = dbt("build", "--select", "marked_rows", dbt_vars="{batch: 2}")
    tests = {r.node.name: r for r in first.result.results if r.node.resource_type == "test"}
    assert set(tests) == set(EXPECTED)
    for name in ("rows_id_unique", "rows_id_parent_unique", "versions_one_current", "view_id_unique"):
        assert "cdc_touched_keys" not in tests[name].node.compiled_code, name
    for name in ("rows_id_not_null_always_warns", "view_id_not_null", "builds_status_ok", "builds_action_unique"):
        assert "built_at" not in tests[name].node.compiled_code, name
    checked = {r.node.name: r.failures for r in full_check.result.results}
    assert {name: r.failures for name, r in tests.items()} == checked
    assert sum(checked.values()) > 0
    (unique,) = [r for r in second.result.results if r.node.name == "rows_id_unique"]
    assert "cdc_touched_keys" in unique.node.compiled_code


@pytest.mark.spark
def test_a_full_refresh_build_reads_each_keys_one_build_without_a_window(
    fixture_dbt: FixtureDbt, tmp_path: Path
) -> None:
    """`dbt build --full-refresh` checks every row, and a model that appends builds holds one build
    of each key once it is built whole: its tests read the rows that have its `present` column,
    without the window that finds each key's newest build (2-2.5 s of each key test of
    int_row_versions at mixed:1M, warm: docs/benchmarks.md). They find what the next invocation's
    full check finds through the window. (fixture_dbt: the source views.)"""
    write_warning_fixture_project(tmp_path)
    dbt = FixtureDbt(tmp_path)
    names = ("builds_action_not_null", "builds_status_ok", "builds_action_unique")
    with profile_schema("test_scope_full_refresh"):
        rebuilt = dbt("build", "--full-refresh", "--select", "marked_builds", dbt_vars="{batch: 2}")
        full_check = dbt("test", "--select", "marked_builds", dbt_vars="{batch: 2, cdc_test_scope: all}")
    tests = {r.node.name: r for r in rebuilt.result.results if r.node.resource_type == "test"}
    checked = {r.node.name: r for r in full_check.result.results}
    assert set(tests) == set(checked) == set(names)
    for name in ("builds_status_ok", "builds_action_unique"):
        assert "build_built_at" not in tests[name].node.compiled_code, name
        assert "build_built_at" in checked[name].node.compiled_code, name
    assert {name: r.failures for name, r in tests.items()} == {name: r.failures for name, r in checked.items()}
    assert sum(r.failures for r in checked.values()) > 0


@pytest.mark.spark
def test_a_selected_row_check_is_counted_with_the_selected_ones_alone(fixture_dbt: FixtureDbt) -> None:
    """`dbt test --select` one passing row check: no other test is selected, so it is checked
    by its own query; with a sibling selected, both are counted by one."""
    (alone,) = fixture_dbt("test", "--select", "rows_parent_not_null").result.results
    assert alone.failures == 0
    assert "cdc_checked where false" not in alone.node.compiled_code
    pair = {
        r.node.name: r for r in fixture_dbt("test", "--select", "rows_parent_not_null rows_id_not_null").result.results
    }
    assert {name: r.failures for name, r in pair.items()} == {"rows_parent_not_null": 0, "rows_id_not_null": 1}
    assert "cdc_checked where false" in pair["rows_parent_not_null"].node.compiled_code


@pytest.mark.spark
def test_a_key_test_of_a_view_of_live_builds_reads_the_last_runs_rows_alone(fixture_dbt: FixtureDbt) -> None:
    """A key test scoped to the last run reads every row of the keys it touched: a semi join over
    the tested model. A view of live builds (shows_live_builds) shows each key's rows of one build
    with that build's stamp, so the last run's rows are already all of them: no semi join."""
    tests = {r.node.name: r.node.compiled_code for r in fixture_dbt("test").result.results}
    assert "cdc_touched_keys" in tests["rows_id_unique"]
    assert "cdc_touched_keys" not in tests["live_view_action_unique"]
    assert "built_at = timestamp" in tests["live_view_action_unique"]


@pytest.mark.spark
@pytest.mark.parametrize(("limit", "broadcast"), [(4, True), (3, False), (0, False)])
def test_a_key_test_broadcasts_the_touched_keys_up_to_the_limit(
    fixture_dbt: FixtureDbt, limit: int, broadcast: bool
) -> None:
    """The second run stamped 4 rows of marked_rows (counted by a query here: `dbt run` and
    `dbt test` are two invocations). Up to var cdc_broadcast_key_limit the keys they carry are
    broadcast to the scan of the table; above it, or with the limit 0, they are shuffled. The
    test finds the same failing key either way."""
    result = fixture_dbt("test", "--select", "rows_id_unique", dbt_vars=f"{{cdc_broadcast_key_limit: {limit}}}")
    (run,) = result.result.results
    assert ("broadcast(cdc_touched_keys)" in run.node.compiled_code) is broadcast
    assert run.failures == EXPECTED["rows_id_unique"].last_run


@pytest.mark.spark
@pytest.mark.parametrize(
    ("limit", "scope", "broadcast"), [(4, "last_run", True), (3, "last_run", False), (4, "all", False)]
)
def test_a_lookup_broadcasts_the_last_runs_values_up_to_the_limit(
    fixture_dbt: FixtureDbt, limit: int, scope: str, broadcast: bool
) -> None:
    """found_in broadcasts the values of the 4 rows the second run stamped to its read of the
    parent up to var cdc_broadcast_key_limit, and never in the full check, whose values are
    unbounded. It finds the same failing rows either way."""
    dbt_vars = f"{{cdc_broadcast_key_limit: {limit}, cdc_test_scope: {scope}}}"
    (run,) = fixture_dbt("test", "--select", "rows_parent_found", dbt_vars=dbt_vars).result.results
    assert ("broadcast(child_values)" in run.node.compiled_code) is broadcast
    assert run.failures == getattr(EXPECTED["rows_parent_found"], scope)


@pytest.mark.spark
@pytest.mark.parametrize("scope", ["last_run", "all"])
def test_a_lookup_reads_the_parents_rows_of_the_last_run_first(fixture_dbt: FixtureDbt, scope: str) -> None:
    """found_in with recent_parent_first, scoped: the child's values are looked up among the
    parent's rows stamped since the child's last run (a built_at filter), and in the whole parent
    only those not found there; the full check looks every value up in the whole parent. Its
    failures (asserted above) are found_in's: p1, in an older parent build only, is found, and
    would count as missing if the second lookup did not run."""
    dbt_vars = f"{{cdc_test_scope: {scope}}}"
    (run,) = fixture_dbt("test", "--select", "rows_parent_found_recent", dbt_vars=dbt_vars).result.results
    assert ("recent_parent" in run.node.compiled_code) is (scope == "last_run")
    assert ("built_at >= " in run.node.compiled_code) is (scope == "last_run")
    assert run.failures == getattr(EXPECTED["rows_parent_found_recent"], scope)


@pytest.mark.spark
def test_an_unknown_scope_is_an_error(fixture_dbt: FixtureDbt) -> None:
    result = dbtRunner().invoke(
        ["test", "--select", "rows_id_not_null", "--project-dir", str(fixture_dbt.root)]
        + ["--profiles-dir", str(REPO_ROOT / "profiles"), "--target-path", str(fixture_dbt.root / "target")]
        + ["--vars", "{cdc_test_scope: everything}"]
    )
    assert not result.success
    assert "var cdc_test_scope must be last_run" in str(result.exception or result.result)


@pytest.mark.spark
def test_a_build_with_nothing_new_checks_nothing_of_what_it_did_not_write(fixture_dbt: FixtureDbt) -> None:
    """`dbt build` with nothing new (batch 3 has no rows): its incremental models write no row, so
    their scoped tests check nothing (the second run's bad rows were its own tests' to find) and
    read nothing; the model without built_at is still checked whole. `dbt test` afterwards checks
    the last run's rows again, as after the second run."""
    built, queried = queried_nodes(fixture_dbt, "build", dbt_vars="{batch: 3}")
    tests = {r.node.name: r for r in built.result.results if r.node.resource_type == "test"}
    assert {name: r.failures for name, r in tests.items()} == {
        name: 2 if name == "unmarked_id_not_null" else 0 for name in EXPECTED
    }
    assert str(tests["rows_id_not_null_always_warns"].status) == "warn"
    scoped = [r.node.compiled_code for name, r in tests.items() if name != "unmarked_id_not_null"]
    assert all("built_at = cast(null as timestamp)" in code for code in scoped)
    # A scoped test over nothing passes without a query; the whole-model test and the one whose
    # warn_if fires on no row send theirs.
    assert queried & set(tests) == {"unmarked_id_not_null", "rows_id_not_null_always_warns"}
    again = fixture_dbt("test")
    assert failures(again) == {name: expected.last_run for name, expected in EXPECTED.items()}


@pytest.mark.spark
def test_a_view_is_scoped_by_what_its_parents_wrote(fixture_dbt: FixtureDbt) -> None:
    """A build whose incremental model writes rows (batch 4: one null id) re-creates the view over
    it with its former SQL: the view's test is scoped to the build's own stamp, known without a
    query (the literal of cdc_built_at, no timestamp_micros read from the table), and finds the
    new null id. A build that changes the view's SQL (var hidden_id) falls back to the query: the
    view's rows may all have changed, its parent wrote nothing (batch 5 has no rows)."""

    def view_test(result: Any) -> Any:
        return next(r for r in result.result.results if r.node.name == "view_id_not_null")

    # Without marked_rows' own tests, whose failures would skip the view.
    select = ["--select", "marked_rows", "marked_rows_view", "view_id_not_null", "--indirect-selection", "empty"]
    built = view_test(fixture_dbt("build", *select, dbt_vars="{batch: 4}"))
    assert built.failures == 1
    assert "built_at = timestamp'" in built.node.compiled_code
    assert "timestamp_micros" not in built.node.compiled_code
    changed = view_test(fixture_dbt("build", *select, dbt_vars="{batch: 5, hidden_id: '9'}"))
    assert changed.failures == 1
    assert "built_at = timestamp_micros(" in changed.node.compiled_code


@pytest.mark.spark
def test_a_key_test_of_a_view_bounds_its_rows_by_what_its_parents_wrote(
    fixture_dbt: FixtureDbt, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build whose incremental model writes 2 rows re-creates the view over it with its former
    SQL: the view's key test decides its broadcast by those 2 rows (not above a limit of 1, up to
    a limit of 2), without the query that would count them in the view (and evaluate it)."""
    counted: list[str] = []
    rows_of_last_write = impl.SparkSessionAdapter.rows_of_last_write

    def recording(self: Any, invocation_id: str, relation: Any, built_at: str) -> int:
        counted.append(relation.identifier)
        return rows_of_last_write(self, invocation_id, relation, built_at)

    monkeypatch.setattr(impl.SparkSessionAdapter, "rows_of_last_write", recording)
    # The view's SQL as the builds below re-create it, whatever an earlier test left.
    assert fixture_dbt("run", "--select", "marked_rows_view", dbt_vars="{hidden_id: '0'}").success
    select = ["--select", "marked_rows", "marked_rows_view", "view_id_unique", "--indirect-selection", "empty"]
    for batch, limit, broadcast in ((6, 1, False), (7, 2, True)):
        built = fixture_dbt("build", *select, dbt_vars=f"{{batch: {batch}, cdc_broadcast_key_limit: {limit}}}")
        run = next(r for r in built.result.results if r.node.name == "view_id_unique")
        assert ("broadcast(cdc_touched_keys)" in run.node.compiled_code) is broadcast
        assert run.failures == 0
    assert "marked_rows_view" not in counted


def test_every_generic_test_of_the_project_is_known_to_fail_on_tested_rows_only() -> None:
    """A generic test the project defines passes without a query over an empty scope only when
    cdc_test_fails_on_tested_rows lists it. Each listed one's failing rows are rows or groups of its
    `model` (tests/python/test_generic_tests.py proves what each finds): a new generic test fails
    this test until it is listed, so whether it may pass over nothing is decided when it is written."""
    defined = {
        name
        for path in (REPO_ROOT / "macros").glob("*.sql")
        for name in re.findall(r"{%-?\s*test\s+(\w+)\s*\(", path.read_text(encoding="utf-8"))
    }
    macro = (REPO_ROOT / "macros" / "test_scope.sql").read_text(encoding="utf-8")
    body = macro.split("macro cdc_test_fails_on_tested_rows", 1)[1].split("endmacro", 1)[0]
    listed = set(re.findall(r"'(\w+)'", body.split("test.name in", 1)[1]))
    assert defined, "no generic test found in macros/"
    assert defined <= listed
    assert listed - defined == {"not_null", "unique", "accepted_values", "relationships"}
