"""Typed marts (macros/typed_marts.sql, models/marts/typed/, docs/typed-marts.md).

Unit tests render the macros with Jinja the way dbt does (nested `return`, `var`, `execute`,
`run_query` on a fake registry). The Spark tests build a generated canal_json workload through
the whole pipeline and judge the typed models against the generator's own table schemas and
against cdc_current_rows / cdc_row_history: every typed value must equal its canonical text
parsed here, in Python. A second build maps the two entities onto other tables through the var
`typed_entities`: shop.all_types (every logical type) and a crafted table whose names hold a
backtick, a quote, a backslash and spaces, with a type override its text cannot satisfy.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import random
import re
import struct
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
import pyarrow as pa
import pytest
from jinja2.runtime import Macro
from jinja2.sandbox import SandboxedEnvironment
from pyspark.sql import functions as F

from cdc_unify import canonical, landing
from cdc_unify.contract import DIALECTS
from cdc_unify.generator.encoders.canal_json import CanalJsonEncoder
from cdc_unify.generator.encoders.debezium_json import decimal_wire
from cdc_unify.generator.model import Column, Position, SourceChange, TableSchema, Transaction, Workload
from cdc_unify.generator.run import generate
from cdc_unify.generator.workload import ALL_TYPES, CUSTOMERS, CUSTOMERS_NEW_COLUMN, ORDER_ITEMS
from harness import MART_SCHEMA, run_dbt, spark_session
from semantic_rows import MILLISECOND_INSTANTS, NO_TRUNCATE

MACROS = Path(__file__).resolve().parents[2] / "macros" / "typed_marts.sql"

# docs/canonical-text.md, by hand: the Spark type a column of each logical type gets.
SPARK_TYPE = {
    "boolean": "boolean",
    "tinyint": "tinyint",
    "smallint": "smallint",
    "int": "int",
    "bigint": "bigint",
    "ubigint": "decimal(20,0)",
    "decimal(10,2)": "decimal(10,2)",
    "decimal(12,2)": "decimal(12,2)",
    "decimal(38,10)": "decimal(38,10)",
    "decimal(65,30)": "string",  # wider than Spark's 38 digits: kept exact as text
    "decimal": "string",  # unknown precision and scale
    "float": "float",
    "double": "double",
    "string": "string",
    "json": "string",
    "binary": "binary",
    "date": "date",
    "time": "string",
    "datetime": "timestamp_ntz",
    "timestamp": "timestamp",
    "zoned_datetime": "timestamp",
    "interval_ym": "interval year to month",
    "interval_ds": "interval day to second",
    None: "string",
    "geometry": "string",
}


# ---------------------------------------------------------------- Jinja as dbt runs it
class _Returned(Exception):  # noqa: N818 - control flow, like dbt's own `return`
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class CompileError(Exception):
    pass


def _return(value: Any) -> None:
    raise _Returned(value)


def _raise_compiler_error(message: str) -> None:
    raise CompileError(message)


class _DbtEnvironment(SandboxedEnvironment):
    """dbt's `return` ends the macro that called it, also when another macro called that one."""

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().call(context, obj, *args, **kwargs)
        except _Returned as returned:
            if isinstance(obj, Macro):
                return returned.value
            raise


class _Rows:
    def __init__(self, rows: list[tuple]) -> None:
        self.rows = rows


def call_macro(name: str, *args: Any, dbt_vars: dict | None = None, registry: list[tuple] | None = None) -> Any:
    """Call a macro of macros/typed_marts.sql while a model compiles (`execute`); `registry` is
    what the schema registry query returns: (column_name, logical_type) rows."""
    given = dbt_vars or {}
    env = _DbtEnvironment(extensions=["jinja2.ext.do"], undefined=jinja2.StrictUndefined)
    env.globals.update(
        {
            "return": _return,
            "var": lambda key, default=None: given.get(key, default),
            "execute": True,
            "modules": type("Modules", (), {"re": re}),
            "exceptions": type("Exceptions", (), {"raise_compiler_error": staticmethod(_raise_compiler_error)}),
            "ref": lambda model: f"cdc_unify.{model}",
            "load_relation": lambda relation: relation,
            "run_query": lambda sql: _Rows(registry or []),
        }
    )
    # `{% test %}` blocks are dbt's own tag (generic tests), not macros: left out here.
    source = re.sub(r"{% test .*?{% endtest %}", "", MACROS.read_text(encoding="utf-8"), flags=re.S)
    module = env.from_string(source).module
    try:
        return str(getattr(module, name)(*args))
    except _Returned as returned:
        return returned.value


# ---------------------------------------------------------------- unit tests
@pytest.mark.parametrize(
    ("name", "quoted"),
    [("id", "`id`"), ("has space", "`has space`"), ("we`ird", "`we``ird`"), ("``", "``````"), ("a'b\\c", "`a'b\\c`")],
)
def test_identifiers_are_backtick_quoted_with_backticks_doubled(name: str, quoted: str) -> None:
    assert call_macro("cdc_quote_identifier", name) == quoted


