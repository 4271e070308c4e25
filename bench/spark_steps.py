"""The benchmark's own Spark jobs, each run by bench/run.py as a process of its own.

    land        append one generator batch (or a delta cut from batch 2) of every dialect to
                landing.<dialect>
    parse-floor read every landing table and only parse its values: `from_json` of every JSON
                value into the message's full structure (inferred from a sample; an array value,
                such as a batch of Canal FlatMessages, into an array of it), the DTS
                wire decoder (fastavro) for every Avro value; count the rows
    decoder-floor
                for each dialect staged by a Python model (models/staging/<dialect>/*.py): its
                message decoder, the function the model hands to mapInArrow, over every landing
                row, the staged rows counted and not written: what the model pays at least
    staging-steps
                each SQL staging model of a dbt build's compiled SQL (--target), taken apart in one
                session, round after round: its dialect's parse floor, its message function alone,
                its whole select, and the select written as Parquet: where a model's time goes
                beyond the floor, warm (the first round is the JVM's warm-up)
    write-floor read every table the dbt build materialized (views excepted) into Spark's
                `noop` sink, then read it and write it as Parquet (same partition columns) to a
                scratch folder: what writing the build's output costs, its results already known
    digest      every table's row count and an order-free digest of its rows without built_at:
                two warehouses built from the same input by different runs (a backfill and
                a full build plus an incremental run) must give the same digests

Each writes its figures as JSON to --result.  The parse floor is what any staging of these
messages has to pay at least: the full dbt build and each SQL staging model are judged against
it; a Python staging model against its decoder floor as well.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, MapType, StructType, VariantType

from cdc_unify import landing
from cdc_unify.contract import DIALECTS, LANDING_COLUMNS, staged_schema_ddl
from cdc_unify.spark import get_spark

AVRO_DIALECTS = frozenset({"dts_avro"})
# A feed per dialect, as `cdc-unify load --generated` lands them: each dialect's messages are their
# own copy of the simulated source, and rows of one feed never meet another's.
FEED_PREFIX = "bench"
# Every batch gets one fixed landing time: staged output does not depend on the clock.
BATCH_LANDED_AT = {1: dt.datetime(2024, 6, 1, 1, tzinfo=dt.UTC), 2: dt.datetime(2024, 6, 1, 2, tzinfo=dt.UTC)}
SCHEMA_SAMPLE = 2000  # values per dialect the JSON structure is inferred from
STAGING_MODELS = Path(__file__).resolve().parents[1] / "models" / "staging"
# The optimizer would otherwise parse only the fields a query reads (the parse floor).
JSON_OPTIMIZATION = "spark.sql.optimizer.enableJsonExpressionOptimization"
# A SQL staging model's compiled select in a dbt target folder, and the explode of its message
# function's rows (macro cdc_message_rows).
STAGING_COMPILED = "compiled/*/models/staging/*/stg_*__changes.sql"
EXPLODED_ROWS = re.compile(r"lateral view explode_outer\((\w+)\) exploded as staged_row")
STAGING_STEPS = ("parse_floor_seconds", "function_seconds", "select_seconds", "written_seconds")


def python_staged_dialects() -> list[str]:
    """The dialects whose staging model is a Python model (it runs cdc_unify.message_decoders.<dialect>)."""
    return [dialect for dialect in DIALECTS if (STAGING_MODELS / dialect / f"stg_{dialect}__changes.py").is_file()]


def land(
    spark: SparkSession, data_dir: Path, batch: int, file_name: str | None = None, minutes_after: int = 0
) -> dict[str, int]:
    """Append batch `batch` of every generated dialect (or its file `file_name`, e.g. a delta cut
    from batch 2, landed at the batch's time, or `minutes_after` it: a later run's load); Spark
    reads the Parquet itself (no driver copy)."""
    landing.create_landing_tables(spark)
    rows = {}
    for dialect in DIALECTS:
        path = data_dir / dialect / (file_name or f"batch-{batch}.parquet")
        if not path.is_file():
            continue
        records = spark.read.parquet(str(path))
        landing.append_landing(
            landing.kafka_to_landing(
                records, f"{FEED_PREFIX}_{dialect}", F.lit(BATCH_LANDED_AT[batch] + dt.timedelta(minutes=minutes_after))
            ),
            dialect,
        )
        rows[dialect] = records.count()
        print(f"[land] batch {batch}: {dialect} {rows[dialect]:,} messages", file=sys.stderr, flush=True)
    return rows


def json_structure(values: DataFrame) -> StructType:
    """The full structure of a dialect's messages as Spark infers it from a sample of values."""
    sample = [row.text for row in values.limit(SCHEMA_SAMPLE).collect() if row.text is not None]
    spark = values.sparkSession
    inferred = spark.read.json(spark.sparkContext.parallelize(sample, 1)).schema
    # Malformed sample values only add the reader's own corrupt-record column.
    return StructType([field for field in inferred.fields if field.name != "_corrupt_record"])


