"""dbt adapter plugin `sparksession`: dbt-spark on the project's in-process SparkSession.

Declared with `dependencies=["spark"]`, so every dbt-spark macro and materialization applies;
this plugin adds the session setup, the `session` submission method for Python models and an
incremental materialization whose writes survive a killed process (pending_writes.py).
"""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.sparksession.connections import SparkSessionConnectionManager, SparkSessionCredentials
from dbt.adapters.sparksession.impl import SparkSessionAdapter
from dbt.include import sparksession

__all__ = ["Plugin", "SparkSessionAdapter", "SparkSessionConnectionManager", "SparkSessionCredentials"]

Plugin = AdapterPlugin(
    adapter=SparkSessionAdapter,  # type: ignore[arg-type]
    credentials=SparkSessionCredentials,
    include_path=sparksession.PACKAGE_PATH,
    dependencies=["spark"],
)
