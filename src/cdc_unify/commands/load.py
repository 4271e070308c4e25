"""`cdc-unify load --dialect D --feed F PATH...`: land `.jsonl` / `.parquet` message files (docs/landing.md).

`cdc-unify load --generated DIR --feed F` lands a `cdc-unify generate` folder instead (the shipped
sample, for `make demo`): per dialect, batch-1 then batch-2 as two loads, under feed `F_<dialect>`.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_unify.commands import run_on_warehouse
from cdc_unify.contract import DIALECTS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdc_unify.landing import PreparedLoad

MANIFEST = "manifest.json"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "load",
        help="land CDC message files into landing.<dialect>",
        description=(
            "Append the messages of .jsonl files (one raw message per line) and .parquet files (Kafka record "
            "columns topic, partition, offset, timestamp, key, value) to landing.<dialect> of the warehouse "
            "(env CDC_UNIFY_WAREHOUSE, default <project>/.warehouse). Every file is checked before anything is "
            "written (with --generated: every file's columns); a file whose content was already loaded for the "
            "same dialect and feed is refused (or skipped, with --skip-loaded)."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="a .jsonl or .parquet file")
    parser.add_argument("--dialect", help=f"message format of the files, one of: {', '.join(DIALECTS)}")
    parser.add_argument(
        "--generated",
        type=Path,
        metavar="DIR",
        help=(
            "instead of files: a `cdc-unify generate` output folder (e.g. sample/); lands every dialect's "
            "batch-1.parquet, then its batch-2.parquet (a later load, as a later delivery), under feed FEED_<dialect>"
        ),
    )
    parser.add_argument("--feed", required=True, help="name of the source system / connection the messages came from")
    duplicates = parser.add_mutually_exclusive_group()
    duplicates.add_argument(
        "--allow-duplicates",
        action="store_true",
        help="land files even if the same content was loaded before (e.g. to simulate redelivery)",
    )
    duplicates.add_argument(
        "--skip-loaded",
        action="store_true",
        help="skip files whose content was already loaded for the same dialect and feed (so a load can be rerun)",
    )
    parser.add_argument("--warehouse", default=None, help="warehouse folder (default: env CDC_UNIFY_WAREHOUSE)")
    parser.set_defaults(func=run)


@dataclasses.dataclass(frozen=True)
class PlannedLoad:
    """One load of a command: files of one dialect and feed, written in one append."""

    dialect: str
    feed: str
    paths: tuple[Path, ...]


def generated_loads(folder: Path, feed: str) -> list[PlannedLoad]:
    """The loads of a generator output folder: per dialect (manifest order) one load per batch
    file, in batch order, under feed `<feed>_<dialect>` (a feed per dialect: each one is its own
    copy of the simulated source, and rows of different feeds are different rows)."""
    from cdc_unify.landing import LandingError, check_feed

    check_feed(feed)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        dialects = {name: sorted(manifest["per_dialect"][name]["files"]) for name in manifest["dialects"]}
    except OSError as exc:
        raise LandingError(f"{folder}: not a `cdc-unify generate` folder: {exc.strerror or exc}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise LandingError(f"{folder / MANIFEST}: not a generator manifest ({type(exc).__name__}: {exc})") from exc
    return [
        PlannedLoad(dialect, f"{feed}_{dialect}", (folder / dialect / name,))
        for dialect, names in dialects.items()
        for name in names
    ]


def planned_loads(args: argparse.Namespace) -> list[PlannedLoad]:
    """What the command lands, from either PATHs + --dialect or --generated."""
    from cdc_unify.landing import LandingError

    if args.generated is not None:
        if args.paths or args.dialect:
            raise LandingError("--generated lands a whole folder: give no PATH and no --dialect with it")
        return generated_loads(args.generated, args.feed)
    if args.dialect is None or not args.paths:
        raise LandingError("give --dialect and at least one PATH (or --generated DIR)")
    return [PlannedLoad(args.dialect, args.feed, tuple(Path(p) for p in args.paths))]


def check_generated(planned: PlannedLoad) -> None:
    """What can be checked of a generated load without reading its data: dialect, feed, and that
    each file is Parquet with the Kafka record columns.  Every load of a folder is checked so
    before the first one writes, without holding the whole folder in memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cdc_unify.landing import LandingError, check_dialect, check_feed, one_line, record_schema_problems

    check_dialect(planned.dialect)
    check_feed(planned.feed)
    for path in planned.paths:
        try:
            problems = record_schema_problems(pq.read_schema(path))
        except (OSError, pa.ArrowException) as exc:
            problems = [one_line(exc)]
        if problems:
            raise LandingError(f"{path}: not a Parquet file of Kafka records: {'; '.join(problems)}")


