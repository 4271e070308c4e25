"""The stack: sparksession adapter (SQL + Python models), profile, `cdc-unify sql`, dbt docs."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cdc_unify import spark as spark_setup
from cdc_unify.commands import sql as sql_command
from conftest import Result, Sandbox
from dbt.adapters.sparksession.connections import SparkSessionCredentials

# A tiny dbt project on the sparksession adapter: a SQL model, a Python model reading it through
# dbt.ref, and a Python model that raises. Kept here as text because dbt would parse any .sql/.yml
# file under tests/.
SMOKE_PROJECT = {
    "dbt_project.yml": """
        name: smoke
        version: "1.0"
        config-version: 2
        profile: smoke
        flags:
          send_anonymous_usage_stats: false
        models:
          smoke:
            +file_format: parquet
            +materialized: table
    """,
    "profiles/profiles.yml": """
        smoke:
          target: local
          outputs:
            local:
              type: sparksession
              method: session
              host: localhost
              schema: smoke
              master: local[2]
              warehouse: "{{ env_var('CDC_UNIFY_WAREHOUSE') }}"
              threads: 2
    """,
    "models/numbers.sql": """
        select id, concat('n', cast(id as string)) as label
        from values (1), (2), (3) as t(id)
    """,
    "models/doubled.py": """
        from pyspark.sql import functions as F


        def model(dbt, session):
            return dbt.ref("numbers").withColumn("doubled", F.col("id") * 2)
    """,
    "models/from_pandas.py": """
        import pandas as pd


        def model(dbt, session):
            return pd.DataFrame({"label": ["a", None]})
    """,
    "models/exploding.py": """
        def model(dbt, session):
            numbers = dbt.ref("numbers")
            if numbers.count() > 0:
                raise ValueError("boom from the exploding model")
            return numbers
    """,
    "models/schema.yml": """
        version: 2
        models:
          - name: doubled
            description: Each number and its double.
            columns:
              - name: doubled
                description: id times two.
    """,
}


@dataclass(frozen=True)
class SmokeRun:
    project: Path
    sandbox: Sandbox
    run: Result


def write_project(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


@pytest.fixture(scope="module")
def smoke(sandbox_factory) -> SmokeRun:
    sandbox = sandbox_factory("smoke")
    project = sandbox.root / "project"
    write_project(project, SMOKE_PROJECT)
    return SmokeRun(project, sandbox, sandbox.dbt("run", project_dir=project))


# --- with Spark -------------------------------------------------------------------------------


@pytest.mark.spark
def test_failing_python_model_fails_the_run_with_its_traceback(smoke):
    assert smoke.run.returncode != 0
    assert "ValueError: boom from the exploding model" in smoke.run.output
    assert "<dbt python model smoke.exploding>" in smoke.run.output
    assert "ERROR creating python table model smoke.exploding" in smoke.run.output


@pytest.mark.spark
def test_python_model_reads_sql_model_and_writes_parquet(smoke):
    assert "OK created python table model smoke.doubled" in smoke.run.output, smoke.run.output
    table = pq.read_table(smoke.sandbox.warehouse / "smoke.db" / "doubled")
    rows = sorted(zip(*(table.column(name).to_pylist() for name in ("id", "label", "doubled")), strict=True))
    assert rows == [(1, "n1", 2), (2, "n2", 4), (3, "n3", 6)]


@pytest.mark.spark
def test_python_model_returning_pandas_keeps_nulls(smoke):
    assert "OK created python table model smoke.from_pandas" in smoke.run.output, smoke.run.output
    table = pq.read_table(smoke.sandbox.warehouse / "smoke.db" / "from_pandas")
    labels = table.column("label").to_pylist()
    assert len(labels) == 2 and set(labels) == {"a", None}


@pytest.mark.spark
def test_docs_catalog_has_python_model_columns(smoke):
    result = smoke.sandbox.dbt("docs", "generate", project_dir=smoke.project)
    assert result.returncode == 0, result.output
    catalog = json.loads((smoke.sandbox.target / "catalog.json").read_text())
    node = catalog["nodes"]["model.smoke.doubled"]
    assert {name.lower() for name in node["columns"]} == {"id", "label", "doubled"}


@pytest.mark.spark
def test_dbt_debug_passes_on_local_target(sandbox_factory):
    result = sandbox_factory("debug").dbt("debug", "--target", "local")
    assert result.returncode == 0, result.output
    assert "All checks passed" in result.stdout


@pytest.mark.spark
def test_cli_sql_prints_json(sandbox_factory):
    result = sandbox_factory("cli").cli("sql", "--format", "json", "select 1 as x")
    assert result.returncode == 0, result.output
    assert result.stdout.strip() == '[{"x": 1}]'


@pytest.mark.spark
def test_cli_sql_reports_bad_sql_without_java_stack(sandbox_factory):
    result = sandbox_factory("cli_error").cli("sql", "selec 1")
    assert result.returncode == 1
    assert "error: [PARSE_SYNTAX_ERROR]" in result.stderr
    assert "\tat org.apache" not in result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""


# --- without Spark ----------------------------------------------------------------------------


def test_session_conf_keeps_tables_and_metastore_in_one_folder(monkeypatch, tmp_path):
    for name in spark_setup.JVM_ENV_OPTIONS:
        monkeypatch.delenv(name, raising=False)
    conf = spark_setup.session_conf(warehouse=str(tmp_path / "wh"))
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "wh")
    assert f"databaseName={tmp_path / 'wh' / 'metastore_db'};" in conf["spark.hadoop.javax.jdo.option.ConnectionURL"]
    assert f"-Dderby.system.home={tmp_path / 'wh'}" in conf["spark.driver.extraJavaOptions"]
    assert "-XX:+UseParallelGC" in conf["spark.driver.extraJavaOptions"].split()
    assert conf["spark.master"] == "local[*]"
    assert conf["spark.sql.sources.default"] == "parquet"


def test_a_collector_chosen_in_the_environment_is_left_alone(monkeypatch, tmp_path):
    """The JVM refuses to start with two collectors: one chosen in JAVA_TOOL_OPTIONS (or the other
    variables every JVM reads) replaces the parallel collector the driver gets by default."""
    assert spark_setup.collector_options({}) == ["-XX:+UseParallelGC"]
    assert spark_setup.collector_options({"JAVA_TOOL_OPTIONS": "-Xss4m"}) == ["-XX:+UseParallelGC"]
    for name in spark_setup.JVM_ENV_OPTIONS:
        assert spark_setup.collector_options({name: "-Xss4m -XX:+UseZGC"}) == []

    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC")
    options = spark_setup.session_conf(warehouse=str(tmp_path))["spark.driver.extraJavaOptions"].split()
    assert not [option for option in options if option.endswith("GC")]
    assert f"-Dderby.system.home={tmp_path}" in options


def test_session_conf_extra_settings_win_and_empty_ones_are_unset(tmp_path):
    conf = spark_setup.session_conf(
        master="spark://example:7077",
        warehouse=str(tmp_path),
        extra_conf={"spark.sql.shuffle.partitions": "200", "spark.kubernetes.container.image": ""},
    )
    assert conf["spark.master"] == "spark://example:7077"
    assert conf["spark.sql.shuffle.partitions"] == "200"
    assert "spark.kubernetes.container.image" not in conf


def test_spark_conf_env_wins_over_the_profile_and_rejects_malformed_entries(monkeypatch, tmp_path):
    monkeypatch.setenv(
        spark_setup.SPARK_CONF_ENV, " spark.sql.shuffle.partitions=8\tspark.sql.codegen.wholeStage=false "
    )
    conf = spark_setup.session_conf(warehouse=str(tmp_path), extra_conf={"spark.sql.shuffle.partitions": "200"})
    assert conf["spark.sql.shuffle.partitions"] == "8"
    assert conf["spark.sql.codegen.wholeStage"] == "false"
    monkeypatch.setenv(spark_setup.SPARK_CONF_ENV, "spark.sql.shuffle.partitions=8 wholeStage")
    with pytest.raises(ValueError, match="'wholeStage' is not key=value"):
        spark_setup.session_conf(warehouse=str(tmp_path))


def test_warehouse_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv(spark_setup.WAREHOUSE_ENV, raising=False)
    assert spark_setup.warehouse_dir() == str(spark_setup.project_root() / ".warehouse")
    assert spark_setup.warehouse_dir("hdfs://nn:8020/warehouse") == "hdfs://nn:8020/warehouse"
    monkeypatch.setenv(spark_setup.WAREHOUSE_ENV, str(tmp_path))
    assert spark_setup.warehouse_dir() == str(tmp_path)


def make_credentials(**overrides) -> SparkSessionCredentials:
    return SparkSessionCredentials(method="session", host="localhost", schema="s", **overrides)


def test_credentials_keep_ansi_mode_on_unless_the_profile_turns_it_off():
    assert make_credentials().server_side_parameters["spark.sql.ansi.enabled"] == "true"
    off = make_credentials(server_side_parameters={"spark.sql.ansi.enabled": "false"})
    assert off.server_side_parameters["spark.sql.ansi.enabled"] == "false"
    assert make_credentials().type == "sparksession"


def test_credentials_reject_other_connection_methods():
    with pytest.raises(Exception, match="only supports `method: session`"):
        SparkSessionCredentials(method="thrift", host="localhost", schema="s")


def test_render_json_csv_and_table():
    columns = ["id", "name", "tags"]
    rows = [(1, "a,b", ["x"]), (2, None, None)]
    assert json.loads(sql_command.render("json", columns, rows)) == [
        {"id": 1, "name": "a,b", "tags": ["x"]},
        {"id": 2, "name": None, "tags": None},
    ]
    assert sql_command.render("csv", columns, rows) == 'id,name,tags\n1,"a,b","[""x""]"\n2,,\n'
    table = sql_command.render("table", columns, rows).splitlines()
    assert table[1] == "| id | name | tags  |"
    assert table[3] == '| 1  | a,b  | ["x"] |'
    assert table[4] == "| 2  | NULL | NULL  |"
    assert table[-1] == "(2 rows)"


def test_to_plain_makes_spark_values_json_safe():
    import datetime as dt
    import decimal

    from pyspark.sql import Row

    value = Row(when=dt.datetime(2024, 1, 2, 3, 4, 5), raw=b"\x00\xff", amount=decimal.Decimal("1.50"))
    assert sql_command.to_plain(value) == {"when": "2024-01-02T03:04:05", "raw": "AP8=", "amount": "1.50"}
    assert sql_command.to_plain({"k": [1, 2]}) == {"k": [1, 2]}
