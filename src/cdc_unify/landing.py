"""Landing raw CDC messages: files -> `landing.<dialect>` (docs/landing.md).

Reading and validating files is pure (pyarrow + numpy, no Spark), so a bad command fails
before the JVM starts and before anything is written.  Writing goes Arrow -> Spark, one Parquet
file per command that appears in the table by one rename (a killed load is all or nothing); a
load ledger remembers the content hash of every loaded file, so the same file is not landed twice
by accident, and where each `.jsonl` file's offsets start, so no two records of a feed share
(topic, partition, offset).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import os
import signal
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from py4j.protocol import Py4JError
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_unify.contract import DIALECTS, LANDING_COLUMNS, LANDING_SCHEMA, NO_FEED, landing_table_ddl

FILE_KINDS = {".jsonl": "jsonl", ".parquet": "parquet"}
LEDGER_TABLE = f"`{LANDING_SCHEMA}`.`load_ledger`"
LEDGER_COLUMNS = (
    ("dialect", "string"),
    ("feed", "string"),
    ("file_sha256", "string"),
    ("file_path", "string"),
    ("rows", "bigint"),
    ("landed_at", "timestamp"),
    ("first_offset", "bigint"),
    ("end_offset", "bigint"),
)
# Added after the first release: a ledger written before them gets them (null in its old rows).
OFFSET_COLUMNS = ("first_offset", "end_offset")
LEDGER_DDL = (
    f"create table if not exists {LEDGER_TABLE} ("
    + ", ".join(f"`{name}` {typ}" for name, typ in LEDGER_COLUMNS)
    + ") using parquet"
)
# A load is written here (beside the landing tables, a name Spark lists as hidden) before its
# data file is renamed into the table: `_loads/<load id>/<dialect>/` and `_loads/<load id>/ledger/`.
LOADS_DIR = "_loads"
LEDGER_STAGE = "ledger"
# Test hook: a load stops (until killed) at the named point of its commit protocol, so a test
# can SIGKILL it exactly there (tests/python/test_load_kill.py).
PAUSE_ENV = "CDC_UNIFY_TEST_PAUSE_AT"
PAUSE_POINTS = ("ledger-staged", "staged", "committed", "ledger-written")
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
    # `.jsonl`: the offsets the file spans (one per line, empty lines included) and, once placed
    # in its feed's log by write_load, the first one (offset - first_offset = line number).
    lines: int = 0
    first_offset: int | None = None


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
    load_id: str = ""

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
    if feed == NO_FEED:
        raise LandingError(f"the feed name {NO_FEED!r} is reserved for landing rows that name no feed")


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
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        try:
            return RecordFile(path, kind, sha256, jsonl_records(data, topic=feed), lines=lines)
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
    missing = [name for name in OFFSET_COLUMNS if name not in spark.table(LEDGER_TABLE).columns]
    if missing:
        spark.sql(f"alter table {LEDGER_TABLE} add columns ({', '.join(f'`{name}` bigint' for name in missing)})")


def kafka_to_landing(records: DataFrame, feed: str, landed_at: Column) -> DataFrame:
    """Kafka records (the columns of Spark's Kafka source; extra ones dropped) -> landing rows.

    Used by `cdc-unify load` and by the streaming ingestion job, so both land the same shape.
    """
    check_feed(feed)
    columns = {"feed": F.lit(feed), "landed_at": landed_at}
    return records.select(
        *[(columns[name] if name in columns else F.col(name)).cast(typ).alias(name) for name, typ in LANDING_COLUMNS]
    )


def append_landing(rows: DataFrame, dialect: str) -> None:
    """Append landing rows to `landing.<dialect>` in one Spark write."""
    table = landing_table(dialect)
    # insertInto matches columns by position: refuse a table whose layout is not the contract's.
    check_layout(rows.sparkSession, table)
    with landing_row_groups(rows.sparkSession):
        rows.select(*[name for name, _ in LANDING_COLUMNS]).write.insertInto(table)


@contextmanager
def landing_row_groups(spark: SparkSession) -> Iterator[None]:
    """Parquet row groups of LANDING_ROW_GROUP_BYTES for the session's writes while the block runs
    (`insertInto` ignores a writer option; the session's settings reach the Parquet writer)."""
    previous = spark.conf.get(ROW_GROUP_SETTING, None)
    spark.conf.set(ROW_GROUP_SETTING, str(LANDING_ROW_GROUP_BYTES))
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(ROW_GROUP_SETTING)
        else:
            spark.conf.set(ROW_GROUP_SETTING, previous)


def check_layout(spark: SparkSession, table: str) -> None:
    expected = [name for name, _ in LANDING_COLUMNS]
    actual = spark.table(table).columns
    if actual != expected:
        raise LandingError(f"{table} has columns {actual}, expected {expected}; recreate it")


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


def next_offset(spark: SparkSession, dialect: str, feed: str) -> int:
    """The first offset no record of the feed's `.jsonl` log uses yet: from the ledger (one row per
    file), or, for a ledger written before it kept offsets, from the landed rows themselves."""
    ledger = spark.table(LEDGER_TABLE).where((F.col("dialect") == dialect) & (F.col("feed") == feed))
    end, entries = ledger.agg(F.max("end_offset"), F.count(F.lit(1))).first()
    if end is not None or entries == 0:
        return end or 0
    # Before the ledger kept offsets every `.jsonl` file's offsets were its line numbers.
    landed = spark.table(landing_table(dialect)).where(
        (F.col("feed") == feed) & (F.col("topic") == feed) & (F.col("partition") == 0)
    )
    last = landed.agg(F.max("offset")).first()[0]
    return 0 if last is None else last + 1


def place_offsets(files: Sequence[RecordFile], feed: str, first: int) -> tuple[tuple[RecordFile, ...], list[int]]:
    """Give each `.jsonl` file the next range of its feed's log (topic = feed, partition 0), in
    command order, and return the files with the log's end after each file.  A `.parquet` file
    keeps its Kafka coordinates; if it has records in the feed's own log (a topic named like the
    feed), later `.jsonl` offsets start after them."""
    placed, ends = [], []
    for file in files:
        if file.kind == "jsonl":
            offsets = pc.add(file.records.column("offset"), pa.scalar(first, pa.int64()))
            records = file.records.set_column(file.records.schema.get_field_index("offset"), "offset", offsets)
            file = dataclasses.replace(file, records=records, first_offset=first)
            first += file.lines
        else:
            in_log = pc.and_(
                pc.equal(file.records.column("topic"), feed), pc.equal(file.records.column("partition"), 0)
            )
            last = pc.max(file.records.column("offset").filter(in_log)).as_py()
            first = max(first, last + 1) if last is not None else first
        placed.append(file)
        ends.append(first)
    return tuple(placed), ends


def ledger_rows(load: PreparedLoad, ends: Sequence[int], landed_at: dt.datetime) -> pa.Table:
    """The ledger entries of a load: one per file."""
    count = len(load.files)
    return pa.table(
        {
            "dialect": [load.dialect] * count,
            "feed": [load.feed] * count,
            "file_sha256": [f.sha256 for f in load.files],
            "file_path": [str(f.path.resolve()) for f in load.files],
            "rows": pa.array([f.records.num_rows for f in load.files], pa.int64()),
            "landed_at": pa.array([landed_at] * count, pa.timestamp("us", tz="UTC")),
            "first_offset": pa.array([f.first_offset for f in load.files], pa.int64()),
            "end_offset": pa.array(ends, pa.int64()),
        }
    )


def write_load(
    spark: SparkSession,
    load: PreparedLoad,
    allow_duplicates: bool = False,
    landed_at: dt.datetime | None = None,
) -> LoadResult:
    """Append every file of a prepared load to `landing.<dialect>` and record it in the ledger.

    Duplicates (content already in the ledger for this dialect and feed, or twice in this load)
    are refused unless `allow_duplicates`.  All or nothing, even if the process is killed: the
    rows and the ledger entries are written aside first, then the rows' one file is renamed into
    the table (the commit), then the entries' file into the ledger; the next load finishes or
    discards an interrupted one (`recover_loads`), so the ledger always agrees with the table.
    """
    landed_at = landed_at or dt.datetime.now(dt.UTC)
    recover_loads(spark)
    if not allow_duplicates:
        duplicates = repeated_in_command(load.files) + already_loaded(spark, load.dialect, load.feed, load.files)
        if duplicates:
            names = ", ".join(dict.fromkeys(str(f.path) for f in duplicates))
            raise LandingError(
                f"already loaded into {load.dialect} for feed {load.feed!r} (same content): {names}; "
                "allow duplicates (--allow-duplicates) to land them again"
            )
    files, ends = place_offsets(load.files, load.feed, next_offset(spark, load.dialect, load.feed))
    load = dataclasses.replace(load, files=files)
    records = pa.concat_tables([f.records for f in load.files])
    rows = kafka_to_landing(spark.createDataFrame(records), load.feed, F.lit(landed_at))
    load_id = f"{landed_at:%Y%m%dT%H%M%S%fZ}-{uuid.uuid4().hex[:8]}"
    commit_load(spark, load_id, load.dialect, rows, spark.createDataFrame(ledger_rows(load, ends, landed_at)))
    return LoadResult(f"{LANDING_SCHEMA}.{load.dialect}", load.dialect, load.feed, landed_at, load.files, load_id)


class HadoopFiles:
    """The file operations of the commit protocol, on the warehouse's Hadoop file system (local
    folder, HDFS, ...): a rename of one file is atomic there, which is what the protocol needs."""

    def __init__(self, spark: SparkSession, location: str, fs: object | None = None) -> None:
        self._path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
        self._spark = spark
        self._fs = fs or self._path(location).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def raw(self) -> HadoopFiles:
        """The same files without Hadoop's checksum layer (the local file system keeps a `.crc` beside
        each file and renames it separately; the raw one renames the data file alone)."""
        try:
            return HadoopFiles(self._spark, "", self._fs.getRawFileSystem())
        except Py4JError:  # not a checksummed file system
            return self

    def replaced(self, source: str, target: str) -> bool:
        """Rename `source` onto the existing `target`; False where the file system does not replace."""
        return bool(self._fs.rename(self._path(source), self._path(target))) and not self.exists(source)

    def exists(self, location: str) -> bool:
        return bool(self._fs.exists(self._path(location)))

    def children(self, location: str) -> list[str]:
        if not self.exists(location):
            return []
        return sorted(str(status.getPath().getName()) for status in self._fs.listStatus(self._path(location)))

    def rename(self, source: str, target: str) -> None:
        if not self._fs.rename(self._path(source), self._path(target)):
            raise LandingError(f"could not move {source} to {target}")

    def delete(self, location: str) -> None:
        self._fs.delete(self._path(location), True)


@dataclass(frozen=True)
class Places:
    """Where a load's files go: the ledger's folder and the staging folder of loads beside it."""

    spark: SparkSession
    fs: HadoopFiles
    ledger: str
    loads: str

    @classmethod
    def of(cls, spark: SparkSession) -> Places:
        ledger = table_location(spark, LEDGER_TABLE)
        return cls(spark, HadoopFiles(spark, ledger), ledger, f"{ledger.rsplit('/', 1)[0]}/{LOADS_DIR}")

    def committed_file(self, dialect: str, load_id: str) -> str:
        return f"{table_location(self.spark, landing_table(dialect))}/{committed_name(load_id)}"


def table_location(spark: SparkSession, table: str) -> str:
    rows = spark.sql(f"describe table extended {table}").collect()
    return next(str(row.data_type) for row in rows if row.col_name == "Location").rstrip("/")


# A Parquet file splits between tasks only at row groups, and a staging model's work is per message,
# with no shuffle to spread it. Parquet's 128 MiB made a load of 100,000 messages one row group,
# decoded by one task while the other cores waited; 16 MiB still did for the ~15 MB such a load
# compresses to. At 2 MiB it is about eight, which a scan shares evenly between the cores
# (docs/benchmarks.md, "Landing files in 2 MiB row groups").
LANDING_ROW_GROUP_BYTES = 2 * 1024 * 1024
ROW_GROUP_SETTING = "parquet.block.size"


def committed_name(load_id: str) -> str:
    """The name of a load's file in the landing table and in the ledger (Spark lists any name not
    starting with `_` or `.`)."""
    return f"load-{load_id}.parquet"


def write_single_file(rows: DataFrame, folder: str) -> None:
    """Write `rows` as ONE Parquet file (one task), so that one rename publishes all of them; in row
    groups of LANDING_ROW_GROUP_BYTES, so that a scan of one load splits across the cores."""
    with landing_row_groups(rows.sparkSession):
        rows.coalesce(1).write.mode("errorifexists").parquet(folder)


def staged_file(fs: HadoopFiles, folder: str) -> str:
    parts = [name for name in fs.children(folder) if name.endswith(".parquet") and not name.startswith((".", "_"))]
    if len(parts) != 1:
        raise LandingError(f"{folder}: expected one Parquet file, found {len(parts)}")
    return f"{folder}/{parts[0]}"


def commit_load(spark: SparkSession, load_id: str, dialect: str, rows: DataFrame, ledger: DataFrame) -> None:
    """Stage a load's rows and ledger entries, then publish them: the rename of the rows' file
    into the table is the commit; the ledger entries follow (or `recover_loads` moves them)."""
    table = landing_table(dialect)
    check_layout(spark, table)
    places = Places.of(spark)
    stage = f"{places.loads}/{load_id}"
    write_single_file(ledger, f"{stage}/{LEDGER_STAGE}")
    pause_point("ledger-staged")
    write_single_file(rows.select(*[name for name, _ in LANDING_COLUMNS]), f"{stage}/{dialect}")
    pause_point("staged")
    places.fs.rename(staged_file(places.fs, f"{stage}/{dialect}"), places.committed_file(dialect, load_id))
    pause_point("committed")
    finish_load(places, load_id)
    for name in (table, LEDGER_TABLE):
        spark.catalog.refreshTable(name)


def finish_load(places: Places, load_id: str) -> bool:
    """Move a committed load's ledger entries into the ledger and drop its staging; False if the
    entries were there already (the load was killed while cleaning up)."""
    stage = f"{places.loads}/{load_id}"
    target = f"{places.ledger}/{committed_name(load_id)}"
    moved = not places.fs.exists(target)
    if moved:
        places.fs.rename(staged_file(places.fs, f"{stage}/{LEDGER_STAGE}"), target)
    pause_point("ledger-written")
    places.fs.delete(stage)
    return moved


def recover_loads(spark: SparkSession) -> list[str]:
    """Finish or discard the loads a killed process left staged, and say what was done.

    A load whose rows' file is in its table committed: its ledger entries are moved into the
    ledger.  Any other was never visible: its staging folder is deleted, and running the same
    load again lands it.  Runs before a load reads the ledger; the warehouse lock
    (cdc_unify.spark.lock_warehouse) keeps another process's load from being mistaken for one.
    """
    create_landing_tables(spark)
    places = Places.of(spark)
    done = []
    for load_id in places.fs.children(places.loads):
        stage = f"{places.loads}/{load_id}"
        dialects = [name for name in places.fs.children(stage) if name in DIALECTS]
        if any(places.fs.exists(places.committed_file(dialect, load_id)) for dialect in dialects):
            if finish_load(places, load_id):
                done.append(f"finished interrupted load {load_id}: its rows had landed, the ledger now records them")
            else:
                done.append(f"removed the staging folder of load {load_id} (it had completed)")
        else:
            places.fs.delete(stage)
            done.append(f"discarded interrupted load {load_id}: none of its rows had landed")
    if done:
        for name in (LEDGER_TABLE, *(landing_table(dialect) for dialect in DIALECTS)):
            spark.catalog.refreshTable(name)
    return done


REWRITES_DIR = "_timestamp_rewrites"


@dataclass(frozen=True)
class Rewrite:
    """One landing file whose timestamps Parquet stores as INT96 (and keeps no min/max for)."""

    table: str
    path: str
    columns: tuple[str, ...]


def int96_columns(spark: SparkSession, path: str) -> tuple[str, ...]:
    """The columns of a Parquet file stored as INT96, from its footer alone."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    source = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(jvm.org.apache.hadoop.fs.Path(path), conf)
    reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(source)
    try:
        columns = reader.getFooter().getFileMetaData().getSchema().getColumns()
        return tuple(
            ".".join(column.getPath())
            for column in columns
            if column.getPrimitiveType().getPrimitiveTypeName().name() == "INT96"
        )
    finally:
        reader.close()


def int96_landing_files(spark: SparkSession) -> list[Rewrite]:
    """Every data file of the landing tables (loads, and files an ingestion job wrote) with INT96
    timestamps: an incremental staging run cannot skip them by `landed_at`, so reads them whole."""
    create_landing_tables(spark)
    found = []
    for dialect in DIALECTS:
        table = landing_table(dialect)
        location = table_location(spark, table)
        for name in HadoopFiles(spark, location).children(location):
            if name.endswith(".parquet") and not name.startswith((".", "_")):
                columns = int96_columns(spark, f"{location}/{name}")
                if columns:
                    found.append(Rewrite(table, f"{location}/{name}", columns))
    return found


def rewrite_timestamps(spark: SparkSession, rewrite: Rewrite) -> int:
    """Write the file again with the session's TIMESTAMP_MICROS and put it in the old one's place
    under the same name (the load ledger names it); return its rows.

    The new file replaces the old by one rename, which the local file system does atomically: at
    every instant the table holds one of the two, so a killed rewrite loses and doubles nothing.
    Both files' checksums go first, so no old checksum is ever paired with the new data. A file
    system whose rename does not replace (HDFS) refuses, and the table is left as it was."""
    places = Places.of(spark)
    stage = f"{places.loads.rsplit('/', 1)[0]}/{REWRITES_DIR}/{uuid.uuid4().hex}"
    fs = places.fs.raw()
    old = spark.read.parquet(rewrite.path)
    try:
        write_single_file(old, stage)
        new = staged_file(fs, stage)
        rows, written = old.count(), spark.read.parquet(new).count()
        if rows != written:
            raise LandingError(f"{rewrite.path}: the rewritten file has {written} rows, not {rows}; left as it was")
        if int96_columns(spark, new):
            raise LandingError(
                f"{rewrite.path}: the session writes INT96 (spark.sql.parquet.outputTimestampType); left as it was"
            )
        for path in (new, rewrite.path):
            fs.delete(checksum_file(path))
        if not fs.replaced(new, rewrite.path):
            raise LandingError(
                f"{rewrite.path}: this file system does not replace a file by rename; left as it was "
                "(rewrite it with a Spark job that writes TIMESTAMP_MICROS)"
            )
    finally:
        fs.delete(stage)
    spark.catalog.refreshTable(rewrite.table)
    return rows


def checksum_file(path: str) -> str:
    """Where Hadoop's local file system keeps a file's checksum."""
    folder, name = path.rsplit("/", 1)
    return f"{folder}/.{name}.crc"


def pause_point(name: str) -> None:
    """Test hook: stop here until killed when env CDC_UNIFY_TEST_PAUSE_AT names this point."""
    if os.environ.get(PAUSE_ENV) == name:
        print(f"paused at {name} ({PAUSE_ENV})", file=sys.stderr, flush=True)
        while True:
            signal.pause()


def load_files(
    spark: SparkSession,
    dialect: str,
    feed: str,
    paths: Sequence[str | Path],
    allow_duplicates: bool = False,
) -> LoadResult:
    """Validate then land files: nothing is written unless every file is good."""
    return write_load(spark, prepare_load(dialect, feed, paths), allow_duplicates)


def staged_until(session: SparkSession, this: Any) -> dict[str, int]:
    """The newest landing per feed (microseconds) that staging model table `this` holds, for
    landed_since: kept with the table by the sparksession adapter (newest_values, as the SQL
    staging models' watermarks are: asked for by config keep_newest on the full build, carried
    by every write), so that a run reads no staged row to learn it; queried (two columns of every
    staged row) while the table is too small to keep it."""
    from dbt.adapters.sparksession import newest_values, pending_writes

    return pending_writes.newest_of(session, this, newest_values.Newest("source_name", "landed_at"))


def landed_since(landing: DataFrame, held: Mapping[str, int] | None) -> DataFrame:
    """The landing rows a staging model decodes: all of them on a full build (`held` None), else
    only the loads of each feed landed after `held`, the newest one of that feed already staged
    (microseconds, staged_until; macros/summaries.sql `cdc_landed_after_held`, through
    `cdc_new_landing_rows`, is the SQL models' copy of this rule). The watermarks go into the
    filter as constants: Spark hands such a filter to the Parquet scan, which skips the files of
    older loads instead of reading every landed value and dropping it after a join.
    Nothing landed since: a selection Spark runs without a task, so that the model's decoder starts
    no Python worker (1-1.5 s of the first Python model of a run that stages nothing, as the SQL
    models' cdc_skip_write_when_nothing_new runs no query); finding that out is one scan that stops
    at the first new row and skips the older loads' row groups."""
    if not held:
        return landing
    feed = F.col("feed")
    # A null or empty feed is NO_FEED (staged under it and quarantined, macro cdc_staged_select), so
    # that its rows are read once; `isin` is null for a null feed.
    if NO_FEED in held:
        new_rows = ~feed.isin([*held, ""])
    else:
        new_rows = feed.isNull() | ~feed.isin(list(held))
    for name, until in held.items():
        is_feed = (feed.isNull() | feed.isin("", NO_FEED)) if name == NO_FEED else feed == F.lit(name)
        new_rows = new_rows | (is_feed & (F.col("landed_at") > F.timestamp_micros(F.lit(until))))
    since = landing.where(new_rows)
    return landing.where(F.lit(False)) if since.isEmpty() else since
