"""The JVM functions of src/cdc_unify/java (cdc_unify.jvm), each against an oracle of its own:

- the jar: built once per source version into the cache, rebuilt when a source changes, and a
  machine without `javac` gets an error that says what to install;
- `cdc_exact_variant` (every JSON staging model's document) against Python's JSON parser on the
  exact-number corpus of test_exact_json (spec examples, the bad-input corpus, number edge cases)
  and the cases below: one RFC 8259 value with every number the string of its exact text, keys in
  UTF-8 order, no key twice, or null;
- `cdc_canal_value` (the Canal models' reader) against the same fields read by Spark's own variant
  functions from `cdc_exact_variant`'s document (`try_variant_get`, `is_variant_null`,
  `schema_of_variant`, as the Canal models read them before the reader), on every Canal-shaped
  value of the spec examples and the bad-input corpora of canal_json and oms_canal_json, and on
  values built to reach each branch (nested names, non-object rows, null elements, odd types).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pytest

from cdc_unify import jvm

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "fixtures" / "spec_examples"
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
    from test_exact_json import corpus

    texts = list(dict.fromkeys([*corpus(), *EXTRA_JSON]))
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


# ---------------------------------------------------------------- cdc_canal_value
SCALARS = {"type": "type", "is_ddl": "isDdl", "database": "database", "table": "table", "sql": "sql",
           "gtid": "gtid", "es": "es", "ts": "ts"}  # fmt: skip
PRESENT = {"data": "data", "old": "old", "pk_names": "pkNames", "mysql_type": "mysqlType", "sql_type": "sqlType",
           "table_changes": "tableChanges"}  # fmt: skip
CANAL_EXTRA = [
    '{"type": {"a": 1}, "database": ["d"], "table": {"t": 2}, "es": true, "ts": null, "isDdl": false}',
    '{"type": "INSERT", "data": [{"a": 1, "b": {"x": [1, 2]}, "c": null}, null, 3, {"d": [], "e": {}}]}',
    '{"type": "UPDATE", "data": [{"a": 1}], "old": [{"a": 0.50, "z": true}, "x"], "pkNames": [1, null, {"k": 1}, "id"]}',
    '{"type": "QUERY", "mysqlType": {"b": "int", "a": 7, "c": null, "d": {"x": 1}}, "sqlType": [], "sql": "CREATE"}',
    '{"tableChanges": {"table": {"columns": [{"name": "a", "jdbcType": 4}, 3, null, {"typeExpression": {"x": 1}}],'
    ' "primaryKeyColumnNames": ["a", 1]}}}',
    '{"tableChanges": {"table": [1]}}',
    '{"tableChanges": null, "data": null, "old": null}',
    '[{"type": "INSERT"}, 7, null, [1], {"type": "DELETE", "data": []}]',
    "[]",
    '"just a string"',
    "42",
    '{"\\u00e9": 1, "type": "HEARTBEAT", "data": "nope"}',
]
# The JSON macros every other JSON model still reads its variant with (macros/staging.sql).
JSON_MACROS = jinja2.Environment().from_string((ROOT / "macros" / "staging.sql").read_text(encoding="utf-8")).module


def _rows_of(field: str) -> str:
    return f"try_variant_get(m['{field}'], '$', 'array<map<string, variant>>')"


# The reader's fields as the Canal models read them from a message variant `m` (before the reader),
# through those macros where one existed.
READ_BY_SPARK = {
    **{f"{name}_present": str(JSON_MACROS.cdc_json_present(f"m['{key}']")) for name, key in SCALARS.items()},
    **{f"{name}_text": str(JSON_MACROS.cdc_json_text(f"m['{key}']")) for name, key in SCALARS.items()},
    **{f"{name}_nested": str(JSON_MACROS.cdc_json_is_nested(f"m['{key}']")) for name, key in SCALARS.items()},
    **{f"has_{name}": str(JSON_MACROS.cdc_json_present(f"m['{key}']")) for name, key in PRESENT.items()},
    **{f"{field}_rows": f"transform({_rows_of(field)}, r -> {JSON_MACROS.cdc_image_values('r')})" for field in ("data", "old")},
    **{f"{field}_nested": f"array_join(transform(coalesce({_rows_of(field)}, array()), r -> {JSON_MACROS.cdc_nested_columns('r')}), '')"
       for field in ("data", "old")},
    "pk_names": "try_variant_get(m['pkNames'], '$', 'array<string>')",
    "mysql_types": "try_variant_get(m['mysqlType'], '$', 'map<string, string>')",
    "sql_types": "try_variant_get(m['sqlType'], '$', 'map<string, string>')",
    "table_change_columns": "try_variant_get(m['tableChanges'], '$.table.columns', 'array<map<string, string>>')",
    "table_change_keys": "try_variant_get(m['tableChanges'], '$.table.primaryKeyColumnNames', 'array<string>')",
}  # fmt: skip
READ_BY_JVM = {
    **{f"{name}_{part}": f"m.{name}.{part}" for name in SCALARS for part in ("present", "text", "nested")},
    **{f"has_{name}": f"m.has_{name}" for name in PRESENT},
    **{name: f"m.{name}" for name in ("data_rows", "data_nested", "old_rows", "old_nested", "pk_names", "mysql_types",
                                        "sql_types", "table_change_columns", "table_change_keys")},
}  # fmt: skip


def canal_values() -> list[bytes]:
    from test_bad_inputs import corpus as bad_input_corpus

    values = [text.encode() for text in CANAL_EXTRA]
    for dialect in ("canal_json", "oms_canal_json"):
        values += [p.read_bytes() for p in sorted((SPEC / dialect).glob("[0-9][0-9]_*.json"))]
        values += [m.value for m in bad_input_corpus(dialect) if m.value is not None]
    return list(dict.fromkeys(values))


def _rows(frame: Any) -> list[dict[str, Any]]:
    return [row.asDict(recursive=True) for row in frame.collect()]


@pytest.mark.spark
def test_spark_canal_value_reads_each_message_as_spark_reads_its_variant():
    from harness import spark_session

    spark = spark_session()
    values = canal_values()
    assert len(values) > 60
    spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i int, v binary").createOrReplaceTempView(
        "canal_corpus"
    )
    documents = spark.sql(
        "select i, cdc_canal_value(v) as jvm, case when is_valid_utf8(cast(v as string)) then cdc_exact_variant(v) end as d"
        " from canal_corpus"
    )
    documents.createOrReplaceTempView("canal_documents")
    by_value = spark.sql(
        """
        select
            i,
            jvm.is_utf8 as jvm_utf8, is_valid_utf8(cast(v as string)) as spark_utf8,
            jvm.is_json as jvm_json, d is not null as spark_json,
            jvm.is_object as jvm_object, try_variant_get(d, '$', 'map<string, variant>') is not null as spark_object,
            jvm.array_size as jvm_size, size(try_variant_get(d, '$', 'array<variant>')) as spark_size
        from canal_documents join canal_corpus using (i)
        where v is not null
        """
    )
    for row in _rows(by_value):
        assert (row["jvm_utf8"], row["jvm_json"] if row["spark_utf8"] else False) == (
            row["spark_utf8"],
            row["spark_json"],
        ), values[row["i"]][:200]
        if row["spark_json"]:
            assert (row["jvm_object"], row["jvm_size"] if row["spark_size"] != -1 else None) == (
                row["spark_object"],
                None if row["spark_size"] in (-1, None) else row["spark_size"],
            ), values[row["i"]][:200]
    spark_messages = spark.sql(
        f"""
        select i, message_index, {", ".join(f"{expression} as {name}" for name, expression in READ_BY_SPARK.items())}
        from canal_documents
            lateral view posexplode(case when try_variant_get(d, '$', 'map<string, variant>') is not null
                then array(try_variant_get(d, '$', 'map<string, variant>'))
                else transform(try_variant_get(d, '$', 'array<variant>'), e -> try_variant_get(e, '$', 'map<string, variant>'))
            end) messages as message_index, m
        where m is not null
        """
    )
    jvm_messages = spark.sql(
        f"""
        select i, message_index, {", ".join(f"{expression} as {name}" for name, expression in READ_BY_JVM.items())}
        from canal_documents lateral view posexplode(jvm.messages) messages as message_index, m
        where m is not null
        """
    )
    want = {(r["i"], r["message_index"]): r for r in _rows(spark_messages)}
    got = {(r["i"], r["message_index"]): r for r in _rows(jvm_messages)}
    assert len(want) > 60 and got.keys() == want.keys()
    for key, row in want.items():
        assert got[key] == row, values[key[0]][:300]
    # Map keys come in the variant's order, which the dicts above do not compare.
    ordered = spark.sql(
        "select to_json(get(cdc_canal_value(v).messages, 0).mysql_types) as jvm,"
        " to_json(try_variant_get(cdc_exact_variant(v), '$.mysqlType', 'map<string, string>')) as spark"
        " from canal_corpus where is_valid_utf8(cast(v as string)) and cdc_canal_value(v).is_object"
    )
    typed = [row for row in _rows(ordered) if row["spark"] is not None]
    assert len(typed) >= 10 and all(row["jvm"] == row["spark"] for row in typed)


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
