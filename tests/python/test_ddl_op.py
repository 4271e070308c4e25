"""DDL classification has one definition, the SQL macro `cdc_ddl_op` (macros/staging.sql), and
one Python twin (src/cdc_unify/message_decoders/_ddl.py) for the Python staging models; both must give
every statement of tests/fixtures/ddl_statements.json the same op. The corpus holds each op's
forms, DDL that is not about a table, comments before the keyword and the text where Java's and
Python's regexes differ (Unicode blanks, Unicode word characters, case)."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from cdc_unify.message_decoders import dts_avro
from cdc_unify.message_decoders._ddl import statement_op
from cdc_unify.message_decoders.debezium_json import ddl_op

ROOT = Path(__file__).resolve().parents[2]
CORPUS = json.loads((ROOT / "tests" / "fixtures" / "ddl_statements.json").read_text(encoding="utf-8"))["statements"]


def macro_sql(column: str) -> str:
    """The SQL expression the macro renders for a column (it calls no dbt function)."""
    env = jinja2.Environment(extensions=["jinja2.ext.do"])
    module = env.from_string((ROOT / "macros" / "staging.sql").read_text(encoding="utf-8")).module
    return str(module.cdc_ddl_op(column))


@pytest.mark.parametrize(
    ("statement", "op"),
    [
        ("CREATE TABLE t (a int)", "CREATE"),
        ("CREATE VIEW v AS SELECT 1", "CREATE"),
        ("alter table a rename to b", "RENAME"),
        ("create unique index ix on t (a)", "CREATE_INDEX"),
        ("/* x */ -- y\n# z\nDROP INDEX i ON t", "DROP_INDEX"),
        ("truncate shop.t", "TRUNCATE"),
        ("ALTER TABLE t ADD c int", "ALTER"),
        ("DROP DATABASE d", "DROP"),
        ("GRANT SELECT ON *.* TO u", "QUERY"),
        ("CREATEX TABLE t", "QUERY"),
        ("\u3000DROP TABLE t", "QUERY"),
    ],
)
def test_statements_get_the_op_of_their_leading_keywords(statement, op):
    assert statement_op(statement) == op


def test_the_python_decoders_use_the_twin():
    """debezium_json and dts_avro classify every corpus statement as the twin does."""
    assert {s: ddl_op(s, None, "QUERY") for s in CORPUS if s.strip()} == {
        s: statement_op(s) for s in CORPUS if s.strip()
    }
    assert {s: dts_avro.parse_ddl(s)[0] for s in CORPUS} == {s: statement_op(s) for s in CORPUS}


@pytest.mark.spark
def test_the_sql_macro_and_the_python_twin_agree_on_the_corpus():
    from harness import spark_session

    spark = spark_session()
    statements = spark.createDataFrame([(i, s) for i, s in enumerate(CORPUS)], "i int, statement string")
    rows = statements.selectExpr("i", f"{macro_sql('statement')} as op").collect()
    sql_ops = {CORPUS[row.i]: row.op for row in rows}
    assert len(sql_ops) == len(CORPUS)
    disagreements = {s: (op, statement_op(s)) for s, op in sql_ops.items() if op != statement_op(s)}
    assert disagreements == {}, "statement: (SQL op, Python op)"
