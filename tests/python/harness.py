"""In-process test harness: one SparkSession for the whole pytest run, dbt through dbtRunner.

A dbt subprocess starts a JVM (~10 s); staging tests run dbt dozens of times, so they share
this process's session instead: the `sparksession` adapter's getOrCreate() returns it.

    rows = stage_messages("canal_json", [b'{"type": "INSERT", ...}', None])
    rows = stage_generated("canal_json", out_dir)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_unify import landing
from cdc_unify.commands.sql_server import DEFAULT_DRIVER_MEMORY, DRIVER_MEMORY_ENV
from cdc_unify.spark import get_spark

REPO_ROOT = Path(__file__).resolve().parents[2]
# The vendor documents' example messages, one folder per dialect (tests/fixtures/spec_examples).
SPEC_EXAMPLES = REPO_ROOT / "tests" / "fixtures" / "spec_examples"
_STATE: dict[str, Any] = {}
# Landing rows of a test get a fixed landed_at, so staged output does not depend on the clock.
LANDED_AT = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)
# Tests build into the profile's default schema (staging tests rebuild their own model there);
# the shared workload has schemas of its own, so no other test's build changes what it reads.
DEFAULT_SCHEMA = "cdc_unify"
MART_SCHEMA = "cdc_e2e"
INTERMEDIATE_SCHEMA = f"{MART_SCHEMA}_intermediate"
STAGING_SCHEMA = f"{MART_SCHEMA}_staging"


# Test data is a few thousand rows at most: one shuffle partition (cdc_unify.spark's defaults already
# interpret queries instead of generating Java for each: one full build of the shared workload took
# 59.6 s with code generation, 36.5 s without). Settings for speed and heap; they change no result.
# Tried and not adopted (2026-11-27, test_summary_incremental + test_split_updates, 266 s with
# these): the JVM's C1 compiler only (JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1) 344 s; adaptive
# query execution off (spark.sql.adaptive.enabled=false) 286 s.
# The heap: the profile gives dbt's session 2g (CDC_UNIFY_DRIVER_MEMORY), and the suite's session,
# built here before any profile is read, had Spark's default 1g. Planning int_row_changes alone
# allocates about 1.4 GiB and holds up to ~600 MB at once (dbt's unit tests plan two such models at
# a time): late in the suite the old generation stayed 90-99% full after a full collection at those
# moments, one run ended in `OutOfMemoryError: GC overhead limit exceeded`, and that unit-test node
# took 24 s, then 68, 90 and 129 s as the suite grew (docs/test-suite.md, "The shared session's heap").
TEST_SPARK_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.driver.memory": os.environ.get(DRIVER_MEMORY_ENV, DEFAULT_DRIVER_MEMORY),
}


def harness_root() -> Path:
    if "root" not in _STATE:
        _STATE["root"] = Path(tempfile.mkdtemp(prefix="cdc-unify-harness-"))
    return _STATE["root"]


def spark_session() -> SparkSession:
    """The process's session, on a warehouse of its own (created on first use)."""
    root = harness_root()
    os.environ["CDC_UNIFY_WAREHOUSE"] = str(root / "warehouse")
    os.environ.setdefault("DBT_TARGET_PATH", str(root / "target"))
    os.environ.setdefault("DBT_LOG_PATH", str(root / "logs"))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    return get_spark(master="local[2]", warehouse=str(root / "warehouse"), extra_conf=TEST_SPARK_CONF)


@contextmanager
def profile_schema(schema: str) -> Iterator[None]:
    """The profile's schema (env CDC_UNIFY_SCHEMA) is `schema` while the block runs."""
    previous = os.environ.get("CDC_UNIFY_SCHEMA")
    os.environ["CDC_UNIFY_SCHEMA"] = schema
    try:
        yield
    finally:
        if previous is None:
            del os.environ["CDC_UNIFY_SCHEMA"]
        else:
            os.environ["CDC_UNIFY_SCHEMA"] = previous


def write_fixture_project(root: Path, name: str, models_config: dict[str, Any] | None = None) -> None:
    """dbt_project.yml of a fixture project at `root` on the project's profile: its macros in
    `root/macros`, its models in `root/models` (both folders created), `models_config` the config
    of all its models (e.g. {"+file_format": "parquet"})."""
    (root / "macros").mkdir(parents=True, exist_ok=True)
    (root / "models").mkdir(exist_ok=True)
    project = {
        "name": name,
        "version": "1.0.0",
        "config-version": 2,
        "profile": "cdc_unify",
        "macro-paths": ["macros"],
        "model-paths": ["models"],
        **({"models": {name: models_config}} if models_config else {}),
    }
    (root / "dbt_project.yml").write_text(yaml.safe_dump(project), encoding="utf-8")


