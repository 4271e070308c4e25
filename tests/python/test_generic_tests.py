"""The quality gates: the project's generic data tests, where they are applied, and source freshness.

Each generic test of macros/generic_tests.sql runs, through dbt, against a tiny crafted table (a global
temporary view): once on rows that keep its rule (it must pass) and once on rows that break it
in every way the rule names (it must fail with exactly those rows). All of them run in one
`dbt test` of a fixture project that holds a copy of the macros file and declares the tables as
sources, in the harness's SparkSession. The rows that break a rule are counted by hand below.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from dbt.cli.main import dbtRunner
from pyspark.sql import functions as F

from cdc_unify import landing
from harness import REPO_ROOT, run_dbt, spark_session
from harness import write_fixture_project as write_dbt_project

MACROS = REPO_ROOT / "macros" / "generic_tests.sql"
# Through which every generic test reads its relation (and its `where`): the fixture's tables are
# sources, so every row is checked (tests/python/test_test_scope.py proves the scope).
TEST_SCOPE_MACROS = REPO_ROOT / "macros" / "test_scope.sql"
MACRO_DOCS = REPO_ROOT / "macros" / "generic_tests.yml"
MARTS_YAML = REPO_ROOT / "models" / "marts" / "_marts__models.yml"
# Where Spark keeps global temporary views.
FIXTURE_SCHEMA = "global_temp"
T0 = dt.datetime(2024, 1, 1)


def at(hour: int) -> dt.datetime:
    return T0 + dt.timedelta(hours=hour)


@dataclass(frozen=True)
class Case:
    """A generic test applied to `good` rows and to `bad` rows of one table (column `dataset` tells them apart)."""

    name: str
    test: str
    columns: str  # Spark DDL of the table, without the `dataset` column
    arguments: dict[str, Any]
    good: list[tuple]
    bad: list[tuple]
    bad_failures: int  # rows the test must return on `bad`
    column: str | None = None
    # A second table, `<name>_parent` (Spark DDL, rows), for a test that looks values up in another relation.
    parent: tuple[str, list[tuple]] | None = None


CASES = (
    Case(
        name="current_versions",
        test="one_current_version_per_key",
        columns="table_name string, primary_key string, is_current boolean",
        arguments={"key_columns": ["table_name", "primary_key"]},
        # A deleted row's tombstone is its one current version; a null key part is a key like any other.
        good=[("t", "1", False), ("t", "1", True), ("t", "2", True), (None, "3", True)],
        # key 1: two current versions; key 2: none; key 3: a null flag is not current, so none.
        bad=[("t", "1", True), ("t", "1", True), ("t", "2", False), (None, "3", None)],
        bad_failures=3,
    ),
    Case(
        name="version_tiling",
        test="no_overlapping_versions",
        columns="primary_key string, valid_from timestamp, valid_to timestamp",
        arguments={"key_columns": ["primary_key"]},
        good=[("1", at(1), at(2)), ("1", at(2), at(3)), ("1", at(3), None), ("2", at(1), None), (None, at(5), None)],
        bad=[
            ("overlap", at(1), at(3)),  # ends after the next version starts: 1 row
            ("overlap", at(2), None),
            ("gap", at(1), at(2)),  # ends before the next version starts: 1 row
            ("gap", at(3), None),
            ("closed_end", at(1), at(2)),
            ("closed_end", at(2), at(3)),  # the last version is closed: 1 row
            ("same_start", at(1), None),  # two versions start at once: 2 rows
            ("same_start", at(1), None),
            ("open_middle", at(1), None),  # open-ended but not the last: 1 row
            ("open_middle", at(2), None),
        ],
        bad_failures=6,
    ),
    Case(
        name="intervals",
        test="valid_interval",
        columns="valid_from timestamp, valid_to timestamp",
        column="valid_from",
        arguments={"to_column": "valid_to"},
        good=[(at(1), at(2)), (at(1), None)],
        # empty, inverted, unknown start (closed), unknown start (open): every row fails.
        bad=[(at(2), at(2)), (at(3), at(2)), (None, at(2)), (None, None)],
        bad_failures=4,
    ),
    Case(
        name="reconciliation",
        test="messages_reconciled",
        columns="landed bigint, decoded bigint, quarantined bigint, tombstones bigint",
        arguments={"total_column": "landed", "part_columns": ["decoded", "quarantined", "tombstones"]},
        good=[(10, 5, 3, 2), (0, 0, 0, 0)],
        # one message vanished; an unknown class; an unknown total.
        bad=[(10, 5, 3, 1), (10, 5, 3, None), (None, 0, 0, 0)],
        bad_failures=3,
    ),
    Case(
        name="model_expression",
        test="expression_is_true",
        columns="is_current boolean, valid_to timestamp",
        arguments={"expression": "is_current = (valid_to is null)"},
        good=[(True, None), (False, at(1))],
        # current but closed; open but not current; unknown (null) result.
        bad=[(True, at(1)), (False, None), (None, None)],
        bad_failures=3,
    ),
    Case(
        name="column_expression",
        test="expression_is_true",
        columns="landed bigint",
        column="landed",
        arguments={"expression": ">= 0"},
        good=[(0,), (5,)],
        bad=[(-1,), (None,), (3,)],
        bad_failures=2,
    ),
    Case(
        name="natural_key",
        test="unique_combination_of_columns",
        # A column name that is no identifier, with a backtick in it: quote_columns must quote and escape it.
        columns="table_name string, `row-key``s` string",
        arguments={"combination_of_columns": ["table_name", "row-key`s"], "quote_columns": True},
        good=[("t", "1"), ("t", "2"), (None, "1"), ("u", "1")],
        # (t, 1) twice; (null, 1) twice: nulls compare equal. (t, 2) once is fine.
        bad=[("t", "1"), ("t", "1"), (None, "1"), (None, "1"), ("t", "2")],
        bad_failures=2,
    ),
    Case(
        name="lookup",
        test="found_in",
        columns="version_id string",
        column="version_id",
        arguments={"to": "source('fixture', 'lookup_parent')", "field": "id", "to_where": "is_live"},
        parent=("id string, is_live boolean", [("v1", True), ("v2", True), ("v3", False), ("v4", None)]),
        # A null value is not looked up (as in relationships); a value found twice is found.
        good=[("v1",), ("v2",), ("v2",), (None,)],
        # v3 and v4 are rows of the parent that miss to_where (false, null); v5 is not there at all.
        bad=[("v1",), ("v3",), ("v4",), ("v5",), ("v5",)],
        bad_failures=4,
    ),
    Case(
        # Outside a scoped run (here: a table without built_at) the lookup reads the whole parent
        # at once, as found_in; tests/python/test_test_scope.py proves the scoped lookup.
        name="lookup_recent_first",
        test="found_in",
        columns="version_id string",
        column="version_id",
        arguments={
            "to": "source('fixture', 'lookup_recent_first_parent')",
            "field": "id",
            "to_where": "is_live",
            "recent_parent_first": True,
        },
        parent=("id string, is_live boolean", [("v1", True), ("v2", True), ("v3", False), ("v4", None)]),
        good=[("v1",), ("v2",), ("v2",), (None,)],
        bad=[("v1",), ("v3",), ("v4",), ("v5",), ("v5",)],
        bad_failures=4,
    ),
)


def check_name(case: Case, dataset: str) -> str:
    return f"{dataset}_{case.name}"


def data_test(case: Case, dataset: str) -> dict[str, Any]:
    return {
        case.test: {
            "name": check_name(case, dataset),
            "arguments": case.arguments,
            "config": {"where": f"dataset = '{dataset}'"},
        }
    }


def sources_yaml(cases: tuple[Case, ...]) -> dict[str, Any]:
    tables = []
    for case in cases:
        tests = [data_test(case, dataset) for dataset in ("good", "bad")]
        if case.column:
            tables.append({"name": case.name, "columns": [{"name": case.column, "data_tests": tests}]})
        else:
            tables.append({"name": case.name, "data_tests": tests})
        if case.parent:
            tables.append({"name": f"{case.name}_parent"})
    return {"version": 2, "sources": [{"name": "fixture", "schema": FIXTURE_SCHEMA, "tables": tables}]}


def write_fixture_project(root: Path, cases: tuple[Case, ...]) -> None:
    """A dbt project with only the generic tests' (and their scope's) macros and the crafted tables as sources."""
    write_dbt_project(root, "generic_tests_fixture")
    for macros in (MACROS, TEST_SCOPE_MACROS):
        shutil.copy(macros, root / "macros" / macros.name)
    (root / "models" / "_fixture__sources.yml").write_text(yaml.safe_dump(sources_yaml(cases)), encoding="utf-8")


def create_views(cases: tuple[Case, ...]) -> None:
    """Each case's rows as a global temporary view: visible to dbt's queries (same Spark
    application), written nowhere, dropped after the run."""
    spark = spark_session()
    for case in cases:
        rows = [("good", *row) for row in case.good] + [("bad", *row) for row in case.bad]
        spark.createDataFrame(rows, schema=f"dataset string, {case.columns}").createOrReplaceGlobalTempView(case.name)
        if case.parent:
            columns, parent_rows = case.parent
            spark.createDataFrame(parent_rows, schema=columns).createOrReplaceGlobalTempView(f"{case.name}_parent")


@pytest.fixture(scope="module")
def fixture_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, int]]:
    """Every fixture test's (status, failures) after one `dbt test` of the fixture project."""
    root = tmp_path_factory.mktemp("generic_tests_project")
    create_views(CASES)
    write_fixture_project(root, CASES)
    try:
        # Not harness.run_dbt: that runs the project itself and raises when a test fails, which
        # half of these must do.
        result = dbtRunner().invoke(
            [
                "test",
                "--project-dir",
                str(root),
                "--profiles-dir",
                str(REPO_ROOT / "profiles"),
                "--target-path",
                str(root / "target"),
                "--log-path",
                str(root / "logs"),
            ]
        )
    finally:
        for case in CASES:
            spark_session().catalog.dropGlobalTempView(case.name)
            if case.parent:
                spark_session().catalog.dropGlobalTempView(f"{case.name}_parent")
    if result.exception is not None:
        raise result.exception
    return {r.node.name: (str(r.status), r.failures) for r in result.result.results}


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_generic_test_passes_on_good_rows(case: Case, fixture_results: dict[str, tuple[str, int]]) -> None:
    assert fixture_results[check_name(case, "good")] == ("pass", 0)


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_generic_test_fails_on_bad_rows(case: Case, fixture_results: dict[str, tuple[str, int]]) -> None:
    # "fail", not "warn": the default severity error, so `dbt build` stops on it.
    assert fixture_results[check_name(case, "bad")] == ("fail", case.bad_failures)


