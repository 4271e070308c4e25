"""What a merge of small files costs (src/dbt/adapters/sparksession/compaction.py), alone.

Builds a table partitioned as the key-bucket models are (`key_bucket`, `build_tier`: `--partitions`
partitions of one tier, each holding `--files` small files of `--rows` rows, as that many runs
would leave them) in a scratch warehouse, then times `compaction.compact` merging every one of
them (fan-in `--files`, nothing just written), `--repeat` times on a fresh table; checks that the
rows are the same before and after each merge and prints the seconds as JSON. Two versions of the
adapter compare by running it with each one's source first on PYTHONPATH, one after the other:

    PYTHONPATH=<worktree>/src .venv/bin/python bench/merge_speed.py --work-dir /tmp/merge-speed
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_unify.spark import get_spark
from dbt.adapters.sparksession import compaction, pending_writes

TARGET = compaction.Named("merge_speed", "merged")
PARTITION_BY = ("key_bucket", "build_tier")


def build_table(spark: SparkSession, partitions: int, files: int, rows: int) -> int:
    """The table, `files` writes of one file per partition each; returns its row count."""
    name = pending_writes.quoted(TARGET)
    spark.sql(f"create schema if not exists {TARGET.schema}")
    spark.sql(f"drop table if exists {name}")
    spark.sql(
        f"create table {name} (row_key string, row_values_json string, sequence bigint,"
        " key_bucket int, build_tier string) using parquet partitioned by (key_bucket, build_tier)"
    )
    for write in range(files):
        frame = spark.range(partitions * rows).selectExpr(
            "sha2(cast(id as string), 256) as row_key",
            f"to_json(named_struct('id', id, 'write', {write}, 'name', repeat('x', 120))) as row_values_json",
            f"id + {write * partitions * rows} as sequence",
            f"cast(id % {partitions} as int) as key_bucket",
            "'delta' as build_tier",
        )
        frame.repartition("key_bucket").write.insertInto(name)
    return partitions * rows * files


def merge_once(spark: SparkSession, partitions: int, per_partition: int, rows: int) -> dict[str, float | int]:
    stored = build_table(spark, partitions, per_partition, rows)
    location = pending_writes.table_location(spark, TARGET)
    files = pending_writes.table_files(spark, location)
    written: dict[str, set[str]] = dict.fromkeys(files.leaves(files.root(location), len(PARTITION_BY)), set())
    started = time.perf_counter()
    merged = compaction.compact(spark, TARGET, PARTITION_BY, written, per_partition)
    seconds = time.perf_counter() - started
    kept = spark.table(pending_writes.quoted(TARGET)).count()
    if kept != stored or merged != partitions * per_partition:
        raise SystemExit(
            f"merge lost rows or files: {kept} rows of {stored}, {merged} of {partitions * per_partition} files"
        )
    return {"seconds": round(seconds, 2), "files_merged": merged}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-dir", type=Path, required=True, help="scratch folder (emptied first)")
    parser.add_argument("--partitions", type=int, default=64, help="partitions merged (default 64)")
    parser.add_argument("--files", type=int, default=4, help="small files per partition (default 4)")
    parser.add_argument("--rows", type=int, default=100, help="rows per file (default 100)")
    parser.add_argument("--repeat", type=int, default=3, help="merges timed (default 3)")
    args = parser.parse_args(argv)
    shutil.rmtree(args.work_dir, ignore_errors=True)
    spark = get_spark(warehouse=str(args.work_dir / "warehouse"), app_name="merge-speed")
    merges = []
    for attempt in range(args.repeat):
        merges.append(merge_once(spark, args.partitions, args.files, args.rows))
        print(f"merge {attempt + 1}/{args.repeat}: {merges[-1]['seconds']} s", flush=True)
    seconds = [merge["seconds"] for merge in merges]
    figures = {"partitions": args.partitions, "files": args.files, "rows": args.rows, "merge_seconds": seconds}
    print(json.dumps({**figures, "median_seconds": statistics.median(seconds)}))


if __name__ == "__main__":
    main()
