"""dbt's `run_started_at` as sqlfluff's templater sees it (macro cdc_built_at formats it).

dbt gives a datetime of when the invocation started; linting needs only a fixed one that
formats as that datetime would.
"""

import datetime as dt

_STARTED = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def strftime(template: str) -> str:
    return _STARTED.strftime(template)
