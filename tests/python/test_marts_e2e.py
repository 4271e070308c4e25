"""End to end: a generated workload -> landing -> staging -> intermediate and marts, judged by the truth.

The generator computes every source table's version history from the workload alone
(cdc_unify.generator.truth); here the same workload goes through the dialects' messages,
faults included (redeliveries, tombstones, malformed messages, late messages in a second
batch), landed in three loads, each built incrementally after the first (harness.workload_build),
and the marts must give the source state at every instant.

Dialects: cloudcanal_json sends a commit time with millisecond precision on every row, so its
history must equal the truth at every instant; oms_default_ext_json sends second-precision
commit times and none on full-load rows, so its current rows must equal the truth's final state.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from cdc_unify.contract import DIALECTS
from cdc_unify.generator.truth import Truth, load_truth
from harness import (
    BUILD_KEYS,
    INTERMEDIATE_SCHEMA,
    MART_SCHEMA,
    THIRD_LOAD_DIALECTS,
    comparable,
    live_rows,
    run_dbt,
    spark_session,
    workload_feed,
)
from semantic_rows import NO_TRUNCATE, unmatched

pytestmark = [pytest.mark.spark, pytest.mark.slow]

EXACT_HISTORY = "cloudcanal_json"
PRECISION_STEP = {
    "s": dt.timedelta(seconds=1),
    "ms": dt.timedelta(milliseconds=1),
    "us": dt.timedelta(microseconds=1),
    "ns": dt.timedelta(microseconds=1),
}
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


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


# Debezium's ZonedTimestamp carries the UTC offset, not the zone id (spec 003): its rows hold the
# instant alone where the source, and so the truth, has `...Z[zone]`.
ZONE_ID_SUFFIX = re.compile(r"^(\d{4}-\d{2}-\d{2}T\S*Z)\[[^\]]+\]$")


def as_carried_by(dialect: str, row: dict[str, str | None]) -> dict[str, str | None]:
    """A truth row as much of it as `dialect`'s messages can carry."""
    if dialect != "debezium_json":
        return row
    return {k: ZONE_ID_SUFFIX.sub(r"\1", v) if v else v for k, v in row.items()}


def live_at(history: list[dict[str, Any]], instant: dt.datetime) -> Counter[str]:
    return Counter(
        row_text(v["row_values"])
        for v in history
        if v["valid_from"] <= instant and (v["valid_to"] is None or v["valid_to"] > instant) and not v["is_deleted"]
    )


def history_of(workload: dict[str, Any], dialect: str, table: str) -> list[dict[str, Any]]:
    database, name = table.split(".")
    rows = [
        {**v, "valid_from": as_utc(v["valid_from"]), "valid_to": as_utc(v["valid_to"])}
        for v in workload["final"]["cdc_row_history"]
        if v["feed"] == workload_feed(dialect) and v["database_name"] == database and v["table_name"] == name
    ]
    assert rows, f"no history for {table} of {dialect}"
    return rows


def null_values(out_dir: Path, dialect: str) -> int:
    """Messages with a null value (tombstones) in the generated batches of `dialect`."""
    batches = (out_dir / dialect).glob("batch-*.parquet")
    return sum(pq.read_table(batch, columns=["value"]).column("value").null_count for batch in batches)


def truth_of(workload: dict[str, Any]) -> Truth:
    return load_truth(workload["out_dir"] / "truth")


def test_history_equals_the_source_at_every_instant(workload) -> None:
    """At every instant where a source table changed, the as-of query gives the source table.
    Instants are compared at the dialect's timestamp precision (milliseconds): the state at the
    end of each millisecond in which the truth changed."""
    step = PRECISION_STEP["ms"]
    for name, table in sorted(truth_of(workload).tables.items()):
        history = history_of(workload, EXACT_HISTORY, name)
        changes = {v.valid_from for v in table.versions} | {v.valid_to for v in table.versions if v.valid_to}
        for cut in sorted({floor_to(instant, step) for instant in changes}):
            expected = Counter(row_text(row) for row in table.state_at(cut + step - dt.timedelta(microseconds=1)))
            assert live_at(history, cut) == expected, f"{name} at {cut.isoformat()}"


