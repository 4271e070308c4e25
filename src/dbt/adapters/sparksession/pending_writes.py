"""Kill-safe table writes of the sparksession adapter: files move, they are never rewritten in place.

Spark replaces a table's data in place: `insert overwrite` deletes a partition's files, then moves
the new ones in; `insert into` moves the new files in one by one at job commit; `create table as`
writes into the table's folder before the metastore knows the table. A process killed in between
leaves a table with part of its old or new data (an incremental model then reads a wrong `this` on
every later run) or a folder that makes the next `create table as` fail.

Here an incremental run first writes its new rows as files of their own: the pending write, a
hidden folder in the table's folder (`_cdc_pending`, which Spark's and Hive's readers of the table
skip, as they skip every name starting with `_`), complete once a marker file is written after
Spark's job commit. Its files then move into the table's folders with renames, each atomic, and the
pending folder goes last. A complete pending write found at the start of a run is the write of a
killed run: it is applied then, whatever part of it was applied before, since every step skips
what is done; an incomplete one is the leftover of a write killed before it ended, discarded.
Kept out of the metastore, a pending write costs its files alone: a `create table as` and its
`drop table` cost 2.1-2.5 s more, warm, for a write of 128 partition folders (docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import itertools
import os
import re
import shutil
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet
from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from dbt.adapters.sparksession import new_rows, newest_values

# Spark and Hadoop keep job and commit state in entries whose names start with these.
HIDDEN_PREFIXES = ("_", ".")
# A table's pending write: a folder in the table's folder, complete once it holds the marker.
PENDING_FOLDER = "_cdc_pending"
COMPLETE_MARKER = "_cdc_complete"
# The pending table (`<model><suffix>`) in which versions before 2026-12-02 kept a pending write.
LEGACY_PENDING_SUFFIX = "__dbt_pending"


@dataclass(frozen=True)
class Named:
    """A table by schema and name, as this module's functions take relations."""

    schema: str
    identifier: str


def quoted(relation: Any) -> str:
    return f"`{relation.schema}`.`{relation.identifier}`"


def legacy_pending(target: Any) -> Named:
    return Named(target.schema, f"{target.identifier}{LEGACY_PENDING_SUFFIX}")


