"""Landing raw CDC messages: files -> `landing.<dialect>` (docs/landing.md).

Reading and validating files is pure (pyarrow + numpy, no Spark), so a bad command fails
before the JVM starts and before anything is written.  Writing goes Arrow -> Spark in one
append per command; a load ledger remembers the content hash of every loaded file so the
same file is not landed twice by accident.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_unify.contract import DIALECTS, LANDING_COLUMNS, LANDING_SCHEMA, landing_table_ddl

FILE_KINDS = {".jsonl": "jsonl", ".parquet": "parquet"}
LEDGER_TABLE = f"`{LANDING_SCHEMA}`.`load_ledger`"
LEDGER_DDL = (
    f"create table if not exists {LEDGER_TABLE} (`dialect` string, `feed` string, `file_sha256` string, "
    "`file_path` string, `rows` bigint, `landed_at` timestamp) using parquet"
)
# Spark SQL type -> Arrow type of the same values; timestamps are instants (UTC).
ARROW_TYPES = {
    "string": pa.string(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "binary": pa.binary(),
}
# The Kafka record columns a file must carry: the landing columns except the two the loader adds.
RECORD_SCHEMA = pa.schema(
    [pa.field(name, ARROW_TYPES[typ]) for name, typ in LANDING_COLUMNS if name not in ("feed", "landed_at")]
)
# Columns every Kafka record has a value in; key, value (tombstone) and timestamp may be null.
REQUIRED_VALUES = ("topic", "partition", "offset")
# What each record column accepts from a Parquet file (cast losslessly to RECORD_SCHEMA).
ACCEPTED_TYPES: dict[str, tuple[str, Callable[[pa.DataType], bool]]] = {
    "topic": ("a string", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)),
    "partition": ("an integer", pa.types.is_integer),
    "offset": ("an integer", pa.types.is_integer),
    "timestamp": ("a timestamp", lambda t: pa.types.is_timestamp(t) or pa.types.is_null(t)),
    "key": ("binary", lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_null(t)),
    "value": ("binary", lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_null(t)),
}


class LandingError(Exception):
    """Bad load input (dialect, feed, file): the message says what and where, in one line."""


@dataclass(frozen=True)
class RecordFile:
    """One input file read into Kafka records (RECORD_SCHEMA), not yet written anywhere."""

    path: Path
    kind: str
    sha256: str
    records: pa.Table
    ignored_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class PreparedLoad:
    """A validated load: every file read and checked, nothing written yet."""

    dialect: str
    feed: str
    files: tuple[RecordFile, ...]


@dataclass(frozen=True)
class LoadResult:
    table: str  # schema.table, for messages
    dialect: str
    feed: str
    landed_at: dt.datetime
    files: tuple[RecordFile, ...]

    @property
    def rows(self) -> int:
        return sum(f.records.num_rows for f in self.files)


def landing_table(dialect: str) -> str:
    """Qualified, quoted name of the landing table of a dialect."""
    check_dialect(dialect)
    return f"`{LANDING_SCHEMA}`.`{dialect}`"


def check_dialect(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise LandingError(f"unknown dialect {dialect!r}; known dialects: {', '.join(DIALECTS)}")


def check_feed(feed: str) -> None:
    if not feed.strip():
        raise LandingError("the feed name must not be empty")


def jsonl_records(data: bytes, topic: str) -> pa.Table:
    """One Kafka record per non-empty line of a `.jsonl` file: value = the line's raw bytes.

    The bytes are never decoded, so a line that is not valid UTF-8 (or not JSON) lands as it is
    and staging quarantines it.  offset = 0-based line number (so it points back at the line; a
    skipped empty line leaves a gap as compacted Kafka partitions do), partition 0, topic = the
    feed, timestamp null (a file has no broker time; the load time is `landed_at`), key null.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(raw == 0x0A)
    ends = newlines if data.endswith(b"\n") or not data else np.append(newlines, len(data))
    starts = np.concatenate(([0], newlines + 1))[: len(ends)]
    lengths = ends - starts
    # The lines laid end to end without their newlines are exactly the Arrow values buffer.
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    values = pa.Array.from_buffers(
        pa.large_binary(), len(lengths), [None, pa.py_buffer(offsets), pa.py_buffer(np.delete(raw, newlines))]
    )
    non_empty = pa.array(lengths > 0)
    count = int(np.count_nonzero(lengths))
    return pa.Table.from_arrays(
        [
            pa.repeat(pa.scalar(topic, pa.string()), count),
            pa.array(np.zeros(count, dtype=np.int32)),
            pa.array(np.arange(len(lengths), dtype=np.int64)).filter(non_empty),
            pa.nulls(count, RECORD_SCHEMA.field("timestamp").type),
            pa.nulls(count, pa.binary()),
            values.filter(non_empty).cast(pa.binary()),
        ],
        schema=RECORD_SCHEMA,
    )


