"""dbt's `run_started_at` as sqlfluff's templater sees it: macro cdc_built_at renders
`run_started_at.strftime(...)`, so this module answers `strftime` for a fixed instant."""

import datetime as dt

_LINT_INSTANT = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def strftime(format_: str) -> str:
    return _LINT_INSTANT.strftime(format_)
