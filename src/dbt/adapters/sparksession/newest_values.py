"""The newest value of a column per group of a table's rows (a feed's newest landing, a table's
newest built_at), kept with the table so that an incremental run learns its watermarks without
reading its own history.

An incremental model reads, when it compiles, the newest `landed_at` per feed (or `built_at`) of
the rows it holds, to filter its inputs by constants (macros/summaries.sql `cdc_held_watermarks`,
macros/intermediate.sql `cdc_newest_built_at`). As a query that is a scan of two columns of every
stored row: a cost that grows with the history (1.4 s for `int_change_events` at a million
messages). Here the answer is stored in a table property (`cdc_unify.newest.<group>.<value>`) with
a token of the files it was computed from (every data file's path under the table's folder and its
length). A write updates the property from its pending rows before it moves a file
(pending_writes.move_pending), token included, as the table's files will be once the move ends; a
full build computes the ones its model asked for while it compiled (adapter.keep_newest) from the
table it wrote. A write that replaces partitions keeps them too, as high-water marks: the row that
held a kept value may be gone (int_change_events rebuilds the events of its split-update pairs,
and a BEFORE half absorbed by its pair leaves), but the value stays the newest the table's writes
have held, which is what its readers need: a watermark says what a model has taken in (its inputs
up to it were read when it was written), and an incremental model stamps every row it writes with
the newest built_at, so that one stays exact. Dropping it made the next run scan every stored row
(2.35 s of int_change_events' rerun at a million messages, after the +10,000 run rebuilt its pair
partitions; in a pipeline that lands split halves, every run). A stored answer is used only while
the token matches the table's files: a table changed by anything else (a killed move not finished
yet, a hand-made `insert`) is queried again, and the answer stored anew. What a read costs: the
table's properties, one listing of its folders, no data file opened. Only tables with
KEEP_FROM_BYTES of data, or KEEP_FROM_FILES data files, keep values: below both the scan costs less
than keeping them.

Where a value is not kept (a small table, or files changed since), it is read from the table's
data: from the footers of its Parquet files when their statistics tell it exactly (each row group
of one group and its value's maximum recorded: from_footers), which costs a listing and one small
read per file instead of a Spark job (0.1-0.3 s each for the dozen staging tables of every
incremental run), else by the query.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

PREFIX = "cdc_unify.newest"
# What a model has read of a table it takes some rows of (read_until): one property per table read.
READ_UNTIL = "cdc_unify.read_until"
# Tables whose data files sum to less are queried, nothing kept: there a scan of two columns costs
# about what keeping the value through every write does, and above it the scan costs more as the
# table grows. Measured warm on staging tables (docs/benchmarks.md, 2026-12-02): the scan 0.28-0.43 s
# at 22 MB, 0.33-0.63 at 64 MB, 0.35-0.80 at 106 MB (1.3-1.8 s for int_change_events' 279 MB);
# keeping it 0.19-0.50 s per write (the pending rows' values, two listings, a metastore change) and
# 0.03-0.07 s per read.
KEEP_FROM_BYTES = 32 * 1024 * 1024
# Nor does a scan of many small files: it opens each file's footer, and a partitioned table's
# partitions are listed from the metastore first. int_current_rows at a million messages (112 MB
# in 128 files: 64 key_bucket partitions, each a base and a delta file) took 1.6-1.7 s warm to
# give its newest built_at, on every run (docs/benchmarks.md).
KEEP_FROM_FILES = 32


@dataclass(frozen=True)
class Newest:
    """max(`value`) of a table's rows per `group` (rows with a null group or value are left out), or
    over all rows without `group`."""

    group: str | None
    value: str

    @property
    def key(self) -> str:
        return f"{PREFIX}.{self.group or ''}.{self.value}"

    @classmethod
    def of_key(cls, key: str) -> Newest:
        group, value = key[len(PREFIX) + 1 :].split(".", 1)
        return cls(group or None, value)

    def query(self, table: str) -> str:
        """`group` text (null without a group) and max(`value`) in microseconds, one row per group."""
        value = quoted_name(self.value)
        if self.group is None:
            return (
                f"select cast(null as string), unix_micros(max({value})) from {table} having max({value}) is not null"
            )
        group = quoted_name(self.group)
        return (
            f"select cast({group} as string), unix_micros(max({value})) from {table}"
            f" where {group} is not null and {value} is not null group by {group}"
        )


def quoted_name(name: str) -> str:
    """A column name as a Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def compute(spark: SparkSession, table: str, newest: Newest) -> dict[str | None, int]:
    return {row[0]: int(row[1]) for row in spark.sql(newest.query(table)).collect()}


