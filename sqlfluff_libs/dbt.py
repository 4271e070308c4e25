"""The `dbt` Jinja namespace as sqlfluff's templater sees it (linting renders SQL without dbt).

Each function renders what dbt-spark's macro of the same name renders, so the linter parses the
SQL that `dbt compile` would produce. Add a function here when a model starts calling another
`dbt.<macro>()`; sqlfluff reports an undefined one as a templating error.
"""


def escape_single_quotes(expression: str) -> str:
    return expression.replace("'", "\\'")


def string_literal(value: object) -> str:
    return f"'{value}'"
