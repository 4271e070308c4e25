"""The `session` submission method: run a compiled dbt Python model in dbt's own SparkSession."""

from __future__ import annotations

import linecache
import traceback
from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparksession.connections import SparkSessionCredentials


class SessionPythonJobHelper(PythonJobHelper):
    def __init__(self, parsed_model: dict, credentials: SparkSessionCredentials) -> None:
        self.credentials = credentials
        self.relation_name = f"{parsed_model['schema']}.{parsed_model['alias']}"

    def submit(self, compiled_code: str) -> None:
        """Execute the model; any exception fails the dbt node with the model's traceback."""
        filename = f"<dbt python model {self.relation_name}>"
        # Registered so tracebacks show the compiled model's source lines.
        linecache.cache[filename] = (len(compiled_code), None, compiled_code.splitlines(keepends=True), filename)
        namespace: dict[str, Any] = {"__name__": "__dbt_python_model__", "spark": self.credentials.session()}
        try:
            exec(compile(compiled_code, filename, "exec"), namespace)
        except Exception as exc:
            # The traceback from the model's own frames on (this method's frame says nothing).
            model_frames = traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next)
            raise DbtRuntimeError(f"Python model {self.relation_name} failed:\n{''.join(model_frames)}") from exc
        finally:
            linecache.cache.pop(filename, None)