@pytest.mark.parametrize(
    ("text", "literal"),
    [("shop", "'shop'"), ("it's", "'it\\'s'"), ("back\\slash", "'back\\\\slash'"), ("\\'", "'\\\\\\''")],
)
def test_string_literals_escape_quotes_and_backslashes(text: str, literal: str) -> None:
    assert call_macro("cdc_string_literal", text) == literal


@pytest.mark.parametrize(("logical_type", "spark_type"), SPARK_TYPE.items())
def test_each_logical_type_maps_to_its_spark_type(logical_type: str | None, spark_type: str) -> None:
    assert call_macro("cdc_typed_spark_type", logical_type) == spark_type


def test_every_logical_type_of_the_canonical_module_is_mapped() -> None:
    mapped = {canonical.base_type(t) for t in SPARK_TYPE if t is not None}
    assert set(canonical.LOGICAL_TYPES) <= mapped


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        (" DECIMAL( 5 , 3 ) ", "decimal(5,3)"),
        ("Interval  Day To Second", "interval day to second"),
        ("timestamp_ntz", "timestamp_ntz"),
        ("decimal(38,0)", "decimal(38,0)"),
    ],
)
def test_type_overrides_are_normalised(given: str, normal: str) -> None:
    assert call_macro("cdc_typed_override_type", "e", "c", given) == normal


@pytest.mark.parametrize("bad", ["decimal(39,2)", "decimal(5,6)", "decimal(0,0)", "array<int>", "int; drop table x", 5])
def test_unsupported_type_overrides_fail_the_compile(bad: Any) -> None:
    with pytest.raises(CompileError, match="type override"):
        call_macro("cdc_typed_override_type", "e", "c", bad)


def test_entity_defaults_to_the_table_name() -> None:
    entries = [{"database": "shop", "table": "customers"}, {"database": "shop", "table": "x", "entity": "y"}]
    assert call_macro("cdc_typed_entity", "customers", dbt_vars={"typed_entities": entries}) == entries[0]
    assert call_macro("cdc_typed_entity", "y", dbt_vars={"typed_entities": entries}) == entries[1]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([], "found 0"),
        ([{"database": "shop", "table": "customers"}] * 2, "found 2"),
        ([{"database": "shop", "table": "customers", "type_override": {}}], "unknown key type_override"),
        ([{"table": "customers"}], "database must be a string"),
        ([{"database": "shop", "table": "customers", "feed": 3}], "feed must be a string"),
        ([{"database": "shop", "table": "customers", "type_overrides": ["a"]}], "type_overrides must map"),
        ([{"database": "shop", "table": "customers", "type_overrides": {"a": "varchar"}}], "type override a"),
        ("customers", "must be a list of mappings"),
    ],
)
def test_bad_entity_configuration_fails_the_compile(entries: Any, message: str) -> None:
    with pytest.raises(CompileError, match=message):
        call_macro("cdc_typed_entity", "customers", dbt_vars={"typed_entities": entries})


def test_columns_come_from_the_registry_with_overrides_and_free_names() -> None:
    entity = {"database": "shop", "table": "t", "type_overrides": {"b": "decimal(5, 3)"}}
    registry = [("id", "bigint"), ("b", "double"), ("FEED", "string"), ("feed__SRC", None), ("z", "zoned_datetime")]
    columns = call_macro("cdc_typed_columns", entity, registry=registry)
    assert [(c["source"], c["spark_type"], c["output"], c["zone_output"]) for c in columns] == [
        ("id", "bigint", "id", None),
        ("b", "decimal(5,3)", "b", None),
        ("FEED", "string", "FEED__src", None),  # Spark compares names case-insensitively
        ("feed__SRC", "string", "feed__SRC__src", None),
        ("z", "timestamp", "z", "z__zone"),
    ]


def test_the_model_filters_on_escaped_literals_and_quotes_every_column() -> None:
    entries = [{"feed": "f'1", "database": "shop", "table": "t`\\", "entity": "e"}]
    sql = call_macro(
        "cdc_typed_model",
        "e",
        "current",
        "cdc_current_rows",
        dbt_vars={"typed_entities": entries},
        registry=[("a`b c", "int")],
    )
    assert "where feed = 'f\\'1' and database_name = 'shop' and table_name = 't`\\\\'" in sql
    assert "try_cast(row_values['a`b c'] as int) as `a``b c`" in sql
    assert "row_values['a`b c'] is not null\n                        and `a``b c` is null" in sql


