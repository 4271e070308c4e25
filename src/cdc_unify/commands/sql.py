"""`cdc-unify sql "<query>"`: run Spark SQL against the local warehouse and print the result."""

from __future__ import annotations

import argparse
import base64
import csv
import datetime as dt
import decimal
import io
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

# The schema the marts land in (the dbt profile's schema); unqualified table names resolve there.
SCHEMA_ENV = "CDC_UNIFY_SCHEMA"
DEFAULT_SCHEMA = "cdc_unify"
FORMATS = ("table", "csv", "json")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sql",
        help="run a Spark SQL query against the local warehouse",
        description=(
            "Run one Spark SQL statement against the warehouse dbt builds (env CDC_UNIFY_WAREHOUSE, "
            "default <project>/.warehouse) and print the result. Unqualified table names resolve to the "
            "marts' schema."
        ),
    )
    parser.add_argument("query", help='the statement, e.g. "show tables" or "select * from some_mart limit 10"')
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument(
        "--schema",
        default=os.environ.get(SCHEMA_ENV, DEFAULT_SCHEMA),
        help=f"schema for unqualified names (default: env {SCHEMA_ENV} or {DEFAULT_SCHEMA!r})",
    )
    parser.add_argument("--warehouse", default=None, help="warehouse folder (default: env CDC_UNIFY_WAREHOUSE)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so `cdc-unify --help` and the other commands do not pay for PySpark.
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    from cdc_unify.spark import WarehouseInUse, get_spark

    try:
        spark = get_spark(warehouse=args.warehouse)
        if spark.catalog.databaseExists(args.schema):
            spark.catalog.setCurrentDatabase(args.schema)
        result = spark.sql(args.query)
        columns = result.columns
        rows = [tuple(to_plain(value) for value in row) for row in result.collect()]
    except (PySparkException, Py4JError, WarehouseInUse) as exc:
        print(f"cdc-unify sql: error: {exc_message(exc)}", file=sys.stderr)
        return 1
    sys.stdout.write(render(args.format, columns, rows))
    return 0


def exc_message(exc: BaseException) -> str:
    """What a command prints for a Spark (PySpark or Py4J) error: no JVM stack trace, no plan."""
    from cdc_unify.spark import spark_error_message

    return spark_error_message(exc) or str(exc)


# The same for a Py4J error (commands.load imports both names).
java_message = exc_message


def to_plain(value: Any) -> Any:
    """A Spark value as plain JSON-able Python: nested rows/maps/arrays kept, scalars without a JSON type as text."""
    if hasattr(value, "asDict"):
        return {key: to_plain(item) for key, item in value.asDict().items()}
    if isinstance(value, dict):
        return {str(to_plain(key)): to_plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(item) for item in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | dt.timedelta):
        return str(value)
    return value


def render(output_format: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if output_format == "json":
        return json.dumps([dict(zip(columns, row, strict=True)) for row in rows], ensure_ascii=False) + "\n"
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[cell_text(value, null="") for value in row] for row in rows])
        return buffer.getvalue()
    return render_table(columns, rows)


def cell_text(value: Any, null: str = "NULL") -> str:
    if value is None:
        return null
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain text grid with a row count, like a SQL shell prints."""
    cells = [[cell_text(value) for value in row] for row in rows]
    widths = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(columns)]
    rule = "+" + "+".join("-" * (width + 2) for width in widths) + "+"

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(value.ljust(width) for value, width in zip(values, widths, strict=True)) + " |"

    body = [line(row) for row in cells]
    count = f"({len(rows)} row{'s' if len(rows) != 1 else ''})"
    if not columns:
        return count + "\n"
    return "\n".join([rule, line(columns), rule, *body, rule, count]) + "\n"
