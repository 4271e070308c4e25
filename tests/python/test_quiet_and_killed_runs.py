"""What an incremental run decides before its main query, and what lets its scans skip the
history, on the DataWorks spec's examples (tests/fixtures/spec_examples/dataworks_json), built
into a schema of their own:

- A run with nothing new since the last one runs no model query: every incremental model counts
  its new rows when it compiles (none) and its materialization writes nothing (macro
  cdc_skip_write_when_nothing_new), instead of planning and starting its whole SQL over empty
  inputs; and no table or view is rebuilt from its unchanged parents.
- A run with new rows keeps its views as they are (their SQL is read again at every query), unless
  a parent was made anew after the view.
- A write a killed run left pending (complete, not yet moved into its table) is applied when the
  next run starts, before any model reads its own table's watermarks: read from the table without
  the killed run's rows, they would make the run stage those rows a second time.
- Timestamps are written with the Parquet statistics (min/max) a watermark filter skips the files
  of earlier loads by.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from dbt.adapters.sparksession import pending_writes
from dbt.adapters.sparksession.impl import PENDING_WRITE_COMMENT
from dbt.adapters.sparksession.pending_writes import Named
from harness import comparable, land_messages, run_dbt, run_dbt_statements, spark_session, table_rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples" / "dataworks_json"
DIALECT = "dataworks_json"
FEED = "quiet_and_killed"
SCHEMA = "cdc_quiet"
STAGING = f"stg_{DIALECT}__changes"
SELECTION = (STAGING, "path:models/intermediate", "path:models/marts")
DBT_VARS = {"cdc_dialects": [DIALECT]}
LOADS = (
    (dt.datetime(2024, 7, 1, 1, tzinfo=dt.UTC), ["04_insert", "05_update_before"], 0),
    (dt.datetime(2024, 7, 1, 2, tzinfo=dt.UTC), ["06_update_after", "04_insert"], 2),
)
# The tables a build writes, compared after the killed run's rerun.
TABLES = (
    f"{SCHEMA}_staging.{STAGING}",
    f"{SCHEMA}_intermediate.int_staged_events",
    f"{SCHEMA}_intermediate.int_change_events",
    f"{SCHEMA}_intermediate.int_row_changes",
    f"{SCHEMA}_intermediate.int_row_versions",
    f"{SCHEMA}.cdc_row_history",
    f"{SCHEMA}.cdc_feed_health",
)


def land(load: int) -> None:
    landed_at, names, first_offset = LOADS[load]
    messages = [(SPEC / f"{name}.json").read_bytes() for name in names]
    land_messages(DIALECT, messages, FEED, landed_at, replace=load == 0, first_offset=first_offset)


def run(*flags: str) -> dict[str, list[str]]:
    """`dbt run` of the selection; the SQL statements it sent, by model name."""
    return run_dbt_statements("run", *flags, "--select", *SELECTION, dbt_vars=DBT_VARS, schema=SCHEMA)


def snapshot() -> dict[str, Any]:
    return {table: comparable(table_rows(table)) for table in TABLES}


@pytest.fixture(scope="module")
def runs() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The statements of a run with new rows, then of a run with nothing new."""
    land(0)
    run("--full-refresh")
    land(1)
    return run(), run()


@pytest.fixture(scope="module")
def quiet_run(runs) -> dict[str, list[str]]:
    return runs[1]


VIEWS = ("cdc_change_events", "cdc_row_history", "cdc_current_rows", "customers_current")


def test_a_run_with_new_rows_keeps_its_views_and_they_show_the_new_rows(runs) -> None:
    """A view with its former SQL over parents made before it is not re-created when only their rows
    changed (unchanged.sql): Spark reads its SQL again at every query."""
    with_new_rows = runs[0]
    for model in VIEWS:
        sent = "\n".join(with_new_rows[model]).lower()
        assert "select 0 as rows_written" in sent and "create " not in sent, model
    events = {row["event_id"]: row for row in table_rows(f"{SCHEMA}_intermediate.int_change_events")}
    shown = {row["event_id"]: row for row in table_rows(f"{SCHEMA}.cdc_change_events")}
    assert shown.keys() == events.keys()
    # Spark hands timestamps back in the session's time zone (UTC), without one.
    assert {row["landed_at"] for row in shown.values()} == {load[0].replace(tzinfo=None) for load in LOADS}


def test_a_run_with_nothing_new_runs_no_model_query(quiet_run: dict[str, list[str]]) -> None:
    incremental = [STAGING, "int_staged_events", "int_change_events", "int_quarantine", "int_redeliveries"]
    incremental += ["int_schema_registry"]
    incremental += ["int_row_changes", "int_row_versions", "int_current_rows"]
    incremental += ["cdc_feed_health", "cdc_schema_changes", "cdc_dead_letters"]
    incremental += ["cdc_dead_letter_counts"]
    for model in incremental:
        sent = "\n".join(quiet_run[model])
        assert "select 0 as rows_written" in sent, model
        assert PENDING_WRITE_COMMENT not in sent, model


