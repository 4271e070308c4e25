"""The benchmark harness's own arithmetic (bench/run.py, bench/workloads.py), without Spark:
what it reports is only as good as how it reads dbt's run_results.json."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

import pytest

from cdc_unify.contract import DIALECTS
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
        ("mixed:100k", len(DIALECTS), 100_000),
        ("mixed:1M", len(DIALECTS), 1_000_000),
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


def test_figures_of_a_backfill_say_its_cost_its_memory_and_whether_it_built_the_same_tables():
    report = {
        "workload": "mixed:1k",
        "messages": {"batch1": 1000, "batch2": 10},
        "empty": build_summary(90.0, 170.0, 2900),
        "full": build_summary(400.0, 800.0, 3000),
        "backfill": build_summary(500.0, 950.0, 3300, problems=1) | {"process": {"peak_driver_rss_mib": 3300}},
        "land_backfill": [{"rows": {"canal_json": 600, "dts_avro": 400}}, {"rows": {"canal_json": 10}}],
        "backfill_check": {"tables": 40, "differing": ["cdc_unify.cdc_row_history", "cdc_unify.x"]},
    }
    report["backfill"]["process"]["returncode"] = 0

    figures = bench_run.figures(report)

    assert figures["backfill_messages"] == 1010
    assert (figures["backfill_build_seconds"], figures["backfill_over_full_build"]) == (500.0, 1.25)
    assert (figures["backfill_peak_driver_rss_mib"], figures["backfill_returncode"]) == (3300, 0)
    assert figures["backfill_tables_differing"] == 2
    # The backfill's own peak is reported apart from the main builds'.
    assert figures["peak_driver_rss_mib"] == 3000 and figures["build_problems"] == 1
    printed = bench_run.table([report | {"figures": figures}])
    assert "Backfill: every message at once" in printed and "where the backfill build's time goes" in printed
    without = bench_run.figures({k: v for k, v in report.items() if "backfill" not in k})
    assert without["backfill_messages"] is None and without["backfill_tables_differing"] is None


def staging_model(name: str, seconds: float, cpu: float | None = None) -> dict:
    return {"model": name, "layer": "staging", "seconds": seconds, "cpu_seconds": cpu}


def test_each_staging_model_is_judged_against_its_own_dialects_floor_and_the_layer_against_all():
    report = {
        "workload": "mixed:1k",
        "dialects": ["canal_json", "debezium_json", "dts_avro"],
        "full": {
            "models": [
                staging_model("stg_canal_json__changes", 9.0, 15.0),
                staging_model("stg_debezium_json__changes", 5.0),
                staging_model("stg_dts_avro__changes", 4.0),
                staging_model("stg_maxwell_json__changes", 0.5),  # not a dialect of the workload
                {"model": "int_change_events", "layer": "intermediate", "seconds": 30.0, "cpu_seconds": None},
            ],
            "per_layer": {"staging": {"seconds": 18.5, "cpu_seconds": 0.0, "first_start": 2.0, "last_end": 20.0}},
        },
        "parse_floor": {
            "seconds": 6.0,
            "dialects": {
                "canal_json": {"seconds": 3.0},
                "debezium_json": {"seconds": 1.0},
                "dts_avro": {"seconds": 2.0},
            },
        },
        "decoder_floor": {"dialects": {"debezium_json": {"seconds": 2.0}, "dts_avro": {"seconds": 2.5}}},
    }

    rows = bench_run.staging_rows(report)

    assert [row["model"] for row in rows] == [
        "stg_canal_json__changes",
        "stg_debezium_json__changes",
        "stg_dts_avro__changes",
        "(staging layer)",
    ]
    canal, debezium, dts, layer = rows
    # A SQL model against its dialect's parse floor (3x at most): 9 s of 3.
    assert (canal["kind"], canal["over_parse_floor"], canal["met"]) == ("SQL", 3.0, "yes")
    assert canal["cpu_seconds"] == 15.0 and canal["over_decoder_floor"] is None
    # A Python model against its decoder floor (2x at most), its parse floor shown beside it.
    assert (debezium["kind"], debezium["over_decoder_floor"], debezium["met"]) == ("Python", 2.5, "no")
    assert debezium["over_parse_floor"] == 5.0
    assert (dts["over_decoder_floor"], dts["met"]) == (1.6, "yes")
    # The layer from its first start to its last end (18 s) against every dialect's parse floor (6 s).
    assert (layer["kind"], layer["seconds"], layer["over_parse_floor"], layer["met"]) == ("layer", 18.0, 3.0, "yes")

    lines = bench_run.table([report | {"figures": {}}]).splitlines()
    start = lines.index("Staging models of the full build against their dialect's floors:")
    assert "stg_debezium_json__changes" in lines[start + 3] and lines[start + 3].endswith("no")


def test_staging_models_that_ran_side_by_side_are_shown_but_not_judged():
    """With more than one dbt thread a model's node seconds hold its neighbours' work too: each
    model keeps its ratios, its verdict is left out; the layer (first start to last end) is judged."""
    models = [staging_model("stg_canal_json__changes", 9.0), staging_model("stg_debezium_json__changes", 5.0)]
    per_layer = {"staging": {"seconds": 14.0, "cpu_seconds": 0.0, "first_start": 0.0, "last_end": 8.0}}
    floors = {"seconds": 4.0, "dialects": {"canal_json": {"seconds": 3.0}, "debezium_json": {"seconds": 1.0}}}
    report = {
        "workload": "mixed:1k",
        "dialects": ["canal_json", "debezium_json"],
        "parse_floor": floors,
        "decoder_floor": {"dialects": {"debezium_json": {"seconds": 2.0}}},
    }

    for threads, verdicts in ((None, [None, None, "yes"]), (4, [None, None, "yes"]), (1, ["yes", "no", "yes"])):
        rows = bench_run.staging_rows(report | {"full": {"models": models, "per_layer": per_layer, "threads": threads}})
        assert [row["met"] for row in rows] == verdicts, threads
        assert [row["over_parse_floor"] for row in rows] == [3.0, 5.0, 2.0]
        overlapped = [row["target"].endswith("(nodes overlapped)") for row in rows]
        assert overlapped == [threads != 1, threads != 1, False]


def test_a_staging_model_without_its_floor_is_not_judged():
    report = {"workload": "canal_json:1k", "dialects": ["canal_json"], "full": build_summary(10.0, 20.0, 100)}

    (row,) = bench_run.staging_rows(report)

    assert (row["model"], row["over_parse_floor"], row["met"]) == ("stg_canal_json__changes", None, None)


def landed_generated(dialect: str, schema: str, out_dir: Path) -> str:
    """The landing table `<schema>.<dialect>` (its schema made anew) of a small generated workload's
    batch 1 in `dialect`, with the bench's faults, as the bench lands it; its name."""
    from pyspark.sql import functions as F

    from cdc_unify import landing
    from cdc_unify.contract import LANDING_COLUMNS
    from cdc_unify.generator.run import generate
    from harness import spark_session

    spark = spark_session()
    generate(60, 5, out_dir, (dialect,), workloads.BENCH_FAULTS)
    records = spark.read.parquet(str(out_dir / dialect / "batch-1.parquet"))
    rows = landing.kafka_to_landing(records, "bench_test", F.lit(dt.datetime(2024, 6, 1, tzinfo=dt.UTC)))
    spark.sql(f"drop schema if exists {schema} cascade")
    spark.sql(f"create schema {schema}")
    rows.select(*[name for name, _ in LANDING_COLUMNS]).write.saveAsTable(f"{schema}.{dialect}")
    return f"{schema}.{dialect}"