def file_sha256(path: Path) -> str:
    """The content hash the load ledger keeps (landing.read_record_file), read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_no_other_files(plan: list[PlannedLoad], loaded: set[tuple[str, str, str]]) -> None:
    """Refuse to add a folder's files to a feed that already holds files not in the folder (e.g. an
    older sample): skipping what is loaded would then mix two versions of the same rows."""
    from cdc_unify.landing import LandingError

    ours: dict[tuple[str, str], set[str]] = {}
    for planned in plan:
        ours.setdefault((planned.dialect, planned.feed), set()).update(file_sha256(p) for p in planned.paths)
    for dialect, feed, sha256 in sorted(loaded):
        if sha256 not in ours.get((dialect, feed), {sha256}):
            raise LandingError(
                f"landing.{dialect} already holds other files for feed {feed!r} (from an older version of this "
                "folder?): start from an empty warehouse (make clean) or load under another --feed"
            )


def check_one_dialect_per_feed(plan: list[PlannedLoad], loaded: set[tuple[str, str, str]]) -> None:
    """Refuse to land a feed under a second dialect: the models identify a source table by its feed,
    so two dialects' copies of one table under one feed would be folded into the same rows."""
    from cdc_unify.landing import LandingError

    dialects: dict[str, str] = {}
    for dialect, feed, _ in sorted(loaded):
        dialects.setdefault(feed, dialect)
    for planned in plan:
        known = dialects.setdefault(planned.feed, planned.dialect)
        if known != planned.dialect:
            raise LandingError(
                f"feed {planned.feed!r} is already landed as {known}, not {planned.dialect}: a feed has one "
                "dialect, give this one its own --feed"
            )


def loaded_files(spark: SparkSession) -> set[tuple[str, str, str]]:
    """(dialect, feed, sha-256) of every file the ledger says was landed: one query for a whole command."""
    from cdc_unify.landing import LEDGER_TABLE, create_landing_tables

    create_landing_tables(spark)  # the ledger must exist to be asked
    rows = spark.table(LEDGER_TABLE).select("dialect", "feed", "file_sha256").distinct().collect()
    return {(row.dialect, row.feed, row.file_sha256) for row in rows}


def land(spark: SparkSession, load: PreparedLoad, allow_duplicates: bool, skip: set | None) -> None:
    """Write one prepared load and print what landed.  Files whose (dialect, feed, sha-256) is in
    `skip` are left out, and said so; the others are added to it (a repeat later in the command
    is skipped too)."""
    from cdc_unify.landing import write_load

    if skip is not None:
        files = []
        for file in load.files:
            entry = (load.dialect, load.feed, file.sha256)
            if entry in skip:
                print(f"{file.path}: already loaded into landing.{load.dialect} for feed {load.feed!r}, skipped")
            else:
                skip.add(entry)
                files.append(file)
        if not files:
            return
        load = dataclasses.replace(load, files=tuple(files))
    result = write_load(spark, load, allow_duplicates=allow_duplicates)
    for file in result.files:
        ignored = f" (ignored columns: {', '.join(file.ignored_columns)})" if file.ignored_columns else ""
        print(f"{file.path}: {file.records.num_rows} rows{ignored}")
    count = f"{len(result.files)} file{'s' if len(result.files) != 1 else ''}"
    print(f"loaded {result.rows} rows from {count} into {result.table} (feed {result.feed!r})")


def run(args: argparse.Namespace) -> int:
    return run_on_warehouse("load", lambda: land_planned(args))


def land_planned(args: argparse.Namespace) -> None:
    from cdc_unify.landing import prepare_load, recover_loads
    from cdc_unify.spark import get_spark

    # Validation first: a bad command fails without starting Spark.
    plan = planned_loads(args)
    if args.generated is None:
        loads = [prepare_load(p.dialect, p.feed, p.paths) for p in plan]
    else:
        for planned in plan:
            check_generated(planned)
        loads = (prepare_load(p.dialect, p.feed, p.paths) for p in plan)  # read one load at a time
    spark = get_spark(warehouse=args.warehouse)
    for done in recover_loads(spark):  # a killed load's leftovers, before the ledger is read
        print(done)
    loaded = loaded_files(spark)
    check_one_dialect_per_feed(plan, loaded)
    skip = loaded if args.skip_loaded else None
    if skip is not None and args.generated is not None:
        check_no_other_files(plan, skip)
    for load in loads:
        land(spark, load, args.allow_duplicates, skip)