def parse_json(table: DataFrame) -> DataFrame:
    """Every value parsed into its whole structure: an object into the message struct, an array
    (Canal's batches of FlatMessages) into an array of it. The sample's inference reads an array's
    elements as records, so the one struct covers both; `from_json` with a struct schema would
    read an array as a null struct, parsing nothing of it."""
    text = table.where("value is not null").select(F.col("value").cast("string").alias("text"))
    structure = json_structure(text)
    is_array = F.ltrim("text").startswith("[")
    return text.select(
        F.when(~is_array, F.from_json("text", structure)).alias("message"),
        F.when(is_array, F.from_json("text", ArrayType(structure))).alias("messages"),
    )


def avro_counts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: decode every value with the DTS wire decoder; one row of counts per batch.
    A rejected value (malformed on purpose) was read as far as the decoder could: it counts too."""
    from cdc_unify.message_decoders.dts_avro import Rejected, decode_record

    for batch in batches:
        decoded = rejected = 0
        for value in batch.column("value").to_pylist():
            if value is None:
                continue
            try:
                decode_record(value)
                decoded += 1
            except Rejected:
                rejected += 1
        yield pa.record_batch({"decoded": [decoded], "rejected": [rejected]})


def floor_job(spark: SparkSession, dialect: str, table_name: str | None = None) -> dict[str, float | int | None]:
    """Parse every value of one landing table (or `table_name`); the timed part (wall and CPU of
    this process tree) is the parse job alone."""
    table = spark.table(table_name or landing.landing_table(dialect))
    rows = table.count()
    if dialect in AVRO_DIALECTS:
        parsed = table.select("value").mapInArrow(avro_counts, "decoded bigint, rejected bigint")
        aggregate = parsed.agg(
            (F.sum("decoded") + F.sum("rejected")).alias("values"), F.sum("rejected").alias("rejected")
        )
    else:
        parsed = parse_json(table)
        # count(struct) and count(array) test the whole parsed value, so no field can be pruned from the parse.
        aggregate = parsed.agg(
            (F.count("message") + F.count("messages")).alias("values"), F.lit(None).cast("bigint").alias("rejected")
        )
    collected, seconds, cpu_seconds = timed(aggregate.collect)
    result = collected[0]
    print(
        f"[parse-floor] {dialect}: {rows:,} rows parsed in {seconds:.1f}s ({cpu_seconds:.1f} CPU s)",
        file=sys.stderr,
        flush=True,
    )
    return {
        "rows": rows,
        "values": result["values"] or 0,
        "rejected": result["rejected"],
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
    }


def decoder_job(spark: SparkSession, dialect: str, table_name: str | None = None) -> dict[str, float | int]:
    """The dialect's Python staging model without dbt, its incremental filter and its write: the
    same decoder (`decode_arrow_batches`) over every row of its landing table (or `table_name`)
    through mapInArrow; the staged rows are counted, and cross back from Python whole (the
    decoder yields whole Arrow batches, so no column can be pruned from its work)."""
    decode = importlib.import_module(f"cdc_unify.message_decoders.{dialect}").decode_arrow_batches
    table = spark.table(table_name or landing.landing_table(dialect))
    rows = table.count()
    staged = table.select(*(f"`{name}`" for name, _ in LANDING_COLUMNS)).mapInArrow(decode, staged_schema_ddl())
    aggregate = staged.agg(F.count("event_id").alias("staged_rows"), F.count("error_code").alias("quarantined"))
    collected, seconds, cpu_seconds = timed(aggregate.collect)
    result = collected[0]
    print(
        f"[decoder-floor] {dialect}: {rows:,} rows decoded into {result['staged_rows']:,} staged rows"
        f" in {seconds:.1f}s ({cpu_seconds:.1f} CPU s)",
        file=sys.stderr,
        flush=True,
    )
    return {
        "rows": rows,
        "staged_rows": result["staged_rows"],
        "quarantined": result["quarantined"],
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
    }


def decoder_floor(spark: SparkSession) -> dict[str, dict[str, float | int]]:
    tables = landing_tables(spark)
    return {dialect: decoder_job(spark, dialect) for dialect in python_staged_dialects() if dialect in tables}


def landing_tables(spark: SparkSession) -> set[str]:
    return {row.tableName for row in spark.sql(f"show tables in `{landing.LANDING_SCHEMA}`").collect()}


def process_cpu() -> dict[int, float]:
    """CPU seconds of this process, its JVM and the JVM's Python workers."""
    # Imported here: bench/ is on sys.path only when this file runs as a script (the cluster test
    # imports `land` from it by path).
    from procmem import process_table, tree_cpu

    return tree_cpu(os.getpid(), process_table())


