"""Small appended files merged, kill-safe: a table that gains files run after run keeps few.

A model that appends (a staging table, `int_change_events`' `event_slice=final`, the delta tiers of
`int_row_changes`, `int_row_versions` and `int_current_rows`) gains a file per written partition
with every run that brings rows, and a scan lists and opens every file of what it reads: a table
written every few minutes for a year would hold tens of thousands. After each write that appended
to a partition, the partition's small files (below SMALL_FILE_BYTES) are merged by size: once
`fan_in` of them lie within a factor `fan_in` of each other (the smallest such window of sizes),
those and every smaller small file become one file. The window slides with the sizes instead of
cutting them into fixed tiers (floor(log size / log fan_in)), which left files of about one size
that straddle a tier boundary (a run's 11-21 KB files around 16 KiB) waiting in two tiers for up to
twice as many runs. Each merge makes a file larger than any it merges (at least `fan_in` times
its window's smallest), so each appended byte is rewritten a handful of times between a
run's file and SMALL_FILE_BYTES, and what a run rewrites is proportional to what runs append, not
to the history, while a partition keeps at most (`fan_in` - 1) small files per factor `fan_in` of
sizes. The files a write just added stay out of it (rows of the newest run keep their own file,
which scans by built_at or landed_at skip or read alone). A full build's small files are merged
by the full build itself (compact_built), so that no incremental run pays for rows it did not
bring.

The merge is kill-safe as the writes are (pending_writes): the merged rows are first written to a
hidden folder in the table's own (`_cdc_compacting`, partitioned as the table; a plain folder,
not a table: nothing to register or drop, and the list below marks it complete); then a list of
the files they replace is written beside them (`_cdc_superseded`, renamed into place whole); only
then are those files removed from the table, the merged ones moved in and the folder removed. A
compacting folder left by a killed process is finished when its list exists (every step skips what
is done) or removed when it does not (the table is then untouched), before the model's next write
(apply_killed). Rows never change: a table's stored newest values (newest_values) are kept, under
the token of its files after the merge.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from pyspark.sql import SparkSession

from dbt.adapters.sparksession import newest_values, pending_writes

# Both hidden from Spark's readers and from TableFiles' listings by their leading underscore.
FOLDER = "_cdc_compacting"
SUPERSEDED = "_cdc_superseded"
# Before the folder, the merged rows went to a table of this suffix; one a killed run of that
# version left is still finished (it may hold the only copy of rows it removed).
LEGACY_SUFFIX = "__dbt_compacting"
# Files at least this large are left as they are: a scan's cost per file no longer matters there.
SMALL_FILE_BYTES = 32 * 1024 * 1024


def legacy_table(target: Any) -> pending_writes.Named:
    return pending_writes.Named(target.schema, f"{target.identifier}{LEGACY_SUFFIX}")


def files_to_merge(sizes: Mapping[str, int], fan_in: int) -> list[str]:
    """Of one partition's files (name -> bytes), those merged into one: every small file below
    `fan_in` times the smallest size that starts a window of `fan_in` small files within that
    factor (the window's files and every smaller one); none while no such window exists."""
    if fan_in < 2:
        return []
    small = sorted((max(size, 1), name) for name, size in sizes.items() if size < SMALL_FILE_BYTES)
    windows = zip(small, small[fan_in - 1 :], strict=False)  # (smallest, largest) of fan_in in a row
    smallest = next((size for (size, _), (largest, _) in windows if largest < fan_in * size), None)
    return [] if smallest is None else sorted(name for size, name in small if size < fan_in * smallest)


def compact(
    spark: SparkSession,
    target: Any,
    partition_by: tuple[str, ...],
    written: Mapping[str, AbstractSet[str]],
    fan_in: int,
) -> int:
    """Merges the small files of the partitions of table `target` a write just appended to
    (`written`: partition folder -> names of the files it added, left out) where files_to_merge
    finds some; returns how many files were merged."""
    files, root = pending_writes.table_folder(spark, target)
    # A merge a killed run left is finished first (the write's start has done so already unless
    # neither the hook nor the materialization ran): discarded, it could lose the rows it removed.
    finish_killed(spark, files, target, root, len(partition_by))
    chosen: dict[str, dict[str, int]] = {}
    for partition, added in written.items():
        found = files.data_files(files.partition_folder(root, partition))
        stored = {files.name(path): size for path, size in found if files.name(path) not in added}
        merged = files_to_merge(stored, fan_in)
        if merged:
            chosen[partition] = {name: stored[name] for name in merged}
    if not chosen:
        return 0
    folder = files.child(root, FOLDER)
    paths = [
        files.uri(files.child(files.partition_folder(root, partition), name))
        for partition, names in chosen.items()
        for name in names
    ]
    reader = listed_by_driver(spark, len(paths))
    # The table's own schema, partition columns included: their values are read from the folder
    # names with the table's types (no inference), so the merged files land in the same folders.
    frame = reader.read.schema(reader.table(pending_writes.quoted(target)).schema)
    frame = frame.option("basePath", files.uri(root)).parquet(*paths)
    frame = frame.repartition(*partition_by) if partition_by else frame.coalesce(1)
    frame.write.mode("overwrite").partitionBy(*partition_by).parquet(files.uri(folder))
    superseded = [entry(partition, name, size) for partition, names in chosen.items() for name, size in names.items()]
    files.write_text_atomically(files.child(folder, SUPERSEDED), "\n".join(superseded))
    finish(spark, files, target, root, folder, superseded, len(partition_by))
    files.remove(folder)
    return len(superseded)


def compact_built(spark: SparkSession, target: Any, layout: pending_writes.Layout) -> int:
    """compact for table `target` as a full build has just written it: every partition `layout`
    appends to, none of its files left out. A full build writes a file per task into each
    partition, several small ones once its input spans several splits; left as they were, the
    first incremental run merged them and paid for the full build's rows (on mixed:5M each
    Canal-family staging model's +10,000 run took 7-8 s more than on mixed:1M, merging 4 files)."""
    if layout.compact_fan_in < 2:
        return 0
    files, root = pending_writes.table_folder(spark, target)
    partitions = [p for p in files.leaves(root, len(layout.partition_by)) if not layout.replaces(p)]
    return compact(spark, target, layout.partition_by, dict.fromkeys(partitions, frozenset()), layout.compact_fan_in)


def listed_by_driver(spark: SparkSession, paths: int) -> SparkSession:
    """A session whose reads of `paths` paths the driver lists. Spark lists more than 32 by a job
    of one task per path: on a local master a merge of 256 files spent 2.2 s of 6 there, 0.3 s
    listed by the driver. A session of its own (the same catalog, its own settings) leaves the
    build's other queries as they are; on a cluster remote storage answers a parallel listing
    faster, so Spark's own choice stays."""
    if not spark.sparkContext.master.startswith("local"):
        return spark
    reader = spark.newSession()
    reader.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", str(paths + 1))
    return reader


def entry(partition: str, name: str, size: int) -> str:
    """A file as TableFiles.file_entries names it: its path under the table's folder and its bytes."""
    return f"{name}:{size}" if partition == "." else f"{partition}/{name}:{size}"


def finish(
    spark: SparkSession,
    files: pending_writes.TableFiles,
    target: Any,
    root: Any,
    folder: Any,
    superseded: list[str],
    depth: int,
) -> None:
    """The superseded files removed from the table, the merged ones moved in from `folder`; each
    step skips what is done (a second call after a kill finishes the merge). The caller then
    removes the folder: until then a kill leaves the merge to be finished again."""
    merged = files.file_entries(folder)
    newest_values.refile(spark, files, pending_writes.quoted(target), root, set(superseded), merged)
    for superseded_entry in superseded:
        files.remove(files.child(root, superseded_entry.rsplit(":", 1)[0]))
    for partition in files.leaves(folder, depth):
        source = files.partition_folder(folder, partition)
        if files.exists(source):
            files.move_files(source, files.partition_folder(root, partition))
    spark.sql(f"refresh table {pending_writes.quoted(target)}")


def apply_killed(spark: SparkSession, target: Any, depth: int) -> bool:
    """A merge a killed process left for table `target` (`depth` partition columns): finished if
    its list of superseded files was written, else discarded. True if there was one."""
    if not pending_writes.table_exists(spark, target):
        # Nothing to finish, and maybe no schema yet (the first run's hook): only a compacting
        # table of the version before, left with its table dropped, is dropped.
        left_legacy = pending_writes.table_exists(spark, legacy_table(target))
        if left_legacy:
            drop(spark, target)
        return left_legacy
    files, root = pending_writes.table_folder(spark, target)
    return finish_killed(spark, files, target, root, depth)


def killed_left_work(spark: SparkSession, target: Any, locations: dict[tuple[str, str], str]) -> bool:
    """Whether a killed merge may have left work for table `target` (apply_killed): a compacting
    table of the version before, or the merge folder in the table's folder. `locations`:
    pending_writes.table_locations of its schema."""
    if pending_writes.located(locations, legacy_table(target)) is not None:
        return True
    location = pending_writes.located(locations, target)
    if location is None:
        return False
    files, folder = pending_writes.folder_at(spark, location)
    return files.exists(files.child(folder, FOLDER))


def finish_killed(spark: SparkSession, files: pending_writes.TableFiles, target: Any, root: Any, depth: int) -> bool:
    """apply_killed for an existing table whose folder is `root`."""
    legacy = legacy_table(target)
    left_legacy = pending_writes.table_exists(spark, legacy)
    if left_legacy:
        _, legacy_root = pending_writes.table_folder(spark, legacy)
        settle(spark, files, target, root, legacy_root, depth)
        spark.sql(f"drop table {pending_writes.quoted(legacy)}")
    folder = files.child(root, FOLDER)
    if not files.exists(folder):
        return left_legacy
    settle(spark, files, target, root, folder, depth)
    files.remove(folder)
    return True


def settle(
    spark: SparkSession, files: pending_writes.TableFiles, target: Any, root: Any, folder: Any, depth: int
) -> None:
    """The merge whose rows `folder` holds finished if its list was written (else the table was
    never touched and the caller's removal of the folder discards it)."""
    listed = files.read_text(files.child(folder, SUPERSEDED))
    if listed is not None:
        finish(spark, files, target, root, folder, [line for line in listed.splitlines() if line], depth)


def drop(spark: SparkSession, target: Any) -> None:
    """Discards any merge a killed run left for `target` (a full build replaces the table it would
    have merged into)."""
    legacy = legacy_table(target)
    spark.sql(f"drop table if exists {pending_writes.quoted(legacy)}")
    pending_writes.clear_unregistered_location(spark, legacy)
    if pending_writes.table_exists(spark, target):
        files, root = pending_writes.table_folder(spark, target)
        files.remove(files.child(root, FOLDER))