@pytest.mark.spark
def test_the_decoder_floor_runs_a_python_models_decoder_over_every_landing_row(tmp_path):
    """Against the decoder called in plain Python on the same landing rows: the floor stages the
    same number of rows and quarantines the same ones (the generated feed has malformed values)."""
    import spark_steps  # bench/spark_steps.py

    from cdc_unify.message_decoders.debezium_json import decode_records
    from harness import spark_session

    assert spark_steps.python_staged_dialects() == ["debezium_json", "dts_avro"]
    spark = spark_session()
    schema = "bench_decoder_floor_test"
    landed_generated("debezium_json", schema, tmp_path)

    floor = spark_steps.decoder_job(spark, "debezium_json", f"{schema}.debezium_json")

    landed = [row.asDict() for row in spark.table(f"{schema}.debezium_json").collect()]
    staged = decode_records(landed)
    assert floor["rows"] == len(landed) > 0
    assert floor["staged_rows"] == len(staged) > len(landed) / 2
    assert floor["quarantined"] == sum(row["error_code"] is not None for row in staged) > 0
    assert floor["seconds"] > 0 and floor["cpu_seconds"] > 0
    spark.sql(f"drop schema {schema} cascade")


@pytest.mark.spark
def test_a_digest_is_equal_for_the_same_rows_in_any_order_and_differs_for_any_other_rows():
    import spark_steps  # bench/spark_steps.py

    from harness import spark_session

    spark = spark_session()
    rows = "(1, map('a', '1', 'b', null), array(map('z', 1, 'y', 2)), 'x', timestamp'2024-01-01 00:00:00')"
    more = "(2, map('c', '3'), array(), null, timestamp'2024-01-02 00:00:00')"
    columns = "id, image, nested, note, built_at"

    def digest(*values: str) -> dict:
        return spark_steps.table_digest(spark.sql(f"select * from values {', '.join(values)} as t({columns})"))

    same = digest(rows, more)
    assert same["rows"] == 2
    # Another order of rows, of map entries (also nested), another built_at: the same rows.
    reordered = "(1, map('b', null, 'a', '1'), array(map('y', 2, 'z', 1)), 'x', timestamp'2030-01-01 00:00:00')"
    assert digest(more, reordered) == same
    # A changed value, a value where a null was, a row twice: other rows.
    assert digest(rows.replace("'x'", "'X'"), more) != same
    assert digest(rows, more.replace("null", "'c'")) != same
    assert digest(rows, more, more) != same

    def pair(a: str, b: str) -> dict:
        return spark_steps.table_digest(spark.sql(f"select cast({a} as int) as a, cast({b} as int) as b"))

    # A null in one column or the other: Spark's row hash skips nulls, the digest does not.
    assert pair("1", "null") != pair("null", "1")
    variant = spark.sql('select parse_json(\'{"b": 1, "a": [1, 2]}\') as v')
    assert spark_steps.table_digest(variant) == spark_steps.table_digest(
        spark.sql('select parse_json(\'{"a":[1,2],"b":1}\') as v')
    )
    assert spark_steps.table_digest(variant) != spark_steps.table_digest(
        spark.sql('select parse_json(\'{"a":[2,1],"b":1}\') as v')
    )