@pytest.mark.spark
@pytest.mark.parametrize(
    ("text", "spark_type", "expected"),
    [
        ("2024-02-29", "date", dt.date(2024, 2, 29)),
        ("0001-01-01", "date", dt.date(1, 1, 1)),
        # Schema-less Debezium sends a date as epoch days: Spark alone would make that year -9257.
        ("-9257", "date", None),
        ("+25425-01-01", "date", None),
        ("0000-01-01", "date", None),
        ("2023-02-29", "date", None),
        ("2024-01-02 03:04:05.5", "timestamp_ntz", dt.datetime(2024, 1, 2, 3, 4, 5, 500000)),
        ("1700000000", "timestamp_ntz", None),
        ("12024-01-02 03:04:05", "timestamp_ntz", None),
    ],
)
def test_dates_cast_only_from_iso_text_of_years_1_to_9999(text: str, spark_type: str, expected: Any) -> None:
    cast = call_macro("cdc_typed_cast", "t.v", spark_type, spark_type)
    literal = call_macro("cdc_string_literal", text)
    assert spark_session().sql(f"select {cast} as x from values ({literal}) as t(v)").first()["x"] == expected


def _shanghai_fold0(wall: str) -> int:
    """Epoch micros of a Shanghai wall clock, the earlier instant in a DST overlap (fold 0)."""
    local = dt.datetime.fromisoformat(wall).replace(tzinfo=ZoneInfo("Asia/Shanghai"))
    return (local - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)


def _micros(value: dt.datetime) -> int:
    return (value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)


