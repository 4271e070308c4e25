"""Credentials and connections of the `sparksession` adapter: dbt-spark's `session` method on the project's session."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionMethod, SparkCredentials
from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import SparkSession

ANSI_MODE = "spark.sql.ansi.enabled"


@dataclass
class SparkSessionCredentials(SparkCredentials):
    """dbt-spark session credentials plus what it takes to build the session itself."""

    master: str | None = None
    warehouse: str | None = None
    app_name: str | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(f"The sparksession adapter only supports `method: session`, not {self.method!r}")
        # dbt-spark forces ANSI mode off; this project keeps Spark 4's default (on) unless the
        # profile says otherwise, so dbt, the CLI and plain PySpark tests behave the same.
        ansi = str(self.server_side_parameters.get(ANSI_MODE, "true"))
        super().__post_init__()
        self.server_side_parameters[ANSI_MODE] = ansi
        self.spark_conf = {str(key): str(value) for key, value in self.spark_conf.items()}

    @property
    def type(self) -> str:
        return "sparksession"

    def _connection_keys(self) -> tuple[str, ...]:
        return ("method", "schema", "master", "warehouse", "app_name")

    def session(self) -> SparkSession:
        """The process's SparkSession as this profile configures it."""
        from cdc_unify.spark import get_spark

        extra = {**self.spark_conf, **self.server_side_parameters}
        return get_spark(master=self.master, warehouse=self.warehouse, extra_conf=extra, app_name=self.app_name)


class SparkSessionConnectionManager(SparkConnectionManager):
    TYPE = "sparksession"

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        # dbt-spark logs the full error (debug log) and re-raises it whole; dbt's console gets the
        # message without the logical plan Spark appends to analysis errors.
        from cdc_unify.spark import spark_error_message

        try:
            with super().exception_handler(sql):
                yield
        except DbtRuntimeError as exc:
            message = spark_error_message(exc)
            if message is None:
                raise
            raise DbtRuntimeError(message) from exc

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        # dbt-spark's session cursor calls SparkSession.builder.getOrCreate() on every query: build
        # the configured session first so that call returns it instead of a bare default session.
        from cdc_unify.spark import WarehouseInUse

        credentials: Any = connection.credentials
        try:
            credentials.session()
        except WarehouseInUse as exc:
            raise FailedToConnectError(str(exc)) from None
        except Exception as exc:
            raise FailedToConnectError(f"could not start the Spark session: {type(exc).__name__}: {exc}") from exc
        return super().open(connection)
