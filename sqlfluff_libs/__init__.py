"""dbt context values the linter's Jinja needs at the top level (sqlfluff loads this module's names
into the root context): what dbt gives a model at run time, with a fixed value."""

import datetime

# The run's start (dbt: a UTC datetime), rendered by macro cdc_built_at.
run_started_at = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