def dbt_target(schema: str, dbt_vars: dict | None) -> Path:
    """The dbt target folder of the invocations with this schema and these vars (left in
    DBT_TARGET_PATH after each, for the tests that read what the last one wrote). dbt parses the
    whole project again (~4 s) when the profile (its schema) or the vars differ from those of the
    manifest it saved in the target folder, and the suite alternates them: a folder per
    combination keeps each one's manifest, so every later invocation parses only what changed."""
    key = hashlib.sha256(json.dumps([schema, dbt_vars or {}], sort_keys=True).encode()).hexdigest()[:12]
    return harness_root() / "target" / key


def run_dbt(
    *args: str,
    dbt_vars: dict | None = None,
    schema: str | None = None,
    callbacks: list | None = None,
    write_json: bool = False,
) -> Any:
    """`dbt <args>` in this process on the project; raises with dbt's own message on failure.
    `schema` builds into other schemas than the shared workload's (`<schema>`, `<schema>_staging`...);
    `callbacks` receive every event dbt fires (e.g. SQLQuery, each statement it sends to Spark).
    `write_json` writes manifest.json, run_results.json and sources.json to the target folder:
    tests read the results dbt returns, and writing them (the project's 3 MB manifest twice) took
    0.6-0.8 s of a one-model `dbt run`, 1.7 s of a build (docs/test-suite.md)."""
    spark_session()
    cli = [*args, "--project-dir", str(REPO_ROOT), "--profiles-dir", str(REPO_ROOT / "profiles")]
    if not write_json:
        cli.append("--no-write-json")
    if dbt_vars:
        cli += ["--vars", json.dumps(dbt_vars)]
    os.environ["DBT_TARGET_PATH"] = str(dbt_target(schema or DEFAULT_SCHEMA, dbt_vars))
    with profile_schema(schema or DEFAULT_SCHEMA):
        result = dbtRunner(callbacks=callbacks or []).invoke(cli)
    if not result.success:
        details = result.exception or [
            f"{r.node.name}: {r.message}" for r in getattr(result.result, "results", []) if r.status != "success"
        ]
        raise AssertionError(f"dbt {' '.join(args)} failed: {details}")
    return result


def run_dbt_statements(*args: str, **kwargs: Any) -> dict[str, list[str]]:
    """run_dbt, returning the SQL statements it sent to Spark, by the name of the node that sent them
    ('' for statements of no node, such as hooks)."""
    statements: dict[str, list[str]] = {}

    def collect(event: Any) -> None:
        if event.info.name == "SQLQuery":
            node = event.data.node_info.unique_id.rsplit(".", 1)[-1] if event.data.node_info.unique_id else ""
            statements.setdefault(node, []).append(event.data.sql)

    run_dbt(*args, callbacks=[collect], **kwargs)
    return statements


def _land(
    dialect: str, records: pa.Table, feed: str, landed_at: dt.datetime, replace: bool, one_file: bool = False
) -> None:
    """Append `records` to the landing table (after emptying it if `replace`): in a file per
    partition of the session (as the Kafka ingestion job appends a micro-batch), or in one file
    (`one_file`, as `cdc-unify load` lands a load)."""
    spark = spark_session()
    landing.create_landing_tables(spark)
    if replace:
        spark.sql(f"truncate table {landing.landing_table(dialect)}")
    rows = landing.kafka_to_landing(spark.createDataFrame(records), feed, F.lit(landed_at))
    landing.append_landing(rows.coalesce(1) if one_file else rows, dialect)


def _records(values: list[bytes | None], keys: list[bytes | None], feed: str, first_offset: int = 0) -> pa.Table:
    if len(keys) != len(values):
        raise ValueError("keys and values differ in length")
    return pa.table(
        {
            "topic": pa.array([feed] * len(values), pa.string()),
            "partition": pa.array([0] * len(values), pa.int32()),
            "offset": pa.array(range(first_offset, first_offset + len(values)), pa.int64()),
            "timestamp": pa.array([LANDED_AT] * len(values), pa.timestamp("us", tz="UTC")),
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.binary()),
        }
    )


