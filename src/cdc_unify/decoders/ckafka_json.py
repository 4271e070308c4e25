"""Tencent CKafka connector, "official format one" (spec 002): row images without types.

Format one sends `NEW_VALUES` / `OLD_VALUES` as flat JSON objects and no column type at all,
so, as docs/staged-contract.md prescribes for such dialects, every column is `string` and keeps
the text exactly as sent (a JSON string unquoted, a JSON number as its exact digits, `true` /
`false` for JSON booleans).  Types come later from the schema registry (DDL on the feed) or
from the typed-mart configuration.  Column values that are JSON objects or arrays are rejected
earlier, in the staging model (format one writes every column value as a scalar).
"""

from __future__ import annotations

from typing import Any


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """Values as sent, every column (of the image or of `source_types`) typed `string`."""
    canonical = {col: None if raw is None else str(raw) for col, raw in values.items()}
    return canonical, {col: "string" for col in {**source_types, **values}}