def test_every_generic_test_is_exercised() -> None:
    assert {case.test for case in CASES} == set(defined_tests())


def defined_tests() -> dict[str, list[str]]:
    """Generic tests of macros/generic_tests.sql with their argument names, in order."""
    found = re.findall(r"{%-?\s*test\s+(\w+)\s*\(([^)]*)\)", MACROS.read_text(encoding="utf-8"))
    return {name: [arg.split("=")[0].strip() for arg in args.split(",")] for name, args in found}


def test_every_generic_test_is_documented_with_its_arguments() -> None:
    documented = {
        macro["name"]: [argument["name"] for argument in macro["arguments"]]
        for macro in yaml.safe_load(MACRO_DOCS.read_text(encoding="utf-8"))["macros"]
        if macro.get("description") and macro["name"].startswith("test_")
    }
    assert documented == {f"test_{name}": args for name, args in defined_tests().items()}


def model_tests(model: dict[str, Any]) -> list[dict[str, Any]]:
    """Every data test of a model entry, model-level and column-level, as {test_name: properties}."""
    tests = list(model.get("data_tests", []))
    for column in model.get("columns", []):
        tests += column.get("data_tests", [])
    return [test if isinstance(test, dict) else {test: {}} for test in tests]


def test_every_mart_has_a_natural_key_and_invariant_tests() -> None:
    marts = yaml.safe_load(MARTS_YAML.read_text(encoding="utf-8"))["models"]
    described = {model["name"] for model in marts}
    assert {path.stem for path in MARTS_YAML.parent.glob("*.sql")} <= described
    for model in marts:
        names = {name for test in model_tests(model) for name in test}
        assert "unique_combination_of_columns" in names, model["name"]
        # An invariant: of each row (expression_is_true), or of a row against another model (found_in).
        assert names & {"expression_is_true", "found_in"}, model["name"]


