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


def test_no_feed_macro_is_the_contract() -> None:
    assert call_macro("cdc_no_feed") == contract.NO_FEED


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


def _accepted_values() -> list[tuple[str, str, tuple[str, ...], str | None]]:
    """(model, column, values, where) of every accepted_values test in the models' YAML files."""
    found = []
    for path in sorted((MACROS.parents[1] / "models").rglob("*.yml")):
        for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
            for column in model.get("columns", []):
                for test in column.get("data_tests", []):
                    if isinstance(test, dict) and "accepted_values" in test:
                        spec = test["accepted_values"]
                        values = tuple(spec["arguments"]["values"])
                        found.append((model["name"], column["name"], values, spec.get("config", {}).get("where")))
    return found


# The contract's closed vocabularies, as the YAML tests of every layer must list them.
VOCABULARIES = {
    "message_status": set(contract.MESSAGE_STATUSES),
    "error_code": set(contract.ERROR_CODES),
    "event_kind": set(contract.EVENT_KINDS),
    "primary_key_source": set(contract.PRIMARY_KEY_SOURCES),
}


def test_accepted_values_of_the_contracts_vocabularies_are_the_contract() -> None:
    """The YAML files write the staged vocabularies again in each model's accepted_values tests:
    each copy must be the contract's list, whole (a missing value would fail good rows, an extra
    one let bad rows pass)."""
    checked = [(model, column, values) for model, column, values, _ in _accepted_values() if column in VOCABULARIES]
    assert {column for _, column, _ in checked} >= {"message_status", "error_code", "event_kind"}
    wrong = [(model, column, values) for model, column, values in checked if set(values) != VOCABULARIES[column]]
    assert not wrong
    assert all(len(values) == len(set(values)) for _, _, values in checked)


def test_row_and_ddl_ops_accepted_are_the_contracts() -> None:
    """An op test scoped to row and DDL events lists the contract's row, split-half and DDL ops."""
    ops = set(contract.ROW_OPS) | set(contract.SPLIT_UPDATE_OPS) | set(contract.DDL_OPS)
    scoped = [
        (model, values)
        for model, column, values, where in _accepted_values()
        if column == "op" and where is not None and "event_kind in ('ROW', 'DDL')" in where
    ]
    assert scoped
    assert all(set(values) == ops for _, values in scoped), scoped
