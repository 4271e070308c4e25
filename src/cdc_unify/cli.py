"""`cdc-unify`: the project's command line (see `cdc-unify --help`)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from collections.abc import Sequence

# Command modules under cdc_unify.commands, in help order; one not written yet is skipped.
COMMAND_MODULES = ("generate", "load", "rewrite_landing", "sql", "sql_server", "docs")


def available_commands() -> list[str]:
    return [name for name in COMMAND_MODULES if importlib.util.find_spec(f"cdc_unify.commands.{name}") is not None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdc-unify",
        description="CDC messages of many dialects -> one change model -> analytics tables (dbt on Spark).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in available_commands():
        importlib.import_module(f"cdc_unify.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