def record_schema_problems(schema: pa.Schema) -> list[str]:
    """Why a file's columns are not Kafka record columns (empty list = they are)."""
    missing = [name for name in RECORD_SCHEMA.names if name not in schema.names]
    problems = [f"missing column(s) {', '.join(missing)}"] if missing else []
    for name, (expected, accepts) in ACCEPTED_TYPES.items():
        if name in schema.names and not accepts(schema.field(name).type):
            problems.append(f"column {name} has type {schema.field(name).type}, expected {expected}")
    return problems


def parquet_records(data: bytes) -> tuple[pa.Table, tuple[str, ...]]:
    """Kafka records of a Parquet file, and the names of the extra columns that were ignored.

    Extra columns (e.g. `timestampType` or `headers` of Spark's Kafka source) are not landed;
    zone-less timestamps are read as UTC.  Raises ValueError naming every problem.
    """
    parquet = pq.ParquetFile(pa.BufferReader(data))
    schema = parquet.schema_arrow
    problems = record_schema_problems(schema)
    if problems:
        raise ValueError("; ".join(problems))
    table = parquet.read(columns=RECORD_SCHEMA.names)
    nulls = [f"{name} ({table.column(name).null_count})" for name in REQUIRED_VALUES if table.column(name).null_count]
    if nulls:
        raise ValueError(f"null values in column(s) that every Kafka record has: {', '.join(nulls)}")
    try:
        records = table.cast(RECORD_SCHEMA, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"values do not fit the landing types: {exc}") from exc
    extra = tuple(name for name in schema.names if name not in RECORD_SCHEMA.names)
    return records, extra


