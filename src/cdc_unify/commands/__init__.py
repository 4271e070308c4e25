"""Subcommands of the `cdc-unify` CLI, one module each.

A command module exposes `register(subparsers)`: it adds its parser with
`subparsers.add_parser(name, help=...)` and sets `func` to a handler
(`parser.set_defaults(func=run)`) that takes the parsed arguments and returns the exit code.
"""
