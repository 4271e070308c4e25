"""The analyst queries of analyses/: compiled by dbt and run on the shared workload's build
(tests/python/harness.py `workload_build`), asked about its cloudcanal_json feed.

Each result is compared with the same question answered here in Python from the marts' rows
(and the table as of an instant also with the generator's truth), so a query that filters,
groups or ranks wrongly fails. The feed's dialect has millisecond commit times; its two loads
land an hour apart, with late messages in the second one.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from cdc_unify.generator.truth import TableTruth, load_truth
from harness import LOAD_LANDED_AT, MART_SCHEMA, REPO_ROOT, run_dbt, spark_session, workload_feed

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DIALECT = "cloudcanal_json"
FEED = workload_feed(DIALECT)
AS_OF_TABLE = ("shop", "customers")
TOP_N = 2
TIME_ZONE = "America/New_York"  # the workload's instants are just after midnight UTC: the previous day there
LAG_NOW = dt.datetime(2024, 6, 2, 12, 30)
MARTS = ("cdc_row_history", "cdc_change_events", "cdc_feed_health")
Row = dict[str, Any]


def quiet_instant(table: TableTruth) -> dt.datetime:
    """The middle of the longest stretch without a change of `table`: far from every version bound."""
    bounds = sorted({v.valid_from for v in table.versions} | {v.valid_to for v in table.versions if v.valid_to})
    start, end = max(zip(bounds, bounds[1:], strict=False), key=lambda pair: pair[1] - pair[0])
    return start + (end - start) / 2


def naive_utc(instant: dt.datetime) -> dt.datetime:
    """Spark returns timestamps as naive datetimes in the session time zone (UTC)."""
    return instant.astimezone(dt.UTC).replace(tzinfo=None)


def seconds(later: dt.datetime, earlier: dt.datetime) -> float:
    return (later - earlier).total_seconds()


def row_text(values: dict[str, str | None]) -> str:
    """A row as comparable text; a NULL column and an absent one are the same (the truth's rule)."""
    return json.dumps({k: v for k, v in values.items() if v is not None}, sort_keys=True, ensure_ascii=False)


def table_of(row: Row) -> tuple:
    return (
        row["feed"],
        row["dialect"],
        row["tenant_name"],
        row["database_name"],
        row["schema_name"],
        row["table_name"],
    )


@pytest.fixture(scope="module")
def analysed(workload: dict[str, Any]) -> dict[str, Any]:
    """The shared workload (harness.workload_build) seen from DIALECT's feed."""
    truth = load_truth(workload["out_dir"] / "truth").tables[".".join(AS_OF_TABLE)]
    return {**workload, "truth": truth, "as_of": quiet_instant(truth)}


@pytest.fixture(scope="module")
def results(analysed: dict[str, Any]) -> dict[str, Any]:
    """Every analysis compiled against the shared workload's marts and run there."""
    dbt_vars = {
        "analysis_as_of": naive_utc(analysed["as_of"]).isoformat(sep=" "),
        "analysis_feed": FEED,
        "analysis_database": AS_OF_TABLE[0],
        "analysis_table": AS_OF_TABLE[1],
        "analysis_top_n": TOP_N,
        "analysis_time_zone": TIME_ZONE,
        "analysis_now": LAG_NOW.isoformat(sep=" "),
    }
    spark = spark_session()
    marts = {mart: rows(spark.table(f"{MART_SCHEMA}.{mart}").collect()) for mart in MARTS}
    compiled = run_dbt("compile", "--select", "path:analyses", dbt_vars=dbt_vars, schema=MART_SCHEMA)
    analyses = {r.node.name: rows(spark.sql(r.node.compiled_code).collect()) for r in compiled.result.results}
    return {"marts": marts, "analyses": analyses}


def rows(collected: Iterable[Any]) -> list[Row]:
    return [row.asDict(recursive=True) for row in collected]


def test_every_analysis_compiles_and_runs(results) -> None:
    files = {path.stem for path in (REPO_ROOT / "analyses").glob("*.sql")}
    assert set(results["analyses"]) == files
    assert all(results["analyses"][name] for name in files), "an analysis returned no row on the sample build"


def test_table_as_of_gives_the_rows_valid_at_the_instant(analysed, results) -> None:
    as_of = naive_utc(analysed["as_of"])
    database, table = AS_OF_TABLE
    expected = {
        v["version_id"]
        for v in results["marts"]["cdc_row_history"]
        if (v["feed"], v["database_name"], v["table_name"]) == (FEED, database, table)
        and v["valid_from"] <= as_of
        and (v["valid_to"] is None or v["valid_to"] > as_of)
        and not v["is_deleted"]
    }
    got = results["analyses"]["table_as_of"]
    assert expected
    assert {r["version_id"] for r in got} == expected
    assert {r["as_of"] for r in got} == {as_of}
    source_rows = Counter(row_text(row) for row in analysed["truth"].state_at(analysed["as_of"]))
    assert Counter(row_text(r["row_values"]) for r in got) == source_rows


def test_rows_changed_per_day_and_op(results) -> None:
    zone = ZoneInfo(TIME_ZONE)
    groups: dict[tuple, list[Row]] = defaultdict(list)
    for v in results["marts"]["cdc_row_history"]:
        day = v["valid_from"].replace(tzinfo=dt.UTC).astimezone(zone).date()
        groups[(day, *table_of(v), v["op"])].append(v)
    expected = {
        group: (len(versions), len({v["primary_key"] for v in versions}), sum(v["is_deleted"] for v in versions))
        for group, versions in groups.items()
    }
    got = {
        (r["change_date"], *table_of(r), r["op"]): (r["changed_rows"], r["distinct_rows"], r["removed_rows"])
        for r in results["analyses"]["rows_changed_per_day_and_op"]
    }
    assert got == expected
    assert {day for day, *_ in got} == {dt.date(2023, 12, 31)}


def test_deleted_rows_and_when(results) -> None:
    versions_of: dict[tuple, list[Row]] = defaultdict(list)
    for v in results["marts"]["cdc_row_history"]:
        versions_of[(*table_of(v), v["primary_key"])].append(v)
    expected = Counter()
    for key, versions in versions_of.items():
        ordered = sorted(versions, key=lambda v: v["version_number"])
        for previous, v in zip([None, *ordered], ordered, strict=False):
            if v["is_deleted"]:
                last_from = previous["valid_from"] if previous else None
                expected[
                    (*key, v["valid_from"], v["op"], v["event_id"], last_from, v["valid_to"], v["is_current"])
                ] += 1
    got = Counter(
        (
            *table_of(r),
            r["primary_key"],
            r["deleted_at"],
            r["deleted_by_op"],
            r["deleted_by_event_id"],
            r["last_version_from"],
            r["reinserted_at"],
            r["is_still_deleted"],
        )
        for r in results["analyses"]["deleted_rows"]
    )
    assert expected
    assert got == expected


def test_keys_with_most_versions(results) -> None:
    versions_of: dict[tuple, dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for v in results["marts"]["cdc_row_history"]:
        versions_of[table_of(v)][v["primary_key"]].append(v)
    expected = set()
    for table, keys in versions_of.items():
        counts = {key: len(versions) for key, versions in keys.items()}
        for key, versions in keys.items():
            rank = 1 + sum(count > counts[key] for count in counts.values())
            if rank <= TOP_N:
                removals = sum(v["is_deleted"] for v in versions)
                is_live = any(v["is_current"] and not v["is_deleted"] for v in versions)
                expected.add((*table, key, len(versions), len(versions) - removals, removals, is_live, rank))
    columns = ("primary_key", "versions", "live_versions", "removals", "is_live", "version_rank")
    got = {(*table_of(r), *(r[c] for c in columns)) for r in results["analyses"]["keys_with_most_versions"]}
    assert got == expected
    assert any(r["version_rank"] == 1 and r["versions"] > 1 for r in results["analyses"]["keys_with_most_versions"])


def test_late_events_per_feed(workload, results) -> None:
    """Brute force over every pair of events of a table: late = a greater sequence landed earlier."""
    events_of: dict[tuple, list[Row]] = defaultdict(list)
    for e in results["marts"]["cdc_change_events"]:
        if e["event_kind"] in ("ROW", "DDL"):
            events_of[table_of(e)].append(e)
    per_feed: dict[tuple, dict[str, Any]] = defaultdict(lambda: {"events": 0, "late": 0, "tables": set(), "max": None})
    for table, events in events_of.items():
        feed = per_feed[table[:2]]
        for e in events:
            followers = [f["landed_at"] for f in events if f["sequence"] > e["sequence"]]
            feed["events"] += 1
            if followers and e["landed_at"] > min(followers):
                lateness = seconds(e["landed_at"], min(followers))
                feed["late"] += 1
                feed["tables"].add(table)
                feed["max"] = lateness if feed["max"] is None else max(feed["max"], lateness)
    got = {(r["feed"], r["dialect"]): r for r in results["analyses"]["late_events_per_feed"]}
    assert set(got) == set(per_feed)
    for feed, counts in per_feed.items():
        row = got[feed]
        assert (row["table_events"], row["late_events"]) == (counts["events"], counts["late"]), feed
        assert row["tables_with_late_events"] == len(counts["tables"]), feed
        lateness = row["max_lateness_seconds"]
        assert (lateness is None) == (counts["max"] is None), feed
        if lateness is not None:
            assert float(lateness) == pytest.approx(counts["max"]), feed
    assert workload["manifest"]["per_dialect"][DIALECT]["batches"]["2"]["late_messages"] > 0
    assert got[(FEED, DIALECT)]["late_events"] > 0, "the late messages of the second load were not found late"


def test_feed_lag(results) -> None:
    got = {(r["feed"], r["dialect"]): r for r in results["analyses"]["feed_lag"]}
    health = results["marts"]["cdc_feed_health"]
    assert set(got) == {(h["feed"], h["dialect"]) for h in health}
    for h in health:
        row = got[(h["feed"], h["dialect"])]
        seen = max(t for t in (h["last_event_ts"], h["last_heartbeat_ts"]) if t is not None)
        assert row["measured_at"] == LAG_NOW
        assert row["source_seen_up_to"] == seen
        assert float(row["staleness_seconds"]) == pytest.approx(seconds(LAG_NOW, seen))
        assert float(row["seconds_since_last_landing"]) == pytest.approx(seconds(LAG_NOW, h["last_landed_at"]))
        assert row["landing_lag_seconds_p95"] == h["lag_seconds_p95"]
    assert float(got[(FEED, DIALECT)]["seconds_since_last_landing"]) == seconds(LAG_NOW, naive_utc(LOAD_LANDED_AT[2]))
