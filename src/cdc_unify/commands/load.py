"""`cdc-unify load --dialect D --feed F PATH...`: land `.jsonl` / `.parquet` message files (docs/landing.md)."""

from __future__ import annotations

import argparse
import sys

from cdc_unify.contract import DIALECTS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "load",
        help="land CDC message files into landing.<dialect>",
        description=(
            "Append the messages of .jsonl files (one raw message per line) and .parquet files (Kafka record "
            "columns topic, partition, offset, timestamp, key, value) to landing.<dialect> of the warehouse "
            "(env CDC_UNIFY_WAREHOUSE, default <project>/.warehouse). Every file is checked before anything is "
            "written; a file whose content was already loaded for the same dialect and feed is refused."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a .jsonl or .parquet file")
    parser.add_argument("--dialect", required=True, help=f"message format, one of: {', '.join(DIALECTS)}")
    parser.add_argument("--feed", required=True, help="name of the source system / connection the messages came from")
    parser.add_argument(
        "--allow-duplicates",
        action="store_true",
        help="land files even if the same content was loaded before (e.g. to simulate redelivery)",
    )
    parser.add_argument("--warehouse", default=None, help="warehouse folder (default: env CDC_UNIFY_WAREHOUSE)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so `cdc-unify --help` and the other commands do not pay for PySpark.
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    from cdc_unify.commands.sql import exc_message, java_message
    from cdc_unify.landing import LandingError, prepare_load, write_load
    from cdc_unify.spark import get_spark

    try:
        # Validation first: a bad command fails without starting Spark.
        load = prepare_load(args.dialect, args.feed, args.paths)
        result = write_load(get_spark(warehouse=args.warehouse), load, allow_duplicates=args.allow_duplicates)
    except LandingError as exc:
        return fail(str(exc))
    except PySparkException as exc:
        return fail(exc_message(exc))
    except Py4JError as exc:
        return fail(java_message(exc))
    for file in result.files:
        ignored = f" (ignored columns: {', '.join(file.ignored_columns)})" if file.ignored_columns else ""
        print(f"{file.path}: {file.records.num_rows} rows{ignored}")
    files = f"{len(result.files)} file{'s' if len(result.files) != 1 else ''}"
    print(f"loaded {result.rows} rows from {files} into {result.table} (feed {result.feed!r})")
    return 0


def fail(message: str) -> int:
    print(f"cdc-unify load: error: {message}", file=sys.stderr)
    return 1
