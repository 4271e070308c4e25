"""macros/staging.sql `cdc_exact_json`, which every SQL JSON staging model reads its values through,
checked against Python's JSON parser (the oracle): on every spec example, every message of the
bad-input corpus and the number edge cases below, the rewrite of a JSON text parses to the same
document with each number replaced by the string of its exact text, and the rewrite of a text that
is not JSON is not JSON either. (A text nested deeper than Python's parser recurses, such as the
corpus's 20,000-deep arrays, has no oracle and is left out.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pytest

from cdc_unify.contract import DIALECTS

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "fixtures" / "spec_examples"
LONG = "1" * 1200  # past the 1000 characters Spark's JSON parser accepts in a number
EDGE_CASES = [
    '{"a": 12.50, "b": -9.99E-308, "c": 1e400, "d": -0, "e": 0.0, "f": 5E+3, "g": 7e-0}',
    '{"int64": 9223372036854775807, "beyond": 18446744073709551616, "neg": -99999999999999999999999}',
    '{"d38": 12345678901234567890123456789012345678.5, "d40": 0.1234567890123456789012345678901234567890}',
    '{"long": ' + LONG + "." + LONG + ', "longexp": 1e' + LONG + "}",
    '{"s": "x 1 \\" 2", "t": "\\\\", "u": "\\\\\\"3\\"", "v": "\\u0031\\u00e9", "w": "12", "": 3}',
    '[1, [2, [3.5, {"k": [4, "5", null, true, false]}]], -6e2]',
    '  \t\n{ "a" :\r\n 1 , "b" : [ ] , "c" : { } }  ',
    "42",
    '"a lone string 42"',
    "-0.000E-0",
    '{"a": "2024-01-01T00:00:00.123456+08:00", "b": "1e5", "c": "-"}',
    '{"a": 1, "a": 2}',
    # not JSON, and must not become JSON
    "{1: 2}",
    '{"a": 01}',
    "[01]",
    "[-]",
    '{"a": 1.}',
    '{"a": .5}',
    '{"a": +1}',
    '{"a": 1e}',
    '{"a": 0x10}',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": "unterminated}',
    '{"a": 1',
    "[1 2]",
    "oops",
    "",
]


def _macro(text_column: str) -> str:
    module = jinja2.Environment().from_string((ROOT / "macros" / "staging.sql").read_text(encoding="utf-8")).module
    return str(module.cdc_exact_json(text_column))


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def oracle(text: str) -> Any:
    """The document with every number as the string of its exact text (ValueError: not JSON).
    Duplicate keys are kept, as pairs, so no value can hide behind a later one."""
    return json.loads(
        text, parse_int=str, parse_float=str, parse_constant=_no_constants, object_pairs_hook=lambda pairs: pairs
    )


def parsed(text: str) -> Any:
    return json.loads(text, parse_constant=_no_constants, object_pairs_hook=lambda pairs: pairs)


def corpus() -> list[str]:
    from test_bad_inputs import corpus as bad_input_corpus

    texts = list(EDGE_CASES)
    for dialect in DIALECTS:
        if dialect == "dts_avro":
            continue
        texts += [p.read_text(encoding="utf-8") for p in sorted((SPEC / dialect).glob("[0-9][0-9]_*.json"))]
        for message in bad_input_corpus(dialect):
            if message.value is not None:
                try:
                    texts.append(message.value.decode("utf-8"))
                except UnicodeDecodeError:
                    continue  # staging never rewrites a value that is not UTF-8
    return list(dict.fromkeys(texts))


def test_the_oracle_reads_numbers_as_their_exact_text():
    assert oracle('{"a": 12.50, "b": [-9.99E-308, 1]}') == [("a", "12.50"), ("b", ["-9.99E-308", "1"])]
    with pytest.raises(ValueError):
        oracle('{"a": 01}')


@pytest.mark.spark
def test_spark_rewrite_keeps_every_document_and_turns_numbers_into_their_exact_text():
    from harness import spark_session

    texts = corpus()
    frame = spark_session().createDataFrame(list(enumerate(texts)), "i int, t string")
    rewritten = {row.i: row.r for row in frame.selectExpr("i", f"{_macro('t')} as r").collect()}
    assert len(rewritten) == len(texts) > 300
    mismatches = []
    for i, text in enumerate(texts):
        try:
            want = oracle(text)
        except RecursionError:
            continue
        except ValueError:
            try:
                parsed(rewritten[i])
                mismatches.append((text[:200], "not JSON, but its rewrite is", rewritten[i][:200]))
            except ValueError:
                pass
            continue
        try:
            got = parsed(rewritten[i])
        except ValueError as exc:
            got = f"rewrite is not JSON: {exc}"
        if got != want:
            mismatches.append((text[:200], want, got))
    assert mismatches == []
