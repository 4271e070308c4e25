"""Kill-safe table writes of the sparksession adapter: files move, they are never rewritten in place.

Spark replaces a table's data in place: `insert overwrite` deletes a partition's files, then moves
the new ones in; `insert into` moves the new files in one by one at job commit; `create table as`
writes into the table's folder before the metastore knows the table. A process killed in between
leaves a table with part of its old or new data (an incremental model then reads a wrong `this` on
every later run) or a folder that makes the next `create table as` fail.

Here an incremental run first writes its new rows to a complete table of their own (the pending
table, `<model>__dbt_pending`: `create table as` registers it only once its data is written), then
moves that table's files into the model's table with renames, each atomic, and drops the pending
table last. A pending table that exists at the start of a run is the write of a killed run: it is
applied then, whatever part of it was applied before, since every step skips what is done.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet
from pyspark.sql import SparkSession

from dbt.adapters.sparksession import newest_values

# Spark and Hadoop keep job and commit state in entries whose names start with these.
HIDDEN_PREFIXES = ("_", ".")


def quoted(relation: Any) -> str:
    return f"`{relation.schema}`.`{relation.identifier}`"


class TableFiles:
    """Hadoop file system operations on the folders of managed tables (local, HDFS, object stores)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        jvm: Any = spark._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        self._conf = spark._jsc.hadoopConfiguration()  # type: ignore[union-attr]

    def path(self, *parts: Any) -> Any:
        """A Hadoop Path: from a URI text, or a parent Path and a relative child path."""
        return self._path(*parts)

    def fs(self, path: Any) -> Any:
        return path.getFileSystem(self._conf)

    def partition_folder(self, root: Any, partition: str) -> Any:
        """The folder of `partition` (a relative path from `leaves`) under table folder `root`."""
        return root if partition == "." else self.path(root, partition)

    def visible_children(self, path: Any) -> list[Any]:
        fs = self.fs(path)
        if not fs.exists(path):
            return []
        return [s.getPath() for s in fs.listStatus(path) if not s.getPath().getName().startswith(HIDDEN_PREFIXES)]

    def data_files(self, folder: Any) -> list[Any]:
        """The file statuses of the visible files directly in `folder`."""
        return [
            status
            for status in self.fs(folder).listStatus(folder)
            if status.isFile() and not status.getPath().getName().startswith(HIDDEN_PREFIXES)
        ]

    def leaves(self, root: Any, depth: int) -> list[str]:
        """Relative paths of the folders `depth` levels under `root` (one per partition; `.` for
        the root itself)."""
        level = [(".", root)]
        for _ in range(depth):
            level = [
                (child.getName() if relative == "." else f"{relative}/{child.getName()}", child)
                for relative, path in level
                for child in self.visible_children(path)
                if self.fs(child).getFileStatus(child).isDirectory()
            ]
        return [relative for relative, _ in level]

    def move_files(self, source: Any, target: Any) -> None:
        """Every data file of `source` into `target` under the same name (unique: Spark names
        files after their write job)."""
        fs = self.fs(target)
        fs.mkdirs(target)
        for file in self.visible_children(source):
            if not fs.rename(file, self.path(target, file.getName())):
                raise OSError(f"could not move {file} to {target}")

    def replace_folder(self, source: Any, target: Any) -> None:
        """`target` replaced by `source`. Killed between the two steps, `source` is still there
        and a second call finishes the move."""
        fs = self.fs(target)
        fs.delete(target, True)
        fs.mkdirs(target.getParent())
        if not fs.rename(source, target):
            raise OSError(f"could not move {source} to {target}")

    def remove(self, path: Any) -> None:
        self.fs(path).delete(path, True)

    def parquet_rows(self, file: Any) -> int:
        """The row count a Parquet file's footer records: one small read at the file's end. A local
        file's by pyarrow (0.03 s for 128 files, against about 2 s through the JVM's reader, whose
        every file costs several calls over the Py4J gateway); any other by Parquet's own reader."""
        uri = file.toUri()
        if uri.getScheme() == "file":
            return int(pyarrow.parquet.read_metadata(uri.getPath()).num_rows)
        return self.parquet_rows_by_jvm(file)

    def parquet_rows_by_jvm(self, file: Any) -> int:
        """parquet_rows by Parquet's reader in the JVM, for storage pyarrow is not given (hdfs, s3a)."""
        jvm: Any = self.spark._jvm
        input_file = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(file, self._conf)
        reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(input_file)
        try:
            return int(reader.getRecordCount())
        finally:
            reader.close()


def table_details(spark: SparkSession, relation: Any) -> dict[str, str]:
    """The detailed table information of `describe table extended` (Location, Provider, ...)."""
    rows = spark.sql(f"describe table extended {quoted(relation)}").collect()
    return {row.col_name: row.data_type for row in rows}


def table_location(spark: SparkSession, relation: Any) -> str:
    return table_details(spark, relation)["Location"]


def row_count(spark: SparkSession, relation: Any, depth: int) -> int:
    """The rows of table `relation` (`depth` partition columns). A Parquet table's from its files'
    footers (a listing, then one small read per file), where a Spark job (`isEmpty`) took 0.4-0.6 s
    for a new table of 3,000 rows in 64 partitions (docs/benchmarks.md); other formats by a Spark
    job. Spark writes no partition folder for a partitioned write without rows, and a file holding
    the schema and no row for another."""
    details = table_details(spark, relation)
    if details.get("Provider", "").lower() != "parquet":
        return spark.table(quoted(relation)).count()
    files = TableFiles(spark)
    root = files.path(details["Location"])
    return sum(
        files.parquet_rows(status.getPath())
        for partition in files.leaves(root, depth)
        for status in files.data_files(files.partition_folder(root, partition))
    )