@pytest.mark.spark
def test_a_table_of_builds_is_digested_by_its_live_rows():
    """int_row_changes after incremental runs (superseded builds, a vacancy row, appended deltas)
    and the same live rows compacted give one digest; another live row does not."""
    import spark_steps  # bench/spark_steps.py

    from harness import spark_session

    spark = spark_session()
    columns = "table_key, unit_identity, action_id, v, build_tier, built_at"

    def digest(*values: str) -> dict:
        table = spark.sql(f"select * from values {', '.join(values)} as t({columns})")
        return spark_steps.table_digest(spark_steps.live_rows(table, ("table_key", "unit_identity"), "action_id"))

    live = [
        "('t', 'k1', 'a1', 'x', 'base', timestamp'2024-01-01')",
        "('t', 'k2', 'a2', 'y', 'delta', timestamp'2024-01-03')",
    ]
    history = [
        "('t', 'k2', 'a2', 'old', 'base', timestamp'2024-01-01')",  # superseded by k2's newer build
        "('t', 'k3', 'a3', 'z', 'base', timestamp'2024-01-01')",
        "('t', 'k3', null, null, 'delta', timestamp'2024-01-02')",  # k3's build is empty now
    ]
    compacted = [row.replace("'delta'", "'base'") for row in live]
    assert digest(*live, *history) == digest(*compacted) == digest(*live)
    assert digest(*live, *history) != digest(*compacted, "('t', 'k4', 'a4', 'w', 'base', timestamp'2024-01-01')")


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


def test_a_delta_workload_generates_a_batch_2_larger_than_the_delta_in_the_same_mix():
    spec = workloads.with_delta(workloads.parse_spec("mixed:1M"), 10_000)
    default = workloads.BENCH_FAULTS

    assert spec.name == "mixed-1m-delta10000" and spec.generated_messages == 1_015_000
    faults = spec.faults
    assert faults.tail_share + faults.late_share == pytest.approx(15_000 / 1_015_000)
    assert faults.tail_share / faults.late_share == pytest.approx(default.tail_share / default.late_share)
    assert (faults.duplicate_share, faults.malformed_share) == (default.duplicate_share, default.malformed_share)
    assert workloads.parse_spec("mixed:1M").faults == default


def test_a_delta_too_large_for_its_workload_is_refused(capsys):
    with pytest.raises(ValueError, match="at most 1,666"):
        workloads.with_delta(workloads.parse_spec("mixed:5k"), 2_000)
    with pytest.raises(SystemExit) as stopped:
        bench_run.main(["--workloads", "mixed:5k", "--delta", "2k"])
    assert stopped.value.code == 2
    assert "too large for mixed:5k" in capsys.readouterr().err


@pytest.mark.parametrize(("total", "sizes"), [(10, [5, 5]), (7, [3, 3, 3]), (1, [1000, 1]), (9, [0, 4, 5]), (0, [2])])
def test_split_exactly_is_proportional_exact_and_within_each_size(total, sizes):
    parts = workloads.split_exactly(total, sizes)

    assert sum(parts) == total
    assert all(0 <= part <= size for part, size in zip(parts, sizes, strict=True))
    assert all(abs(part - total * size / sum(sizes)) < 1 for part, size in zip(parts, sizes, strict=True))


def test_split_exactly_cannot_take_more_than_there_is():
    with pytest.raises(ValueError):
        workloads.split_exactly(11, [5, 5])


def test_delta_keeps_the_first_part_of_each_partitions_late_run_and_newest_run():
    # Partition 0: offsets 100-119 held back (late), 120-159 newest; partition 1: 7-16 newest only;
    # partition 2: 50-59 late only.  Landing order interleaves partitions.
    records = [(0, o) for o in range(100, 160)] + [(1, o) for o in range(7, 17)] + [(2, o) for o in range(50, 60)]
    records = records[::2] + records[1::2]

    kept = workloads.delta_keep(records, {0: 120, 1: 7}, quota=40)

    assert len(kept) == 40  # half of the 80
    assert kept == (
        {(0, o) for o in range(100, 110)}
        | {(0, o) for o in range(120, 140)}
        | {(1, o) for o in range(7, 12)}
        | {(2, o) for o in range(50, 55)}
    )


def test_delta_composition_names_every_landed_record():
    late = {(0, 1): True, (0, 2): False, (1, 1): False}
    faults = {(0, 3): "duplicate", (1, 2): "tombstone", (1, 3): "malformed"}
    kept = {(0, 0), (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)}

    assert workloads.delta_composition(kept, late, faults) == {
        "duplicate": 1,
        "late": 1,
        "malformed": 1,
        "newest": 2,
        "tombstone": 1,
        "without rows": 1,
    }