def from_data(
    spark: SparkSession,
    files: Any,
    table: str,
    root: Any,
    entries: set[str],
    newest: Newest,
    footers: dict[str, Any] | None = None,
) -> dict[str | None, int]:
    """`newest` of table `table` (folder `root`, data files `entries`) read from its data: from the
    footers of its files where they tell it exactly (from_footers; `footers`: those already read, by
    relative path, for several values of one table), else by a query."""
    found = from_footers(files, root, entries, newest, footers)
    return found if found is not None else compute(spark, table, newest)


def from_footers(
    files: Any, root: Any, entries: set[str], newest: Newest, footers: dict[str, Any] | None = None
) -> dict[str | None, int] | None:
    """`newest` of the data files `entries` (TableFiles.file_entries) of table folder `root`, from
    their Parquet footers alone; None if one of them cannot tell it: a file that is not Parquet,
    storage whose footers are not read here (TableFiles.parquet_metadata), or statistics that do
    not give it exactly (footer_newest). Each footer read is kept in `footers` when given."""
    found: dict[str | None, int] = {}
    for relative, metadata in each_footer(files, root, entries, footers):
        values = None if metadata is None else footer_newest(metadata, newest, partition_values(relative))
        if values is None:
            return None
        found = merged(found, values)
    return found


def each_footer(
    files: Any, root: Any, entries: set[str], footers: dict[str, Any] | None = None
) -> Iterator[tuple[str, Any]]:
    """Each data file of `entries` (TableFiles.file_entries) of table folder `root`, in path order,
    by its relative path with its Parquet footer (pyarrow FileMetaData); None for a file that is not
    Parquet or storage whose footers are not read here (TableFiles.parquet_metadata). Each footer
    read is kept in `footers` when given."""
    footers = {} if footers is None else footers
    for entry in sorted(entries):
        relative = entry.rsplit(":", 1)[0]
        if relative.endswith(".parquet") and relative not in footers:
            footers[relative] = files.parquet_metadata(files.child(root, relative))
        yield relative, footers.get(relative)


def partition_values(relative: str) -> dict[str, str | None]:
    """The partition columns of a data file from its folders (`name=value`, escaped as Hive escapes
    them; Hive's default partition is null)."""
    values: dict[str, str | None] = {}
    for folder in relative.split("/")[:-1]:
        name, _, value = folder.partition("=")
        text = urllib.parse.unquote(value)
        values[urllib.parse.unquote(name)] = None if text == HIVE_DEFAULT_PARTITION else text
    return values


HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def footer_newest(metadata: Any, newest: Newest, partitions: dict[str, str | None]) -> dict[str | None, int] | None:
    """`newest` of one Parquet file (pyarrow FileMetaData) from the statistics of its row groups, as
    the query would find it in the file's rows; None where they do not tell it exactly: the value's
    maximum not recorded or not a timestamp in micro- or milliseconds, or a row group whose group
    column holds several values or a null beside other rows (the query leaves a row without a group
    out, and the row group's maximum may be that row's). A group that is a partition column takes
    the file's folder value."""
    row_groups = footer_row_groups(metadata, newest.group, newest.value, partitions)
    if row_groups is None:
        return None
    found: dict[str | None, int] = {}
    for rows, statistics, key in row_groups:
        micros = newest_micros(statistics, rows)
        if micros is NOTHING or key is NOTHING:
            continue
        if micros is None or (newest.group is not None and key is None):
            return None
        found[key] = max(found.get(key, micros), micros)
    return found