def read_record_file(path: Path, feed: str) -> RecordFile:
    """Read and validate one `.jsonl` or `.parquet` file; raise LandingError naming the file."""
    kind = FILE_KINDS.get(path.suffix.lower())
    if kind is None:
        raise LandingError(f"{path}: unsupported file type; expected one of {', '.join(FILE_KINDS)}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LandingError(f"{path}: cannot read file: {exc.strerror or exc}") from exc
    sha256 = hashlib.sha256(data).hexdigest()
    if kind == "jsonl":
        try:
            return RecordFile(path, kind, sha256, jsonl_records(data, topic=feed))
        except pa.ArrowException as exc:  # e.g. more than 2 GiB of messages in one file
            raise LandingError(f"{path}: cannot land this file in one piece: {one_line(exc)}") from exc
    try:
        records, ignored = parquet_records(data)
    except (ValueError, pa.ArrowException) as exc:
        raise LandingError(f"{path}: not a Parquet file of Kafka records: {one_line(exc)}") from exc
    return RecordFile(path, kind, sha256, records, ignored)


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def prepare_load(dialect: str, feed: str, paths: Sequence[str | Path]) -> PreparedLoad:
    """Validate the dialect, the feed and EVERY file before anything is written."""
    check_dialect(dialect)
    check_feed(feed)
    if not paths:
        raise LandingError("no files to load")
    files = tuple(read_record_file(Path(p), feed) for p in paths)
    return PreparedLoad(dialect, feed, files)


def repeated_in_command(files: Sequence[RecordFile]) -> list[RecordFile]:
    """Files whose content already appeared earlier in the same command."""
    seen: set[str] = set()
    repeated = []
    for file in files:
        if file.sha256 in seen:
            repeated.append(file)
        seen.add(file.sha256)
    return repeated


def create_landing_tables(spark: SparkSession) -> None:
    """The landing schema, every dialect's landing table and the load ledger, if missing."""
    spark.sql(f"create schema if not exists `{LANDING_SCHEMA}`")
    for dialect in DIALECTS:
        spark.sql(landing_table_ddl(dialect))
    spark.sql(LEDGER_DDL)


def kafka_to_landing(records: DataFrame, feed: str, landed_at: Column) -> DataFrame:
    """Kafka records (the columns of Spark's Kafka source; extra ones dropped) -> landing rows.

    Used by `cdc-unify load` and by the streaming ingestion job, so both land the same shape.
    """
    columns = {"feed": F.lit(feed), "landed_at": landed_at}
    return records.select(
        *[(columns[name] if name in columns else F.col(name)).cast(typ).alias(name) for name, typ in LANDING_COLUMNS]
    )


def append_landing(rows: DataFrame, dialect: str) -> None:
    """Append landing rows to `landing.<dialect>` in one Spark write."""
    table = landing_table(dialect)
    expected = [name for name, _ in LANDING_COLUMNS]
    actual = rows.sparkSession.table(table).columns
    # insertInto matches columns by position: refuse a table whose layout is not the contract's.
    if actual != expected:
        raise LandingError(f"{table} has columns {actual}, expected {expected}; recreate it")
    rows.select(*expected).write.insertInto(table)


def already_loaded(spark: SparkSession, dialect: str, feed: str, files: Sequence[RecordFile]) -> list[RecordFile]:
    """Files whose content the ledger says was landed into this dialect and feed before."""
    hashes = [f.sha256 for f in files]
    ledger = spark.table(LEDGER_TABLE)
    loaded = {
        row.file_sha256
        for row in ledger.where(
            (F.col("dialect") == dialect) & (F.col("feed") == feed) & F.col("file_sha256").isin(hashes)
        )
        .select("file_sha256")
        .distinct()
        .collect()
    }
    return [f for f in files if f.sha256 in loaded]


def write_load(
    spark: SparkSession,
    load: PreparedLoad,
    allow_duplicates: bool = False,
    landed_at: dt.datetime | None = None,
) -> LoadResult:
    """Append every file of a prepared load to `landing.<dialect>` and record it in the ledger.

    Duplicates (content already in the ledger for this dialect and feed, or twice in this load)
    are refused unless `allow_duplicates`.  The data is written before the ledger: if the ledger
    write fails, a retry lands the messages again, which staging treats as redelivery, instead
    of refusing a file whose messages never landed.
    """
    landed_at = landed_at or dt.datetime.now(dt.UTC)
    create_landing_tables(spark)
    if not allow_duplicates:
        duplicates = repeated_in_command(load.files) + already_loaded(spark, load.dialect, load.feed, load.files)
        if duplicates:
            names = ", ".join(dict.fromkeys(str(f.path) for f in duplicates))
            raise LandingError(
                f"already loaded into {load.dialect} for feed {load.feed!r} (same content): {names}; "
                "allow duplicates (--allow-duplicates) to land them again"
            )
    records = pa.concat_tables([f.records for f in load.files])
    rows = kafka_to_landing(spark.createDataFrame(records), load.feed, F.lit(landed_at))
    append_landing(rows, load.dialect)
    ledger = pa.table(
        {
            "dialect": [load.dialect] * len(load.files),
            "feed": [load.feed] * len(load.files),
            "file_sha256": [f.sha256 for f in load.files],
            "file_path": [str(f.path.resolve()) for f in load.files],
            "rows": pa.array([f.records.num_rows for f in load.files], pa.int64()),
            "landed_at": pa.array([landed_at] * len(load.files), pa.timestamp("us", tz="UTC")),
        }
    )
    spark.createDataFrame(ledger).write.insertInto(LEDGER_TABLE)
    return LoadResult(f"{LANDING_SCHEMA}.{load.dialect}", load.dialect, load.feed, landed_at, load.files)


def load_files(
    spark: SparkSession,
    dialect: str,
    feed: str,
    paths: Sequence[str | Path],
    allow_duplicates: bool = False,
) -> LoadResult:
    """Validate then land files: nothing is written unless every file is good."""
    return write_load(spark, prepare_load(dialect, feed, paths), allow_duplicates)


def landed_since(landing: DataFrame, staged: DataFrame | None) -> DataFrame:
    """The landing rows a staging model decodes: all of them on a full build (`staged` None),
    else only the loads of each feed landed after the newest one of that feed already staged
    (macros/staging.sql `cdc_new_landing_rows` is the SQL models' copy of this rule). No driver
    round trip: the watermarks join in as a small aggregate, broadcast (one row per feed) so the
    landing rows are filtered where they are read; a sort-merge join would shuffle every landed
    value to one task per feed before the filter."""
    if staged is None:
        return landing
    watermarks = F.broadcast(
        staged.groupBy(F.col("source_name").alias("_staged_feed")).agg(F.max("landed_at").alias("_staged_until"))
    )
    kept = landing.join(watermarks, landing["feed"] == watermarks["_staged_feed"], "left").where(
        F.col("_staged_until").isNull() | (F.col("landed_at") > F.col("_staged_until"))
    )
    return kept.drop("_staged_feed", "_staged_until")