def default_location(spark: SparkSession, relation: Any) -> str:
    """Where `create table` puts a managed table: the schema's folder plus the lowercase name."""
    rows = spark.sql(f"describe schema extended `{relation.schema}`").collect()
    schema_folder = next(row.info_value for row in rows if row.info_name == "Location")
    return f"{schema_folder.rstrip('/')}/{relation.identifier.lower()}"


def table_exists(spark: SparkSession, relation: Any) -> bool:
    return spark.catalog.tableExists(f"{relation.schema}.{relation.identifier}")


def clear_unregistered_location(spark: SparkSession, relation: Any) -> bool:
    """Removes what a killed `create table as` left in the folder of a table the metastore does
    not know (Spark refuses to create a managed table over a non-empty folder). True if removed."""
    if table_exists(spark, relation):
        return False
    files = TableFiles(spark)
    folder = files.path(default_location(spark, relation))
    if not files.fs(folder).exists(folder):
        return False
    files.remove(folder)
    return True


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
    writing its `build_tier=base` alone."""

    partition_by: tuple[str, ...] = ()
    replace: bool = False
    appended: tuple[str, ...] = ()
    replace_depth: int | None = None

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Layout:
        """From the materialization's dict (keys partition_by, replace, appended, replace_depth)."""
        depth = config.get("replace_depth")
        return cls(
            tuple(config.get("partition_by") or ()),
            bool(config.get("replace")),
            tuple(config.get("appended") or ()),
            int(depth) if depth else None,
        )

    def replaces(self, partition: str) -> bool:
        return self.replace and not any(fnmatch.fnmatchcase(partition, pattern) for pattern in self.appended)

    def replaced_folder(self, partition: str) -> str:
        """The folder a write into replaced `partition` swaps."""
        return "/".join(partition.split("/")[: self.replace_depth]) if self.replace_depth else partition


def apply_pending(spark: SparkSession, pending: Any, target: Any, layout: Layout) -> bool:
    """Moves the data of table `pending` into table `target` as `layout` says and drops `pending`;
    False if there is no pending table. A killed run's pending table may have lost files to the
    target already, so it is applied as it is: every step skips what is done, and the metastore
    relearns every partition of the target (a killed run may have moved a new one in unregistered)."""
    if not table_exists(spark, pending):
        return False
    move_pending(spark, pending, target, layout)
    finish(spark, pending, target, recover=bool(layout.partition_by))
    return True


def apply_written(spark: SparkSession, pending: Any, target: Any, layout: Layout) -> int:
    """apply_pending for the pending table a run has just written (none of its files moved yet);
    returns its rows. One without rows is dropped: Spark writes a file even for no rows (one
    holding the schema), and moved in it would add a file to the table on every run with nothing
    new, which every later read lists. The metastore is told of partitions only when the write
    made a new one: `recover partitions` lists every file of the table, a cost that grows with its
    history, while a partition folder that existed before the move is registered already."""
    rows = row_count(spark, pending, len(layout.partition_by))
    if rows == 0:
        spark.sql(f"drop table {quoted(pending)}")
        return 0
    added_a_partition = move_pending(spark, pending, target, layout)
    finish(spark, pending, target, recover=added_a_partition)
    return rows


def move_pending(spark: SparkSession, pending: Any, target: Any, layout: Layout) -> bool:
    """Moves the files of every partition of `pending` into `target` (apply_pending); returns
    whether the target had no folder for one of those partitions. First the newest values kept
    with the target learn the pending rows (newest_values.carry); then replaced folders: one may
    hold an appended partition of the same write, which then moves with it."""
    files = TableFiles(spark)
    source_root = files.path(table_location(spark, pending))
    target_root = files.path(table_location(spark, target))
    under = files.partition_folder
    partitions = files.leaves(source_root, len(layout.partition_by))
    added_a_partition = any(
        partition != "." and not files.fs(target_root).exists(under(target_root, partition)) for partition in partitions
    )
    replaced = [layout.replaced_folder(p) for p in partitions if layout.replaces(p)]
    newest_values.carry(spark, files, quoted(pending), source_root, quoted(target), target_root, bool(replaced))
    for folder in dict.fromkeys(replaced):
        files.replace_folder(under(source_root, folder), under(target_root, folder))
    for partition in partitions:
        source = under(source_root, partition)
        if not layout.replaces(partition) and files.fs(source).exists(source):
            files.move_files(source, under(target_root, partition))
    return added_a_partition


def partition_sizes(spark: SparkSession, relation: Any, depth: int) -> dict[str, int]:
    """Bytes of the data files in each partition folder of table `relation` (`depth`: its number of
    partition columns): a listing of the table's folders, no file read."""
    files = TableFiles(spark)
    root = files.path(table_location(spark, relation))
    sizes = {}
    for partition in files.leaves(root, depth):
        sizes[partition] = sum(status.getLen() for status in files.data_files(files.partition_folder(root, partition)))
    return sizes


def finish(spark: SparkSession, pending: Any, target: Any, recover: bool) -> None:
    """After the moves: the metastore learns the target's new partitions (`recover`), the session
    forgets the files it listed, and the pending table goes."""
    if recover:
        spark.sql(f"alter table {quoted(target)} recover partitions")
    spark.sql(f"refresh table {quoted(target)}")
    spark.sql(f"drop table {quoted(pending)}")