def land_messages(
    dialect: str,
    values: list[bytes | None],
    feed: str,
    landed_at: dt.datetime,
    replace: bool,
    first_offset: int = 0,
) -> None:
    """Land `values` (partition 0, offsets from `first_offset`) as one load of `feed`."""
    _land(dialect, _records(values, [None] * len(values), feed, first_offset), feed, landed_at, replace)


def _run_staging(dialect: str, dbt_vars: dict | None) -> list[dict]:
    """The staged rows in the contract's columns, after checking that the run stamped every row
    with its start (built_at, which no contract test expects: it is the run's, not the message's)."""
    # Staging models are incremental: a fresh landing table is staged from scratch.
    started = dt.datetime.now(dt.UTC)
    result = run_dbt("run", "--full-refresh", "--select", f"stg_{dialect}__changes", dbt_vars=dbt_vars)
    # results also hold the on-run-start hook: take the staging model's own result.
    relation = next(r.node.relation_name for r in result.result.results if r.node.name == f"stg_{dialect}__changes")
    staged = spark_session().table(relation).orderBy("landing_partition", "landing_offset", "row_index")
    stamps = {row.built_at for row in staged.select(F.col("built_at").cast("string").alias("built_at")).collect()}
    assert len(stamps) <= 1 and None not in stamps, f"{dialect}: rows of one run stamped {stamps}"
    # Spark shows timestamps in the session zone, UTC here (cdc_unify.spark).
    assert all(started <= dt.datetime.fromisoformat(f"{stamp}+00:00") <= dt.datetime.now(dt.UTC) for stamp in stamps)
    return [row.asDict(recursive=True) for row in staged.drop("built_at").collect()]


def stage_messages(
    dialect: str,
    values: list[bytes | None],
    keys: list[bytes | None] | None = None,
    feed: str = "test_feed",
    dbt_vars: dict | None = None,
) -> list[dict]:
    """Land `values` (offsets 0..n-1, partition 0) in a fresh landing table and stage them."""
    keys = keys if keys is not None else [None] * len(values)
    _land(dialect, _records(values, keys, feed), feed, LANDED_AT, replace=True)
    return _run_staging(dialect, dbt_vars)


def stage_generated(
    dialect: str,
    out_dir: Path,
    batches: tuple[int, ...] = (1, 2),
    feed: str = "generated",
    dbt_vars: dict | None = None,
) -> list[dict]:
    """Land a generator output's batches for `dialect` in a fresh landing table and stage them."""
    tables = [
        landing.parquet_records((Path(out_dir) / dialect / f"batch-{n}.parquet").read_bytes())[0] for n in batches
    ]
    _land(dialect, pa.concat_tables(tables), feed, LANDED_AT, replace=True)
    return _run_staging(dialect, dbt_vars)


# --- One generated workload through every layer, in the schemas cdc_e2e*, shared by the marts and
# analyses tests. Built once per pytest process; tests read its snapshots or its tables and never
# build into its schemas.

WORKLOAD_EVENTS = 300
WORKLOAD_SEED = 11
# The workload lands in three loads, one hour apart, each built in its own run: batch 1; batch 2
# (which holds the late messages and redeliveries) but for the third load's records; and the
# third load, a few records of batch 2 of THIRD_LOAD_DIALECTS (third_load_records), so that its
# incremental run touches a few keys and must keep every other row as the second run left it.
LOAD_LANDED_AT = {load: dt.datetime(2024, 6, 1, load, tzinfo=dt.UTC) for load in (1, 2, 3)}
THIRD_LOAD_DIALECTS = ("dataworks_json", "debezium_json")


def workload_feed(dialect: str) -> str:
    return f"e2e_{dialect}"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def third_load_records(out_dir: Path, dialect: str) -> set[tuple[int, int]]:
    """The (partition, offset) of the batch-2 records the third load lands: in the first partition
    with a late message, its last late message, the first redelivery of a batch-1 message, and the
    last message with rows with every record after it (for dataworks_json an UPDATE_AFTER half
    whose UPDATE_BEFORE half the second load lands, and a redelivery of a second-load message)."""
    if dialect not in THIRD_LOAD_DIALECTS:
        return set()
    folder = Path(out_dir) / dialect
    events = [e for e in _jsonl(folder / "expected-events.jsonl") if e["batch"] == 2]
    partition = min(e["landing_partition"] for e in events if e["late"])
    in_partition = [e for e in events if e["landing_partition"] == partition]
    last_late = max(e["landing_offset"] for e in in_partition if e["late"])
    last_rows = max(e["landing_offset"] for e in in_partition if e.get("table_name"))
    redelivery = min(
        f["landing_offset"]
        for f in _jsonl(folder / "faults.jsonl")
        if f["batch"] == 2
        and f["fault"] == "duplicate"
        and f["of"]["batch"] == 1
        and f["landing_partition"] == partition
    )
    table = pq.read_table(folder / "batch-2.parquet", columns=["partition", "offset"])
    tail = {
        (p, o)
        for p, o in zip(table["partition"].to_pylist(), table["offset"].to_pylist(), strict=True)
        if p == partition and o >= last_rows
    }
    return {(partition, last_late), (partition, redelivery), *tail}