def footer_row_groups(
    metadata: Any, group: str | None, value: str, partitions: dict[str, str | None]
) -> list[tuple[int, Any, Any]] | None:
    """Each row group of a Parquet file (pyarrow FileMetaData) as its row count, the statistics of
    column `value` and its one text of column `group` (only_text: NOTHING where every row's is null,
    None where the statistics give no one text; the folder's value, or NOTHING for Hive's default
    partition, where `group` partitions the table; None without `group`); None where the file lacks
    `value`, or `group` and no folder gives it."""
    columns = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
    value_index = columns.get(value)
    group_index = columns.get(group) if group is not None else None
    if value_index is None or (group is not None and group_index is None and group not in partitions):
        return None
    found = []
    for index in range(metadata.num_row_groups):
        row_group = metadata.row_group(index)
        rows = row_group.num_rows
        if group is None:
            text = None
        elif group_index is None:
            text = NOTHING if partitions[group] is None else partitions[group]
        else:
            text = only_text(row_group.column(group_index).statistics, rows)
        found.append((rows, row_group.column(value_index).statistics, text))
    return found


# A row group none of whose rows the query counts (every value, or every group, null).
NOTHING: Any = object()


def newest_micros(statistics: Any, rows: int) -> Any:
    """A row group's newest timestamp in microseconds, NOTHING if it holds none, None if its
    statistics do not tell."""
    if statistics is None or statistics.null_count is None:
        return None
    if statistics.null_count == rows:
        return NOTHING
    scale = micros_scale(statistics)
    return None if scale is None else int(statistics.max_raw) * scale


def micros_scale(statistics: Any) -> int | None:
    """Microseconds per unit of a timestamp column's recorded minimum and maximum; None unless they
    are recorded, as INT64 timestamps adjusted to UTC in micro- or milliseconds."""
    logical = statistics.logical_type
    if not statistics.has_min_max or statistics.physical_type != "INT64" or logical.type != "TIMESTAMP":
        return None
    unit = json.loads(logical.to_json())
    if not unit.get("isAdjustedToUTC"):
        return None
    return {"microseconds": 1, "milliseconds": 1000}.get(unit.get("timeUnit"))


def only_text(statistics: Any, rows: int) -> Any:
    """The one text of a row group's string column, NOTHING if every value is null, None if it
    holds several, a null beside other values, or statistics that do not tell."""
    if statistics is None or statistics.null_count is None:
        return None
    if statistics.null_count == rows:
        return NOTHING
    if statistics.null_count or not statistics.has_min_max or statistics.logical_type.type != "STRING":
        return None
    return statistics.min if statistics.min == statistics.max and isinstance(statistics.min, str) else None


def merged(a: dict[str | None, int], b: dict[str | None, int]) -> dict[str | None, int]:
    return {group: max(a.get(group, value), b.get(group, value)) for group, value in {**a, **b}.items()}


def encode(token: str, values: dict[str | None, int]) -> str:
    return json.dumps({"files": token, "newest": sorted(values.items(), key=lambda item: str(item[0]))})


def decode(text: str) -> tuple[str, dict[str | None, int]]:
    stored = json.loads(text)
    return stored["files"], values_of(stored["newest"])


def values_of(pairs: Any) -> dict[Any, int]:
    """[group, microseconds] pairs (as stored, or as the macros pass them) as a dict."""
    return {group: int(micros) for group, micros in pairs}


def sql_string(text: str) -> str:
    """`text` as a Spark SQL string literal (backslash escapes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def stored(spark: SparkSession, table: str, prefix: str = PREFIX) -> dict[str, str]:
    """The properties under `prefix` (key -> text) of table or view `table` (a quoted name): by
    default its newest values. From one metastore call: `show tblproperties` is a SQL command that
    collects its rows (17-24 ms a call warm against 12-17 ms; a +10,000 run of mixed:1M reads
    properties about 80 times, docs/benchmarks.md)."""
    properties = spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(catalog_table(spark, table).properties())
    return {key: properties.get(key) for key in properties.keySet() if key.startswith(prefix + ".")}


def catalog_table(spark: SparkSession, table: str) -> Any:
    """The session catalog's entry (CatalogTable) of table or view `table` (a quoted name, parsed
    by Spark's own parser): one metastore call, no SQL command. Raises Py4JJavaError
    (NoSuchTableException) if there is none."""
    state = spark._jsparkSession.sessionState()
    return state.catalog().getTableMetadata(state.sqlParser().parseTableIdentifier(table))


def described_location(spark: SparkSession, uri: Any) -> str:
    """A table's location URI as `describe table extended` shows it: the path decoded, not the
    URI's escapes."""
    return spark._jvm.org.apache.spark.sql.catalyst.catalog.CatalogUtils.URIToString(uri)


