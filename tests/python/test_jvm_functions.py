"""The JVM functions of src/cdc_unify/java (cdc_unify.jvm), each against an oracle of its own:

- the jar: built once per source version into the cache, rebuilt when a source changes, and a
  machine without `javac` gets an error that says what to install;
- `cdc_exact_variant` (the document every message function reads, cdcunify.ExactJson; in SQL for
  looking at a landed value as staging reads it) against Python's JSON parser on the
  exact-number corpus (spec examples, the bad-input corpus, number edge cases: beyond int64,
  decimals of 38 and more digits, 1,200-digit numbers)
  and the cases below: one RFC 8259 value with every number the string of its exact text, keys in
  UTF-8 order, no key twice, or null;
- a value holding two JSON messages is refused whole, not cut after the first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdc_unify import jvm
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

EXTRA_JSON = [
    '{"a": 1} x',  # content after the value
    '{"a": 1}{"a": 2}',  # two messages in one value: refused, not cut to the first
    '{"a": 1}  \r\n',
    "1x",
    "01",
    "true]",
    '{"b": {"y": 1, "x": [true, null, "a\\u00e9\\n\\"q"]}, "a": 2}',
    '{"a": {"b": 1, "b": 2}}',  # a duplicate key inside
    '{"b": 1, "a": 2, "B": 3, "\\u00e9": 4, "z": 5, "aa": 6, "_": 7, "\\ud83d\\ude00": 8, "\\uffff": 9}',
    '"\\ud800"',  # a lone surrogate: Spark's strings hold '?'
    "\ufeff{}",  # a byte order mark
    '{"a": "x\ty"}',  # an unescaped control character
    "  ",
]


class _Pairs(list):
    """A JSON object as the parser met it: its (name, value) pairs, a repeated name kept."""


def _duplicates(value: Any) -> bool:
    if isinstance(value, _Pairs):
        names = [name for name, _ in value]
        return len(names) != len(set(names)) or any(_duplicates(v) for _, v in value)
    return isinstance(value, list) and any(_duplicates(v) for v in value)


def _spark_text(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")


def _normal(value: Any) -> Any:
    """Objects as dicts in UTF-8 key order (a variant's), strings as Spark holds them."""
    if isinstance(value, _Pairs):
        return {_spark_text(k): _normal(v) for k, v in sorted(value, key=lambda p: p[0].encode("utf-8", "replace"))}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return _spark_text(value) if isinstance(value, str) else value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def oracle(text: str) -> Any:
    """The document `cdc_exact_variant` must build from `text` (every number the string of its
    exact text), or None when the text is not one JSON value or repeats a key. A text nested
    deeper than Python's parser recurses is beyond Jackson's depth limit (1,000) too: None."""
    try:
        parsed = json.loads(
            text, parse_int=str, parse_float=str, parse_constant=_no_constants, object_pairs_hook=_Pairs
        )
    except (ValueError, RecursionError):
        return None
    return None if _duplicates(parsed) else _normal(parsed)


def test_the_oracle_orders_keys_and_refuses_what_is_not_one_value():
    assert oracle('{"b": 12.50, "a": [1, {"d": 1, "c": null}]}') == {"a": ["1", {"c": None, "d": "1"}], "b": "12.50"}
    assert [oracle(text) for text in ('{"a": 1}{}', '{"a": {"b": 1, "b": 2}}', "\ufeff{}", "01")] == [None] * 4


def test_jar_is_built_once_per_source_version(tmp_path, monkeypatch):
    monkeypatch.setenv(jvm.CACHE_ENV, str(tmp_path))
    jvm.functions_jar.cache_clear()
    try:
        jar = jvm.functions_jar()
        assert jar.parent == tmp_path and jar.is_file()
        built = jar.stat().st_mtime_ns
        jvm.functions_jar.cache_clear()
        assert jvm.functions_jar() == jar and jar.stat().st_mtime_ns == built
        sources = tmp_path / "sources"
        (sources / "cdcunify").mkdir(parents=True)
        for path in jvm.sources():
            (sources / "cdcunify" / path.name).write_bytes(path.read_bytes())
        monkeypatch.setattr(jvm, "JAVA_SOURCES", sources)
        first = sources / "cdcunify" / jvm.sources()[0].name
        first.write_text(first.read_text() + "\n// edited\n")
        jvm.functions_jar.cache_clear()
        rebuilt = jvm.functions_jar()
        assert rebuilt != jar and rebuilt.is_file()
        assert sorted(p.name for p in tmp_path.glob("*.jar")) == sorted([jar.name, rebuilt.name])
    finally:
        jvm.functions_jar.cache_clear()


def test_a_machine_without_javac_is_told_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv(jvm.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    jvm.functions_jar.cache_clear()
    try:
        with pytest.raises(jvm.JavaCompilerMissing, match="openjdk-17-jdk-headless"):
            jvm.functions_jar()
    finally:
        jvm.functions_jar.cache_clear()
    assert not list(tmp_path.glob("*.jar"))


def test_every_session_lists_the_jar_before_the_profiles_jars(tmp_path):
    from cdc_unify.spark import session_conf

    jar = str(jvm.functions_jar())
    assert session_conf(warehouse=str(tmp_path))["spark.jars"] == jar
    profile = session_conf(warehouse=str(tmp_path), extra_conf={"spark.jars": "/opt/hadoop-aws.jar"})
    assert profile["spark.jars"] == f"{jar},/opt/hadoop-aws.jar"


@pytest.mark.spark
def test_spark_exact_variant_is_the_oracle_document():
    from harness import spark_session

    texts = list(dict.fromkeys([*exact_number_corpus(), *EXTRA_JSON]))
    frame = spark_session().createDataFrame(
        [(i, t.encode("utf-8", "surrogatepass")) for i, t in enumerate(texts)], "i int, v binary"
    )
    built = {row.i: row.j for row in frame.selectExpr("i", "to_json(cdc_exact_variant(v)) as j").collect()}
    assert len(built) == len(texts) > 300
    mismatches = []
    for i, text in enumerate(texts):
        want = oracle(text)
        got = None if built[i] is None else json.loads(built[i])
        if got != want:
            mismatches.append((text[:120], want, got))
    assert mismatches == []
    invalid = spark_session().sql(
        "select cdc_exact_variant(X'C080'), cdc_exact_variant(X'FF'), cdc_exact_variant(null)"
    )
    assert list(invalid.collect()[0]) == [None, None, None]


def exact_number_corpus() -> list[str]:
    """The number edge cases, every spec example and every UTF-8 value of the bad-input corpus."""
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


@pytest.mark.spark
def test_spark_two_messages_written_into_one_value_are_quarantined_not_cut():
    from harness import stage_messages

    message = {"type": "INSERT", "database": "d", "table": "t", "es": 1700000000000, "ts": 1700000000001,
               "pkNames": ["id"], "mysqlType": {"id": "int"}, "data": [{"id": "1"}], "isDdl": False}  # fmt: skip
    one = json.dumps(message)
    rows = stage_messages("canal_json", [(one + one).encode(), (one + " \n").encode()])
    assert [(r["message_status"], r["error_code"]) for r in rows] == [
        ("quarantined", "invalid_json"),
        ("decoded", None),
    ]
