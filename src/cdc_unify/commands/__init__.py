"""Subcommands of the `cdc-unify` CLI, one module each.

A command module exposes `register(subparsers)`: it adds its parser with
`subparsers.add_parser(name, help=...)` and sets `func` to a handler
(`parser.set_defaults(func=run)`) that takes the parsed arguments and returns the exit code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def run_on_warehouse(name: str, body: Callable[[], int | None]) -> int:
    """Run a command that writes the warehouse (`load`, `rewrite-landing`): an error it expects (bad
    input, a warehouse in use, Spark refusing) prints `cdc-unify <name>: error: <one line>` on
    stderr and exits 1, with no Python or Java stack."""
    # Imported here so `cdc-unify --help` and the other commands do not pay for PySpark.
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    from cdc_unify.commands.sql import exc_message, java_message
    from cdc_unify.landing import LandingError
    from cdc_unify.spark import WarehouseInUse

    try:
        return body() or 0
    except (LandingError, WarehouseInUse) as exc:
        message = str(exc)
    except PySparkException as exc:
        message = exc_message(exc)
    except Py4JError as exc:
        message = java_message(exc)
    print(f"cdc-unify {name}: error: {message}", file=sys.stderr)
    return 1