def store(spark: SparkSession, table: str, texts: dict[str, str]) -> None:
    """Sets the properties `texts` in one metastore change (all or none, for a killed process)."""
    if texts:
        pairs = ", ".join(f"{sql_string(key)} = {sql_string(text)}" for key, text in texts.items())
        spark.sql(f"alter table {table} set tblproperties ({pairs})")


def forget(spark: SparkSession, table: str, keys: list[str]) -> None:
    if keys:
        spark.sql(f"alter table {table} unset tblproperties if exists ({', '.join(sql_string(k) for k in keys)})")


def token(entries: set[str]) -> str:
    return hashlib.md5("\n".join(sorted(entries)).encode()).hexdigest()


def newest_values(spark: SparkSession, files: Any, table: str, root: Any, newest: Newest) -> dict[str | None, int]:
    """`newest` of table `table` (folder `root`): as stored while the table's files are those it was
    computed from, else queried, and stored if the table is worth it (worth_keeping)."""
    text = stored(spark, table).get(newest.key)
    entries = files.file_entries(root)
    values = matching(text, entries)
    if values is not None:
        return values
    values = from_data(spark, files, table, root, entries, newest)
    if worth_keeping(entries):
        store(spark, table, {newest.key: encode(token(entries), values)})
    elif text is not None:
        forget(spark, table, [newest.key])
    return values


def kept(
    spark: SparkSession, table: str, newest: Newest, folder: Callable[[], tuple[Any, Any]]
) -> dict[str | None, int] | None:
    """`newest` of table `table` as stored, while the table's files are those it was computed from;
    None otherwise (nothing queried, nothing stored). `folder` gives the table's file operations
    and folder, asked only when the value is stored: a table that keeps none (a landing table, a
    view) costs one read of its properties."""
    text = stored(spark, table).get(newest.key)
    if text is None:
        return None
    files, root = folder()
    return matching(text, files.file_entries(root))


def matching(text: str | None, entries: set[str]) -> dict[str | None, int] | None:
    """The values of stored `text` if its token is that of the files `entries`, else None."""
    if text is None:
        return None
    stored_token, values = decode(text)
    return values if stored_token == token(entries) else None


def worth_keeping(entries: set[str]) -> bool:
    """Whether a table of data files `entries` (TableFiles.file_entries) keeps its newest values."""
    return len(entries) >= KEEP_FROM_FILES or sum(int(entry.rsplit(":", 1)[1]) for entry in entries) >= KEEP_FROM_BYTES


def store_computed(spark: SparkSession, files: Any, table: str, root: Any, kept: list[Newest]) -> None:
    """Every value of `kept` computed from table `table` (folder `root`) and stored with it, if the
    table is worth it (worth_keeping)."""
    entries = files.file_entries(root)
    if worth_keeping(entries):
        footers: dict[str, Any] = {}  # each file's footer read once for all the values
        texts = {
            newest.key: encode(token(entries), from_data(spark, files, table, root, entries, newest, footers))
            for newest in kept
        }
        store(spark, table, texts)