def test_no_mart_or_intermediate_test_is_downgraded_to_a_warning() -> None:
    """`dbt build` must fail on any failing test: none may set severity warn or a failure threshold."""
    for path in (MARTS_YAML, REPO_ROOT / "models" / "intermediate" / "_intermediate__models.yml"):
        for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
            for test in model_tests(model):
                for properties in test.values():
                    config = {**(properties or {}), **(properties or {}).get("config", {})}
                    assert str(config.get("severity", "error")).lower() == "error", (path.name, test)
                    assert "warn_if" not in config and "error_if" not in config, (path.name, test)


def land_one_message(dialect: str, landed_at: dt.datetime) -> None:
    """landing.<dialect> holds exactly one message (a tombstone), landed at `landed_at`."""
    spark = spark_session()
    landing.create_landing_tables(spark)
    spark.sql(f"truncate table {landing.landing_table(dialect)}")
    records = pa.table(
        {
            "topic": pa.array(["freshness"], pa.string()),
            "partition": pa.array([0], pa.int32()),
            "offset": pa.array([0], pa.int64()),
            "timestamp": pa.array([landed_at], pa.timestamp("us", tz="UTC")),
            "key": pa.array([None], pa.binary()),
            "value": pa.array([None], pa.binary()),
        }
    )
    rows = landing.kafka_to_landing(spark.createDataFrame(records), "freshness", F.lit(landed_at))
    landing.append_landing(rows, dialect)