class TableFiles:
    """Operations on the folders of managed tables. A path is a handle of the storage's own kind
    (`root` makes one from a table's location, `child` one under it); the moves, listings and
    counts the writes need are written once here over a few primitives, which LocalFiles and
    HadoopFiles implement. `table_files` picks one for a location."""

    def root(self, location: str) -> Any:
        """The handle of a folder given by its location URI (as `describe table extended` shows it)."""
        raise NotImplementedError

    def child(self, folder: Any, relative: str) -> Any:
        """The handle of `relative` (a name, or names joined by `/`; `.` for `folder` itself)."""
        raise NotImplementedError

    def parent(self, path: Any) -> Any:
        raise NotImplementedError

    def exists(self, path: Any) -> bool:
        raise NotImplementedError

    def entries(self, folder: Any) -> list[tuple[str, Any, bool, int]]:
        """(name, handle, is a folder, bytes) of each visible entry of `folder` ([] if there is none)."""
        raise NotImplementedError

    def make_folder(self, path: Any) -> None:
        raise NotImplementedError

    def rename(self, source: Any, target: Any) -> bool:
        """`source` (a file with its checksum, or a folder) moved to `target`: one atomic rename."""
        raise NotImplementedError

    def remove(self, path: Any) -> None:
        """`path` and everything under it, if it exists."""
        raise NotImplementedError

    def parquet_rows(self, file: Any) -> int:
        """The row count a Parquet file's footer records: one small read at the file's end."""
        raise NotImplementedError

    def parquet_metadata(self, file: Any) -> Any:
        """A Parquet file's footer (pyarrow FileMetaData: its row groups' statistics), or None where
        footers are not read from Python (newest_values then queries the table)."""
        return None

    def uri(self, path: Any) -> str:
        """`path` as a URI Spark's readers take."""
        raise NotImplementedError

    def write_text(self, path: Any, text: str) -> None:
        """A new file `path` holding `text` (UTF-8), replacing any."""
        raise NotImplementedError

    def read_text(self, path: Any) -> str | None:
        """The text of file `path`; None if there is none."""
        raise NotImplementedError

    def write_text_atomically(self, path: Any, text: str) -> None:
        """`write_text`, seen whole or not at all: written beside `path`, then renamed to it."""
        written = self.child(self.parent(path), f"{self.name(path)}.tmp")
        self.write_text(written, text)
        if not self.rename(written, path):
            raise OSError(f"could not move {written} to {path}")

    def name(self, path: Any) -> str:
        raise NotImplementedError

    def file_entries(self, root: Any) -> set[str]:
        """`relative path:bytes` of every visible file under folder `root` (partition folders
        included; hidden entries such as _SUCCESS, .crc files and _temporary folders left out)."""
        found = set()
        folders = [("", root)]
        while folders:
            relative, folder = folders.pop()
            for name, path, is_folder, size in self.entries(folder):
                if is_folder:
                    folders.append((f"{relative}{name}/", path))
                else:
                    found.add(f"{relative}{name}:{size}")
        return found

    def partition_folder(self, root: Any, partition: str) -> Any:
        """The folder of `partition` (a relative path from `leaves`) under table folder `root`."""
        return self.child(root, partition)

    def data_files(self, folder: Any) -> list[tuple[Any, int]]:
        """(handle, bytes) of the visible files directly in `folder`."""
        return [(path, size) for _, path, is_folder, size in self.entries(folder) if not is_folder]

    def leaves(self, root: Any, depth: int) -> list[str]:
        """Relative paths of the folders `depth` levels under `root` (one per partition; `.` for
        the root itself)."""
        level = [(".", root)]
        for _ in range(depth):
            level = [
                (name if relative == "." else f"{relative}/{name}", path)
                for relative, folder in level
                for name, path, is_folder, _ in self.entries(folder)
                if is_folder
            ]
        return [relative for relative, _ in level]

    def move_files(self, source: Any, target: Any) -> None:
        """Every data file of `source` into `target` under the same name (unique: Spark names
        files after their write job)."""
        self.make_folder(target)
        for name, path, is_folder, _ in self.entries(source):
            if not is_folder and not self.rename(path, self.child(target, name)):
                raise OSError(f"could not move {path} to {target}")

    def replace_folder(self, source: Any, target: Any) -> None:
        """`target` replaced by `source`. Killed between the two steps, `source` is still there
        and a second call finishes the move."""
        self.remove(target)
        self.make_folder(self.parent(target))
        if not self.rename(source, target):
            raise OSError(f"could not move {source} to {target}")