def carry(
    spark: SparkSession,
    files: Any,
    pending: Callable[[], str],
    pending_root: Any,
    target: str,
    target_root: Any,
    replaced: Sequence[str],
) -> None:
    """Before the files of a pending write (in folder `pending_root`; `pending()` names a table or
    view of its rows, made when first asked for) move into `target` (pending_writes.move_pending):
    every newest value stored with `target` merged with the pending rows' and kept under the token of the
    files the target will have (its files under the `replaced` folders, relative paths, `.` for all,
    gone; the pending ones added), or dropped when the stored token no longer matches its files.
    The pending rows' values come from their files' footers where those tell them (from_footers),
    else from a query of `pending()`: a write of a few hundred rows into a table that keeps values
    then sends no Spark job for them (docs/benchmarks.md, "Newest values of a pending write from its
    footers")."""
    texts = stored(spark, target)
    if not texts:
        return
    target_entries = files.file_entries(target_root)
    pending_entries = files.file_entries(pending_root)
    after = remaining(target_entries, replaced) | pending_entries
    footers: dict[str, Any] = {}  # each pending file's footer read once for all the values

    def pending_values(key: str) -> dict[str | None, int]:
        newest = Newest.of_key(key)
        found = from_footers(files, pending_root, pending_entries, newest, footers)
        return found if found is not None else compute(spark, pending(), newest)

    restore(
        spark,
        target,
        texts,
        token(target_entries),
        token(after),
        lambda key, values: merged(values, pending_values(key)),
    )


def remaining(entries: set[str], replaced: Sequence[str]) -> set[str]:
    """The `entries` (TableFiles.file_entries) outside the folders `replaced` (`.`: the root)."""
    if "." in replaced:
        return set()
    prefixes = tuple(folder.rstrip("/") + "/" for folder in replaced)
    return {entry for entry in entries if not entry.startswith(prefixes)}


def refile(spark: SparkSession, files: Any, table: str, root: Any, removed: set[str], added: set[str]) -> None:
    """Before files of table `table` (folder `root`) are replaced by others holding the same rows
    (compaction: `removed` and `added`, as TableFiles.file_entries names them): each stored newest
    value still matching the table's files kept under the token of its files after, others dropped."""
    texts = stored(spark, table)
    if not texts:
        return
    entries = files.file_entries(root)
    restore(spark, table, texts, token(entries), token((entries - removed) | added), lambda key, values: values)


def restore(
    spark: SparkSession,
    table: str,
    texts: dict[str, str],
    current: str,
    after: str,
    update: Callable[[str, dict[str | None, int]], dict[str | None, int]],
) -> None:
    """Each stored value of `texts` (key -> text) whose token is `current`, as `update(key, values)`
    makes it, stored again under token `after`; the others dropped (the table's files changed
    behind the adapter's back: its next read queries them)."""
    keep = {}
    for key, text in texts.items():
        stored_token, values = decode(text)
        if stored_token == current:
            keep[key] = encode(after, update(key, values))
    store(spark, table, keep)
    forget(spark, table, [key for key in texts if key not in keep])


def read_until(spark: SparkSession, table: str, source: str) -> dict[str, int]:
    """The newest landing per feed of table `source` (schema.identifier) that the model of table
    `table` has read up to, as store_read_until left it; {} when none is stored.

    A model that keeps only some rows of its input (int_quarantine the quarantined ones,
    cdc_schema_changes the DDL events) holds, as its own watermark, the landing of the newest row it
    kept, so every later row of a feed, kept or not, stays "past the watermark" and is read again by
    every run: a read that grows with the history. This is the other half of its watermark: how far
    it has read, whatever it kept: its watermark per feed is the later of the two. It is stored
    after the run's write is in the table. A run killed before that leaves the earlier value, and
    its rows (applied from its pending write, or not written at all): the next run reads every row
    past the later of the earlier value and the newest landing the table now keeps, and none of
    those was kept by the killed run, whose kept rows all landed at or before that newest one."""
    text = stored(spark, table, READ_UNTIL).get(read_until_key(source))
    return {} if text is None else values_of(json.loads(text))


def store_read_until(spark: SparkSession, table: str, source: str, newest: dict[str, int]) -> None:
    """After a run of the model of table `table` has written what it took of table `source` up to
    `newest` (its newest landing per feed when the run read it): raises the stored read_until to
    it; nothing is changed when it holds it already (a run with nothing new)."""
    before = read_until(spark, table, source)
    after = merged(before, newest)
    if after != before:
        store(spark, table, {read_until_key(source): json.dumps(sorted(after.items()))})


def read_until_key(source: str) -> str:
    """The table property holding how far a model has read table `source` (schema.identifier)."""
    return f"{READ_UNTIL}.{source}"