def target_path() -> Path:
    """The harness's dbt target folder (dbt resolves a relative one against the project)."""
    target = Path(os.environ["DBT_TARGET_PATH"])
    return target if target.is_absolute() else REPO_ROOT / target


@pytest.mark.spark
def test_source_freshness_warns_and_errors_at_the_var_thresholds() -> None:
    """Landing tables whose newest message is 3, 8 and 30 hours old are pass, warn and error
    under the default vars (warn after 6 h, error after 24 h); the error fails the command."""
    ages = {"canal_json": 3, "cloudcanal_json": 8, "ckafka_json": 30}
    now = dt.datetime.now(dt.UTC)
    for dialect, hours in ages.items():
        land_one_message(dialect, now - dt.timedelta(hours=hours))

    with pytest.raises(AssertionError, match="source freshness"):
        run_dbt("source", "freshness", "--select", *[f"source:landing.{dialect}" for dialect in ages], write_json=True)

    results = json.loads((target_path() / "sources.json").read_text(encoding="utf-8"))["results"]
    statuses = {r["unique_id"].rsplit(".", 1)[1]: r["status"] for r in results}
    assert statuses == {"canal_json": "pass", "cloudcanal_json": "warn", "ckafka_json": "error"}
    thresholds = yaml.safe_load((REPO_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))["vars"]
    for result in results:
        criteria = result["criteria"]
        assert criteria["warn_after"] == {"count": thresholds["landing_freshness_warn_after_hours"], "period": "hour"}
        assert criteria["error_after"] == {"count": thresholds["landing_freshness_error_after_hours"], "period": "hour"}


def test_unit_tests_of_incremental_models_run_before_the_first_build() -> None:
    """`dbt build` on an empty warehouse runs a model's unit tests before the model's table exists.
    A `this` fixture given as `rows` makes dbt read its column types from that table, and the
    first build fails; a typed `format: sql` fixture needs no table."""
    untyped = []
    for path in sorted((REPO_ROOT / "models").rglob("*.yml")):
        for test in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("unit_tests", []):
            for given in test.get("given", []):
                if given["input"] == "this" and given.get("format") != "sql":
                    untyped.append(f"{path.relative_to(REPO_ROOT)}: {test['name']}")
    assert not untyped, f"`this` fixtures that need the built table: {untyped}"
