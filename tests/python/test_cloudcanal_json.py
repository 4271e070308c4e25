"""CloudCanal JSON (spec 000, "CloudCanal Json").

(a) the encoder writes the spec's field names, actions, entry types and jdbcType codes; (b) the
pure decoder maps dbValType / jdbcType to logical types and reads values as written by hand;
(c, marked `spark`) the SQL staging model stages the spec examples, an encoded workload and every
malformation kind, and its dbt unit and data tests pass.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from cdc_unify.canonical import CanonicalError, IntervalYM
from cdc_unify.canonicalizers import canonicalizer_for
from cdc_unify.canonicalizers._mysql_types import mysql_logical_type, source_logical_type
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, EncodedMessage
from cdc_unify.generator.encoders.cloudcanal_json import SOURCE_TIME_ZONE, value_text
from cdc_unify.generator.model import Column, Workload
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from spec_fixtures import expected_pairs
from staged_stream import (
    assert_every_value_staged_in_contract_shape,
    assert_expected_rows,
    assert_malformed_quarantined,
    assert_tombstone,
    stage_stream,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "spec_examples" / "cloudcanal_json"
DIALECT = "cloudcanal_json"
UTC = dt.timezone.utc

# Copied from spec 000 ("CloudCanal Json" parameter table, samples and the jdbcType appendix).
SPEC_FIELDS = {"action", "bid", "before", "data", "db", "schema", "table", "dbValType", "jdbcType", "entryType",
               "isDdl", "pks", "execTs", "sendTs", "sql"}  # fmt: skip
SPEC_ENTRY_TYPES = {"ROWDATA", "TRANSACTIONEND"}
SPEC_DML_ACTIONS = {"INSERT", "UPDATE", "DELETE"}
SPEC_TABLE_CHANGE_COLUMN_FIELDS = {"jdbcType", "name", "position", "typeExpression", "typeName"}
SPEC_JDBC_CODES = {
    "unknown": 10000, "ARRAY": 2003, "BIGINT": -5, "BINARY": -2, "BIT": -7, "BLOB": 2004, "BOOLEAN": 16, "CHAR": 1,
    "CLOB": 2005, "DATALINK": 70, "DATE": 91, "DECIMAL": 3, "DISTINCT": 2001, "DOUBLE": 8, "FLOAT": 6, "INTEGER": 4,
    "JAVA_OBJECT": 2000, "LONGVARBINARY": -4, "LONGVARCHAR": -1, "NULL": 0, "NUMERIC": 2, "OTHER": 1111, "REAL": 7,
    "REF": 2006, "SMALLINT": 5, "STRUCT": 2002, "TIME": 92, "TIMESTAMP": 93, "TINYINT": -6, "VARBINARY": -3,
    "VARCHAR": 12,
}  # fmt: skip


@pytest.fixture(scope="module")
def workload() -> Workload:
    return build_workload(WorkloadOptions(events=160), seed=20240101)


@pytest.fixture(scope="module")
def messages(workload) -> list[EncodedMessage]:
    return list(encoder_for(DIALECT).encode(workload, random.Random(7)))


# ---------------------------------------------------------------- (a) encoder vs the spec
def test_messages_carry_the_spec_fields_actions_and_entry_types(messages):
    actions, entry_types, sizes = Counter(), Counter(), Counter()
    for m in messages:
        doc = json.loads(m.value)
        assert SPEC_FIELDS <= set(doc) and set(doc) <= SPEC_FIELDS | {"tableChanges"}
        actions[doc["action"]] += 1
        entry_types[doc["entryType"]] += 1
        assert len(str(doc["execTs"])) == 13 and len(str(doc["sendTs"])) == 13
        assert set(doc["jdbcType"].values()) <= set(SPEC_JDBC_CODES.values())
        assert set(doc["jdbcType"]) == set(doc["dbValType"])
        if doc["action"] in SPEC_DML_ACTIONS and not doc["isDdl"]:
            sizes[len(doc["data"])] += 1
            assert len(doc["before"]) == (len(doc["data"]) if doc["action"] == "UPDATE" else 0)
    assert set(entry_types) == SPEC_ENTRY_TYPES
    assert SPEC_DML_ACTIONS <= set(actions)
    assert max(sizes) > 1, "batched multi-row messages"


def test_ddl_messages_carry_sql_and_table_changes(messages):
    ddl = [json.loads(m.value) for m in messages if json.loads(m.value)["isDdl"]]
    assert {d["action"] for d in ddl} >= {"CREATE", "ALTER", "TRUNCATE"}
    for doc in ddl:
        assert doc["sql"] and doc["data"] == [] and doc["before"] == []
        if doc["action"] in ("CREATE", "ALTER"):
            table = doc["tableChanges"]["table"]
            assert doc["tableChanges"]["type"] == doc["action"]
            assert all(set(c) == SPEC_TABLE_CHANGE_COLUMN_FIELDS for c in table["columns"])
            assert isinstance(table["primaryKeyColumnNames"], list)


@pytest.mark.parametrize(
    ("column", "value", "sent"),
    [
        (Column("c", "decimal(12,2)", "decimal(12,2)"), Decimal("12.50"), "12.50"),
        (Column("c", "boolean", "tinyint(1)"), True, "1"),
        (Column("c", "double", "double"), 1e-05, "1.0E-5"),
        (Column("c", "timestamp", "timestamp(6)"), dt.datetime(2024, 1, 1, tzinfo=UTC), "2024-01-01 08:00:00.000000"),
        (Column("c", "datetime", "datetime(3)"), dt.datetime(999, 1, 2, 3, 4, 5, 6000), "0999-01-02 03:04:05.006"),
        (Column("c", "time", "time(6)"), dt.time(1, 2, 3), "01:02:03.000000"),
        (Column("c", "binary", "blob"), b"hello world", "aGVsbG8gd29ybGQ="),
        (Column("c", "zoned_datetime", "timestamp(6) with time zone"),
         dt.datetime(2020, 11, 25, 0, 1, 2, 12345, tzinfo=ZoneInfo("Asia/Shanghai")),
         "2020-11-25 00:01:02.012345 Asia/Shanghai"),
        (Column("c", "interval_ym", "interval year(2) to month"), IntervalYM(-14), "-01-02"),
        (Column("c", "interval_ds", "interval day(2) to second(6)"),
         -dt.timedelta(days=3, hours=4, minutes=5, seconds=6, microseconds=500000), "-03 04:05:06.500000"),
    ],
)  # fmt: skip
def test_values_are_sent_as_text(column, value, sent):
    assert value_text(column, value) == sent


def test_timestamp_text_zone_is_the_dbt_default():
    project = (REPO_ROOT / "dbt_project.yml").read_text()
    assert f'source_time_zone: "{SOURCE_TIME_ZONE}"' in project


# ---------------------------------------------------------------- (b) pure decoder
@pytest.mark.parametrize(
    ("type_text", "logical"),
    [("varchar(22)", "string"), ("bigint(20)", "bigint"), ("bigint(20) unsigned", "ubigint"),
     ("int(10) unsigned", "bigint"), ("tinyint(1)", "boolean"), ("tinyint(4)", "tinyint"), ("bit(1)", "boolean"),
     ("decimal(38,10)", "decimal(38,10)"), ("decimal", "decimal(10,0)"), ("float", "float"),
     ("float(30)", "double"), ("double", "double"), ("json", "json"), ("longblob", "binary"), ("date", "date"),
     ("time(6)", "time"), ("datetime(3)", "datetime"), ("timestamp(6)", "timestamp"), ("year", "int"),
     ("timestamp(6) with time zone", "zoned_datetime"), ("interval year(2) to month", "interval_ym"),
     ("interval day(2) to second(6)", "interval_ds"), ("geometry", None), ("", None)],
)  # fmt: skip
def test_db_val_types_map_to_logical_types(type_text, logical):
    assert mysql_logical_type(type_text) == logical


@pytest.mark.parametrize(
    ("code", "logical"),
    [
        (12, "string"),
        (-5, "bigint"),
        (-7, "boolean"),
        (93, "datetime"),
        (3, "decimal"),
        (1111, "string"),
        (10000, "string"),
    ],
)
def test_jdbc_type_codes_of_the_appendix_map_to_logical_types(code, logical):
    assert source_logical_type(f"jdbc:{code}") == logical


def test_canonicalize_image_reads_the_text_forms():
    decode = canonicalizer_for(DIALECT)
    values = {
        "a": "12.50",
        "b": "2024-01-01 08:00:00.5",
        "c": "+01-02",
        "d": "-03 04:05:06.500000",
        "e": "2020-11-25 00:01:02.012345 Asia/Shanghai",
        "f": "P1DT2H",
        "g": "1",
        "h": None,
        "x": "as sent",
    }
    types = {"a": "decimal(10,2)", "b": "timestamp(3)", "c": "interval year(2) to month",
             "d": "interval day(2) to second(6)", "e": "timestamp(6) with time zone", "f": "interval day to second",
             "g": "jdbc:-7", "h": "int(11)", "only_type": "date"}  # fmt: skip
    canonical, logical = decode(values, types, "Asia/Shanghai")
    assert canonical == {"a": "12.5", "b": "2024-01-01T00:00:00.5Z", "c": "P1Y2M", "d": "-P3DT4H5M6.5S",
                         "e": "2020-11-24T16:01:02.012345Z[Asia/Shanghai]", "f": "P1DT2H", "g": "true", "h": None,
                         "x": "as sent"}  # fmt: skip
    assert logical["x"] == "string" and logical["only_type"] == "date" and logical["g"] == "boolean"


@pytest.mark.parametrize(
    ("type_text", "text"),
    [
        ("int(11)", "abc"),
        ("decimal(10,2)", "1,5"),
        ("date", "2024-02-30"),
        ("timestamp(6)", "yesterday"),
        ("blob", "not base64!"),
        ("interval year(2) to month", "+01 02:00:00"),
    ],
)
def test_unreadable_values_raise(type_text, text):
    with pytest.raises(CanonicalError):
        canonicalizer_for(DIALECT)({"c": text}, {"c": type_text}, "Asia/Shanghai")


def test_encoded_images_decode_to_the_oracle_without_spark(messages):
    decode = canonicalizer_for(DIALECT)
    checked = 0
    for m in messages:
        doc = json.loads(m.value)
        for i, want in enumerate(m.expected):
            if want["event_kind"] != "ROW":
                continue
            image_side = "before" if want["op"] == "DELETE" else "after"
            canonical, types = decode(doc["data"][i], doc["dbValType"], SOURCE_TIME_ZONE)
            assert canonical == want[image_side] and types == want["column_types"]
            if want["op"] == "UPDATE":
                assert decode(doc["before"][i], doc["dbValType"], SOURCE_TIME_ZONE)[0] == want["before"]
            checked += 1
    assert checked > 100


def test_every_malformation_kind_changes_the_message(messages):
    encoder = encoder_for(DIALECT)
    rng = random.Random(3)
    for kind in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds:
        for m in [m for m in messages if m.is_row_message][:40]:
            assert encoder.malform(m, kind, rng) != m.value


# ---------------------------------------------------------------- (c) staging model on Spark


@pytest.fixture(scope="module")
def staged(messages) -> dict[str, Any]:
    """One dbt run over: the spec examples, the encoded workload, every malformation kind, a tombstone."""
    return stage_stream(DIALECT, [(p.read_bytes(), e) for p, e in expected_pairs(FIXTURES)], messages)


@pytest.mark.spark
def test_spark_every_landing_row_is_staged_in_contract_shape(staged):
    assert_every_value_staged_in_contract_shape(staged)


@pytest.mark.spark
def test_spark_spec_examples_and_encoded_stream_decode_as_expected(staged):
    assert_expected_rows(staged)


@pytest.mark.spark
def test_spark_malformed_messages_are_quarantined_with_their_code(staged):
    assert_malformed_quarantined(staged)


@pytest.mark.spark
def test_spark_null_value_is_a_tombstone(staged):
    assert_tombstone(staged, staged["n_values"] - 1)


@pytest.mark.spark
def test_spark_dbt_unit_and_data_tests_pass(staged):
    from harness import run_dbt

    run_dbt("test", "--select", "stg_cloudcanal_json__changes")
