"""dbt-spark's adapter, plus Python models executed in the dbt process's own SparkSession."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparksession.connections import SparkSessionConnectionManager
from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper


class SparkSessionAdapter(SparkAdapter):
    ConnectionManager = SparkSessionConnectionManager

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> dict[str, Any]:
        return {**super()._get_adapter_specific_run_info(config), "adapter_type": "sparksession"}
