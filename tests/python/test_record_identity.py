"""Two landing records never become one (issue: colliding file coordinates).

Landing coordinates (topic, partition, offset) are not an identity: two files of one feed, or a
Kafka redelivery, can put different or identical records at the same coordinates.  (a) Every
staging model stages each record by itself, whatever else shares its coordinates, in one load
and across loads, and redelivered content keeps its event id; the oracle is the generator's
expected rows per message.  (b) The reported case end to end: two `.jsonl` files of one canal_json
feed whose first lines are a malformed message and a valid two-row INSERT, loaded by the loader
in one load and in two, give the two rows in `cdc_current_rows`, the malformed message in
`cdc_dead_letters`, and a build whose `messages_reconciled` test passes.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from cdc_unify.canonical import fmt_instant
from cdc_unify.contract import DIALECTS
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE
from cdc_unify.generator.workload import WorkloadOptions, build_workload

pytestmark = pytest.mark.spark

FEED = "colliding"
MESSAGES_PER_DIALECT = 40
LOADS = (dt.datetime(2024, 7, 1, 1, tzinfo=dt.UTC), dt.datetime(2024, 7, 1, 2, tzinfo=dt.UTC))
# Columns a row is compared on (with its status and error code), those of them a dialect's expected rows carry.
COMPARED = ("row_index", "event_kind", "op", "database_name", "table_name", "event_ts")


def _records(values: list[bytes]) -> pa.Table:
    """Records at offsets 0..n-1 of partition 0 of topic FEED: what a `.jsonl` file had before
    offsets continued across files, and what any two Kafka exports of one partition share."""
    n = len(values)
    return pa.table(
        {
            "topic": pa.array([FEED] * n, pa.string()),
            "partition": pa.array([0] * n, pa.int32()),
            "offset": pa.array(range(n), pa.int64()),
            "timestamp": pa.array([None] * n, pa.timestamp("us", tz="UTC")),
            "key": pa.array([None] * n, pa.binary()),
            "value": pa.array(values, pa.binary()),
        }
    )


def _comparable(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return fmt_instant(value.astimezone(dt.UTC) if value.tzinfo is None else value)
    return value


def _projection(row: dict[str, Any], columns: tuple[str, ...]) -> tuple:
    return (row.get("message_status", "decoded"), row.get("error_code"), *(_comparable(row.get(c)) for c in columns))


def _dialect_case(dialect: str) -> dict[str, Any]:
    """Row messages and one malformed message per kind, and the staged rows expected of one copy."""
    workload = build_workload(WorkloadOptions(events=120), seed=7)
    encoder = encoder_for(dialect)
    messages = [m for m in encoder.encode(workload, random.Random(f"identity:{dialect}")) if m.value is not None]
    messages = messages[:MESSAGES_PER_DIALECT]
    rng = random.Random(3)
    row_messages = [m for m in messages if m.is_row_message]
    kinds = COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds
    malformed = [encoder.malform(rng.choice(row_messages), kind, rng) for kind in kinds]
    rows = [row for m in messages for row in m.expected]
    columns = tuple(c for c in COMPARED if all(c in row for row in rows))
    expected = [_projection(row, columns) for row in rows]
    expected += [
        _projection(
            {"message_status": "quarantined", "error_code": MALFORMED_ERROR_CODE[kind], "row_index": 0}, columns
        )
        for kind in kinds
    ]
    return {"good": [m.value for m in messages], "bad": malformed, "columns": columns, "expected_one_copy": expected}


@pytest.fixture(scope="module")
def staged_with_colliding_coordinates() -> dict[str, dict[str, Any]]:
    """Per dialect, three copies of every message at colliding coordinates: load 1 holds two files
    at offsets 0.. (bad then good, and good then bad: different content at each offset, the same
    content at other offsets), load 2 the first file again (same content, same coordinates).
    All staging models are built in one dbt run."""
    from harness import _land, run_dbt, spark_session

    cases = {dialect: _dialect_case(dialect) for dialect in DIALECTS}
    for dialect, case in cases.items():
        first, second = case["bad"] + case["good"], case["good"] + case["bad"]
        _land(dialect, pa.concat_tables([_records(first), _records(second)]), FEED, LOADS[0], replace=True)
        _land(dialect, _records(first), FEED, LOADS[1], replace=False)
    result = run_dbt("run", "--full-refresh", "--select", *(f"stg_{d}__changes" for d in DIALECTS))
    relations = {r.node.name: r.node.relation_name for r in result.result.results}
    spark = spark_session()
    for dialect, case in cases.items():
        case["rows"] = [
            row.asDict(recursive=True) for row in spark.table(relations[f"stg_{dialect}__changes"]).collect()
        ]
    return cases


@pytest.mark.parametrize("dialect", DIALECTS)
def test_records_sharing_coordinates_are_staged_each_by_itself(staged_with_colliding_coordinates, dialect):
    case = staged_with_colliding_coordinates[dialect]
    got = Counter(_projection(row, case["columns"]) for row in case["rows"])
    want = Counter({row: 3 * n for row, n in Counter(case["expected_one_copy"]).items()})
    assert got == want, f"{dialect}: missing {want - got}, unexpected {got - want}"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_same_content_keeps_its_event_id_at_any_coordinates(staged_with_colliding_coordinates, dialect):
    """Every copy of a message gives its rows the same event ids (messages that differ only in
    emission-time fields may share them too), so each id is delivered a multiple of three times."""
    case = staged_with_colliding_coordinates[dialect]
    deliveries = Counter(row["event_id"] for row in case["rows"])
    assert {event_id: n for event_id, n in deliveries.items() if n % 3} == {}


# ---------------------------------------------------------------- (b) the reported case, end to end
MALFORMED_LINE = b'{"type":"INSERT","database":"shop","table":"t","es":1700000000000,"data":"oops","pkNames":["id"]}'
INSERT_LINE = (
    b'{"type":"INSERT","database":"shop","table":"t","es":1700000000000,"ts":1700000000001,"isDdl":false,'
    b'"pkNames":["id"],"mysqlType":{"id":"int","name":"varchar(20)"},'
    b'"data":[{"id":"1","name":"one"},{"id":"2","name":"two"}]}'
)
E2E_SCHEMA = "cdc_identity"
E2E_FEEDS = {"one_load": 1, "two_loads": 2}  # feed -> loads the two files arrive in


@pytest.fixture(scope="module")
def daily_files_build(tmp_path_factory) -> dict[str, Any]:
    from cdc_unify import landing
    from harness import run_dbt, spark_session

    folder: Path = tmp_path_factory.mktemp("daily-files")
    day_1, day_2 = folder / "day-1.jsonl", folder / "day-2.jsonl"
    day_1.write_bytes(MALFORMED_LINE + b"\n")
    day_2.write_bytes(INSERT_LINE + b"\n")
    spark = spark_session()
    landing.create_landing_tables(spark)
    for dialect in DIALECTS:  # the other dialects' staging models run too (int_staged_events reads them all)
        spark.sql(f"truncate table {landing.landing_table(dialect)}")
    for feed, loads in E2E_FEEDS.items():
        if loads == 1:
            landing.load_files(spark, "canal_json", feed, [day_1, day_2])
        else:
            landing.load_files(spark, "canal_json", feed, [day_1])
            landing.load_files(spark, "canal_json", feed, [day_2])
    layers = ("path:models/staging", "path:models/intermediate", "path:models/marts")
    run_dbt("run", "--full-refresh", "--select", *layers, schema=E2E_SCHEMA)
    # The test that fails a build where a landed message is neither decoded nor quarantined.
    run_dbt("test", "--select", "test_name:messages_reconciled", schema=E2E_SCHEMA)
    read = lambda sql: [r.asDict(recursive=True) for r in spark.sql(sql).collect()]  # noqa: E731
    return {
        "current": read(f"select feed, row_values from {E2E_SCHEMA}.cdc_current_rows where table_name = 't'"),
        "dead": read(f"select feed, error_code, raw_value from {E2E_SCHEMA}.cdc_dead_letters"),
        "health": read(f"select * from {E2E_SCHEMA}.cdc_feed_health"),
    }


@pytest.mark.parametrize("feed", E2E_FEEDS)
def test_daily_files_keep_the_valid_rows(daily_files_build, feed):
    rows = sorted(
        json.dumps(r["row_values"], sort_keys=True) for r in daily_files_build["current"] if r["feed"] == feed
    )
    assert rows == [json.dumps({"id": "1", "name": "one"}), json.dumps({"id": "2", "name": "two"})]


@pytest.mark.parametrize("feed", E2E_FEEDS)
def test_daily_files_quarantine_only_the_malformed_message(daily_files_build, feed):
    dead = [(r["error_code"], bytes(r["raw_value"])) for r in daily_files_build["dead"] if r["feed"] == feed]
    assert dead == [("wrong_shape", MALFORMED_LINE)]


@pytest.mark.parametrize("feed", E2E_FEEDS)
def test_daily_files_reconcile(daily_files_build, feed):
    (health,) = [r for r in daily_files_build["health"] if r["feed"] == feed]
    assert (health["landed_messages"], health["quarantined_messages"]) == (2, 1)