# (text, dialect, spark type, logical type, epoch unit, expected): the forms each dialect sends
# without types (the generator's encoders write them), the ambiguous texts, and bad values that
# must stay failed casts (None). Timestamps are compared as epoch micros, intervals as Spark text.
_D = Decimal
DIALECT_CASTS = [
    ("12.50", "oms_default_json", "decimal(12,2)", "decimal(12,2)", None, _D("12.5")),
    ("1.2E-8", "oms_default_json", "decimal(38,10)", "decimal(38,10)", None, _D("1.2E-8")),
    ("0E-10", "oms_shareplex_json", "decimal(38,10)", "decimal(38,10)", None, _D(0)),
    ("1.23E-1", "oms_default_json", "decimal(12,2)", "decimal(12,2)", None, None),  # 3 fraction digits
    ("12.345", "canal_json", "decimal(12,2)", "decimal(12,2)", None, None),
    (decimal_wire(_D("1234.56"), 2), "debezium_json", "decimal(12,2)", "decimal(12,2)", None, _D("1234.56")),
    (decimal_wire(_D("-0.01"), 2), "debezium_json", "decimal(12,2)", "decimal(12,2)", None, _D("-0.01")),
    (
        decimal_wire(_D("-9999999999.99"), 2),
        "debezium_json",
        "decimal(12,2)",
        "decimal(12,2)",
        None,
        _D("-9999999999.99"),
    ),
    (decimal_wire(_D(2**64 - 1), 0), "debezium_json", "decimal(20,0)", "ubigint", None, _D(2**64 - 1)),
    (
        decimal_wire(_D("-" + "9" * 28 + "." + "9" * 10), 10),
        "debezium_json",
        "decimal(38,10)",
        "decimal(38,10)",
        None,
        _D("-" + "9" * 28 + "." + "9" * 10),
    ),
    (decimal_wire(_D("0.125"), 3), "debezium_json", "decimal(5,3)", "decimal(10,3)", None, _D("0.125")),
    ("51.05", "debezium_json", "decimal(12,2)", "decimal(12,2)", None, _D("51.05")),  # with its schema: canonical
    # Ambiguous: digits only are canonical text of a message with schema and base64 of one without: the number.
    ("1234", "debezium_json", "decimal(12,2)", "decimal(12,2)", None, _D(1234)),
    ("AeJA", "canal_json", "decimal(12,2)", "decimal(12,2)", None, None),  # base64 only from Debezium
    ("13456", "debezium_json", "date", "date", None, dt.date(2006, 11, 4)),
    ("-719162", "debezium_json", "date", "date", None, dt.date(1, 1, 1)),
    ("2932897", "debezium_json", "date", "date", None, None),  # year 10000
    ("13456", "canal_json", "date", "date", None, None),
    ("2006-11-03T16:00:00Z", "dataworks_json", "date", "date", None, dt.date(2006, 11, 4)),
    ("2006-11-03T16:00:00Z", "canal_json", "date", "date", None, None),
    (
        "1332193818652788",
        "debezium_json",
        "timestamp_ntz",
        "datetime",
        "us",
        dt.datetime(2012, 3, 19, 21, 50, 18, 652788),
    ),
    ("1332193818652", "debezium_json", "timestamp_ntz", "datetime", "ms", dt.datetime(2012, 3, 19, 21, 50, 18, 652000)),
    ("1332193818652788", "debezium_json", "timestamp_ntz", "datetime", None, None),  # unit unknown
    (
        "2012-03-19T13:50:18.652Z",
        "dataworks_json",
        "timestamp_ntz",
        "datetime",
        None,
        dt.datetime(2012, 3, 19, 21, 50, 18, 652000),
    ),
    (
        "2012-03-19 21:50:18.652000",
        "ckafka_json",
        "timestamp_ntz",
        "datetime",
        None,
        dt.datetime(2012, 3, 19, 21, 50, 18, 652000),
    ),
    ("1550578552.528641", "oms_default_json", "timestamp", "timestamp", None, 1550578552528641),
    ("-1.5", "oms_shareplex_json", "timestamp", "timestamp", None, -1500000),
    ("1550578552.528641", "canal_json", "timestamp", "timestamp", None, None),
    ("2024-01-01 08:00:00.5", "ckafka_json", "timestamp", "timestamp", None, _shanghai_fold0("2024-01-01 08:00:00.5")),
    # A wall clock of the hour Shanghai repeated on 1990-09-16: the earlier instant.
    ("1990-09-16 01:30:00", "ckafka_json", "timestamp", "timestamp", None, _shanghai_fold0("1990-09-16 01:30:00")),
    ("2024-01-01 08:00:00.5", "oms_default_json", "timestamp", "timestamp", None, None),  # OMS sends epoch seconds
    # Maxwell's TIMESTAMP is the UTC wall clock, whatever source_time_zone says.
    ("2016-10-21 05:33:37.523000", "maxwell_json", "timestamp", "timestamp", None, 1477028017523000),
    ("2016-10-21 05:33:37.523000", "canal_json", "timestamp", "timestamp", None, None),
    (
        "2024-01-01 08:00:00.500000",
        "ogg_json",
        "timestamp",
        "timestamp",
        None,
        _shanghai_fold0("2024-01-01 08:00:00.5"),
    ),
    (
        "2020-11-25T00:01:02.012345+08:00[Asia/Shanghai]",
        "ckafka_json",
        "timestamp",
        "zoned_datetime",
        None,
        _micros(dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC)),
    ),
    (
        "2020-11-25 00:01:02.5 Asia/Kolkata",
        "oms_default_json",
        "timestamp",
        "zoned_datetime",
        None,
        _micros(dt.datetime(2020, 11, 24, 18, 31, 2, 500000, tzinfo=dt.UTC)),
    ),
    (
        "1999-05-08T11:03:53.210026+05:30",
        "debezium_json",
        "timestamp",
        "zoned_datetime",
        None,
        _micros(dt.datetime(1999, 5, 8, 5, 33, 53, 210026, tzinfo=dt.UTC)),
    ),
    (
        "P-1Y-2M0DT0H0M0S",
        "debezium_json",
        "interval year to month",
        "interval_ym",
        None,
        "INTERVAL '-1-2' YEAR TO MONTH",
    ),
    (
        "INTERVAL '-1-2' YEAR TO MONTH",
        "oms_default_json",
        "interval year to month",
        "interval_ym",
        None,
        "INTERVAL '-1-2' YEAR TO MONTH",
    ),
    (
        "INTERVAL '5' YEAR",
        "oms_default_json",
        "interval year to month",
        "interval_ym",
        None,
        "INTERVAL '5-0' YEAR TO MONTH",
    ),
    ("+01-02", "dataworks_json", "interval year to month", "interval_ym", None, "INTERVAL '1-2' YEAR TO MONTH"),
    ("5", "oms_default_json", "interval year to month", "interval_ym", None, None),
    (
        "P0Y0M-1DT-2H-3M-4.5S",
        "debezium_json",
        "interval day to second",
        "interval_ds",
        None,
        "INTERVAL '-1 02:03:04.5' DAY TO SECOND",
    ),
    (
        "INTERVAL '-1 02:03:04.5' DAY TO SECOND",
        "oms_default_json",
        "interval day to second",
        "interval_ds",
        None,
        "INTERVAL '-1 02:03:04.5' DAY TO SECOND",
    ),
    (
        "INTERVAL '5' DAY",
        "oms_shareplex_json",
        "interval day to second",
        "interval_ds",
        None,
        "INTERVAL '5 00:00:00' DAY TO SECOND",
    ),
    (
        "+03 04:05:06.500000",
        "dataworks_json",
        "interval day to second",
        "interval_ds",
        None,
        "INTERVAL '3 04:05:06.5' DAY TO SECOND",
    ),
    ("3723000001", "debezium_json", "string", "time", None, "01:02:03.000001"),
    ("-3023999000000", "debezium_json", "string", "time", None, "-839:59:59"),
    ("15:56:12.000000", "ckafka_json", "string", "time", None, "15:56:12"),
    ("15:56:12.500", "canal_json", "string", "time", None, "15:56:12.5"),
]


def _comparable_sql(expression: str, spark_type: str) -> str:
    if spark_type == "timestamp":
        return f"unix_micros({expression})"
    return f"cast({expression} as string)" if spark_type.startswith("interval") else expression


