"""`cdc-unify rewrite-landing`: landing files with INT96 timestamps written again as TIMESTAMP_MICROS.

Parquet keeps min/max statistics for TIMESTAMP_MICROS columns, not for INT96 (Spark's default
before this project set it, 2026-11-26): an incremental staging run skips a landing file by its
`landed_at` statistics, and reads a file without them whole, every run (docs/landing.md).
"""

from __future__ import annotations

import argparse

from cdc_unify.commands import run_on_warehouse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rewrite-landing",
        help="rewrite landing files whose timestamps are INT96, so incremental runs can skip them",
        description=(
            "Find the data files of the landing tables whose timestamps Parquet stores as INT96 (written by a "
            "version of this project before 2026-11-26, or by an ingestion job that does not set "
            "spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS) and write each again, same rows and same name, "
            "with TIMESTAMP_MICROS. Parquet keeps no min/max for INT96, so every incremental staging run reads "
            "such files whole. Each file is replaced by one atomic rename: an interrupted run loses nothing and "
            "can be run again. Run it once after upgrading; a rerun finds nothing to do."
        ),
    )
    parser.add_argument("--dry-run", action="store_true", help="list the files and their INT96 columns, change nothing")
    parser.add_argument("--warehouse", default=None, help="warehouse folder (default: env CDC_UNIFY_WAREHOUSE)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_on_warehouse("rewrite-landing", lambda: rewrite(args))


def rewrite(args: argparse.Namespace) -> None:
    from cdc_unify.landing import int96_landing_files, rewrite_timestamps
    from cdc_unify.spark import get_spark

    spark = get_spark(warehouse=args.warehouse)
    found = int96_landing_files(spark)
    if not found:
        print("no landing file stores timestamps as INT96: nothing to rewrite")
        return
    rows = 0
    for number, rewrite in enumerate(found, 1):
        what = f"[{number}/{len(found)}] {rewrite.path} (INT96: {', '.join(rewrite.columns)})"
        if args.dry_run:
            print(what)
            continue
        rows += rewrite_timestamps(spark, rewrite)
        print(f"{what}: rewritten", flush=True)
    verb = "would rewrite" if args.dry_run else f"rewrote {rows} rows in"
    print(f"{verb} {len(found)} file{'s' if len(found) != 1 else ''} of the landing tables")
