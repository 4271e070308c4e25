"""The Jinja copies of the contract in macros/intermediate.sql agree with cdc_unify.contract.

The intermediate and mart models cannot import Python, so the staged columns, the error codes
and the dialect list live in macros too; these tests keep the two copies equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from cdc_unify import contract

MACROS = Path(__file__).resolve().parents[2] / "macros" / "intermediate.sql"


class _Returned(Exception):  # noqa: N818 - control flow, like dbt's own `return`
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def _return(value: Any) -> None:
    raise _Returned(value)


def call_macro(name: str, dbt_vars: dict[str, Any] | None = None) -> Any:
    """Run one macro of macros/intermediate.sql the way dbt does (`return`, `var` with its default)."""
    given = dbt_vars or {}
    env = jinja2.Environment(extensions=["jinja2.ext.do"])
    env.globals.update({"return": _return, "var": lambda key, default=None: given.get(key, default)})
    module = env.from_string(MACROS.read_text(encoding="utf-8")).module
    try:
        getattr(module, name)()
    except _Returned as returned:
        return returned.value
    raise AssertionError(f"macro {name} returned nothing")


def test_staged_columns_macro_is_the_contract() -> None:
    assert [tuple(c) for c in call_macro("cdc_staged_columns")] == list(contract.STAGED_COLUMNS)


def test_error_codes_macro_is_the_contract() -> None:
    assert call_macro("cdc_error_codes") == contract.ERROR_CODES


def test_dialects_default_to_every_dialect_of_the_contract() -> None:
    assert tuple(call_macro("cdc_dialects")) == contract.DIALECTS


@pytest.mark.parametrize("chosen", [["canal_json"], []])
def test_dialects_var_overrides_the_default(chosen: list[str]) -> None:
    assert call_macro("cdc_dialects", {"cdc_dialects": chosen}) == chosen


def test_change_event_columns_cover_the_canonical_event() -> None:
    """Every column of the design brief's canonical change event is in the mart's column list."""
    brief = {
        "event_id",
        "source_name",
        "dialect",
        "landing_topic",
        "landing_partition",
        "landing_offset",
        "row_index",
        "event_kind",
        "op",
        "source_db_type",
        "tenant_name",
        "database_name",
        "schema_name",
        "table_name",
        "primary_key_columns",
        "primary_key",
        "before",
        "after",
        "before_is_partial",
        "after_is_partial",
        "column_source_types",
        "column_types",
        "event_ts",
        "event_ts_precision",
        "emitted_ts",
        "landed_at",
        "source_position",
        "transaction_id",
        "sequence",
        "ddl_statement",
    }
    columns = call_macro("cdc_change_event_column_names")
    assert brief <= set(columns)
    assert len(columns) == len(set(columns))
    staged = {name for name, _ in contract.STAGED_COLUMNS}
    assert set(columns) - staged == {"split_before_event_id", "delivery_count"}


def test_every_dialect_has_a_landing_source_and_a_staging_model() -> None:
    """The dbt sources (models/staging/_landing__sources.yml) and the staging model folders are the
    other written copies of the dialect list."""
    root = MACROS.parents[1]
    sources = yaml.safe_load((root / "models" / "staging" / "_landing__sources.yml").read_text(encoding="utf-8"))
    (landing,) = [source for source in sources["sources"] if source["name"] == "landing"]
    assert [table["name"] for table in landing["tables"]] == list(contract.DIALECTS)
    models = sorted(path.parent.name for path in (root / "models" / "staging").glob("*/stg_*__changes.*"))
    assert models == sorted(contract.DIALECTS)