@pytest.mark.spark
def test_each_dialects_encodings_cast_exactly_and_bad_values_fail() -> None:
    """Every case in one Spark query: the cast of each text as its dialect sends it."""
    selects = []
    for n, (text, dialect, spark_type, logical, unit, _) in enumerate(DIALECT_CASTS):
        cast = call_macro(
            "cdc_typed_cast",
            call_macro("cdc_string_literal", text),
            spark_type,
            logical,
            call_macro("cdc_string_literal", dialect),
            unit,
            dbt_vars={"source_time_zone": "Asia/Shanghai"},
        )
        selects.append(f"{_comparable_sql(cast, spark_type)} as c{n}")
    row = spark_session().sql("select " + ",\n".join(selects)).first()
    got = {case[:2]: row[f"c{n}"] for n, case in enumerate(DIALECT_CASTS)}
    assert got == {case[:2]: case[-1] for case in DIALECT_CASTS}


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("2020-11-25T00:01:02Z[Asia/Shanghai]", "Asia/Shanghai"),
        ("2020-11-25 00:01:02.5 Asia/Kolkata", "Asia/Kolkata"),
        ("1999-05-08T11:03:53+05:30", None),
    ],
)
@pytest.mark.spark
def test_the_zone_companion_reads_both_zoned_forms(text: str, zone: str | None) -> None:
    expression = call_macro("cdc_typed_zone", call_macro("cdc_string_literal", text))
    assert spark_session().sql(f"select {expression} as z").first()["z"] == zone


# ---------------------------------------------------------------- Spark: the pipeline
FEED = "typed_canal"
ODD_FEED = "typed_odd"
ODD = TableSchema(
    "shop",
    "odd`tab'le \\ x",
    (
        Column("id", "bigint", "bigint(20)", nullable=False),
        Column("we`ird col", "string", "varchar(8)"),
        Column("has space", "int", "int(11)"),
        Column("FEED", "string", "varchar(8)"),
        Column("Cast_Failures", "string", "varchar(8)"),
    ),
    ("id",),
)
ODD_ROWS = (
    {"id": 1, "we`ird col": "12", "has space": 5, "FEED": "a", "Cast_Failures": "b"},
    {"id": 2, "we`ird col": "x1", "has space": None, "FEED": None, "Cast_Failures": "c"},
    {"id": 3, "we`ird col": None, "has space": -7, "FEED": "d", "Cast_Failures": None},
)
ODD_OVERRIDES = {"we`ird col": "int"}
REMAPPED = [
    {"entity": "customers", "database": "shop", "table": "all_types", "feed": FEED},
    {"entity": "order_items", "database": "shop", "table": ODD.table, "type_overrides": ODD_OVERRIDES},
]
TYPED = ("customers_current", "customers_history", "order_items_current", "order_items_history")
SCHEMA = "cdc_unify"


def odd_messages() -> list[bytes]:
    """canal_json messages inserting ODD_ROWS (the generator's own encoder shapes them)."""
    at = dt.datetime(2024, 2, 1, tzinfo=dt.UTC)
    changes = tuple(SourceChange("INSERT", ODD, None, row, Position(1, 4 + 100 * n)) for n, row in enumerate(ODD_ROWS))
    workload = Workload({(ODD.database, ODD.table): ODD}, [Transaction(1, "tx-odd-1", at, changes)])
    return [m.value for m in CanalJsonEncoder().encode(workload, random.Random(1)) if m.value is not None]


def land(records: pa.Table, feed: str) -> None:
    spark = spark_session()
    rows = landing.kafka_to_landing(spark.createDataFrame(records), feed, F.lit(dt.datetime(2024, 6, 1, tzinfo=dt.UTC)))
    landing.append_landing(rows, "canal_json")


def odd_records() -> pa.Table:
    values = odd_messages()
    assert not any(b"\n" in value for value in values), "one message per line"
    return landing.jsonl_records(b"\n".join(values), ODD_FEED)


def comparable_column(name: str, spark_type: str) -> Any:
    quoted = "`" + name.replace("`", "``") + "`"
    if spark_type == "interval year to month":
        return F.expr(f"extract(year from {quoted}) * 12 + extract(month from {quoted})")
    if spark_type == "timestamp":
        return F.unix_micros(F.col(quoted))
    return F.col(quoted)


