"""The summary models (schema registry and changes, dead letters and their counts, feed health),
maintained from per-load increments, equal a `--full-refresh` build of the same landed data.

Four loads of a generated workload: batch 1, batch 2 (late messages, redeliveries), batch 1
again (every message of it redelivered, its malformed ones included), then a few messages of
batch 2 again for one feed only (the other feed's rows must be kept as the third run wrote them)
and, beside them, a feed no model holds yet, stamped before every earlier load.
dataworks_json sends updates as split halves, so pairing across loads is exercised; debezium_json
is staged by a Python model.
The tables keep their watermarks as large ones do (newest_values), so the same builds prove the
kept values through dbt: stored by the full build, carried by appending writes.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from cdc_unify import landing
from dbt.adapters.sparksession import newest_values
from dbt.adapters.sparksession.impl import PENDING_WRITE_COMMENT
from harness import _land, comparable, harness_root, run_dbt_statements, spark_session, table_rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "cdc_summary"
# debezium_json: a Python staging model, whose watermarks are kept as the SQL models' are.
DIALECTS = ["dataworks_json", "canal_json", "debezium_json"]
SUMMARIES = {
    "int_schema_registry": f"{SCHEMA}_intermediate",
    "int_quarantine": f"{SCHEMA}_intermediate",
    "int_redeliveries": f"{SCHEMA}_intermediate",
    "cdc_schema_changes": SCHEMA,
    "cdc_dead_letters": SCHEMA,
    "cdc_dead_letter_counts": SCHEMA,
    "cdc_feed_health": SCHEMA,
}
DBT_VARS = {"cdc_dialects": DIALECTS, "cdc_row_buckets": 4}
# (batch, landed_at, dialects landed, messages of the batch landed: all if None)
LOADS = [
    (1, dt.datetime(2024, 7, 1, 1, tzinfo=dt.UTC), DIALECTS, None),
    (2, dt.datetime(2024, 7, 1, 2, tzinfo=dt.UTC), DIALECTS, None),
    (1, dt.datetime(2024, 7, 1, 3, tzinfo=dt.UTC), DIALECTS, None),
    (2, dt.datetime(2024, 7, 1, 4, tzinfo=dt.UTC), ["canal_json"], 5),
]
UNTOUCHED_FEED = "sum_dataworks_json"  # not in the last load
# A feed first landing with the last load, stamped before every load of the others: landed_at
# orders one feed's loads only, so its rows are new however old their stamp (batch, messages).
NEW_FEED = ("canal_json", "sum_canal_json_new", dt.datetime(2024, 7, 1, 0, 30, tzinfo=dt.UTC), 1, 7)


def build(full_refresh: bool = False) -> dict[str, list[str]]:
    """`dbt run` of the summaries and what they read; the SQL statements it sent, by model name."""
    flags = ["--full-refresh"] if full_refresh else []
    selection = [f"+{name}" for name in SUMMARIES]
    return run_dbt_statements("run", *flags, "--select", *selection, schema=SCHEMA, dbt_vars=DBT_VARS)


def summaries() -> dict[str, Counter[str]]:
    """Every summary table's rows, every column but built_at (the one column a run's time decides)."""
    return {name: comparable(table_rows(f"{schema}.{name}")) for name, schema in SUMMARIES.items()}


def built_at_per_feed() -> dict[str, dict[str, set]]:
    """The built_at values of every summary table's rows, per feed."""
    feeds: dict[str, dict[str, set]] = {}
    for name, schema in SUMMARIES.items():
        for row in table_rows(f"{schema}.{name}"):
            feeds.setdefault(name, {}).setdefault(row.get("feed", row.get("source_name")), set()).add(row["built_at"])
    return feeds


def land_new_feed(out_dir) -> None:
    dialect, feed, landed_at, batch, messages = NEW_FEED
    records, _ = landing.parquet_records((out_dir / dialect / f"batch-{batch}.parquet").read_bytes())
    _land(dialect, records.slice(0, messages), feed, landed_at, replace=False)


# Models that keep some rows of their input, by the table they read them from (int_change_events:
# decoded first deliveries; the third and fourth loads bring redeliveries alone).
KEEPING_SOME = {
    "int_quarantine": f"{SCHEMA}_intermediate.int_staged_events",
    "int_redeliveries": f"{SCHEMA}_intermediate.int_staged_events",
    "cdc_schema_changes": f"{SCHEMA}_intermediate.int_change_events",
    "int_change_events": f"{SCHEMA}_intermediate.int_staged_events",
}
SCHEMAS = {**SUMMARIES, "int_change_events": f"{SCHEMA}_intermediate"}