def parse_floor(spark: SparkSession) -> dict[str, dict[str, float | int | None]]:
    # The optimizer would otherwise parse only the fields a query reads.
    spark.conf.set(JSON_OPTIMIZATION, "false")
    tables = landing_tables(spark)
    return {dialect: floor_job(spark, dialect) for dialect in DIALECTS if dialect in tables}


def message_function(compiled: str) -> str | None:
    """The message function call (`cdc_<dialect>_rows(...)`) of a SQL staging model's compiled select,
    the one macro cdc_message_rows explodes; None for a select without one."""
    exploded = EXPLODED_ROWS.search(compiled)
    call = exploded and re.search(rf"(cdc_[a-z_]+_rows\([^()]*\))\s+as\s+{exploded.group(1)}\b", compiled)
    return call.group(1) if call else None


def noop(frame: DataFrame) -> None:
    frame.write.format("noop").mode("overwrite").save()


def staging_round(
    spark: SparkSession, dialect: str, compiled: str, scratch: Path, table_name: str | None = None
) -> dict[str, float | int]:
    """One round of a SQL staging model's steps, each timed alone (wall s): the parse floor of its
    landing table (`table_name`, default landing.<dialect>, which `compiled` reads), its message
    function over every value (scan, function, explode), its compiled select into Spark's `noop`
    sink, and the same select written as Parquet into `scratch` (the rows counted, then removed)."""
    table = table_name or landing.landing_table(dialect)
    spark.conf.set(JSON_OPTIMIZATION, "false")
    try:
        floor = floor_job(spark, dialect, table)["seconds"]
    finally:
        spark.conf.unset(JSON_OPTIMIZATION)
    call = message_function(compiled)
    function = spark.sql(f"select staged_row.* from {table} lateral view explode_outer({call}) exploded as staged_row")
    _, function_seconds, _ = timed(lambda: noop(function))
    _, select_seconds, _ = timed(lambda: noop(spark.sql(compiled)))
    folder = scratch / dialect
    _, written_seconds, _ = timed(lambda: spark.sql(compiled).write.mode("overwrite").parquet(str(folder)))
    rows = spark.read.parquet(str(folder)).count()
    shutil.rmtree(folder, ignore_errors=True)
    print(
        f"[staging-steps] {dialect}: floor {floor:.2f}s, function {function_seconds:.2f}s, select"
        f" {select_seconds:.2f}s, written {written_seconds:.2f}s ({rows:,} rows)",
        file=sys.stderr,
        flush=True,
    )
    return {
        "parse_floor_seconds": floor,
        "function_seconds": function_seconds,
        "select_seconds": select_seconds,
        "written_seconds": written_seconds,
        "rows": rows,
    }


def warm_steps(rounds: list[dict[str, float | int]]) -> dict[str, float]:
    """The median of each step over the rounds after the first (a new JVM's warm-up; all of them
    when there is one), and the written select against the parse floor."""
    warm = rounds[1:] or rounds
    medians = {key: statistics.median(r[key] for r in warm) for key in STAGING_STEPS}
    return {**medians, "written_over_parse_floor": medians["written_seconds"] / medians["parse_floor_seconds"]}