def typed_state(name: str) -> dict[str, Any]:
    """A typed model's Spark types and rows, each row with the canonical texts of its version."""
    spark = spark_session()
    table = spark.table(f"{SCHEMA}.{name}")
    types = {f.name: f.dataType.simpleString() for f in table.schema.fields}
    # pyspark cannot collect year-month intervals and reads timestamps in the local zone: compare numbers.
    comparable = [comparable_column(column, spark_type).alias(column) for column, spark_type in types.items()]
    texts = spark.table(f"{SCHEMA}.cdc_row_history").select("version_id", F.col("row_values").alias("_texts"))
    rows = table.select(*comparable).join(texts, "version_id").collect()
    return {"types": types, "rows": [r.asDict(recursive=True) for r in rows]}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """canal_json of a generated workload plus ODD's messages, built with the shipped
    typed_entities; then the typed models rebuilt (and tested) with REMAPPED entities."""
    out_dir = tmp_path_factory.mktemp("typed_marts")
    generate(events=60, seed=11, out_dir=out_dir, dialects=("canal_json",))
    spark = spark_session()
    landing.create_landing_tables(spark)
    spark.sql(f"truncate table {landing.landing_table('canal_json')}")
    for batch in (1, 2):
        land(landing.parquet_records((out_dir / "canal_json" / f"batch-{batch}.parquet").read_bytes())[0], FEED)
    land(odd_records(), ODD_FEED)
    dialects = {"cdc_dialects": ["canal_json"]}
    run_dbt("run", "--full-refresh", "--select", "+path:models/marts/typed", dbt_vars=dialects)
    shipped = {name: typed_state(name) for name in TYPED}
    result = run_dbt("build", "--select", "path:models/marts/typed", dbt_vars={**dialects, "typed_entities": REMAPPED})
    failures = {r.node.name: r.failures for r in result.result.results if r.node.resource_type == "test"}
    return {"shipped": shipped, "remapped": {name: typed_state(name) for name in TYPED}, "failures": failures}


# ---------------------------------------------------------------- expected values, from the canonical text
def _instant_micros(text: str) -> int:
    """`...Z` or `...Z[zone]` -> microseconds since the epoch (Spark keeps microseconds)."""
    wall_clock = _wall_clock(text.split("[")[0].removesuffix("Z"))
    return (wall_clock - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)


def _wall_clock(text: str) -> dt.datetime:
    value, nanos = canonical.parse_datetime_text(text)
    return value + dt.timedelta(microseconds=nanos // 1000)


def _iso_months(text: str) -> int:
    sign, years, months = re.fullmatch(r"(-?)P(?:(\d+)Y)?(?:(\d+)M)?", text).groups()
    return (-1 if sign else 1) * (int(years or 0) * 12 + int(months or 0))


def _iso_duration(text: str) -> dt.timedelta:
    sign, d, h, m, s, f = re.fullmatch(
        r"(-?)P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d+))?S)?)?", text
    ).groups()
    micros = int((f or "").ljust(6, "0")[:6])
    value = dt.timedelta(
        days=int(d or 0), hours=int(h or 0), minutes=int(m or 0), seconds=int(s or 0), microseconds=micros
    )
    return -value if sign else value


def _float32(text: str) -> float:
    return struct.unpack("<f", struct.pack("<f", canonical.parse_float_text(text)))[0]


def expected_value(text: str | None, spark_type: str) -> Any:
    """The value a canonical text holds as `spark_type`, read in Python (None: NULL)."""
    if text is None:
        return None
    readers = {
        "boolean": canonical.parse_bool_text,
        "tinyint": canonical.parse_integer_text,
        "smallint": canonical.parse_integer_text,
        "int": canonical.parse_integer_text,
        "bigint": canonical.parse_integer_text,
        "float": _float32,
        "double": canonical.parse_float_text,
        "string": str,
        "binary": canonical.parse_base64,
        "date": canonical.parse_date_text,
        "timestamp_ntz": _wall_clock,
        "timestamp": _instant_micros,
        "interval year to month": _iso_months,
        "interval day to second": _iso_duration,
    }
    if spark_type.startswith("decimal"):
        return canonical.parse_decimal_text(text)
    return readers[spark_type](text)


def same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(actual, float) and math.isnan(actual)
    return (bytes(actual) if isinstance(actual, bytearray) else actual) == expected


def assert_values_are_the_canonical_texts(state: dict[str, Any], columns: dict[str, str]) -> None:
    """Every typed value (source column -> typed column name) equals its text read in Python."""
    assert state["rows"], "no rows"
    for row in state["rows"]:
        for source, output in columns.items():
            expected = expected_value(row["_texts"].get(source), state["types"][output])
            assert same(row[output], expected), (row["version_id"], source, row["_texts"].get(source), row[output])


def source_types(schema: TableSchema) -> dict[str, str]:
    return {c.name: SPARK_TYPE[c.logical_type] for c in schema.columns}


# ---------------------------------------------------------------- Spark tests
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["current", "history"])
def test_column_types_come_from_the_registry_and_overrides_win(built, kind: str) -> None:
    customers = built["shipped"][f"customers_{kind}"]["types"]
    items = built["shipped"][f"order_items_{kind}"]["types"]
    assert {c: customers[c] for c in source_types(CUSTOMERS)} == source_types(CUSTOMERS)
    assert {c: items[c] for c in source_types(ORDER_ITEMS)} == {**source_types(ORDER_ITEMS), "discount": "decimal(5,3)"}
    assert list(items)[-1] == "cast_failures"
    assert [c for c in items if c in ("order_id", "line_no")] == ["order_id", "line_no"]