def stored_read_until(name: str) -> tuple[dict[str, int], dict[str, int]]:
    """How far model `name` stored that it read its input (newest_values.read_until), and the
    newest landing per feed its input holds, in microseconds."""
    source = KEEPING_SOME[name]
    spark = spark_session()
    stored = newest_values.read_until(spark, f"{SCHEMAS[name]}.{name}", source)
    rows = spark.sql(
        f"select source_name, unix_micros(max(landed_at)) from {source} where source_name is not null group by 1"
    ).collect()
    return stored, {row[0]: row[1] for row in rows}


def killed_before_storing_what_it_read(earlier: dict[str, dict[str, int]]) -> None:
    """The state a run killed after its write and before storing how far it read leaves: the
    models keeping some rows hold that run's rows and the read_until of the run before (`earlier`).
    The next run reads again from there; the final comparison with a full refresh shows it kept
    no row twice."""
    spark = spark_session()
    for name, values in earlier.items():
        key = newest_values.read_until_key(KEEPING_SOME[name])
        assert values, f"{name}: nothing stored after the second run"
        newest_values.store(spark, f"{SCHEMAS[name]}.{name}", {key: json.dumps(sorted(values.items()))})


def recording_queries(read: Callable[..., Any], queried: list[list[str]], table_at: int) -> Callable[..., Any]:
    """newest_values.compute (a query; the table its argument 1) or newest_values.from_data (a
    table's data read, from its footers or by that query; argument 2), noting each table it reads
    in the current run's list."""

    def recording(*args: Any) -> dict[str | None, int]:
        queried[-1].append(args[table_at].replace("`", ""))
        return read(*args)

    return recording


def recording_carries(patch: pytest.MonkeyPatch, carried: list[list[str]]) -> None:
    """newest_values.carry and restore patched so that each table whose kept values a write carries
    (restore called from within carry, on the thread that runs it; not a compaction's refile, which
    restores them too) is noted in the current run's list."""
    carrying = threading.local()
    carry, restore = newest_values.carry, newest_values.restore

    def recording_carry(*args: Any) -> None:
        carrying.now = True
        try:
            carry(*args)
        finally:
            carrying.now = False

    def recording_restore(*args: Any) -> None:
        if getattr(carrying, "now", False):
            carried[-1].append(args[1].replace("`", ""))
        restore(*args)

    patch.setattr(newest_values, "carry", recording_carry)
    patch.setattr(newest_values, "restore", recording_restore)


@pytest.fixture(scope="module")
def builds() -> dict[str, Any]:
    from cdc_unify.generator.run import generate

    out_dir = harness_root() / "summary-workload"
    generate(events=200, seed=23, out_dir=out_dir, dialects=DIALECTS)
    built_at, queried, carried = [], [], []
    with pytest.MonkeyPatch.context() as patch:
        # These tables are tiny: they keep their watermarks as large ones do (newest_values), so that
        # the incremental runs below read them as stored and their output proves the values right.
        patch.setattr(newest_values, "KEEP_FROM_BYTES", 0)
        patch.setattr(newest_values, "compute", recording_queries(newest_values.compute, queried, 1))
        patch.setattr(newest_values, "from_data", recording_queries(newest_values.from_data, queried, 2))
        # The tables whose kept values a write carried: from the pending files' footers or by a query
        # of them.
        recording_carries(patch, carried)
        for number, (batch, landed_at, dialects, messages) in enumerate(LOADS):
            for dialect in dialects:
                records, _ = landing.parquet_records((out_dir / dialect / f"batch-{batch}.parquet").read_bytes())
                records = records if messages is None else records.slice(0, messages)
                _land(dialect, records, f"sum_{dialect}", landed_at, replace=number == 0)
            if number == len(LOADS) - 1:
                land_new_feed(out_dir)
            queried.append([])
            carried.append([])
            statements = build(full_refresh=number == 0)
            built_at.append(built_at_per_feed())
            if number == 1:
                read_before = {name: stored_read_until(name)[0] for name in KEEPING_SOME}
            if number == 2:
                killed_before_storing_what_it_read(read_before)
        queried.append([])
        carried.append([])
        quiet_run = build()
    read_until = {name: stored_read_until(name) for name in KEEPING_SOME}
    incremental = summaries()
    build(full_refresh=True)
    return {
        "incremental": incremental,
        "full_refresh": summaries(),
        "built_at": built_at,
        "last_run": statements,
        "quiet_run": quiet_run,
        "queried": queried,
        "carried": carried,
        "read_until": read_until,
    }


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_incremental_equals_full_refresh(builds, name) -> None:
    incremental, full_refresh = builds["incremental"][name], builds["full_refresh"][name]
    assert full_refresh, f"{name} is empty: nothing compared"
    assert sum(incremental.values()) == sum(full_refresh.values()), f"{name}: row counts differ"
    assert incremental - full_refresh == Counter(), f"{name}: rows only the incremental build has"
    assert full_refresh - incremental == Counter(), f"{name}: rows only the full refresh has"