class LocalFiles(TableFiles):
    """A local warehouse's folders (`file:` locations) by Python's own file functions. Through
    Hadoop's FileSystem each step is a call into the JVM (about 0.15 ms over Py4J, some 80 calls
    for each partition a write moves): listings, moves and footers took 2.1 s of the 3.9 s
    int_row_versions' write of a +10,000 run took to apply at a million messages
    (docs/benchmarks.md)."""

    def root(self, location: str) -> str:
        return urllib.parse.unquote(urllib.parse.urlparse(location).path)

    def child(self, folder: str, relative: str) -> str:
        return folder if relative == "." else os.path.join(folder, relative)

    def parent(self, path: str) -> str:
        return os.path.dirname(path.rstrip("/"))

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def entries(self, folder: str) -> list[tuple[str, str, bool, int]]:
        if not os.path.isdir(folder):
            return []
        with os.scandir(folder) as found:
            return [
                (entry.name, entry.path, entry.is_dir(), 0 if entry.is_dir() else entry.stat().st_size)
                for entry in found
                if not entry.name.startswith(HIDDEN_PREFIXES)
            ]

    def make_folder(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def rename(self, source: str, target: str) -> bool:
        # Hadoop's local file system keeps a checksum next to each file it writes (`.<name>.crc`)
        # and checks the file against it when read: it moves with its file.
        checksum = os.path.join(os.path.dirname(source), f".{os.path.basename(source)}.crc")
        if os.path.isfile(checksum):
            os.rename(checksum, os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.crc"))
        os.rename(source, target)
        return True

    def remove(self, path: str) -> None:
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
            # A file Hadoop wrote keeps its checksum beside it (rename): it goes with the file.
            checksum = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc")
            if os.path.isfile(checksum):
                os.remove(checksum)

    def parquet_rows(self, file: str) -> int:
        return int(pyarrow.parquet.read_metadata(file).num_rows)

    def parquet_metadata(self, file: str) -> Any:
        return pyarrow.parquet.read_metadata(file)

    def uri(self, path: str) -> str:
        # Not percent-encoded: Hadoop reads the path of a `file:` string as written, and partition
        # folders hold Hive's own escapes (`feed=x%3Ay`).
        return f"file:{path}"

    def name(self, path: str) -> str:
        return os.path.basename(path.rstrip("/"))

    def write_text(self, path: str, text: str) -> None:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)

    def read_text(self, path: str) -> str | None:
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8") as file:
            return file.read()


class HadoopFiles(TableFiles):
    """Hadoop's FileSystem in the JVM, for any storage a cluster's warehouse lives on (hdfs, s3a,
    ...); a handle is a Hadoop Path."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        jvm: Any = spark._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        self._conf = spark._jsc.hadoopConfiguration()  # type: ignore[union-attr]

    def fs(self, path: Any) -> Any:
        return path.getFileSystem(self._conf)

    def root(self, location: str) -> Any:
        return self._path(location)

    def child(self, folder: Any, relative: str) -> Any:
        return folder if relative == "." else self._path(folder, relative)

    def parent(self, path: Any) -> Any:
        return path.getParent()

    def exists(self, path: Any) -> bool:
        return bool(self.fs(path).exists(path))

    def entries(self, folder: Any) -> list[tuple[str, Any, bool, int]]:
        fs = self.fs(folder)
        if not fs.exists(folder):
            return []
        found = []
        for status in fs.listStatus(folder):
            path = status.getPath()
            name = path.getName()
            if not name.startswith(HIDDEN_PREFIXES):
                is_folder = bool(status.isDirectory())
                found.append((name, path, is_folder, 0 if is_folder else int(status.getLen())))
        return found

    def make_folder(self, path: Any) -> None:
        self.fs(path).mkdirs(path)

    def rename(self, source: Any, target: Any) -> bool:
        return bool(self.fs(target).rename(source, target))

    def remove(self, path: Any) -> None:
        self.fs(path).delete(path, True)

    def uri(self, path: Any) -> str:
        return str(self.fs(path).makeQualified(path).toString())

    def name(self, path: Any) -> str:
        return str(path.getName())

    def write_text(self, path: Any, text: str) -> None:
        stream = self.fs(path).create(path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def read_text(self, path: Any) -> str | None:
        fs = self.fs(path)
        if not fs.exists(path):
            return None
        jvm: Any = self.spark._jvm
        stream = fs.open(path)
        try:
            return bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream)).decode("utf-8")
        finally:
            stream.close()

    def parquet_rows(self, file: Any) -> int:
        jvm: Any = self.spark._jvm
        input_file = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(file, self._conf)
        reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(input_file)
        try:
            return int(reader.getRecordCount())
        finally:
            reader.close()

    def file_entries(self, root: Any) -> set[str]:
        """TableFiles.file_entries by one glob per folder level, each answered as one text: a
        call from Python per file costs about a millisecond (1.3-1.6 s for the 241 files of
        int_change_events at a million messages, against 0.1-0.2 s so)."""
        fs = self.fs(root)
        if not fs.exists(root):
            return set()
        base = fs.makeQualified(root).toString().rstrip("/")
        jvm: Any = self.spark._jvm
        entries: set[str] = set()
        for level in itertools.count(1):
            statuses = fs.globStatus(self._path(base + "/*" * level))
            text = jvm.org.apache.commons.lang3.ArrayUtils.toString(statuses) if statuses is not None else ""
            folders = False
            for path, is_folder, length in FILE_STATUS.findall(text):
                relative = path[len(base) + 1 :]
                if any(part.startswith(HIDDEN_PREFIXES) for part in relative.split("/")):
                    continue
                if is_folder == "true":
                    folders = True
                else:
                    entries.add(f"{relative}:{length}")
            if not folders:
                return entries
        raise AssertionError("unreachable")


# One entry of Hadoop's FileStatus.toString: its path, whether a folder, and a file's length.
FILE_STATUS = re.compile(r"path=(.*?); isDirectory=(true|false)(?:; length=(\d+))?")

# Off: every location through Hadoop's FileSystem, as on a cluster (the tests run both ways).
LOCAL_FILES_BY_PYTHON = True


def table_files(spark: SparkSession, location: str) -> TableFiles:
    """The file operations for a table at `location` (a URI)."""
    if LOCAL_FILES_BY_PYTHON and urllib.parse.urlparse(location).scheme == "file":
        return LocalFiles()
    return HadoopFiles(spark)


def table_details(spark: SparkSession, relation: Any) -> dict[str, str]:
    """Table `relation`'s Location and Provider as `describe table extended` shows them, from one
    metastore call: `describe` is a SQL command run as a Spark job, 30-50 ms against 10-12 ms, and
    a run looks each table it writes up three or four times (about 100 looks in a +10,000 run of
    mixed:1M, docs/benchmarks.md). Raises Py4JJavaError (NoSuchTableException) if there is no such
    table, and for a view, which has no location."""
    table = newest_values.catalog_table(spark, quoted(relation))
    details = {"Location": newest_values.described_location(spark, table.location())}
    if table.provider().isDefined():
        details["Provider"] = table.provider().get()
    return details


def table_location(spark: SparkSession, relation: Any) -> str:
    return table_details(spark, relation)["Location"]


def table_folder(spark: SparkSession, relation: Any) -> tuple[TableFiles, Any]:
    """The file operations for table `relation`'s storage and the handle of its folder."""
    return folder_at(spark, table_location(spark, relation))


def folder_at(spark: SparkSession, location: str) -> tuple[TableFiles, Any]:
    """The file operations for the storage of a table at `location` and the handle of its folder."""
    files = table_files(spark, location)
    return files, files.root(location)


def rows_past(
    spark: SparkSession, relation: Any, past: new_rows.Past, partitioned: bool = False
) -> dict[str | None, int] | None:
    """`past`'s count of table `relation`'s rows from its files' footers (new_rows.count); None
    where they do not tell it, for a view or a missing table, and for a partitioned table unless
    `partitioned` says it is one this project writes: Spark reads the partitions the metastore
    lists, and another writer may have put one outside the table's folder (`alter table ... add
    partition ... location`), whose rows the footers under the folder would miss; listing the
    partitions' locations costs about what the query does (0.09-0.17 s for 18-32 partitions)."""
    try:
        table = newest_values.catalog_table(spark, quoted(relation))
    except (Py4JJavaError, AnalysisException):
        return None
    if table.tableType().name() == "VIEW" or (not partitioned and not table.partitionColumnNames().isEmpty()):
        return None
    files, root = folder_at(spark, newest_values.described_location(spark, table.location()))
    return new_rows.count(files, root, files.file_entries(root), past)


def newest_of(spark: SparkSession, relation: Any, newest: newest_values.Newest) -> dict[str | None, int]:
    """`newest` of table `relation` (newest_values.newest_values): as kept with it, else queried."""
    files, root = table_folder(spark, relation)
    return newest_values.newest_values(spark, files, quoted(relation), root, newest)


def written_rows(spark: SparkSession, files: TableFiles, folder: Any, depth: int, file_format: str) -> int:
    """The rows of the files a write left in `folder` (`depth` partition columns). Parquet files'
    from their footers (a listing, then one small read per file), where a Spark job (`isEmpty`) took
    0.4-0.6 s for 3,000 rows in 64 partitions (docs/benchmarks.md); other formats by a Spark job.
    Spark writes no partition folder for a partitioned write without rows, and a file holding the
    schema and no row for another."""
    if file_format.lower() != "parquet":
        return spark.read.format(file_format).load(files.uri(folder)).count()
    return sum(
        files.parquet_rows(path)
        for partition in files.leaves(folder, depth)
        for path, _ in files.data_files(files.partition_folder(folder, partition))
    )


def default_location(spark: SparkSession, relation: Any) -> str:
    """Where `create table` puts a managed table: the schema's folder plus the lowercase name."""
    rows = spark.sql(f"describe schema extended `{relation.schema}`").collect()
    schema_folder = next(row.info_value for row in rows if row.info_name == "Location")
    return f"{schema_folder.rstrip('/')}/{relation.identifier.lower()}"


def table_exists(spark: SparkSession, relation: Any) -> bool:
    return spark.catalog.tableExists(f"{relation.schema}.{relation.identifier}")


def table_locations(spark: SparkSession, schemas: set[str]) -> dict[tuple[str, str], str]:
    """(schema, lowercase name) -> location of every table (not view) of `schemas`: a
    listing and one metastore call per schema, where a table's own existence check and
    `describe` are several calls each (the run-start hook looked 24 tables up in 2.3 s)."""
    jvm, catalog = spark._jvm, spark._jsparkSession.sessionState().catalog()
    locations = {}
    for schema in sorted(schemas):
        if not spark.catalog.databaseExists(schema):
            continue
        rows = spark.sql(f"show tables in `{schema.replace('`', '``')}`").collect()
        names = jvm.java.util.ArrayList()
        for row in rows:
            if not row.isTemporary:
                names.add(jvm.org.apache.spark.sql.catalyst.TableIdentifier(row.tableName, jvm.scala.Some(schema)))
        tables = catalog.getTablesByName(jvm.scala.jdk.javaapi.CollectionConverters.asScala(names).toSeq())
        for index in range(tables.size()):
            table = tables.apply(index)
            uri = table.storage().locationUri()  # none for a view
            if uri.isDefined():
                location = newest_values.described_location(spark, uri.get())
                locations[(schema.lower(), table.identifier().table().lower())] = location
    return locations


def located(locations: dict[tuple[str, str], str], relation: Any) -> str | None:
    """The location table_locations found for `relation`; None if it is no table there."""
    return locations.get((relation.schema.lower(), relation.identifier.lower()))


def clear_unregistered_location(spark: SparkSession, relation: Any) -> bool:
    """Removes what a killed `create table as` left in the folder of a table the metastore does
    not know (Spark refuses to create a managed table over a non-empty folder). True if removed."""
    if table_exists(spark, relation):
        return False
    files, folder = folder_at(spark, default_location(spark, relation))
    if not files.exists(folder):
        return False
    files.remove(folder)
    return True


class SchemaChanged(Exception):
    """A write whose columns are not its table's, for a model with on_schema_change fail."""


def write_pending(
    spark: SparkSession,
    frame: DataFrame,
    target: Any,
    partition_by: Sequence[str],
    file_format: str,
    on_schema_change: str,
) -> None:
    """`frame`'s rows written as the pending write of table `target` (partition columns
    `partition_by`), marked complete once all its files are. What a write killed before its marker
    left goes first. With on_schema_change `fail`, SchemaChanged and nothing written when `frame`'s
    columns are not the table's."""
    if on_schema_change == "fail":
        changes = schema_changes(frame.schema, spark.table(quoted(target)).schema)
        if changes:
            raise SchemaChanged(
                f"The columns of {quoted(target)} changed ({'; '.join(changes)}) and on_schema_change is fail:"
                " run it with --full-refresh"
            )
    files, root = table_folder(spark, target)
    folder = pending_folder(files, root)
    files.remove(folder)
    writer = frame.write.mode("overwrite").format(file_format)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(files.uri(folder))
    files.write_text(files.child(folder, COMPLETE_MARKER), "")


def pending_place(spark: SparkSession, target: Any) -> tuple[dict[str, str], TableFiles, Any, Any]:
    """Table `target`'s details (table_details), its file operations, its folder and its pending
    folder: one look (table_details) for what applying a pending write needs."""
    details = table_details(spark, target)
    files = table_files(spark, details["Location"])
    root = files.root(details["Location"])
    return details, files, root, pending_folder(files, root)


def pending_folder(files: TableFiles, root: Any) -> Any:
    """The pending write's folder in table folder `root`."""
    return files.child(root, PENDING_FOLDER)


def schema_changes(written: StructType, stored: StructType) -> list[str]:
    """How the columns of `written` differ from those of `stored`, by name (as Spark compares them,
    case-insensitively) and type; [] when they are alike."""
    new = {field.name.lower(): field.dataType.simpleString() for field in written.fields}
    old = {field.name.lower(): field.dataType.simpleString() for field in stored.fields}
    return (
        [f"new column {name}" for name in new if name not in old]
        + [f"no column {name}" for name in old if name not in new]
        + [f"{name} is {new[name]}, was {old[name]}" for name in new if name in old and new[name] != old[name]]
    )


def adopt_legacy_pending(spark: SparkSession, target: Any, legacy_location: str) -> None:
    """The pending table a version before pending folders left beside table `target` (its folder at
    `legacy_location`), made the target's pending write: marked complete, moved whole by one rename
    (replacing any pending folder, which could only be a newer write's unmarked leftover), then its
    table dropped. Killed between the rename and the drop, the next run finds the table without its
    folder and only drops it."""
    files, root = table_folder(spark, target)
    source = files.root(legacy_location)
    if files.exists(source):
        files.write_text(files.child(source, COMPLETE_MARKER), "")
        files.replace_folder(source, pending_folder(files, root))
    spark.sql(f"drop table if exists {quoted(legacy_pending(target))}")


@dataclass(frozen=True)
class Layout:
    """How a model's write lands in its table: per partition (`partition_by`, in the tables'
    order), `replace` swaps the table's partition folder for the written one (insert_overwrite),
    else the files are added to it (append). `appended` names partitions (folder paths such as
    `event_slice=final`, or patterns such as `key_bucket=*/build_tier=delta`) whose files are added
    even when `replace` is set: a model that appends its new rows to some partitions and rewrites a
    few others in the same write. `replace_depth` (with `replace`): a replaced partition swaps the
    folder of its first `replace_depth` partition columns, with every partition under it (the
    stored ones the write has no rows for go): int_row_changes rewrites a `key_bucket` whole by
    writing its `build_tier=base` alone. `compact_fan_in`: after a write, the small files of the
    partitions it appended to are merged once this many lie within this factor of each other's
    sizes (compaction; 0: never)."""

    partition_by: tuple[str, ...] = ()
    replace: bool = False
    appended: tuple[str, ...] = ()
    replace_depth: int | None = None
    compact_fan_in: int = 0

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Layout:
        """From the materialization's dict (keys partition_by, replace, appended, replace_depth,
        compact_fan_in)."""
        depth = config.get("replace_depth")
        return cls(
            tuple(config.get("partition_by") or ()),
            bool(config.get("replace")),
            tuple(config.get("appended") or ()),
            int(depth) if depth else None,
            int(config.get("compact_fan_in") or 0),
        )

    def replaces(self, partition: str) -> bool:
        return self.replace and not any(fnmatch.fnmatchcase(partition, pattern) for pattern in self.appended)

    def replaced_folder(self, partition: str) -> str:
        """The folder a write into replaced `partition` swaps."""
        return "/".join(partition.split("/")[: self.replace_depth]) if self.replace_depth else partition


def apply_pending(spark: SparkSession, target: Any, layout: Layout) -> bool:
    """Moves the complete pending write of table `target` into it as `layout` says and removes it;
    False if there is none. An incomplete one (a write killed before its marker) is removed. A
    killed run's pending write may have lost files to the table already, so it is applied as it is:
    every step skips what is done, and the metastore relearns every partition of the target (a
    killed run may have moved a new one in unregistered)."""
    details, files, root, folder = pending_place(spark, target)
    if not files.exists(files.child(folder, COMPLETE_MARKER)):
        files.remove(folder)
        return False
    move_pending(spark, files, folder, target, root, layout, details["Provider"])
    finish(spark, files, folder, target, added=None if layout.partition_by else [])
    return True


@dataclass(frozen=True)
class Written:
    """What apply_written moved: the pending write's rows, and per partition it appended to (not
    replaced) the names of the files it added there."""

    rows: int
    appended: dict[str, set[str]]


def apply_written(spark: SparkSession, target: Any, layout: Layout) -> Written:
    """apply_pending for the pending write a run has just made (none of its files moved yet). One
    without rows is removed: Spark writes a file even for no rows (one holding the schema), and
    moved in it would add a file to the table on every run with nothing new, which every later
    read lists. The metastore is told of the partitions the write made new, by name (finish); a
    partition folder that existed before the move is registered already."""
    details, files, root, folder = pending_place(spark, target)
    rows = written_rows(spark, files, folder, len(layout.partition_by), details["Provider"])
    if rows == 0:
        files.remove(folder)
        return Written(0, {})
    appended = {
        partition: {
            name for name, _, is_folder, _ in files.entries(files.partition_folder(folder, partition)) if not is_folder
        }
        for partition in files.leaves(folder, len(layout.partition_by))
        if not layout.replaces(partition)
    }
    added = move_pending(spark, files, folder, target, root, layout, details["Provider"])
    finish(spark, files, folder, target, added)
    return Written(rows, appended)


def move_pending(
    spark: SparkSession,
    files: TableFiles,
    source_root: Any,
    target: Any,
    target_root: Any,
    layout: Layout,
    file_format: str,
) -> list[str]:
    """Moves the files of every partition of the pending write in `source_root` into table `target`
    (folder `target_root`; apply_pending); returns the partitions the target had no folder for.
    First the newest values kept with the target learn the pending rows (newest_values.carry); then
    replaced folders: one may hold an appended partition of the same write, which then moves with it."""
    under = files.partition_folder
    partitions = files.leaves(source_root, len(layout.partition_by))
    added = [p for p in partitions if p != "." and not files.exists(under(target_root, p))]
    replaced = [layout.replaced_folder(p) for p in partitions if layout.replaces(p)]
    with pending_rows(spark, files, source_root, target, file_format) as rows:
        newest_values.carry(spark, files, rows, source_root, quoted(target), target_root, replaced)
    for folder in dict.fromkeys(replaced):
        files.replace_folder(under(source_root, folder), under(target_root, folder))
    for partition in partitions:
        source = under(source_root, partition)
        if not layout.replaces(partition) and files.exists(source):
            files.move_files(source, under(target_root, partition))
    return added


def pending_view_name(target: Any) -> str:
    """The temporary view pending_rows makes for table `target`'s pending write (one per table: dbt
    threads write several tables at once in one session), a plain identifier whatever the names
    hold. The names' own hash ends it: names that differ only where the plain form replaces a
    character (`a-b.x`, `a_b.x`) would otherwise share one view."""
    plain = re.sub(r"\W", "_", f"cdc_pending__{target.schema}__{target.identifier}", flags=re.ASCII)
    exact = hashlib.sha256(f"{target.schema}\0{target.identifier}".encode()).hexdigest()[:12]
    return f"{plain}__{exact}"


@contextlib.contextmanager
def pending_rows(
    spark: SparkSession, files: TableFiles, folder: Any, target: Any, file_format: str
) -> Iterator[Callable[[], str]]:
    """A function giving the name of a temporary view of the pending rows in `folder` (by table
    `target`'s columns, partition columns typed as the table types them), made when first called
    and dropped on leaving."""
    name = pending_view_name(target)
    made = []

    def view() -> str:
        if not made:
            columns = spark.table(quoted(target)).schema
            spark.read.schema(columns).format(file_format).load(files.uri(folder)).createOrReplaceTempView(name)
            made.append(name)
        return newest_values.quoted_name(name)

    try:
        yield view
    finally:
        if made:
            spark.catalog.dropTempView(name)


def partition_sizes(spark: SparkSession, relation: Any, depth: int) -> dict[str, int]:
    """Bytes of the data files in each partition folder of table `relation` (`depth`: its number of
    partition columns): a listing of the table's folders, no file read."""
    files, root = table_folder(spark, relation)
    sizes = {}
    for partition in files.leaves(root, depth):
        sizes[partition] = sum(size for _, size in files.data_files(files.partition_folder(root, partition)))
    return sizes


def finish(spark: SparkSession, files: TableFiles, folder: Any, target: Any, added: list[str] | None) -> None:
    """After the moves: the metastore learns the target's new partitions, the session forgets the
    files it listed, and the pending folder goes, its marker first. `added`: the partitions the
    moves made, added by name; None when not known (a killed run's write may have moved some before
    it died): then every partition folder of the target is registered by `recover partitions`,
    which lists every file of the table (a cost that grows with its history: 1.0 s of
    int_row_versions' apply at a million messages, against 0.4-0.5 s for its 64 partitions by name)."""
    specs = None if added is None else [partition_spec(partition) for partition in added]
    if specs is None or None in specs:
        spark.sql(f"alter table {quoted(target)} recover partitions")
    elif specs:
        spark.sql(f"alter table {quoted(target)} add if not exists {' '.join(specs)}")
    spark.sql(f"refresh table {quoted(target)}")
    files.remove(files.child(folder, COMPLETE_MARKER))
    files.remove(folder)


# The folder name Hive gives a partition whose value is null; `add partition` cannot name it.
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def partition_spec(partition: str) -> str | None:
    """The `partition (...)` clause of a partition folder path (`key_bucket=5/build_tier=delta`),
    its names and values unescaped as Hive escapes them in folder names (`%3A`); None for a null
    value's folder."""

    def unescaped(text: str) -> str:
        return re.sub(r"%([0-9A-Fa-f]{2})", lambda code: chr(int(code.group(1), 16)), text)

    pairs = [folder.split("=", 1) for folder in partition.split("/")]
    if any(value == NULL_PARTITION for _, value in pairs):
        return None
    columns = ", ".join(
        f"{newest_values.quoted_name(unescaped(name))} = {newest_values.sql_string(unescaped(value))}"
        for name, value in pairs
    )
    return f"partition ({columns})"
