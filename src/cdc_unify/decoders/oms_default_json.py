"""OceanBase OMS Default JSON (spec 003, "Default JSON 消息格式"): images to canonical text.

The Default serialization declares no column types: `prevStruct` / `postStruct` map column
name -> value, values being JSON numbers or strings as OMS's type mapping writes them (spec 003
appendix).  The staging model (models/staging/oms_default_json/, SQL shared with
oms_default_ext_json through macros/oms.sql) extracts every value as its exact text (JSON
numbers keep their digits, `10223372036854775806` and `9.99…E-308` included), so here the value
is kept as sent and typed `string` (docs/staged-contract.md, "Columns whose type the message
does not carry"): nothing is guessed from the text.  The SharePlex serialization, also untyped,
reuses this function.
"""

from __future__ import annotations

from typing import Any

UNTYPED_LOGICAL_TYPE = "string"


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """Every value as sent, every column typed `string` (the message declares no types)."""
    return dict(values), {column: UNTYPED_LOGICAL_TYPE for column in values}
