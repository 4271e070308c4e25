"""The Python decoders' strict JSON parse (message_decoders/_strict_json.py) against the standard
library's: the same value for every valid text, and a ValueError where the SQL models'
try_parse_json gives null (a repeated key at any depth, too deep nesting, a byte order mark)."""

from __future__ import annotations

import json
import random

import pytest

from cdc_unify.message_decoders._strict_json import loads_strict
from cdc_unify.message_decoders.debezium_json import JsonNumber, parse_json_text


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.choice(["object", "array", "text", "int", "float", "literal"] if depth < 4 else ["text", "int"])
    if kind == "object":
        return {f'k{rng.randrange(50)}\u00e9"': random_value(rng, depth + 1) for _ in range(rng.randrange(6))}
    if kind == "array":
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    if kind == "text":
        return "".join(rng.choice('ab"\\\n\u2028\U0001f600') for _ in range(rng.randrange(8)))
    if kind == "int":
        return rng.randrange(-(10**30), 10**30)
    if kind == "float":
        return rng.uniform(-1e300, 1e300)
    return rng.choice([None, True, False])


def test_every_valid_text_parses_as_the_standard_library_parses_it():
    rng = random.Random(7)
    for _ in range(500):
        text = json.dumps(random_value(rng), ensure_ascii=rng.random() < 0.5)
        assert loads_strict(text) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"a": 1, "a": 1}', "'a'"),
        ('{"a": 1, "b": {"c": [1, {"d": 2, "e": 3, "d": 4}]}}', "'d'"),
        ('[{"x": 1}, {"y": 2, "z": 3, "y": 2, "z": 3}]', "'y'"),
    ],
)
def test_a_repeated_key_at_any_depth_is_refused_and_named(text, key):
    with pytest.raises(ValueError, match=f"duplicate key {key}"):
        loads_strict(text)


def test_a_byte_order_mark_and_too_deep_nesting_are_refused():
    with pytest.raises(ValueError, match="BOM"):
        loads_strict('\ufeff{"a": 1}')
    with pytest.raises(ValueError, match="nests deeper"):
        loads_strict("[" * 100_000 + "]" * 100_000)


def test_the_options_of_each_call_apply_to_that_call_only():
    assert parse_json_text('{"n": 1.50, "m": [10]}') == {"n": "1.50", "m": ["10"]}
    assert isinstance(parse_json_text("-0"), JsonNumber)
    assert loads_strict('{"n": 1.50}') == {"n": 1.5}
    with pytest.raises(ValueError, match="NaN is not valid JSON"):
        parse_json_text('{"n": NaN}')
    assert loads_strict("NaN") != loads_strict("NaN")  # the standard library's own reading