def land_load(out_dir: Path, dialect: str, load: int, replace: bool) -> None:
    """Land one load of the generated workload (see LOAD_LANDED_AT) as feed `e2e_<dialect>`."""
    batch = min(load, 2)
    records, _ = landing.parquet_records((Path(out_dir) / dialect / f"batch-{batch}.parquet").read_bytes())
    if batch == 2:
        third = third_load_records(out_dir, dialect)
        coordinates = zip(records["partition"].to_pylist(), records["offset"].to_pylist(), strict=True)
        records = records.filter([(coordinate in third) == (load == 3) for coordinate in coordinates])
    if records.num_rows:
        _land(dialect, records, workload_feed(dialect), LOAD_LANDED_AT[load], replace)


# Row buckets of the shared workload's builds (var cdc_row_buckets, default 16): each is a Parquet
# partition, and writing 64 (the default then) near-empty partitions per table was a third of a
# build's time here. The second load touches keys in every bucket with 4 or 16 alike; what the
# third load does not touch is kept (test_marts_e2e.py), and the dbt unit tests of
# int_change_events prove it too.
WORKLOAD_ROW_BUCKETS = 4
WORKLOAD_COMPACT_SHARE = 0.1


def one_feed_selection(dialect: str) -> tuple[str, ...]:
    """What a test of one dialect's feed builds: its staging model and every intermediate and mart model."""
    return (f"stg_{dialect}__changes", "path:models/intermediate", "path:models/marts")


def build_all(full_refresh: bool = False) -> Any:
    """`dbt run` of every layer (staging, intermediate, marts) over every dialect."""
    flags = ["--full-refresh"] if full_refresh else []
    layers = ("path:models/staging", "path:models/intermediate", "path:models/marts")
    # A low compaction share, so that the incremental runs also compact buckets of int_row_changes.
    dbt_vars = {"cdc_row_buckets": WORKLOAD_ROW_BUCKETS, "cdc_compact_share": WORKLOAD_COMPACT_SHARE}
    return run_dbt("run", *flags, "--select", *layers, schema=MART_SCHEMA, dbt_vars=dbt_vars)


def compiled_sql(result: Any) -> dict[str, str]:
    """The compiled select of each SQL model a `dbt run` ran, by model name."""
    return {r.node.name: r.node.compiled_code for r in result.result.results if r.node.language == "sql"}


def table_rows(relation: str) -> list[dict[str, Any]]:
    return [row.asDict(recursive=True) for row in spark_session().table(relation).collect()]


def comparable(rows: list[dict[str, Any]], without: tuple[str, ...] = ("built_at",)) -> Counter[str]:
    """Rows as a multiset of sorted-key JSON texts (maps compare by content), without the columns
    `without`: by default built_at, the run that wrote a row, which differs between an incremental
    build and a full refresh of the same input (nothing else may)."""
    return Counter(
        json.dumps({k: v for k, v in r.items() if k not in without}, sort_keys=True, default=str) for r in rows
    )


# Models that append builds of row identities (config live_rows, docs/semantics.md): each
# identity's newest build (build key) is its live rows, older builds are superseded, a row without
# its PRESENT column stands for an empty build.
BUILD_KEYS = {
    name: ("table_key", "unit_identity") for name in ("int_row_changes", "int_row_versions", "int_current_rows")
}
PRESENT = {"int_row_changes": "action_id", "int_row_versions": "version_id", "int_current_rows": "version_id"}