def test_a_delta_cut_from_generated_batches_lands_exactly_n_records_of_batch_2_in_landing_order(tmp_path):
    import pyarrow.parquet as pq

    from cdc_unify.generator.run import generate

    spec = workloads.with_delta(workloads.parse_spec("mixed:1k"), 60)
    # About 1,050 messages over the two dialects, as many as the spec's 1k.
    manifest = generate(400, 1, tmp_path, ("canal_json", "debezium_json"), spec.faults)

    cut = workloads.cut_delta(tmp_path, manifest, 60)

    assert cut["messages"] == 60 and sum(cut["composition"].values()) == 60
    assert cut["composition"]["newest"] > cut["composition"]["late"] > 0
    for dialect, figures in cut["per_dialect"].items():
        batch2 = pq.read_table(tmp_path / dialect / "batch-2.parquet").to_pylist()
        delta = pq.read_table(tmp_path / dialect / workloads.delta_file(60)).to_pylist()
        assert figures["of_batch2"] == len(batch2) == manifest["per_dialect"][dialect]["batches"]["2"]["messages"]
        assert len(delta) == figures["messages"] == round(60 * len(batch2) / cut["of_batch2"])
        coordinates = [(r["partition"], r["offset"]) for r in batch2]
        kept = [coordinates.index((r["partition"], r["offset"])) for r in delta]
        assert kept == sorted(kept)  # a subsequence of batch 2, landing order kept
        assert [r["value"] for r in delta] == [batch2[i]["value"] for i in kept]
        # Per partition, what is left out is the end of the late run and the end of the newest run.
        for partition in {p for p, _ in coordinates}:
            offsets = sorted(o for p, o in coordinates if p == partition)
            landed = [(partition, o) in {(r["partition"], r["offset"]) for r in delta} for o in offsets]
            runs = [flag for i, flag in enumerate(landed) if i == 0 or flag != landed[i - 1]]
            assert runs in ([True], [True, False], [True, False, True, False]), (dialect, partition, runs)