def staging_steps(spark: SparkSession, target: Path, rounds: int) -> dict[str, dict[str, Any]]:
    """Each SQL staging model compiled in dbt target folder `target` whose landing table is here,
    taken apart by `rounds` rounds of staging_round, every model once per round (a machine that
    drifts moves them alike): every round's figures and the warm medians (warm_steps)."""
    tables = landing_tables(spark)
    compiled = {path.parent.name: path.read_text() for path in sorted(target.glob(STAGING_COMPILED))}
    models = {dialect: sql for dialect, sql in compiled.items() if dialect in tables and message_function(sql)}
    done: dict[str, list[dict[str, float | int]]] = {dialect: [] for dialect in models}
    scratch = Path(tempfile.mkdtemp(prefix="staging-steps-"))
    try:
        for _ in range(rounds):
            for dialect, sql in models.items():
                done[dialect].append(staging_round(spark, dialect, sql, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        dialect: {"model": f"stg_{dialect}__changes", "rounds": runs, **warm_steps(runs)}
        for dialect, runs in done.items()
    }


def timed(action: Callable[[], Any]) -> tuple[Any, float, float]:
    """The result of one Spark action, with its wall and CPU seconds (this process tree)."""
    cpu_before, started = process_cpu(), time.perf_counter()
    result = action()
    seconds = time.perf_counter() - started
    return result, seconds, sum(cpu - cpu_before.get(pid, 0.0) for pid, cpu in process_cpu().items())


def write_job(spark: SparkSession, table_name: str, scratch: Path) -> dict[str, float | int]:
    table = spark.table(table_name)
    partitions = [c.name for c in spark.catalog.listColumns(table_name) if c.isPartition]
    _, read_seconds, read_cpu = timed(lambda: noop(table))
    writer = table.write.mode("overwrite").partitionBy(*partitions)
    _, write_seconds, write_cpu = timed(lambda: writer.parquet(str(scratch / table_name)))
    shutil.rmtree(scratch / table_name, ignore_errors=True)
    figures = {
        "rows": table.count(),
        "read_seconds": read_seconds,
        "read_cpu_seconds": read_cpu,
        "read_write_seconds": write_seconds,
        "read_write_cpu_seconds": write_cpu,
    }
    print(
        f"[write-floor] {table_name}: {figures['rows']:,} rows, read {read_seconds:.1f}s, "
        f"read + write {write_seconds:.1f}s ({write_cpu:.1f} CPU s)",
        file=sys.stderr,
        flush=True,
    )
    return figures


def _names(spark: SparkSession, statement: str) -> set[str]:
    return {row.viewName if "viewName" in row else row.tableName for row in spark.sql(statement).collect()}


def stored_tables(spark: SparkSession, schemas: list[str]) -> list[str]:
    """Every table (not view) of `schemas`, as schema.name."""
    return [
        f"{schema}.{name}"
        for schema in sorted(schemas)
        # SQL, not spark.catalog.listTables: that fails to decode views' rows with codegen off.
        for name in sorted(_names(spark, f"show tables in {schema}") - _names(spark, f"show views in {schema}"))
    ]


def user_schemas(spark: SparkSession, *excluded: str) -> list[str]:
    return [db.name for db in spark.catalog.listDatabases() if db.name not in ("default", *excluded)]


def write_floor(spark: SparkSession, schemas: list[str] | None = None) -> dict[str, dict[str, float | int]]:
    """Every table (not view) of `schemas`, by default of every schema but the landing tables'."""
    tables = stored_tables(spark, user_schemas(spark, landing.LANDING_SCHEMA) if schemas is None else schemas)
    scratch = Path(tempfile.mkdtemp(prefix="write-floor-"))
    try:
        return {name: write_job(spark, name, scratch) for name in tables}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def comparable(column: Column, data_type: DataType) -> Column:
    """`column` as a value that compares by content: a map's entries sorted by key (two equal maps
    built in a different order are equal), a variant as its JSON text, recursively."""
    if isinstance(data_type, MapType):
        entries = F.transform(
            F.map_entries(column),
            lambda e: F.struct(e["key"].alias("key"), comparable(e["value"], data_type.valueType).alias("value")),
        )
        return F.array_sort(entries)
    if isinstance(data_type, ArrayType):
        return F.transform(column, lambda element: comparable(element, data_type.elementType))
    if isinstance(data_type, StructType):
        return F.struct(*(comparable(column[f.name], f.dataType).alias(f.name) for f in data_type.fields))
    if isinstance(data_type, VariantType):
        return F.to_json(column)
    return column


def table_digest(table: DataFrame, without: tuple[str, ...] = ("built_at",)) -> dict[str, int | str]:
    """Row count and an order-free digest of a table's rows, without the columns `without` (by
    default built_at, the run that wrote a row: the only column allowed to differ between builds
    of the same input): the sum of a 64-bit hash of each row's JSON text (named fields, so
    nulls in different columns differ) as an exact decimal, so equal multisets of rows give equal
    digests whatever the files and their order."""
    kept = [field for field in table.schema.fields if field.name not in without]
    text = F.to_json(F.struct(*(comparable(F.col(f"`{f.name}`"), f.dataType).alias(f.name) for f in kept)))
    row = table.agg(
        F.count(F.lit(1)).alias("rows"), F.sum(F.xxhash64(text).cast("decimal(38,0)")).alias("digest")
    ).first()
    return {"rows": row["rows"], "digest": str(row["digest"] or 0)}


# Tables that append builds of keys (the models' config live_rows, docs/semantics.md): what they
# hold is each build key's newest build, vacancy rows (no `present` column) left out; how their
# files hold it (superseded builds, build_tier) differs between an incremental history and a
# backfill of the same input.
LIVE_ROWS = {
    "int_row_changes": (("table_key", "unit_identity"), "action_id"),
    "int_row_versions": (("table_key", "unit_identity"), "version_id"),
    "int_current_rows": (("table_key", "unit_identity"), "version_id"),
}


def live_rows(table: DataFrame, build_key: tuple[str, ...], present: str) -> DataFrame:
    newest = F.max("built_at").over(Window.partitionBy(*build_key))
    live = table.withColumn("_newest", newest).where(F.col("built_at").eqNullSafe(F.col("_newest")))
    return live.where(F.col(present).isNotNull()).drop("_newest", "build_tier")


def digest(spark: SparkSession) -> dict[str, dict[str, int | str]]:
    """The digest of every table of every schema, landing tables included (the input itself); of
    a table in LIVE_ROWS, of its live rows."""
    digests = {}
    for name in stored_tables(spark, user_schemas(spark)):
        table = spark.table(name)
        if name.split(".")[-1] in LIVE_ROWS:
            table = live_rows(table, *LIVE_ROWS[name.split(".")[-1]])
        digests[name], seconds, _ = timed(lambda table=table: table_digest(table))
        print(f"[digest] {name}: {digests[name]['rows']:,} rows in {seconds:.1f}s", file=sys.stderr, flush=True)
    return digests


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "step", choices=("land", "parse-floor", "decoder-floor", "staging-steps", "write-floor", "digest")
    )
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--data-dir", type=Path, help="generator output (land)")
    parser.add_argument("--batch", type=int, choices=sorted(BATCH_LANDED_AT), default=1, help="batch to land")
    parser.add_argument("--file", help="each dialect's file to land instead of batch-BATCH.parquet (land)")
    parser.add_argument(
        "--minutes-after", type=int, default=0, help="land that many minutes after the batch's time (land)"
    )
    parser.add_argument("--target", type=Path, help="the dbt target folder of a build (staging-steps)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every model's steps (staging-steps)")
    parser.add_argument("--result", type=Path, required=True, help="JSON file the figures are written to")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    spark = get_spark(
        master=args.master, warehouse=args.warehouse, extra_conf={"spark.driver.memory": args.driver_memory}
    )
    session_seconds = time.perf_counter() - started
    if args.step == "land":
        if args.data_dir is None:
            parser.error("land needs --data-dir")
        figures: dict = {"rows": land(spark, args.data_dir, args.batch, args.file, args.minutes_after)}
    elif args.step == "parse-floor":
        figures = {"dialects": parse_floor(spark)}
    elif args.step == "decoder-floor":
        figures = {"dialects": decoder_floor(spark)}
    elif args.step == "staging-steps":
        if args.target is None:
            parser.error("staging-steps needs --target")
        figures = {"dialects": staging_steps(spark, args.target, args.rounds)}
    elif args.step == "digest":
        figures = {"tables": digest(spark)}
    else:
        figures = {"tables": write_floor(spark)}
    figures["session_start_seconds"] = session_seconds
    args.result.write_text(json.dumps(figures, indent=2) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