@pytest.mark.spark
@pytest.mark.slow
def test_the_column_added_by_ddl_appears(built) -> None:
    """loyalty_tier exists only from the ALTER TABLE on: the registry brings it, typed like its siblings."""
    for kind in ("current", "history"):
        assert built["shipped"][f"customers_{kind}"]["types"][CUSTOMERS_NEW_COLUMN.name] == "string"
    assert any(row[CUSTOMERS_NEW_COLUMN.name] for row in built["shipped"]["customers_history"]["rows"])


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("name", TYPED)
def test_shipped_typed_values_equal_the_canonical_texts(built, name: str) -> None:
    state = built["shipped"][name]
    schema = CUSTOMERS if name.startswith("customers") else ORDER_ITEMS
    columns = [*schema.column_names, *([CUSTOMERS_NEW_COLUMN.name] if schema is CUSTOMERS else [])]
    assert_values_are_the_canonical_texts(state, {c: c for c in columns})
    assert all(row["cast_failures"] == [] for row in state["rows"])
    assert {row["feed"] for row in state["rows"]} == {FEED}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["current", "history"])
def test_every_logical_type_casts_exactly(built, kind: str) -> None:
    """shop.all_types (every logical type, extreme values included) through entity `customers`."""
    state = built["remapped"][f"customers_{kind}"]
    assert {c: state["types"][c] for c in source_types(ALL_TYPES)} == source_types(ALL_TYPES)
    assert_values_are_the_canonical_texts(state, {c: c for c in ALL_TYPES.column_names})
    zones = {row["c_zoned__zone"] for row in state["rows"] if row["_texts"].get("c_zoned")}
    assert zones == {
        row["_texts"]["c_zoned"].split("[")[1].rstrip("]") for row in state["rows"] if row["_texts"].get("c_zoned")
    }
    assert all(row["cast_failures"] == [] for row in state["rows"])
    assert built["failures"][f"no_cast_failures_customers_{kind}_cast_failures"] == 0


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["current", "history"])
def test_odd_identifiers_are_quoted_and_uncastable_values_counted(built, kind: str) -> None:
    state = built["remapped"][f"order_items_{kind}"]
    outputs = {"id": "id", "we`ird col": "we`ird col", "has space": "has space", "FEED": "FEED__src"}
    outputs["Cast_Failures"] = "Cast_Failures__src"
    assert {source: state["types"][output] for source, output in outputs.items()} == {
        **source_types(ODD),
        **ODD_OVERRIDES,
    }
    assert {row["table_name"] for row in state["rows"]} == {ODD.table}
    by_id = {row["id"]: row for row in state["rows"]}
    assert by_id[1]["we`ird col"] == 12 and by_id[1]["FEED__src"] == "a" and by_id[1]["feed"] == ODD_FEED
    # "x1" is no int: NULL in the column, named in cast_failures, counted by the data test.
    assert by_id[2]["we`ird col"] is None and by_id[2]["cast_failures"] == ["we`ird col"]
    assert by_id[3]["we`ird col"] is None and by_id[3]["cast_failures"] == []
    assert_values_are_the_canonical_texts({**state, "rows": [by_id[1], by_id[3]]}, {s: o for s, o in outputs.items()})
    assert built["failures"][f"no_cast_failures_order_items_{kind}_cast_failures"] == 1


# ---------------------------------------------------------------- every dialect against the truth
# The shipped entities of a workload of every dialect, value by value against the generator's truth
# (truth/tables.json, truth/shop.<table>.state.jsonl / .history.jsonl). Both sides read in Python:
# the mart's values rendered as text by Spark, the truth's canonical texts by the column's Spark type.
SHIPPED_TABLES = {"customers": {}, "order_items": {"discount": "decimal(5,3)"}}  # dbt_project.yml overrides
EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _truth_spark_types(truth_dir: Path, table: str) -> dict[str, str]:
    tables = json.loads((truth_dir / "tables.json").read_text(encoding="utf-8"))
    columns = {c["name"]: c["logical_type"] for v in tables[f"shop.{table}"]["schema_versions"] for c in v["columns"]}
    return {name: SPARK_TYPE.get(logical, logical) for name, logical in columns.items()} | SHIPPED_TABLES[table]


def typed_truth_sql(schema: str, model: str, types: dict[str, str]) -> str:
    """The typed model's values as text: instants as epoch micros, binary as base64, the rest cast."""
    rendered = []
    for column, spark_type in types.items():
        quoted = "`" + column + "`"
        value = {"timestamp": f"unix_micros({quoted})", "binary": f"base64({quoted})"}.get(spark_type, quoted)
        rendered.append(f"cast({value} as string) as {quoted}")
    deleted = "is_deleted" if model.endswith("_history") else "false"
    return f"select feed, dialect, primary_key, {deleted} as is_deleted, {', '.join(rendered)} from {schema}.{model}"


