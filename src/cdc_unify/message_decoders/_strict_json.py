"""JSON parsing of the Python decoders, as strict as the SQL staging models' `try_parse_json`:
an object that repeats a key is not JSON (which value would be meant is unknowable), and nesting
deeper than the parser can follow is refused as a parse error instead of crashing the decoder."""

from __future__ import annotations

import json
from typing import Any


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def loads_strict(text: str, **options: Any) -> Any:
    """json.loads(text, **options), raising ValueError on duplicate keys and on too deep nesting."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, **options)
    except RecursionError:
        raise ValueError("the JSON nests deeper than the parser follows") from None