def live_rows(name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The live rows of model `name`'s table rows (all of them for a model that rewrites its rows
    in place), computed here on their own, not with the project's macro cdc_live_rows; without
    build_tier, which says where a row is stored (appended or compacted), not what it holds."""
    key = BUILD_KEYS.get(name)
    if key is None:
        return rows
    newest: dict[tuple[Any, ...], Any] = {}
    for row in rows:
        build = tuple(row[c] for c in key)
        newest[build] = max(newest.get(build, row["built_at"]), row["built_at"])
    present = PRESENT[name]
    live = [r for r in rows if r["built_at"] == newest[tuple(r[c] for c in key)] and r[present] is not None]
    return [{k: v for k, v in r.items() if k != "build_tier"} for r in live]


def built_relations() -> dict[str, str]:
    """Every table-materialised staging, intermediate and mart model and every mart view, by
    name (the intermediate views are read through the staging tables)."""
    spark = spark_session()
    relations = {}
    for schema in (MART_SCHEMA, INTERMEDIATE_SCHEMA, STAGING_SCHEMA):
        # One listing of the schema's views, not a `describe` of each table (~0.1 s each).
        views = {row["viewName"] for row in spark.sql(f"show views in {schema}").collect() if not row["isTemporary"]}
        for table in spark.sql(f"show tables in {schema}").collect():
            name = table["tableName"]
            # Temporary views of other tests are listed in every schema.
            if table["isTemporary"]:
                continue
            if name not in views or schema == MART_SCHEMA:
                relations[name] = f"{schema}.{name}"
    return relations


def snapshot() -> dict[str, list[dict[str, Any]]]:
    return {name: table_rows(relation) for name, relation in built_relations().items()}


def staged_files() -> dict[str, set[str]]:
    """The data files of every staging table, by model name: an append keeps the old ones."""
    spark = spark_session()
    return {
        name: set(spark.table(relation).inputFiles())
        for name, relation in built_relations().items()
        if relation.startswith(f"{STAGING_SCHEMA}.")
    }


def event_data_files() -> list[str]:
    """The data files of int_change_events."""
    return list(spark_session().table(f"{INTERMEDIATE_SCHEMA}.int_change_events").inputFiles())


def final_event_files() -> set[str]:
    """The data files of int_change_events' `event_slice=final` partition, which runs append to."""
    return {f for f in event_data_files() if "/event_slice=final/" in f}


def pair_slice_files() -> Counter[str]:
    """How many data files each of int_change_events' pair partitions (`event_slice=pair_<n>`) has."""
    return Counter(Path(f).parent.name for f in event_data_files() if "/event_slice=pair_" in f)


def workload_build() -> dict[str, Any]:
    """The shared workload, built as a deployment would see it, with a snapshot after each step:
    load 1 landed and built from scratch (`after_load_1`); loads 2 and 3 landed and built
    incrementally, one run each (`after_load_2`, `final`); the same input built again (`rerun`);
    then `--full-refresh` (`full_refresh`). Returns those snapshots plus `out_dir`, the
    generator's `manifest`, `staged_files` (the staging tables' data files after each load),
    `final_event_files` (those of int_change_events' appended partition after each load),
    `pair_slice_files` (the number of files in each of its pair partitions after each load) and
    `incremental_sql` (the compiled select of each SQL model in load 3's incremental run)."""
    if "workload" not in _STATE:
        from cdc_unify.contract import DIALECTS
        from cdc_unify.generator.run import generate

        out_dir = harness_root() / "workload"
        manifest = generate(events=WORKLOAD_EVENTS, seed=WORKLOAD_SEED, out_dir=out_dir, dialects=DIALECTS)
        snapshots, files, event_files, pair_files = [], [], [], []
        for load in (1, 2, 3):
            for dialect in DIALECTS:
                land_load(out_dir, dialect, load, replace=load == 1)
            built = build_all(full_refresh=load == 1)
            snapshots.append(snapshot())
            files.append(staged_files())
            event_files.append(final_event_files())
            pair_files.append(pair_slice_files())
        build_all()
        rerun = snapshot()
        build_all(full_refresh=True)
        _STATE["workload"] = {
            "out_dir": out_dir,
            "manifest": manifest,
            "after_load_1": snapshots[0],
            "after_load_2": snapshots[1],
            "final": snapshots[2],
            "staged_files": tuple(files),
            "final_event_files": tuple(event_files),
            "pair_slice_files": tuple(pair_files),
            "rerun": rerun,
            "full_refresh": snapshot(),
            "incremental_sql": compiled_sql(built),
        }
    return _STATE["workload"]