def test_successive_runs_land_every_record_once_in_order_in_parts_of_about_equal_size(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [(p, o) for p in (0, 1) for o in range(10 * p, 10 * p + 7 + 3 * p)]
    (tmp_path / "canal_json").mkdir()
    table = pa.table({"partition": [p for p, _ in records], "offset": [o for _, o in records]})
    pq.write_table(table, tmp_path / "canal_json" / "delta-17.parquet")

    names = workloads.split_runs(tmp_path, ["canal_json", "debezium_json"], "delta-17.parquet", 3)

    parts = [pq.read_table(tmp_path / "canal_json" / name).to_pylist() for name in names]
    landed = [(r["partition"], r["offset"]) for part in parts for r in part]
    assert sorted(landed) == sorted(records) and len(landed) == len(records)
    for partition, size in ((0, 7), (1, 10)):
        runs = [[r["offset"] for r in part if r["partition"] == partition] for part in parts]
        assert [o for run in runs for o in run] == sorted(o for p, o in records if p == partition)
        assert max(map(len, runs)) - min(map(len, runs)) <= 1 and sum(map(len, runs)) == size
    assert not (tmp_path / "debezium_json").exists()


def test_figures_of_successive_runs_compare_the_last_with_the_first_and_count_files():
    runs = [
        build_summary(50.0, 80.0, 3000) | {"messages": 10, "data_files": {"s.a": 4, "s.b": 1}},
        build_summary(60.0, 90.0, 3000) | {"messages": 11, "data_files": {"s.a": 9, "s.b": 2}},
    ]
    report = {
        "workload": "mixed:1k",
        "messages": {"batch1": 1000, "batch2": 21},
        "full": build_summary(400, 800, 3000),
        "runs": runs,
        "incremental": runs[-1],
    }

    figures = bench_run.figures(report)

    assert (figures["runs"], figures["incremental_messages"], figures["first_run_build_seconds"]) == (2, 11, 50.0)
    assert figures["last_over_first_run"] == 1.2 and figures["incremental_build_seconds"] == 60.0
    assert (figures["data_files_after_first_run"], figures["data_files_after_last_run"]) == (5, 11)
    printed = bench_run.table([report | {"figures": figures}])
    assert "Successive incremental runs" in printed and "a 9, b 2" in printed


def test_runs_and_a_backfill_are_refused_together(capsys):
    with pytest.raises(SystemExit):
        bench_run.main(["--runs", "3", "--backfill", "--workloads", "mixed:1k"])
    assert "--runs" in capsys.readouterr().err


def figures_of(workload: str, messages: int, delta: int | None, incremental: float, empty: float = 40.0) -> dict:
    report = {
        "workload": workload,
        "dialects": ["canal_json", "dts_avro"],
        "messages": {"batch1": messages, "batch2": messages // 100},
        "empty": build_summary(empty, 2 * empty, 2900),
        "full": build_summary(10 * incremental, 20 * incremental, 3000),
        "incremental": build_summary(incremental, 2 * incremental, 3000),
        "rerun": build_summary(incremental / 2, incremental, 3000),
    }
    if delta is not None:
        report["delta"] = {"messages": delta}
    return report | {"figures": bench_run.figures(report)}


def test_growth_rows_relate_each_incremental_run_to_the_empty_build_and_the_smallest_history_with_its_delta():
    reports = [
        figures_of("mixed:5M", 5_000_000, 10_000, incremental=120.0),
        figures_of("mixed:1M", 1_000_000, 10_000, incremental=80.0),
        figures_of("mixed:100k", 100_000, 500, incremental=50.0),
    ]

    rows = {row["workload"]: row for row in bench_run.growth_rows(reports)}

    assert (rows["mixed:5M"]["reference"], rows["mixed:5M"]["incremental_over_reference"]) == ("mixed:1M", 1.5)
    assert rows["mixed:1M"]["incremental_over_reference"] == 1.0
    # Another delta is no reference for it: the 100k run is its own.
    assert rows["mixed:100k"]["reference"] == "mixed:100k"
    assert (rows["mixed:5M"]["incremental_over_empty_build"], rows["mixed:5M"]["rerun_over_empty_build"]) == (3.0, 1.5)
    assert rows["mixed:1M"]["incremental_messages"] == 10_000


def test_without_a_delta_no_workload_is_a_reference_for_another():
    reports = [figures_of("mixed:5M", 5_000_000, None, 120.0), figures_of("mixed:1M", 1_000_000, None, 80.0)]

    rows = bench_run.growth_rows(reports)

    assert [row.get("reference") for row in rows] == [None, None]
    assert rows[0]["incremental_messages"] == 50_000  # the whole batch 2


def test_node_rows_put_each_model_of_several_builds_side_by_side():
    first, second = build_summary(100.0, 150.0, 3000), build_summary(60.0, 90.0, 3000)
    second["models"] = [
        {"model": "stg_canal_json__changes", "layer": "staging", "seconds": 50.0},
        {"model": "int_row_changes", "layer": "intermediate", "seconds": 200.0},
    ]

    rows = dict(bench_run.node_rows([first, second]))

    assert rows["build s (first start to last end)"] == [100.0, 60.0]
    assert rows["staging (node s)"] == [100.0, 60.0]
    assert list(rows)[-2:] == ["  int_row_changes", "  stg_canal_json__changes"]  # costliest in any build first
    assert (rows["  int_row_changes"], rows["  stg_canal_json__changes"]) == ([None, 200.0], [100.0, 50.0])


def test_compare_puts_two_reports_side_by_side_model_by_model(tmp_path):
    def write(name: str, incremental: float) -> object:
        report = figures_of("mixed:1M", 1_000_000, 10_000, incremental)
        del report["figures"]
        path = tmp_path / name
        path.write_text(json.dumps({"workloads": [report]}))
        return path

    printed = bench_run.compare([write("before.json", 200.0), write("after.json", 50.0)])

    assert "before mixed:1M" in printed and "after mixed:1M" in printed
    model_lines = [line for line in printed.splitlines() if line.strip().startswith("stg_canal_json__changes")]
    # empty, full, incremental and rerun: before, after and after/before each.
    assert [line.split()[1:] for line in model_lines] == [
        ["40.0", "40.0", "1.00", "2000.0", "500.0", "0.25", "200.0", "50.0", "0.25", "100.0", "25.0", "0.25"]
    ]


def one_thread_runner(tmp_path, full_build_threads: int | None = None) -> bench_run.Runner:
    """A mixed:1k runner of `--threads 1` (and `--full-build-threads`), its run folders in tmp_path."""
    args = argparse.Namespace(
        work_dir=tmp_path,
        project_dir=REPO_ROOT,
        threads=1,
        full_build_threads=full_build_threads,
        select=None,
        conf=[],
        master="local[2]",
        driver_memory="2g",
    )
    return bench_run.Runner(args, workloads.parse_spec("mixed:1k"))


def test_the_full_build_alone_takes_its_own_thread_count(tmp_path, monkeypatch):
    runner = one_thread_runner(tmp_path, full_build_threads=4)
    commands = []

    def ran(command, env, log_path, prefix):
        commands.append(command)
        log_path.write_text("")
        return {"returncode": 0, "log": str(log_path)}, None

    monkeypatch.setattr(bench_run, "run_process", ran)
    full = runner.dbt_build("full", threads=runner.args.full_build_threads)
    incremental = runner.dbt_build("incremental")
    assert [c[c.index("--threads") + 1] for c in commands] == ["4", "1"]
    assert (full["threads"], incremental["threads"]) == (4, 1)


def test_a_dbt_build_that_runs_no_node_is_a_problem_that_fails_the_bench(tmp_path, monkeypatch):
    runner = one_thread_runner(tmp_path)

    def refused(command, env, log_path, prefix):
        log_path.write_text("Runtime Error\n  the warehouse /w is in use by another process (pid 1)\n")
        return {"returncode": 2, "log": str(log_path)}, None

    monkeypatch.setattr(bench_run, "run_process", refused)
    rerun = runner.dbt_build("rerun")
    assert rerun["build_seconds"] is None
    (problem,) = rerun["problems"]
    assert problem["node"] == "dbt rerun" and "in use by another process" in problem["message"]
    report = {"workloads": [{"workload": "mixed:1k", "full": {"problems": []}, "rerun": rerun}]}
    assert bench_run.builds_not_run(report) == ["mixed:1k: dbt rerun"]
    # The --against project's builds count as much.
    report["workloads"][0]["against"] = {"project_dir": "/w/before", "rerun": rerun}
    assert bench_run.builds_not_run(report) == ["mixed:1k: dbt rerun", "mixed:1k against: dbt rerun"]


def test_a_repeated_build_is_its_median_run_with_every_runs_seconds_and_every_problem():
    runs = [build_summary(46.2, 80.0, 3300), build_summary(34.8, 60.0, 3000), build_summary(35.1, 61.0, 3100, 1)]

    median = bench_run.median_run(runs)

    assert (median["build_seconds"], median["build_cpu_seconds"]) == (35.1, 61.0)
    assert median["process"] == {"wall_seconds": 55.1, "peak_driver_rss_mib": 3300}
    assert median["repeats"] == [46.2, 34.8, 35.1]
    assert [problem["node"] for problem in median["problems"]] == ["test.x0"]
    assert bench_run.median_run([build_summary(40.0, 1, 1), build_summary(30.0, 1, 1)])["build_seconds"] == 30.0
    # A run that ran no node counts as the slowest, and its problem stays in the report.
    not_run = {"build_seconds": None, "problems": [{"node": "dbt empty-2", "status": "not run", "message": ""}]}
    median = bench_run.median_run([build_summary(40.0, 1, 1), not_run, build_summary(30.0, 1, 1)])
    assert median["build_seconds"] == 40.0 and median["repeats"] == [40.0, None, 30.0]
    assert [problem["node"] for problem in median["problems"]] == ["dbt empty-2"]
    assert bench_run.median_run(runs[:1]) is runs[0]


def test_the_figures_and_the_table_list_every_run_of_a_repeated_build():
    report = {
        "workload": "mixed:1k",
        "messages": {"batch1": 1000, "batch2": 10},
        "empty": bench_run.median_run([build_summary(s, 2 * s, 2900) for s in (46.2, 34.8, 35.1)]),
        "full": build_summary(400.0, 800.0, 3000),
        "incremental": bench_run.median_run([build_summary(s, 2 * s, 3000) for s in (109.2, 106.9, 113.6)]),
        "rerun": build_summary(20.0, 30.0, 3000),
    }

    figures = bench_run.figures(report)

    assert (figures["empty_build_seconds"], figures["incremental_build_seconds"]) == (35.1, 109.2)
    assert figures["incremental_over_empty_build"] == round(109.2 / 35.1, 3)
    assert figures["empty_build_runs"] == [46.2, 34.8, 35.1] and figures["rerun_build_runs"] is None
    printed = bench_run.table([report | {"figures": figures}])
    repeated = printed.split("Builds run several times")[1].splitlines()
    assert repeated[2].split() == ["mixed:1k", "empty", "46.2", "34.8", "35.1", "35.1", "1.33"]
    assert repeated[3].split() == ["mixed:1k", "incr", "109.2", "106.9", "113.6", "109.2", "1.06"]


def repeat_runner(tmp_path, monkeypatch) -> tuple[bench_run.Runner, list[tuple[str, str]]]:
    """A runner whose dbt builds note the warehouse's `state` file as they find it, then change it,
    and leave a run_results.json of one node; `seen`: (log name, state found) of each build, and
    `runner.projects_seen`: the project folder each build was given."""
    runner = one_thread_runner(tmp_path)
    seen = []
    projects = runner.projects_seen = []

    def built(command, env, log_path, prefix):
        state = Path(env["CDC_UNIFY_WAREHOUSE"]) / "state"
        seen.append((log_path.name, state.read_text() if state.is_file() else None))
        projects.append(Path(command[command.index("--project-dir") + 1]))
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(f"after {log_path.name}")
        target = Path(env["DBT_TARGET_PATH"])
        target.mkdir(parents=True, exist_ok=True)
        results = [node("model.cdc_unify.stg_canal_json__changes", "00", "05", 5.0)]
        (target / "run_results.json").write_text(json.dumps({"results": results}))
        log_path.write_text("")
        return {"returncode": 0, "log": str(log_path), "wall_seconds": 6.0}, None

    monkeypatch.setattr(bench_run, "run_process", built)
    return runner, seen


def test_each_repeat_of_the_incremental_run_starts_from_the_warehouse_as_the_first_found_it(tmp_path, monkeypatch):
    runner, seen = repeat_runner(tmp_path, monkeypatch)
    runner.warehouse.mkdir(parents=True)
    (runner.warehouse / "state").write_text("landed")

    runs, other = runner.replayed_builds("incremental", 3)

    assert other == []
    assert seen == [
        ("dbt-incremental.log", "landed"),
        ("dbt-incremental-2.log", "landed"),
        ("dbt-incremental-3.log", "landed"),
    ]
    assert [run["build_seconds"] for run in runs] == [5.0, 5.0, 5.0]
    # The warehouse is as the last run left it; the copy taken before the first is gone.
    assert (runner.warehouse / "state").read_text() == "after dbt-incremental-3.log"
    assert sorted(path.name for path in runner.dir.iterdir() if path.name.startswith("warehouse")) == ["warehouse"]


def test_each_repeat_of_the_empty_build_starts_from_no_warehouse(tmp_path, monkeypatch):
    runner, seen = repeat_runner(tmp_path, monkeypatch)

    runs, other = runner.empty_builds(3)

    assert other == []
    assert seen == [("dbt-empty.log", None), ("dbt-empty-2.log", None), ("dbt-empty-3.log", None)]
    assert [run["build_seconds"] for run in runs] == [5.0, 5.0, 5.0]


def test_repeats_and_successive_runs_are_refused_together(capsys):
    with pytest.raises(SystemExit):
        bench_run.main(["--repeats", "3", "--runs", "2", "--workloads", "mixed:1k"])
    assert "--repeats" in capsys.readouterr().err


def against_runner(tmp_path, monkeypatch) -> tuple[bench_run.Runner, list[tuple[str, str]], Path]:
    """repeat_runner with --against a second project folder (its dbt_project.yml only)."""
    runner, seen = repeat_runner(tmp_path, monkeypatch)
    other = tmp_path / "before"
    other.mkdir()
    (other / "dbt_project.yml").write_text("name: cdc_unify\n")
    runner.args.against = other
    return runner, seen, other


def test_against_alternates_which_project_builds_first_each_round_from_the_same_warehouse(tmp_path, monkeypatch):
    runner, seen, other = against_runner(tmp_path, monkeypatch)
    runner.warehouse.mkdir(parents=True)
    (runner.warehouse / "state").write_text("landed")

    ours, theirs = runner.replayed_builds("incremental", 3)

    # The other project first in odd rounds, second in even ones.
    assert seen == [
        ("dbt-incremental-against.log", "landed"),
        ("dbt-incremental.log", "landed"),
        ("dbt-incremental-2.log", "landed"),
        ("dbt-incremental-2-against.log", "landed"),
        ("dbt-incremental-3-against.log", "landed"),
        ("dbt-incremental-3.log", "landed"),
    ]
    this, before = REPO_ROOT.resolve(), other.resolve()
    assert runner.projects_seen == [before, this, this, before, before, this]
    assert (len(ours), len(theirs)) == (3, 3)
    # What follows continues from the last build: this project's after an odd count of rounds.
    assert (runner.warehouse / "state").read_text() == "after dbt-incremental-3.log"
    assert sorted(path.name for path in runner.dir.iterdir() if path.name.startswith("warehouse")) == ["warehouse"]


def test_against_a_worktree_builds_with_its_own_package_first_on_the_path(tmp_path, monkeypatch):
    runner, _, other = against_runner(tmp_path, monkeypatch)
    built = bench_run.run_process
    paths = []

    def noted(command, env, log_path, prefix):
        paths.append((log_path.name, env.get("PYTHONPATH", "").split(os.pathsep)[0]))
        return built(command, env, log_path, prefix)

    monkeypatch.setattr(bench_run, "run_process", noted)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    runner.empty_builds(1)
    # A folder with a dbt project alone runs this checkout's package, as before.
    assert paths[0] == ("dbt-empty-against.log", "/elsewhere")
    (other / "src" / "cdc_unify").mkdir(parents=True)
    paths.clear()
    runner.empty_builds(1)
    assert paths == [
        ("dbt-empty-against.log", str(other.resolve() / "src")),
        ("dbt-empty.log", str(REPO_ROOT.resolve() / "src")),
    ]


def test_against_builds_the_full_build_of_each_project_from_the_landed_warehouse(tmp_path, monkeypatch):
    runner, seen, _ = against_runner(tmp_path, monkeypatch)
    runner.warehouse.mkdir(parents=True)
    (runner.warehouse / "state").write_text("landed")

    ours, theirs = runner.replayed_builds("full", 1, threads=4)

    assert seen == [("dbt-full-against.log", "landed"), ("dbt-full.log", "landed")]
    assert (ours[0]["threads"], theirs[0]["threads"]) == (4, 4)


def test_against_builds_each_empty_build_from_no_warehouse_and_each_rerun_where_the_last_left_it(tmp_path, monkeypatch):
    runner, seen, _ = against_runner(tmp_path, monkeypatch)

    runner.empty_builds(2)
    runner.alternated("rerun", 1)

    assert seen == [
        ("dbt-empty-against.log", None),
        ("dbt-empty.log", None),
        ("dbt-empty-2.log", None),
        ("dbt-empty-2-against.log", None),
        ("dbt-rerun-against.log", None),
        ("dbt-rerun.log", "after dbt-rerun-against.log"),
    ]


def test_the_table_sets_both_projects_builds_side_by_side_round_by_round_and_model_by_model():
    report = {
        "workload": "mixed:1k",
        "messages": {"batch1": 1000, "batch2": 10},
        "full": build_summary(400.0, 800.0, 3000),
        "incremental": bench_run.median_run([build_summary(s, 2 * s, 3000) for s in (90.0, 120.0, 100.0)]),
        "against": {
            "project_dir": "/w/before",
            "full": build_summary(500.0, 1000.0, 3000, problems=1),
            "incremental": bench_run.median_run([build_summary(s, 2 * s, 3000) for s in (100.0, 150.0, 200.0)]),
        },
    }

    (full, incremental) = bench_run.paired_rows(report)

    assert (full["against"], full["this"], full["ratios"], full["median"]) == ("500.0", "400.0", "0.80", 0.8)
    assert incremental["ratios"] == "0.90 0.80 0.50"
    # The median of the rounds' ratios, not the ratio of the medians (100 / 150).
    assert incremental["median"] == 0.8
    printed = bench_run.table([report | {"figures": bench_run.figures(report)}])
    assert "this project against /w/before, round by round" in printed
    # The other project's problems are listed with its builds.
    assert "  ! against full: test.x0: warn" in printed
    (model_line,) = [line for line in printed.splitlines()[-3:] if "stg_canal_json__changes" in line]
    # full and incremental: against, this and this/against each (the medians' model seconds).
    assert model_line.split()[1:] == ["500.0", "400.0", "0.80", "150.0", "100.0", "0.67"]


@pytest.mark.parametrize(
    ("flags", "says"),
    [(["--runs", "2"], "--against takes no --runs"), (["--backfill"], "--against takes no --runs or --backfill")],
)
def test_against_is_refused_with_builds_that_land_messages_between_them(tmp_path, capsys, flags, says):
    (tmp_path / "dbt_project.yml").write_text("name: cdc_unify\n")
    with pytest.raises(SystemExit):
        bench_run.main(["--against", str(tmp_path), *flags, "--workloads", "mixed:1k"])
    assert says in capsys.readouterr().err


def test_against_a_folder_without_a_dbt_project_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench_run.main(["--against", str(tmp_path), "--workloads", "mixed:1k"])
    assert "no dbt_project.yml there" in capsys.readouterr().err


def test_staging_steps_are_judged_by_their_medians_after_the_first_round():
    """The first round is a new JVM's warm-up; the report's figures are the later rounds' medians,
    and the table shows each model with how many rounds ran."""
    import spark_steps  # bench/spark_steps.py

    def steps(floor: float, function: float, select: float, written: float) -> dict[str, float]:
        return dict(zip(spark_steps.STAGING_STEPS, (floor, function, select, written), strict=True))

    rounds = [
        steps(3.0, 9.0, 9.0, 9.0),
        steps(1.0, 2.0, 3.0, 4.0),
        steps(1.2, 2.4, 3.6, 4.8),
        steps(1.1, 2.2, 3.3, 4.4),
    ]
    warm = spark_steps.warm_steps(rounds)
    assert {key: round(value, 6) for key, value in warm.items()} == {
        "parse_floor_seconds": 1.1,
        "function_seconds": 2.2,
        "select_seconds": 3.3,
        "written_seconds": 4.4,
        "written_over_parse_floor": 4.0,
    }
    assert spark_steps.warm_steps(rounds[:1])["written_over_parse_floor"] == 3.0
    report = {
        "workload": "mixed:1M",
        "staging_steps": {"dialects": {"ogg_json": {"model": "stg_ogg_json__changes", "rounds": rounds, **warm}}},
    }
    header, row = bench_run.render(bench_run.STAGING_STEP_COLUMNS, bench_run.staging_step_rows(report))
    assert header.split()[-4:] == ["written", "s", "written/floor", "rounds"]
    assert row.split() == ["mixed:1M", "stg_ogg_json__changes", "1.10", "2.20", "3.30", "4.40", "4.0", "4"]


@pytest.mark.spark
def test_staging_steps_run_a_models_function_select_and_write_over_every_landing_row(tmp_path):
    """A compiled select of the shape macro cdc_message_rows writes (the function's call, its rows
    exploded) over a landing table of generated GoldenGate messages: the function is found in it, each
    step runs, and the written select holds every staged row; a select without a message function is
    not taken apart."""
    import spark_steps  # bench/spark_steps.py

    from harness import spark_session

    spark = spark_session()
    schema = "bench_staging_steps_test"
    table = landed_generated("ogg_json", schema, tmp_path)
    compiled = f"""with messages as (
    select
        *,
        cdc_ogg_rows(value, 'UTC')
            as ogg_rows
    from {table}
)

select messages.feed, staged_row.*
from messages
    lateral view explode_outer(ogg_rows) exploded as staged_row"""

    assert spark_steps.message_function(compiled) == "cdc_ogg_rows(value, 'UTC')"
    assert spark_steps.message_function(f"select * from {table}") is None
    scratch = tmp_path / "scratch"
    figures = spark_steps.staging_round(spark, "ogg_json", compiled, scratch, table)

    landed = spark.table(table).count()
    assert figures["rows"] == spark.sql(compiled).count() >= landed > 0
    assert all(figures[step] > 0 for step in spark_steps.STAGING_STEPS)
    assert not (scratch / "ogg_json").exists()
    spark.sql(f"drop schema {schema} cascade")
