"""JSON parsing of the Python decoders, as strict as the SQL staging models' `try_parse_json`:
an object that repeats a key is not JSON (which value would be meant is unknowable), and nesting
deeper than the parser can follow is refused as a parse error instead of crashing the decoder."""

from __future__ import annotations

import functools
import json
from typing import Any


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # the rare case: name the first key that repeats
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


@functools.cache
def _decoder(**options: Any) -> json.JSONDecoder:
    # One decoder per set of options: json.loads builds a new one for every call with options.
    return json.JSONDecoder(object_pairs_hook=_unique_keys, **options)


def loads_strict(text: str, **options: Any) -> Any:
    """json.loads(text, **options), raising ValueError on duplicate keys and on too deep nesting."""
    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        return _decoder(**options).decode(text)
    except RecursionError:
        raise ValueError("the JSON nests deeper than the parser follows") from None