def _read(text: str | None, spark_type: str, dialect: str, canonical_text: bool) -> Any:
    """A value as Python compares it; the truth's canonical text (`canonical_text`) or Spark's text."""
    if text is None:
        return None
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        return int(text)
    if spark_type.startswith("decimal"):
        return Decimal(text)
    if spark_type in ("float", "double"):
        return _float32(text) if spark_type == "float" else float(text)
    if spark_type == "boolean":
        return text == "true"
    if spark_type == "date":
        return dt.date.fromisoformat(text)
    if spark_type == "timestamp_ntz":
        value = _wall_clock(text) if canonical_text else dt.datetime.fromisoformat(text)
        # DataWorks sends datetimes as instants in milliseconds: its marts hold them to the ms.
        return value.replace(microsecond=value.microsecond // 1000 * 1000) if dialect in MILLISECOND_INSTANTS else value
    if spark_type == "timestamp":
        micros = _instant_micros(text) if canonical_text else int(text)
        return micros - micros % 1000 if dialect in MILLISECOND_INSTANTS else micros
    return text


def _holds(got: dict[str, Any], want: dict[str, Any]) -> bool:
    """Every typed value is the true one. A NULL is the pipeline's row (a column the message did
    not carry): a text that did not cast is a cast failure, which the callers count apart."""
    return all(value is None or value == want[column] for column, value in got.items())


def typed_truth_mismatches(rows: list[dict[str, Any]], truth_dir: Path, table: str, kind: str) -> dict[str, Any]:
    """Per feed, the typed rows whose values are no true row of their key: current rows against
    the final rows (all of which must be there), history versions against any version of the key.
    A dialect without TRUNCATE (SharePlex) keeps the rows the source truncated: not compared."""
    types = _truth_spark_types(truth_dir, table)
    truth: dict[str, list[dict[str, str | None]]] = {}
    with (truth_dir / f"shop.{table}.{'state' if kind == 'current' else 'history'}.jsonl").open(encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            truth.setdefault(entry["key"], []).append(entry["row"])
    mismatches: dict[str, Any] = {}
    for feed in sorted({row["feed"] for row in rows}):
        feed_rows = [row for row in rows if row["feed"] == feed and not row["is_deleted"]]
        dialect = feed_rows[0]["dialect"]
        if kind == "current" and table == "order_items" and dialect in NO_TRUNCATE:
            continue
        bad = []
        for row in feed_rows:
            got = {c: _read(row[c], t, dialect, False) for c, t in types.items()}
            versions = truth.get(row["primary_key"], [])
            wanted = [{c: _read(v.get(c), t, dialect, True) for c, t in types.items()} for v in versions]
            if not any(_holds(got, want) for want in wanted):
                bad.append((row["primary_key"], got, wanted[-1:]))
        if kind == "current":
            bad += [("missing", key) for key in set(truth) - {row["primary_key"] for row in feed_rows}]
        if bad or not feed_rows:
            mismatches[feed] = bad[:3] or "no rows"
    return mismatches


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("model", TYPED)
def test_typed_marts_of_every_dialect_equal_the_truth(workload, model: str) -> None:
    """The shared workload (every dialect, tests/python/harness.py) through the shipped entities."""
    table, kind = model.rsplit("_", 1)
    types = _truth_spark_types(workload["out_dir"] / "truth", table)
    rows = [r.asDict() for r in spark_session().sql(typed_truth_sql(MART_SCHEMA, model, types)).collect()]
    assert {row["dialect"] for row in rows} == set(DIALECTS)
    assert typed_truth_mismatches(rows, workload["out_dir"] / "truth", table, kind) == {}
    failures = spark_session().sql(f"select count(*) as n from {MART_SCHEMA}.{model} where size(cast_failures) > 0")
    assert failures.first()["n"] == 0


@pytest.mark.skipif(
    not os.environ.get("CDC_UNIFY_TYPED_TRUTH"), reason="opt-in: CDC_UNIFY_TYPED_TRUTH=1 after make demo"
)
@pytest.mark.parametrize("model", TYPED)
def test_the_demos_typed_marts_equal_the_sample_truth(model: str) -> None:
    """`make demo`'s warehouse (this worktree's, or CDC_UNIFY_WAREHOUSE) against sample/truth."""
    root = Path(__file__).resolve().parents[2]
    table, kind = model.rsplit("_", 1)
    sql = typed_truth_sql("cdc_unify", model, _truth_spark_types(root / "sample" / "truth", table))
    cli = root / ".venv" / "bin" / "cdc-unify"
    out = subprocess.run([cli, "sql", "--format", "json", sql], cwd=root, check=True, capture_output=True, text=True)
    rows = json.loads(out.stdout)
    assert {row["dialect"] for row in rows} == set(DIALECTS)
    assert typed_truth_mismatches(rows, root / "sample" / "truth", table, kind) == {}