# The maps an event's columns and types are read from: its types, its source types, its images.
MAPS = ("column_types", "column_source_types", "before", "after")
TABLE = ("source_name", "tenant_name", "database_name", "schema_name", "table_name")
DELIVERY_ORDER = ("landed_at", "landing_timestamp", "landing_topic", "landing_partition", "landing_offset", "row_index")


def registry_oracle(events: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """int_schema_registry's counts, computed here from the decoded row and DDL events: each event id
    once, at its first delivery (a redelivery at another offset carries another sequence, whose
    tie-break is the landing offset), each of its columns (named by its type maps or images) with
    the types its maps give."""
    seen: dict[tuple, dict[str, Any]] = {}
    first_deliveries: dict[str, dict[str, Any]] = {}
    for event in sorted(events, key=lambda event: tuple(event[name] for name in DELIVERY_ORDER)):
        first_deliveries.setdefault(event["event_id"], event)
    for event in first_deliveries.values():
        maps = [event[name] or {} for name in MAPS]
        table = tuple(event[name] for name in TABLE)
        order = (event["sequence"], event["event_id"])
        for column in set().union(*maps):
            key = (*table, column, maps[1].get(column), maps[0].get(column))
            row = seen.setdefault(key, {"event_count": 0, "first": order, "last": order, "ddl": False, "rows": False})
            row["event_count"] += 1
            row["first"], row["last"] = min(row["first"], order), max(row["last"], order)
            row["ddl" if event["event_kind"] == "DDL" else "rows"] = True
    return seen


def test_the_schema_registry_counts_each_event_once_per_column_and_type(builds) -> None:
    """The registry (after the last build, a full refresh; the incremental one equals it) against
    an oracle of its counts, first and last sightings. The model groups events whose maps arrive
    alike before it sorts their columns into a signature: the workload has events that arrive
    otherwise (partial images, other orders) and share a signature, so that merge is exercised."""
    events = [
        row
        for row in table_rows(f"{SCHEMA}_intermediate.int_staged_events")
        if row["message_status"] == "decoded" and row["event_kind"] in ("ROW", "DDL") and row["table_name"]
    ]
    expected = registry_oracle(events)
    registry = {
        tuple(row[name] for name in TABLE) + (row["column_name"], row["column_source_type"], row["column_type"]): {
            "event_count": row["event_count"],
            "first": (row["first_seen_sequence"], row["first_seen_event_id"]),
            "last": (row["last_seen_sequence"], row["last_seen_event_id"]),
            "ddl": row["seen_in_ddl"],
            "rows": row["seen_in_rows"],
        }
        for row in table_rows(f"{SCHEMA}_intermediate.int_schema_registry")
    }
    assert expected and registry == expected
    as_sent: dict[tuple, set[str]] = {}  # of each signature (table, columns, types), its maps as they came
    for event in events:
        types, source_types, before, after = (event[name] or {} for name in MAPS)
        columns = frozenset({*types, *source_types, *before, *after})
        signature = (
            event["source_name"],
            event["table_name"],
            columns,
            *map(frozenset, (types.items(), source_types.items())),
        )
        sent = json.dumps([list(types.items()), list(source_types.items()), list(before), list(after)])
        as_sent.setdefault(signature, set()).add(sent)
    assert any(len(shapes) > 1 for shapes in as_sent.values()), "no events of one signature arrived otherwise"


def test_later_loads_reach_the_summaries(builds) -> None:
    """The third load redelivers batch 1 whole: redeliveries and repeated dead letters are counted."""
    health = [json.loads(row) for row in builds["incremental"]["cdc_feed_health"]]
    redelivered = [row for row in health if row["feed"] != NEW_FEED[1]]
    assert redelivered and all(row["redelivered_events"] > 0 for row in redelivered)
    dead = [json.loads(row) for row in builds["incremental"]["cdc_dead_letters"]]
    assert any(row["is_redelivery"] for row in dead)


def test_incremental_runs_keep_what_they_do_not_touch(builds) -> None:
    """The runs were incremental: rows appended by earlier runs keep their built_at, and the feed
    the last load left alone keeps the rows the run before wrote for it."""
    third, last = builds["built_at"][2], builds["built_at"][3]
    for name in ("int_quarantine", "cdc_dead_letters"):  # dead letters landed in the first and third load
        assert len(set().union(*last[name].values())) > 1, f"{name}: every row rewritten by one run"
    assert UNTOUCHED_FEED in last["cdc_feed_health"] and UNTOUCHED_FEED in last["int_schema_registry"]
    for name in SUMMARIES:
        assert last[name].get(UNTOUCHED_FEED) == third[name].get(UNTOUCHED_FEED), name
    health = last["cdc_feed_health"]
    assert health["sum_canal_json"] != third["cdc_feed_health"]["sum_canal_json"], "the last load was not merged"
    for name in ("cdc_feed_health", "int_schema_registry"):  # every feed with row events has rows there
        assert NEW_FEED[1] in last[name] and NEW_FEED[1] not in third[name], f"{name}: the new feed is missing"


def test_new_rows_are_read_by_their_feeds_alone(builds) -> None:
    """The last run's reads name only the feeds that landed: the held one past its watermark, the
    new one whole, and nothing of the feed that did not land (a filter Parquet can skip row groups
    by; one admitting "any feed not held" cannot be)."""
    for name in ("int_staged_events", "int_schema_registry", "cdc_feed_health"):
        model = next(sql for sql in builds["last_run"][name] if sql.startswith(PENDING_WRITE_COMMENT))
        assert f"source_name = '{NEW_FEED[1]}'" in model or f"feed = '{NEW_FEED[1]}'" in model, name
        assert "landed_at > timestamp_micros(" in model, name
        assert f"= '{UNTOUCHED_FEED}' and landed_at" not in model and " not in (" not in model, name


def test_new_rows_are_counted_by_the_feeds_that_may_have_them(builds) -> None:
    """Before it reads, a model counts the new rows of int_staged_events. The count names only the
    feeds whose newest landing kept with that table is past the model's watermark (the two that
    landed last): never "any feed not held", which no row-group statistics can rule out, so a count
    that admitted it read every stored row even with nothing new, nor rows without a feed (staging
    stages a landing row without one under NO_FEED: no staged row lacks one)."""
    for name in ("int_schema_registry", "cdc_feed_health"):
        counts = [sql for sql in builds["last_run"][name] if "select source_name, count(*) from" in sql]
        assert counts, f"{name}: no count of new staged rows"
        for sql in counts:
            assert f"source_name = '{NEW_FEED[1]}'" in sql, name
            assert "source_name = 'sum_canal_json' and landed_at > timestamp_micros(" in sql, name
            assert "source_name is null" not in sql, name
            assert UNTOUCHED_FEED not in sql and " not in (" not in sql, name


def test_a_run_with_nothing_new_counts_nothing_its_input_keeps_the_newest_of(builds) -> None:
    """The models reading int_staged_events or int_change_events, which keep their newest landing
    per feed, send no count in a run with nothing new: no feed there is past their watermarks, and
    no row lacks a feed (staging stages a landing row without one under NO_FEED). Before, every such
    count also admitted rows without a feed, which no kept value rules out: a read of every data
    file's footer of the input on every run."""
    quiet = builds["quiet_run"]
    for name in ("int_change_events", "int_quarantine", "int_schema_registry", "cdc_schema_changes"):
        assert "select 0 as rows_written" in "\n".join(quiet[name]), f"{name} wrote in a quiet run"
        assert [sql for sql in quiet[name] if ", count(*) from" in sql] == [], name
    # Its new landings are counted from the landing tables' footers (adapter.rows_past_from_footers).
    assert "select 0 as rows_written" in "\n".join(quiet["cdc_feed_health"]), "cdc_feed_health wrote in a quiet run"
    assert [sql for sql in quiet["cdc_feed_health"] if ", count(*) from" in sql] == []


def test_new_landings_are_counted_from_footers(builds) -> None:
    """Each load is files of its own, one feed and one landed_at, so the landing tables' footers
    tell how many rows lie past a model's watermarks (adapter.rows_past_from_footers): the last run
    sends no count of landing rows, neither for canal_json's staging model, which stages the held
    feed past its watermark and the new feed whole, nor for cdc_feed_health; and it still stages
    both feeds' new loads, and nothing of the dialect that landed nothing."""
    last = builds["last_run"]
    for name in ("stg_canal_json__changes", "cdc_feed_health"):
        assert [sql for sql in last[name] if "count(*) from" in sql and "landing" in sql] == [], name
    staged = next(sql for sql in last["stg_canal_json__changes"] if sql.startswith(PENDING_WRITE_COMMENT))
    assert f"feed = '{NEW_FEED[1]}'" in staged and "feed = 'sum_canal_json' and landed_at > timestamp_micros(" in staged
    assert "select 0 as rows_written" in "\n".join(last[f"stg_{UNTOUCHED_FEED[4:]}__changes"])


def counts_of_rows_built_since(sent: list[str], parent: str) -> list[str]:
    return [sql for sql in sent if "count(*)" in sql and f".{parent} where built_at >" in sql]


def test_a_run_with_nothing_new_counts_nothing_an_input_keeps_the_newest_of(builds) -> None:
    """cdc_dead_letter_counts reads the rows cdc_dead_letters built since it last wrote. After a run
    that landed nothing, the newest built_at kept with cdc_dead_letters is not past its watermark:
    it writes nothing without counting (cdc_built_nothing_since), where the count opened every data
    file's footer of its input. cdc_dead_letters' input, int_quarantine, keeps no newest built_at
    (its own watermarks are landing times): counted from its files' footers, no query."""
    quiet = builds["quiet_run"]
    for name in ("cdc_dead_letters", "cdc_dead_letter_counts"):
        assert "select 0 as rows_written" in "\n".join(quiet[name]), f"{name} wrote in a run with nothing new"
        assert (
            counts_of_rows_built_since(quiet[name], "cdc_dead_letters" if "counts" in name else "int_quarantine") == []
        )


# Models whose incremental writes only add files, and those that replace partitions (cdc_feed_health,
# cdc_dead_letter_counts and int_schema_registry rewrite the feeds they touch): each carries its kept
# watermark through every write (newest_values.carry), so after the full build stored it, no run
# queries the model's table.
APPENDING = [f"{SCHEMA}_staging.stg_{dialect}__changes" for dialect in DIALECTS] + [
    f"{SCHEMA}_intermediate.int_staged_events",
    f"{SCHEMA}_intermediate.int_quarantine",
    f"{SCHEMA}_intermediate.int_redeliveries",
    f"{SCHEMA}.cdc_dead_letters",
]
REPLACING = [
    f"{SCHEMA}.cdc_feed_health",
    f"{SCHEMA}.cdc_dead_letter_counts",
    f"{SCHEMA}_intermediate.int_schema_registry",
]


def test_a_full_build_keeps_the_watermarks_and_incremental_runs_carry_them(builds) -> None:
    """The full build stores every watermark its models will ask for with their tables, so no
    incremental run queries one of them: the appending and the replacing models' runs carry theirs
    from the rows they write (their pending files' footers, or a query of their pending rows, never
    the model's table); and the runs' output equals a full refresh
    (test_incremental_equals_full_refresh), so the kept values were right."""
    full_build, *incremental = builds["queried"]
    assert set(APPENDING + REPLACING) <= set(full_build), "the full build did not keep every model's watermark"
    for run in incremental:
        assert run == [table for table in run if table.startswith("cdc_pending__")], run
    carried = {table for run in builds["carried"][1:] for table in run}
    assert set(APPENDING + REPLACING) <= carried, "a model's write did not carry its watermark"


def test_a_model_keeping_some_rows_reads_each_row_once(builds) -> None:
    """int_quarantine keeps the quarantined staged rows, int_redeliveries the later deliveries of
    decoded events, cdc_schema_changes the DDL events, int_change_events the decoded first deliveries: their own rows say how far they kept rows, not
    how far they read, so every later row of a feed, kept or not, was past their watermark and
    counted (int_change_events: read whole) again by every run. They store how far they read
    (newest_values.read_until): after the runs it is their input's newest landing of every feed,
    and the run with nothing new counts nothing
    (test_a_run_with_nothing_new_counts_nothing_its_input_keeps_the_newest_of)."""
    for name, (stored, newest) in builds["read_until"].items():
        assert newest and stored == newest, name