def test_a_run_with_nothing_new_rebuilds_no_table_or_view(quiet_run: dict[str, list[str]]) -> None:
    """Their SQL is the one they were built from and every parent is unchanged (unchanged.sql)."""
    for model in VIEWS:
        sent = "\n".join(quiet_run[model])
        assert "select 0 as rows_written" in sent, model
        assert "create " not in sent and PENDING_WRITE_COMMENT not in sent, model


def test_a_view_is_re_created_once_a_parent_was_built_whole_after_it(quiet_run) -> None:
    """A parent table made anew may hold other columns than those the view was made over: the view
    is made again, though its SQL and the run are the same as before (unchanged.sql)."""
    run_dbt("run", "--full-refresh", "--select", "int_change_events", dbt_vars=DBT_VARS, schema=SCHEMA)
    sent = run_dbt_statements("run", "--select", "cdc_change_events", dbt_vars=DBT_VARS, schema=SCHEMA)
    assert "create or replace view" in "\n".join(sent["cdc_change_events"]).lower()
    sent = run_dbt_statements("run", "--select", "cdc_change_events", dbt_vars=DBT_VARS, schema=SCHEMA)
    assert "create " not in "\n".join(sent["cdc_change_events"]).lower()


def test_the_files_of_earlier_loads_carry_the_statistics_a_watermark_skips_them_by(quiet_run) -> None:
    """An incremental run filters its inputs by constant watermarks (landed_at, built_at). Parquet
    skips a file by its min/max statistics, which it keeps for TIMESTAMP_MICROS but not for Spark's
    default INT96: without them every run reads every row of the history."""
    spark = spark_session()
    for table in TABLES:
        for file in spark.table(table).inputFiles():
            metadata = pq.ParquetFile(file.removeprefix("file:")).metadata
            for group in range(metadata.num_row_groups):
                for index in range(metadata.num_columns):
                    column = metadata.row_group(group).column(index)
                    if column.path_in_schema in ("landed_at", "built_at") and column.num_values:
                        assert column.statistics is not None and column.statistics.has_min_max, (table, file)
    staged = [pq.read_metadata(file.removeprefix("file:")) for file in spark.table(TABLES[0]).inputFiles()]
    newest = [meta.row_group(0).column(meta.schema.names.index("landed_at")).statistics.max for meta in staged]
    # Each load's staged rows are files of their own: the first load's lie wholly before the second's.
    assert sorted(set(newest)) == [LOADS[0][0], LOADS[1][0]]


def test_a_filter_naming_every_held_feed_reaches_the_parquet_scan() -> None:
    """A model that cannot know beforehand which feeds have new rows counts them with `feed not in
    (<every feed it holds>)`; Spark hands an `in` list to the Parquet scan only up to
    spark.sql.parquet.pushdown.inFilterThreshold values (10 unless the session raises it), and a
    deployment holds more feeds than that. Without it, every count read every stored row."""
    spark = spark_session()
    spark.sql(f"create schema if not exists {SCHEMA}_pushdown")
    spark.sql(f"drop table if exists {SCHEMA}_pushdown.feeds")
    spark.sql(f"create table {SCHEMA}_pushdown.feeds (feed string, landed_at timestamp) using parquet")
    spark.sql(f"insert into {SCHEMA}_pushdown.feeds values ('feed_1', timestamp'2024-07-01 01:00:00')")
    held = ", ".join(f"'feed_{number}'" for number in range(1, 201))
    assert rows_scanned(f"select count(*) from {SCHEMA}_pushdown.feeds where feed is null or feed not in ({held})") == 0
    assert rows_scanned(f"select count(*) from {SCHEMA}_pushdown.feeds where feed not in ('feed_2')") == 1


def rows_scanned(query: str) -> int:
    """The rows the Parquet scans of `query` handed on: those of the row groups their filters did
    not rule out by statistics."""
    spark = spark_session()
    adaptive = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # a plain plan tree, its scans its leaves
    try:
        frame = spark.sql(query)
        frame.collect()
        leaves = frame._jdf.queryExecution().executedPlan().collectLeaves()
        scans = [leaves.apply(index) for index in range(leaves.size())]
        return sum(scan.metrics().apply("numOutputRows").value() for scan in scans if "parquet" in scan.nodeName())
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)


def test_a_killed_runs_pending_write_is_applied_before_the_next_run_reads_its_watermarks(quiet_run) -> None:
    """The killed run's state is made as it would have left it: batch 1 built, batch 2 landed, the
    staging model's pending write made whole (its compiled SQL) and not yet moved in."""
    expected = snapshot()
    spark = spark_session()
    land(0)
    run("--full-refresh")
    land(1)
    compiled = run_dbt("compile", "--select", STAGING, dbt_vars=DBT_VARS, schema=SCHEMA)
    staging_sql = compiled.result.results[0].node.compiled_code
    staging = Named(f"{SCHEMA}_staging", STAGING)
    pending_writes.write_pending(spark, spark.sql(staging_sql), staging, (), "parquet", "fail")
    files, root = pending_writes.table_folder(spark, staging)
    assert pending_writes.written_rows(spark, files, pending_writes.pending_folder(files, root), 0, "parquet") > 0

    run()

    assert not files.exists(pending_writes.pending_folder(files, root))
    assert snapshot() == expected
