"""The benchmark harness's own arithmetic (bench/run.py, bench/workloads.py), without Spark:
what it reports is only as good as how it reads dbt's run_results.json."""

from __future__ import annotations

import json
import sys

import pytest

from harness import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench"))
import run as bench_run  # noqa: E402  (bench/ is a folder of scripts, not a package)
import workloads  # noqa: E402


def node(unique_id: str, start: str, end: str, seconds: float, status: str = "success") -> dict:
    return {
        "unique_id": unique_id,
        "status": status,
        "execution_time": seconds,
        "message": None,
        "timing": [
            {
                "name": "compile",
                "started_at": f"2026-01-01T00:00:{start}Z",
                "completed_at": f"2026-01-01T00:00:{start}Z",
            },
            {"name": "execute", "started_at": f"2026-01-01T00:00:{start}Z", "completed_at": f"2026-01-01T00:00:{end}Z"},
        ],
    }


def test_run_results_give_the_build_span_and_each_layers_share(tmp_path):
    results = [
        node("operation.cdc_unify.on-run-start", "00", "00", 0.1),
        node("model.cdc_unify.stg_canal_json__changes", "01", "11", 10.0),
        node("model.cdc_unify.stg_dts_avro__changes", "02", "08", 6.0),
        node("model.cdc_unify.int_change_events", "11", "21", 10.0),
        node("model.cdc_unify.cdc_row_history", "21", "31", 10.0),
        node("test.cdc_unify.not_null_cdc_row_history_feed.abc", "31", "33", 2.0, status="warn"),
    ]
    path = tmp_path / "run_results.json"
    path.write_text(json.dumps({"results": results}))

    summary = bench_run.summarize_run_results(path)

    # The on-run-start hook is not a node of the build: the build runs from 00:01 to 00:33.
    assert summary["build_seconds"] == 32
    assert summary["nodes"] == 5
    assert not summary["nodes_one_at_a_time"]  # the two staging models overlap
    staging = summary["per_layer"]["staging"]
    assert (staging["seconds"], staging["first_start"], staging["last_end"]) == (16.0, 0, 10)
    assert summary["per_layer"]["marts"]["last_end"] == 30
    assert summary["per_layer"]["data tests"]["seconds"] == 2.0
    assert [m["model"] for m in summary["models"]][:2] == ["stg_canal_json__changes", "int_change_events"]
    assert [p["status"] for p in summary["problems"]] == ["warn"]


@pytest.mark.parametrize(
    ("text", "dialects", "messages"),
    [
        ("mixed:100k", 11, 100_000),
        ("mixed:1M", 11, 1_000_000),
        ("canal_json:2500", 1, 2_500),
        ("dts_avro:1.5m", 1, 1_500_000),
    ],
)
def test_workload_specs(text, dialects, messages):
    spec = workloads.parse_spec(text)
    assert (len(spec.dialects), spec.messages, spec.label) == (dialects, messages, text)


@pytest.mark.parametrize("text", ["mixed", "mixed:0", "mixed:ten", "nosuch_json:1k"])
def test_bad_workload_specs_are_refused(text):
    with pytest.raises(ValueError):
        workloads.parse_spec(text)


def test_bad_spark_settings_stop_the_bench_before_it_generates_anything(capsys):
    with pytest.raises(SystemExit) as stopped:
        bench_run.main(["--workloads", "mixed:1k", "--conf", "spark.sql.codegen.wholeStage"])
    assert stopped.value.code == 2
    assert "is not key=value" in capsys.readouterr().err


def build_summary(seconds: float, cpu: float, peak: int, problems: int = 0) -> dict:
    return {
        "build_seconds": seconds,
        "build_cpu_seconds": cpu,
        "process": {"wall_seconds": seconds + 20, "peak_driver_rss_mib": peak},
        "problems": [{"node": f"test.x{i}", "status": "warn", "message": None} for i in range(problems)],
        "per_layer": {"staging": {"seconds": seconds, "cpu_seconds": cpu, "first_start": 0, "last_end": seconds}},
        "models": [{"model": "stg_canal_json__changes", "layer": "staging", "seconds": seconds, "cpu_seconds": None}],
    }


def test_figures_relate_the_incremental_run_and_the_rerun_to_the_full_build():
    report = {
        "workload": "mixed:1k",
        "messages": {"batch1": 1000, "batch2": 10},
        "empty": build_summary(90.0, 170.0, 2900),
        "full": build_summary(400.0, 800.0, 3000, problems=2),
        "parse_floor": {"seconds": 20.0, "cpu_seconds": 35.0},
        "write_floor": {"seconds": 55.5, "cpu_seconds": 80.0, "tables": {}},
        "incremental": build_summary(100.0, 150.0, 3100, problems=2),
        "rerun": build_summary(60.0, 90.0, 3050, problems=2),
    }

    figures = bench_run.figures(report)

    assert (figures["incremental_over_full_build"], figures["incremental_over_full_build_cpu"]) == (0.25, 0.188)
    assert (figures["rerun_build_seconds"], figures["rerun_over_full_build"]) == (60.0, 0.15)
    assert (figures["empty_build_seconds"], figures["empty_over_parse_floor"]) == (90.0, 4.5)
    assert figures["full_build_over_parse_floor"] == 20.0
    assert figures["write_floor_seconds"] == 55.5
    assert figures["peak_driver_rss_mib"] == 3100
    assert figures["build_problems"] == 6
    printed = bench_run.table([report | {"figures": figures}])
    assert "where the rerun build's time goes" in printed and "where the empty build's time goes" in printed
    assert "0.15" in printed.splitlines()[1]


def test_figures_of_a_run_without_incremental_steps_leave_them_empty():
    report = {"workload": "mixed:1k", "messages": {"batch1": 1000, "batch2": 0}, "full": build_summary(400, 800, 3000)}

    figures = bench_run.figures(report)

    assert figures["incremental_build_seconds"] is None and figures["rerun_over_full_build"] is None
    assert figures["empty_build_seconds"] is None and figures["write_floor_seconds"] is None
    assert "where the incremental build's time goes" not in bench_run.table([report | {"figures": figures}])


@pytest.mark.spark
def test_write_floor_rewrites_every_table_of_its_schemas_but_no_view():
    import spark_steps  # bench/spark_steps.py

    from harness import spark_session

    spark = spark_session()
    schema = "bench_write_floor_test"
    spark.sql(f"drop schema if exists {schema} cascade")
    spark.sql(f"create schema {schema}")
    spark.sql(
        f"create table {schema}.parts using parquet partitioned by (bucket) as select id, id % 3 as bucket from range(30)"
    )
    spark.sql(f"create table {schema}.plain using parquet as select id from range(7)")
    spark.sql(f"create view {schema}.over_parts as select * from {schema}.parts")

    tables = spark_steps.write_floor(spark, schemas=[schema])

    assert sorted(tables) == [f"{schema}.parts", f"{schema}.plain"]
    assert (tables[f"{schema}.parts"]["rows"], tables[f"{schema}.plain"]["rows"]) == (30, 7)
    assert all(t["read_write_seconds"] > 0 and t["read_seconds"] > 0 for t in tables.values())
    # The tables themselves are untouched: the copies went to a scratch folder.
    assert spark.table(f"{schema}.parts").count() == 30
    spark.sql(f"drop schema {schema} cascade")
