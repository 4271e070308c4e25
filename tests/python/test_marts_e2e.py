"""End to end: a generated workload -> landing -> staging -> intermediate and marts, judged by the truth.

The generator computes every source table's version history from the workload alone
(cdc_unify.generator.truth); here the same workload goes through the dialects' messages,
faults included (redeliveries, tombstones, malformed messages, late messages in a second
batch), and the marts must give the source state at every instant.

Dialects: cloudcanal_json sends a commit time with millisecond precision on every row, so its
history must equal the truth at every instant; oms_default_ext_json sends second-precision
commit times and none on full-load rows, so its current rows must equal the truth's final state.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyspark.sql import functions as F

from cdc_unify import landing
from cdc_unify.generator.run import generate
from cdc_unify.generator.truth import Truth, load_truth
from harness import run_dbt, spark_session

pytestmark = [pytest.mark.spark, pytest.mark.slow]

EXACT_HISTORY = "cloudcanal_json"
FINAL_STATE_ONLY = "oms_default_ext_json"
DIALECTS = (EXACT_HISTORY, FINAL_STATE_ONLY)
SCHEMA = "cdc_unify"
MARTS = (
    "cdc_change_events",
    "cdc_row_history",
    "cdc_current_rows",
    "cdc_schema_changes",
    "cdc_dead_letters",
    "cdc_dead_letter_counts",
    "cdc_feed_health",
)
VIEWS = ("int_staged_events", "int_quarantine")
INTERMEDIATE = ("int_staged_events", "int_change_events", "int_row_changes", "int_schema_registry", "int_quarantine")
BATCH_LANDED_AT = {1: dt.datetime(2024, 6, 1, 1, tzinfo=dt.UTC), 2: dt.datetime(2024, 6, 1, 2, tzinfo=dt.UTC)}
PRECISION_STEP = {
    "s": dt.timedelta(seconds=1),
    "ms": dt.timedelta(milliseconds=1),
    "us": dt.timedelta(microseconds=1),
    "ns": dt.timedelta(microseconds=1),
}
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def feed_of(dialect: str) -> str:
    return f"e2e_{dialect}"


def land_batch(out_dir: Path, dialect: str, batch: int, replace: bool) -> None:
    spark = spark_session()
    landing.create_landing_tables(spark)
    if replace:
        spark.sql(f"truncate table {landing.landing_table(dialect)}")
    records, _ = landing.parquet_records((out_dir / dialect / f"batch-{batch}.parquet").read_bytes())
    rows = landing.kafka_to_landing(spark.createDataFrame(records), feed_of(dialect), F.lit(BATCH_LANDED_AT[batch]))
    landing.append_landing(rows, dialect)


def build(full_refresh: bool = False) -> None:
    selection = [f"stg_{d}__changes" for d in DIALECTS] + ["path:models/intermediate", "path:models/marts"]
    flags = ["--full-refresh"] if full_refresh else []
    run_dbt("run", *flags, "--select", *selection, dbt_vars={"cdc_dialects": list(DIALECTS)})


def snapshot() -> dict[str, list[dict[str, Any]]]:
    tables = {name: f"{SCHEMA}.{name}" for name in MARTS}
    tables |= {name: f"{SCHEMA}_intermediate.{name}" for name in INTERMEDIATE if name not in VIEWS}
    return {name: table_rows(relation) for name, relation in tables.items()}


def table_rows(relation: str) -> list[dict[str, Any]]:
    return [row.asDict(recursive=True) for row in spark_session().table(relation).collect()]


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """Spark returns naive datetimes in the session time zone, which is UTC."""
    return None if value is None else value.replace(tzinfo=dt.UTC)


def floor_to(instant: dt.datetime, step: dt.timedelta) -> dt.datetime:
    micros = (instant - EPOCH) // dt.timedelta(microseconds=1)
    step_micros = step // dt.timedelta(microseconds=1)
    return EPOCH + dt.timedelta(microseconds=micros - micros % step_micros)


def row_text(row: dict[str, str | None]) -> str:
    """A row as comparable text; a NULL column and an absent one are the same (truth's rule)."""
    return json.dumps({k: v for k, v in row.items() if v is not None}, sort_keys=True, ensure_ascii=False)


def live_at(history: list[dict[str, Any]], instant: dt.datetime) -> Counter[str]:
    return Counter(
        row_text(v["row_values"])
        for v in history
        if v["valid_from"] <= instant and (v["valid_to"] is None or v["valid_to"] > instant) and not v["is_deleted"]
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out_dir = tmp_path_factory.mktemp("marts_e2e")
    manifest = generate(events=300, seed=11, out_dir=out_dir, dialects=DIALECTS)
    return out_dir, manifest


@pytest.fixture(scope="module")
def built(generated: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    """Batch 1 landed and built from scratch; batch 2 (late messages included) landed and built
    incrementally; the same input built again incrementally, then with --full-refresh."""
    out_dir, _ = generated
    for dialect in DIALECTS:
        land_batch(out_dir, dialect, 1, replace=True)
    build(full_refresh=True)
    for dialect in DIALECTS:
        land_batch(out_dir, dialect, 2, replace=False)
    build()
    incremental = snapshot()
    build()
    rerun = snapshot()
    build(full_refresh=True)
    return {"after_batch_2": incremental, "rerun": rerun, "full_refresh": snapshot()}


def history_of(built: dict[str, Any], dialect: str, table: str) -> list[dict[str, Any]]:
    database, name = table.split(".")
    rows = [
        {**v, "valid_from": as_utc(v["valid_from"]), "valid_to": as_utc(v["valid_to"])}
        for v in built["after_batch_2"]["cdc_row_history"]
        if v["feed"] == feed_of(dialect) and v["database_name"] == database and v["table_name"] == name
    ]
    assert rows, f"no history for {table} of {dialect}"
    return rows


def truth_of(generated: tuple[Path, dict[str, Any]]) -> Truth:
    return load_truth(generated[0] / "truth")


def test_history_equals_the_source_at_every_instant(generated, built) -> None:
    """At every instant where a source table changed, the as-of query gives the source table.
    Instants are compared at the dialect's timestamp precision (milliseconds): the state at the
    end of each millisecond in which the truth changed."""
    step = PRECISION_STEP["ms"]
    for name, table in sorted(truth_of(generated).tables.items()):
        history = history_of(built, EXACT_HISTORY, name)
        changes = {v.valid_from for v in table.versions} | {v.valid_to for v in table.versions if v.valid_to}
        for cut in sorted({floor_to(instant, step) for instant in changes}):
            expected = Counter(row_text(row) for row in table.state_at(cut + step - dt.timedelta(microseconds=1)))
            assert live_at(history, cut) == expected, f"{name} at {cut.isoformat()}"


def test_history_versions_match_the_truth(generated, built) -> None:
    """Same number of live versions per table: no spurious version (no-op updates, redeliveries)."""
    for name, table in sorted(truth_of(generated).tables.items()):
        live_versions = [v for v in history_of(built, EXACT_HISTORY, name) if not v["is_deleted"]]
        assert len(live_versions) == len(table.versions), name


def test_current_rows_equal_the_final_source_state(generated, built) -> None:
    truth = truth_of(generated)
    for dialect in DIALECTS:
        for name, table in sorted(truth.tables.items()):
            database, table_name = name.split(".")
            current = Counter(
                row_text(r["row_values"])
                for r in built["after_batch_2"]["cdc_current_rows"]
                if r["feed"] == feed_of(dialect) and r["database_name"] == database and r["table_name"] == table_name
            )
            assert current == Counter(row_text(row) for row in table.final_state()), f"{dialect} {name}"


def test_no_message_vanishes(generated, built) -> None:
    _, manifest = generated
    health = {r["dialect"]: r for r in built["after_batch_2"]["cdc_feed_health"] if r["source_name"].startswith("e2e_")}
    for dialect in DIALECTS:
        totals = manifest["per_dialect"][dialect]["totals"]
        row = health[dialect]
        assert row["landed_messages"] == totals["messages"]
        assert row["unreconciled_messages"] == 0
        assert row["quarantined_messages"] == totals["malformed"]
        assert row["tombstone_messages"] == totals["tombstones"]
        assert row["redelivered_events"] > 0


def test_redeliveries_are_counted_once(built) -> None:
    events = [e for e in built["after_batch_2"]["cdc_change_events"] if e["source_name"].startswith("e2e_")]
    assert len({e["event_id"] for e in events}) == len(events)
    assert any(e["delivery_count"] > 1 for e in events)


def comparable(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True, default=str) for r in rows)


def test_rerun_on_unchanged_input_changes_nothing(built) -> None:
    for name, rows in built["after_batch_2"].items():
        assert comparable(built["rerun"][name]) == comparable(rows), name


def test_incremental_run_equals_full_refresh(built) -> None:
    for name, rows in built["after_batch_2"].items():
        assert comparable(built["full_refresh"][name]) == comparable(rows), name


def test_data_tests_pass_on_the_built_marts(built) -> None:
    run_dbt(
        "test",
        "--select",
        "path:models/intermediate",
        "path:models/marts",
        "--exclude",
        "test_type:unit",
        dbt_vars={"cdc_dialects": list(DIALECTS)},
    )


def test_every_column_is_described(built) -> None:
    """The YAML describes exactly the columns each intermediate and mart model really has."""
    root = Path(__file__).resolve().parents[2] / "models"
    described: dict[str, set[str]] = {}
    for path in [*root.glob("intermediate/*.yml"), *root.glob("marts/*.yml")]:
        for model in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models", []):
            described[model["name"]] = {c["name"] for c in model.get("columns", []) if c.get("description")}
    spark = spark_session()
    relations = {name: f"{SCHEMA}.{name}" for name in MARTS} | {
        name: f"{SCHEMA}_intermediate.{name}" for name in INTERMEDIATE
    }
    for name, relation in relations.items():
        assert set(spark.table(relation).columns) == described[name], name
