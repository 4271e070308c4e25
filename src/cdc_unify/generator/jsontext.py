"""Compact JSON from the C encoder behind `json.dumps`, without its per-call set-up.

The generator writes millions of JSON documents holding tens of millions of values.
`json.dumps` with options builds a new encoder object on every call, and the only way to slip
verbatim text (the exact digits of a number) between values through its API is one call per
value, which made JSON writing most of the generator's time.  The C encoder is built once here
instead; it calls its string-encoding function for every string it meets, so one that passes
a verbatim type through as is writes such values without leaving C for anything else.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring
from typing import Any

Dumps = Callable[[Any], str]

if c_make_encoder is None:  # only without CPython's _json accelerator
    raise ImportError("the generator needs the C JSON encoder (_json)")


def _no_default(value: Any) -> Any:
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _dumps(encode_string: Callable[[str], str], default: Callable[[Any], Any], sort_keys: bool) -> Dumps:
    # Same arguments json.dumps(..., ensure_ascii=False, separators=(",", ":")) passes, minus the
    # circular-reference check (generated documents are trees).
    encoder = c_make_encoder(None, default, encode_string, None, ":", ",", sort_keys, False, True)

    def dumps(obj: Any) -> str:
        return "".join(encoder(obj, 0))

    return dumps


def compact_dumps(verbatim: type, default: Callable[[Any], Any] = _no_default) -> Dumps:
    """`dumps(obj)`: compact JSON, non-ASCII text unescaped, dict keys in their order, strings
    of type `verbatim` (exactly: a str subclass) as they are; `default` as json.dumps's."""

    # Called for every string written: locals and an exact type test keep it cheap.
    def encode_string(text: str, _verbatim: type = verbatim, _encode: Callable[[str], str] = encode_basestring) -> str:
        return text if type(text) is _verbatim else _encode(text)

    return _dumps(encode_string, default, sort_keys=False)


def sorted_dumps(default: Callable[[Any], Any] = _no_default) -> Dumps:
    """`dumps(obj)`: what json.dumps(obj, ensure_ascii=False, separators=(",", ":"),
    sort_keys=True, default=default) writes."""
    return _dumps(encode_basestring, default, sort_keys=True)


def plain_dumps() -> Dumps:
    """`dumps(obj)`: what json.dumps(obj, ensure_ascii=False, separators=(",", ":")) writes."""
    return _dumps(encode_basestring, _no_default, sort_keys=False)


class RawJson(str):
    """JSON text written as is: a number's exact digits."""


# Compact JSON, non-ASCII unescaped, RawJson numbers verbatim, key order kept.
dump_json = compact_dumps(RawJson)


def load_json(value: bytes) -> Any:
    """Parse an encoded value keeping every number's exact text (for malformations)."""
    return json.loads(value.decode("utf-8"), parse_float=RawJson, parse_int=RawJson)
