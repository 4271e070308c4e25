"""dbt-spark's adapter, plus Python models executed in the dbt process's own SparkSession."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.spark.impl import SparkAdapter
from pyspark.sql import SparkSession

from dbt.adapters.sparksession import pending_writes
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

    @available
    def apply_pending_write(
        self,
        pending: BaseRelation,
        target: BaseRelation,
        partition_by: list[str],
        replace: bool,
        just_written: bool = False,
    ) -> bool:
        """Finish (or, left by a killed run, redo) an incremental write: pending_writes.apply_pending."""
        return pending_writes.apply_pending(
            self._session(), pending, target, list(partition_by), replace, just_written=just_written
        )

    @available
    def drop_pending_write(self, pending: BaseRelation) -> None:
        """Discard a killed run's pending write (a full build replaces what it would have changed)."""
        self._session().sql(f"drop table if exists `{pending.schema}`.`{pending.identifier}`")
        pending_writes.clear_unregistered_location(self._session(), pending)

    @available
    def clear_unregistered_location(self, relation: BaseRelation) -> bool:
        """Before `create table as`: remove the leftovers of a killed one (pending_writes)."""
        return pending_writes.clear_unregistered_location(self._session(), relation)

    def _session(self) -> SparkSession:
        credentials: Any = self.config.credentials
        return credentials.session()