def test_history_versions_match_the_truth(workload) -> None:
    """Same number of live versions per table: no spurious version (no-op updates, redeliveries)."""
    for name, table in sorted(truth_of(workload).tables.items()):
        live_versions = [v for v in history_of(workload, EXACT_HISTORY, name) if not v["is_deleted"]]
        assert len(live_versions) == len(table.versions), name


def truncated_tables(out_dir: Path) -> set[str]:
    """The workload's truncated tables, as canal_json (which sends TRUNCATE) expects them."""
    with (out_dir / "canal_json" / "expected-events.jsonl").open(encoding="utf-8") as events:
        return {f"{e['database_name']}.{e['table_name']}" for e in map(json.loads, events) if e["op"] == "TRUNCATE"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_current_rows_equal_the_final_source_state(workload, dialect) -> None:
    """Every table's current rows hold the truth's final rows, value by value, each read by its
    logical type where the dialect sends values untyped (tests/python/semantic_rows.py)."""
    truth = truth_of(workload)
    skipped = truncated_tables(workload["out_dir"]) if dialect in NO_TRUNCATE else set()
    for name, table in sorted(truth.tables.items()):
        if name in skipped:
            continue  # the format cannot say TRUNCATE, so the rows the source truncated stay
        database, table_name = name.split(".")
        current = [
            r["row_values"]
            for r in workload["final"]["cdc_current_rows"]
            if r["feed"] == workload_feed(dialect) and r["database_name"] == database and r["table_name"] == table_name
        ]
        expected = [as_carried_by(dialect, row) for row in table.final_state()]
        types = {c.name: c.logical_type for version in table.schema_versions for c in version.columns}
        extra, missing = unmatched(types, current, expected, dialect)
        assert (extra, missing) == ([], []), name


@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_message_vanishes(workload, dialect) -> None:
    totals = workload["manifest"]["per_dialect"][dialect]["totals"]
    health = {r["feed"]: r for r in workload["final"]["cdc_feed_health"]}
    row = health[workload_feed(dialect)]
    assert row["landed_messages"] == totals["messages"]
    assert row["unreconciled_messages"] == 0
    assert row["quarantined_messages"] == totals["malformed"]
    # Counted from the landed files, not the manifest's injected faults: Debezium also follows each
    # DELETE with a tombstone of its own (tombstones.on.delete, spec 003).
    assert row["tombstone_messages"] == null_values(workload["out_dir"], dialect)
    assert row["redelivered_events"] > 0


# cdc_feed_health reads a percentile from a histogram of 1%-wide lag buckets (bucket k holds lags
# of [1.01^(k-1), 1.01^k) ms, bucket 0 those under 1 ms) at its bucket's geometric middle: within a
# factor 1.01^0.5 of the event's lag, or 1 ms of it under 1 ms (docs/analysts.md).
LAG_RELATIVE_TOLERANCE = 1.01**0.5 - 1
LAG_ABSOLUTE_TOLERANCE = 0.001


def nearest_rank(values: list[float], fraction: float) -> float:
    """The value of rank ceil(fraction * n) (at least 1) of the sorted values."""
    ordered = sorted(values)
    return ordered[max(math.ceil(fraction * len(ordered)), 1) - 1]


def test_feed_lag_percentiles_are_those_of_the_events(workload) -> None:
    """Lag (landed_at - event_ts of an event's first landing) over every event but an unpaired
    UPDATE_BEFORE half (a paired one lives on in its update, which carries the after half's times)."""
    lags: dict[str, list[float]] = {}
    for event in workload["final"]["cdc_change_events"]:
        if event["event_ts"] is not None and event["op"] != "UPDATE_BEFORE":
            micros = (event["landed_at"] - event["event_ts"]) // dt.timedelta(microseconds=1)
            lags.setdefault(event["feed"], []).append(micros / 1_000_000)
    health = {r["feed"]: r for r in workload["final"]["cdc_feed_health"]}
    assert set(lags) <= set(health) and lags
    for feed, values in lags.items():
        row = health[feed]
        assert row["lag_events"] == len(values), feed
        assert float(row["lag_seconds_min"]) == pytest.approx(min(values)), feed
        assert float(row["lag_seconds_max"]) == pytest.approx(max(values)), feed
        assert row["lag_seconds_avg"] == pytest.approx(sum(values) / len(values)), feed
        for column, fraction in [("lag_seconds_p50", 0.5), ("lag_seconds_p95", 0.95)]:
            exact = nearest_rank(values, fraction)
            tolerance = max(abs(exact) * LAG_RELATIVE_TOLERANCE, LAG_ABSOLUTE_TOLERANCE) + 1e-9
            assert abs(row[column] - exact) <= tolerance, (feed, column, row[column], exact)


def test_redeliveries_are_counted_once(workload) -> None:
    events = workload["final"]["cdc_change_events"]
    assert len({e["event_id"] for e in events}) == len(events)
    assert any(e["delivery_count"] > 1 for e in events)


def test_late_batch_changes_history(workload) -> None:
    """The second run's late messages reach the marts (the test below would pass on a no-op run)."""
    before, after = workload["after_load_1"]["cdc_row_history"], workload["final"]["cdc_row_history"]
    assert comparable(before) != comparable(after)


def test_rerun_on_unchanged_input_changes_nothing(workload) -> None:
    """Not even a row's built_at: a run with nothing new rewrites nothing."""
    for name, rows in workload["final"].items():
        assert comparable(workload["rerun"][name], without=()) == comparable(rows, without=()), name


def test_incremental_run_stages_only_new_loads(workload) -> None:
    """Every staging model, SQL or Python, appends each load and rewrites no staged file (a rebuilt
    table would pass the equality test below too, at full cost); a dialect the third load does not
    reach keeps its files."""
    after_1, after_2, final = workload["staged_files"]
    assert sorted(after_1) == sorted(after_2) == sorted(final) and len(after_1) == len(DIALECTS)
    for name, files in after_1.items():
        assert files < after_2[name], name
        dialect = name.removeprefix("stg_").removesuffix("__changes")
        assert (after_2[name] < final[name]) if dialect in THIRD_LOAD_DIALECTS else after_2[name] == final[name], name


def test_incremental_runs_append_events_and_rewrite_none_of_the_final_ones(workload) -> None:
    """int_change_events' `final` partition (every event that is no split half) keeps every file
    of the runs before and gains the new events' files; the equality with a full refresh below
    would pass on a rewrite too, at the cost of the whole history."""
    after_1, after_2, final = workload["final_event_files"]
    assert after_1 and after_1 < after_2 < final


def test_each_pair_partition_of_the_events_is_one_file_after_every_run(workload) -> None:
    """int_change_events' pair partitions (events of split halves), rewritten by the runs whose
    halves touch them, hold one file each after every run: one per task that wrote rows there
    (the rebuilt pairs and the kept events come from different tasks) would be listed and opened
    by every later scan of the table."""
    for load, files in enumerate(workload["pair_slice_files"], start=1):
        assert files and set(files.values()) == {1}, (load, files)


def test_truncates_live_in_their_own_partition_after_every_run(workload) -> None:
    """int_change_events keeps every TRUNCATE, and nothing else, in partition `event_slice=truncate`,
    from which int_row_changes reads a table's truncates (its equality with the full refresh below;
    a truncate landing in an incremental run: test_truncate_runs.py)."""
    for name in ("after_load_1", "after_load_2", "final", "full_refresh"):
        events = workload[name]["int_change_events"]
        assert all((e["op"] == "TRUNCATE") == (e["event_slice"] == "truncate") for e in events), name
        assert any(e["event_slice"] == "truncate" for e in events), name


def test_incremental_run_equals_full_refresh(workload) -> None:
    # built_at says which run wrote a row (docs/testing.md): the full refresh wrote every row later.
    # A rerun on unchanged input rewrites none, so the test above compares it too.
    # int_row_changes appends builds: its live rows are compared (the full refresh wrote one build).
    for name, rows in workload["final"].items():
        assert comparable(live_rows(name, workload["full_refresh"][name])) == comparable(live_rows(name, rows)), name


@pytest.mark.parametrize("name", sorted(BUILD_KEYS))
def test_incremental_runs_append_builds_supersede_them_and_compact_buckets(workload, name) -> None:
    """The appending models after the incremental runs: appended builds (build_tier delta),
    superseded builds (more rows than live ones) and a bucket compacted by an incremental run (a
    base row of a later run than the full build), so that the comparisons here cover every path."""
    full_build = {r["built_at"] for r in workload["after_load_1"][name]}
    snapshots = [workload[load][name] for load in ("after_load_2", "final")]
    rows = [r for snapshot in snapshots for r in snapshot]
    assert any(r["build_tier"] == "delta" for r in rows)
    assert any(len(live_rows(name, snapshot)) < len(snapshot) for snapshot in snapshots)
    assert any(r["build_tier"] == "base" and r["built_at"] not in full_build for r in rows)


def test_history_shows_the_live_versions_after_every_run(workload) -> None:
    """cdc_row_history, a view, holds exactly the live versions of int_row_versions (each identity's
    newest build, computed here on its own) after every run, also after the second, where some
    identities have a compacted build and a newer appended one, so a view showing both would fail."""
    after_2 = workload["after_load_2"]["int_row_versions"]
    tiers: dict[tuple[str, str], set[str]] = {}
    for r in after_2:
        tiers.setdefault((r["table_key"], r["unit_identity"]), set()).add(r["build_tier"])
    assert any(found == {"base", "delta"} for found in tiers.values())
    hidden = ("table_key", "unit_identity")
    for load in ("after_load_1", "after_load_2", "final"):
        live = [
            {k: v for k, v in r.items() if k not in hidden}
            for r in live_rows("int_row_versions", workload[load]["int_row_versions"])
        ]
        assert comparable(workload[load]["cdc_row_history"], without=()) == comparable(live, without=()), load


def test_current_rows_are_the_live_current_versions_after_every_run(workload) -> None:
    """cdc_current_rows, the view of int_current_rows' live rows, holds exactly the current, not
    deleted live versions of int_row_versions (computed here on their own) after every run: the
    incremental runs append the current rows of the identities they rebuild, vacancy rows for the
    rows they delete, and compact buckets, and none of that may show a superseded or deleted row."""
    renamed = {"valid_from": "last_changed_at", "op": "last_op", "event_id": "last_event_id"}
    kept = (
        "feed", "dialect", "tenant_name", "database_name", "schema_name", "table_name", "primary_key_columns",
        "primary_key", "row_identity", "row_values", "row_values_json", "version_id",
    )  # fmt: skip
    for load in ("after_load_1", "after_load_2", "final"):
        versions = live_rows("int_row_versions", workload[load]["int_row_versions"])
        current = [
            {**{c: r[c] for c in kept}, **{new: r[old] for old, new in renamed.items()}}
            for r in versions
            if r["is_current"] and not r["is_deleted"]
        ]
        assert current, load
        assert comparable(workload[load]["cdc_current_rows"]) == comparable(current), load


def test_each_run_stamps_what_it_wrote(workload) -> None:
    """Incremental runs leave each staged row the built_at of the run that staged it, so the staging
    tables hold one per load that reached them; a full refresh writes every row of every table at
    once (and its data tests check every row, docs/testing.md)."""
    for name, rows in workload["final"].items():
        if name.startswith("stg_"):
            dialect = name.removeprefix("stg_").removesuffix("__changes")
            assert len({row["built_at"] for row in rows}) == (3 if dialect in THIRD_LOAD_DIALECTS else 2), name
    for name, rows in workload["full_refresh"].items():
        assert len({row.get("built_at") for row in rows}) <= 1, name


# The key-level models: rows of a key (or of an event) are rewritten together, in the key's bucket.
KEY_LEVEL = {
    "int_change_events": ("source_name", "event_id"),
    "int_row_changes": ("table_key", "unit_identity"),
    "int_row_versions": ("table_key", "unit_identity"),
    "int_current_rows": ("table_key", "unit_identity"),
    "cdc_row_history": ("feed", "database_name", "schema_name", "table_name", "primary_key"),
}


def written_by_last_run(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows of the newest built_at, the others)."""
    newest = max(row["built_at"] for row in rows)
    return [r for r in rows if r["built_at"] == newest], [r for r in rows if r["built_at"] != newest]


def identity(row: dict[str, Any], columns: tuple[str, ...]) -> str:
    return json.dumps([row[c] for c in columns], default=str)


def touched_identities(name: str, rewritten: list[dict[str, Any]]) -> set[str]:
    """The identities of the rewritten rows; for int_change_events also the UPDATE_BEFORE halves
    an update absorbed (stored unpaired before its AFTER half came: gone from the table now)."""
    columns = KEY_LEVEL[name]
    touched = {identity(r, columns) for r in rewritten}
    if name == "int_change_events":
        absorbed = [{**r, "event_id": r["split_before_event_id"]} for r in rewritten if r["split_before_event_id"]]
        touched |= {identity(r, columns) for r in absorbed}
    return touched


@pytest.mark.parametrize("name", sorted(KEY_LEVEL))
def test_third_load_rewrites_only_the_keys_it_touches(workload, name) -> None:
    """The third load (a few records of two feeds: a late event older than its key's stored
    versions, redeliveries of first- and second-load messages, the AFTER half of an update whose
    BEFORE half the second load landed) rewrites the rows of the few keys it touches; every other
    row of every feed is the second run's, built_at included. int_row_changes and int_row_versions
    append a build of each touched identity: every row of a bucket it appended to stays as it was; a bucket it
    compacted holds the live rows of its other identities as they were (built_at included)."""
    before, after = workload["after_load_2"][name], workload["final"][name]
    rewritten, kept = written_by_last_run(after)
    touched = touched_identities(name, rewritten)
    # A vacancy row (an identity left without rows) carries its feed in its table_key alone.
    feeds = {r.get("feed", r.get("source_name")) or json.loads(r["table_key"])[0] for r in rewritten}
    assert 0 < len(touched) <= 12 and feeds <= {workload_feed(d) for d in THIRD_LOAD_DIALECTS}, (touched, feeds)
    if name not in BUILD_KEYS:
        untouched = [r for r in before if identity(r, KEY_LEVEL[name]) not in touched]
        assert comparable(kept, without=()) == comparable(untouched, without=())
        return
    # Compacted: the run wrote a base there, or the bucket's stored deltas are gone (a bucket is
    # compacted when its deltas have grown, whether or not the run touches it).
    deltas_before = {r["key_bucket"] for r in before if r["build_tier"] == "delta"}
    deltas_kept = {r["key_bucket"] for r in kept if r["build_tier"] == "delta"}
    compacted = {r["key_bucket"] for r in rewritten if r["build_tier"] == "base"} | (deltas_before - deltas_kept)
    appended_to = [r for r in kept if r["key_bucket"] not in compacted]
    assert comparable(appended_to, without=()) == comparable(
        [r for r in before if r["key_bucket"] not in compacted], without=()
    )
    live_before = [r for r in live_rows(name, before) if r["key_bucket"] in compacted]
    assert comparable([r for r in kept if r["key_bucket"] in compacted], without=("build_tier",)) == comparable(
        [r for r in live_before if identity(r, KEY_LEVEL[name]) not in touched], without=()
    )


def test_third_load_repairs_the_history_of_a_key_with_a_late_event(workload) -> None:
    """Its late event is older than the newest stored version of its key: the key's history gains
    a version before its last one (appending after the last version would not pass the truth
    comparisons, which run on the final state too)."""
    before, after = workload["after_load_2"]["cdc_row_history"], workload["final"]["cdc_row_history"]
    rewritten, _ = written_by_last_run(after)
    columns = KEY_LEVEL["cdc_row_history"]
    stored = {(identity(r, columns), r["valid_from"]) for r in before}
    newest_stored: dict[str, dt.datetime] = {}
    for r in before:
        key = identity(r, columns)
        newest_stored[key] = max(newest_stored.get(key, r["valid_from"]), r["valid_from"])
    repaired = [
        r
        for r in rewritten
        if (identity(r, columns), r["valid_from"]) not in stored
        and r["valid_from"] < newest_stored.get(identity(r, columns), r["valid_from"])
    ]
    assert repaired, "no version of the third load lies before its key's newest stored version"


def plan_nodes(plan: Any) -> Iterator[Any]:
    """Every node of a py4j Spark plan (logical or physical), the plan itself first."""
    yield plan
    children = plan.children()
    for i in range(children.size()):
        yield from plan_nodes(children.apply(i))


def shadowed_group_keys(plan: Any) -> list[str]:
    """The grouping columns of every aggregate in an analyzed plan (a py4j LogicalPlan) whose
    output has a column of the same name computed otherwise: `group by x` beside `f(x) as x`
    groups by the input's x, since Spark resolves a group-by name against the input first."""
    found = []
    for node in plan_nodes(plan):
        if node.nodeName() != "Aggregate":
            continue
        keys = node.groupingExpressions()
        outputs = node.aggregateExpressions()
        grouped = {}
        for i in range(keys.size()):
            key = keys.apply(i)
            if key.getClass().getSimpleName() == "AttributeReference":
                grouped[key.name()] = key.exprId().id()
        for i in range(outputs.size()):
            output = outputs.apply(i)
            name = output.name()
            if name in grouped and output.exprId().id() != grouped[name]:
                child = output.child() if output.getClass().getSimpleName() == "Alias" else output
                if child.getClass().getSimpleName() != "AttributeReference" or child.exprId().id() != grouped[name]:
                    found.append(name)
    return found


def test_no_aggregate_groups_by_a_column_its_output_replaces(workload) -> None:
    """cdc_feed_health once wrote `case when is_split_half then source_position end as
    source_position ... group by source_position`, and so grouped every new event by its own
    position: 706,648 groups where 25,243 were meant, 4 s of a mixed:1M full build
    (docs/benchmarks.md)."""
    spark = spark_session()
    # A model with nothing new sends no query, and its compiled code is empty.
    compiled = {name: sql for name, sql in workload["incremental_sql"].items() if sql.strip()}
    assert "cdc_feed_health" in compiled and len(compiled) > 20, sorted(compiled)
    shadowed = {
        name: keys
        for name, sql in compiled.items()
        if (keys := shadowed_group_keys(spark.sql(sql)._jdf.queryExecution().analyzed()))
    }
    assert shadowed == {}


def table_scans(plan: Any, table: str) -> list[str]:
    """The partition filters of each scan of `table` in a physical plan (a py4j SparkPlan)."""
    return [
        node.partitionFilters().toString()
        for node in plan_nodes(plan)
        if node.getClass().getSimpleName() == "FileSourceScanExec" and node.tableIdentifier().get().table() == table
    ]


def test_feed_health_scans_the_new_staged_rows_twice(workload) -> None:
    """cdc_feed_health reads a run's new staged rows once per landed record and once for their
    events; the rest reads the partition of split halves. Its figures once came from four scans
    (the lag histogram, the deliveries and the event counts each planned their own): on the mixed:1M
    bench warehouse, warm, 19.5 executor seconds of a full build's scans where two take 11.8
    (docs/benchmarks.md)."""
    plan = spark_session().sql(workload["incremental_sql"]["cdc_feed_health"])._jdf.queryExecution().sparkPlan()
    scans = table_scans(plan, "int_staged_events")
    whole = [filters for filters in scans if "is_split_half" not in filters]
    assert len(whole) == 2, scans
    assert len(scans) > len(whole), scans


def test_data_tests_pass_on_the_built_marts(workload) -> None:
    selection = ("path:models/intermediate", "path:models/marts")
    run_dbt("test", "--select", *selection, "--exclude", "test_type:unit", schema=MART_SCHEMA)


def test_unit_tests_of_the_intermediate_and_mart_models_pass(workload) -> None:
    """dbt's unit tests read their models' columns from the built relations: after the workload."""
    selection = ("path:models/intermediate,test_type:unit", "path:models/marts,test_type:unit")
    result = run_dbt("test", "--select", *selection, schema=MART_SCHEMA)
    models = Path(__file__).resolve().parents[2] / "models"
    defined = [
        test["name"]
        for path in [*models.glob("intermediate/**/*.yml"), *models.glob("marts/**/*.yml")]
        for test in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("unit_tests", [])
    ]
    ran = [r.node.name for r in result.result.results if r.node.resource_type == "unit_test"]
    assert sorted(ran) == sorted(defined)


def test_every_column_is_described(workload) -> None:
    """The YAML describes exactly the columns each intermediate and mart model really has."""
    root = Path(__file__).resolve().parents[2] / "models"
    described: dict[str, set[str]] = {}
    for path in [*root.glob("intermediate/**/*.yml"), *root.glob("marts/**/*.yml")]:
        for model in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models", []):
            described[model["name"]] = {c["name"] for c in model.get("columns", []) if c.get("description")}
    spark = spark_session()
    for schema in (MART_SCHEMA, INTERMEDIATE_SCHEMA):
        for table in spark.sql(f"show tables in {schema}").collect():
            if table["isTemporary"]:
                continue
            name = table["tableName"]
            assert set(spark.table(f"{schema}.{name}").columns) == described[name], name
