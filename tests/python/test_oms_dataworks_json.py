"""oms_dataworks_json: (a) the encoder writes spec 003's Dataworks 2.0 messages, (b) the value
decoder reads the declared types with the sample's values, (c, marked `spark`) the SQL staging
model stages the spec examples, an encoded workload and every malformation kind, and its dbt
unit and data tests pass.
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
from cdc_unify.canonicalizers.oms_dataworks_json import logical_type
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, EncodedMessage
from cdc_unify.generator.encoders.oms_dataworks_json import interval_literal, json_value
from cdc_unify.generator.jsontext import load_json
from cdc_unify.generator.model import Column
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
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "spec_examples" / "oms_dataworks_json"
DIALECT = "oms_dataworks_json"
UTC = dt.UTC

# Copied from spec 003 (Dataworks JSON 消息格式 and its samples).
SPEC_TOP_LEVEL = {"version", "schema", "payload", "extend"}
SPEC_SOURCE_FIELDS = {"dbType", "dbVersion", "dbName", "schema", "table"}
SPEC_PAYLOAD_FIELDS = {"before", "after", "op", "timestamp", "ddl", "scn"}
SPEC_TYPES = {"TINYINT", "SMALLINT", "INT", "INT64", "FLOAT", "DOUBLE", "BIGINT", "BOOLEAN", "VARCHAR", "BLOB",
              "DECIMAL", "DATE", "TIME", "DATETIME", "TIMESTAMP", "ZONED_DATETIME", "INTERVAL_DAY_TO_SECOND",
              "INTERVAL_YEAR_TO_MONTH"}  # fmt: skip
SPEC_OPS = {"INSERT", "UPDATE", "DELETE", "HEARTBEAT", "TRANSACTION_BEGIN", "TRANSACTION_END", "CREATE", "ALTER",
            "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX", "GTID", "XACOMMIT", "XAROLLBACK"}  # fmt: skip


@pytest.fixture(scope="module")
def messages() -> list[EncodedMessage]:
    return list(encoder_for(DIALECT).encode(build_workload(WorkloadOptions(events=220), seed=5), random.Random(2)))


# ---------------------------------------------------------------- (a) encoder vs the spec
def test_messages_carry_the_spec_fields_ops_and_types(messages):
    ops, types = Counter(), Counter()
    for m in messages:
        doc = json.loads(m.value)
        assert doc["version"] == "2.0" and set(doc) <= SPEC_TOP_LEVEL
        assert set(doc["payload"]) <= SPEC_PAYLOAD_FIELDS
        ops[doc["payload"]["op"]] += 1
        if doc["payload"]["op"] == "HEARTBEAT":
            assert doc == {"version": "2.0", "payload": {"timestamp": doc["payload"]["timestamp"], "op": "HEARTBEAT"}}
            continue
        stamps = doc["payload"]["timestamp"]
        assert len(str(stamps["eventTime"])) == len(str(stamps["systemTime"])) == 13
        assert len(str(stamps["checkpointTime"])) == 10, "the samples' checkpointTime is in seconds"
        if "schema" in doc:
            assert set(doc["schema"]["source"]) == SPEC_SOURCE_FIELDS
            types.update(c["type"] for c in doc["schema"]["column"])
    assert set(ops) <= SPEC_OPS
    assert {"INSERT", "UPDATE", "DELETE", "HEARTBEAT", "TRANSACTION_BEGIN", "TRANSACTION_END", "CREATE", "ALTER",
            "TRUNCATE"} <= set(ops)  # fmt: skip
    assert set(types) <= SPEC_TYPES | {"JSON"}
    assert len(set(types) & SPEC_TYPES) >= 16


def test_updates_carry_both_images_and_keyless_tables_no_pk(messages):
    docs = [json.loads(m.value) for m in messages]
    updates = [d for d in docs if d["payload"]["op"] == "UPDATE"]
    assert updates and all(d["payload"]["before"] and d["payload"]["after"] for d in updates)
    rows = [d for d in docs if d["payload"]["op"] in ("INSERT", "UPDATE", "DELETE")]
    assert any("pk" not in d["schema"] for d in rows) and any("pk" in d["schema"] for d in rows)


@pytest.mark.parametrize(
    ("column", "value", "sent"),
    [
        (Column("c", "boolean", "tinyint(1)"), True, "1"),
        (Column("c", "decimal(10,2)", "decimal(10,2)"), Decimal("12.50"), "12.50"),
        (Column("c", "ubigint", "bigint(20) unsigned"), 10223372036854775806, "10223372036854775806"),
        (Column("c", "float", "float"), 1.2222000360488892, "1.2222"),
        (Column("c", "time", "time(6)"), dt.time(0, 1, 2), "00:01:02"),
        (Column("c", "datetime", "datetime(6)"), dt.datetime(2020, 11, 25, 0, 1, 2, 12000), "2020-11-25 00:01:02.012"),
        (Column("c", "timestamp", "timestamp(6)"), dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=UTC),
         "1606233662.012345"),
        (Column("c", "zoned_datetime", "x"),
         dt.datetime(2020, 11, 25, 0, 1, 2, 12345, tzinfo=ZoneInfo("Asia/Shanghai")),
         "2020-11-25 00:01:02.012345 Asia/Shanghai"),
        (Column("c", "interval_ds", "x"), dt.timedelta(days=3), "INTERVAL '3' DAY"),
        (Column("c", "interval_ym", "x"), IntervalYM(48), "INTERVAL '4' YEAR"),
        (Column("c", "binary", "blob"), b"hello world", "aGVsbG8gd29ybGQ="),
    ],
)  # fmt: skip
def test_values_are_sent_as_the_spec_samples_show(column, value, sent):
    assert json_value(column, value) == sent


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (IntervalYM(-14), "INTERVAL '-1-2' YEAR TO MONTH"),
        (-dt.timedelta(days=3, hours=4, minutes=5, seconds=6, microseconds=500000),
         "INTERVAL '-3 04:05:06.5' DAY TO SECOND"),
        (dt.timedelta(0), "INTERVAL '0' DAY"),
    ],
)  # fmt: skip
def test_interval_literals(value, literal):
    assert interval_literal(value) == literal


# ---------------------------------------------------------------- (b) value decoder, by hand from the spec
@pytest.mark.parametrize(
    ("declared", "raw", "text", "logical"),
    [
        ("TINYINT", "3", "3", "tinyint"),
        ("SMALLINT", "129", "129", "smallint"),
        ("INT", "2147483646", "2147483646", "int"),
        ("INT64", "9223372036854775806", "9223372036854775806", "bigint"),
        ("BIGINT", "10223372036854775806", "10223372036854775806", "bigint"),
        ("bigint(20) unsigned", "18446744073709551615", "18446744073709551615", "ubigint"),
        ("FLOAT", "1.2222", "1.2222", "float"),
        ("DOUBLE", "1.0E-5", "1e-05", "double"),
        ("BOOLEAN", "1", "true", "boolean"),
        ("BOOLEAN", "0", "false", "boolean"),
        ("VARCHAR", "hello world", "hello world", "string"),
        ("varchar(20)", "donald", "donald", "string"),
        ("BLOB", "aGVsbG8gd29ybGQ=", "aGVsbG8gd29ybGQ=", "binary"),
        ("DECIMAL", "12.50", "12.5", "decimal"),
        ("decimal(10,2)", "1E+3", "1000", "decimal(10,2)"),
        ("DATE", "2020-11-25", "2020-11-25", "date"),
        ("DATE", "2020-11-25 00:01:02", "2020-11-25 00:01:02", "datetime"),
        ("TIME", "00:01:02", "00:01:02", "time"),
        ("TIME", "00:01:02.123456789", "00:01:02.123456789", "time"),
        ("DATETIME", "2020-11-25 00:01:02", "2020-11-25 00:01:02", "datetime"),
        ("DATETIME", "2020-11-25 00:01:02.5 +08:00", "2020-11-24T16:01:02.5Z[+0800]", "zoned_datetime"),
        ("datetime", "1590315269000.123456789", "2020-05-24T10:14:29.123456789Z", "timestamp"),
        ("datetime", "1590315269000", "2020-05-24T10:14:29Z", "timestamp"),
        ("TIMESTAMP", "1606233662.012345", "2020-11-24T16:01:02.012345Z", "timestamp"),
        ("TIMESTAMP", "2020-11-25 00:01:02.012345 Asia/Shanghai", "2020-11-24T16:01:02.012345Z[Asia/Shanghai]",
         "zoned_datetime"),
        ("ZONED_DATETIME", "2020-11-25 00:01:02.012345 Asia/Shanghai", "2020-11-24T16:01:02.012345Z[Asia/Shanghai]",
         "zoned_datetime"),
        ("INTERVAL_DAY_TO_SECOND", "INTERVAL '3' DAY", "P3D", "interval_ds"),
        ("INTERVAL_DAY_TO_SECOND", "INTERVAL '3 04:05:06.5' DAY TO SECOND", "P3DT4H5M6.5S", "interval_ds"),
        ("INTERVAL_DAY_TO_SECOND", "+03 04:05:06.500000", "P3DT4H5M6.5S", "interval_ds"),
        ("INTERVAL_YEAR_TO_MONTH", "INTERVAL '4' YEAR", "P4Y", "interval_ym"),
        ("INTERVAL_YEAR_TO_MONTH", "INTERVAL '-1-2' YEAR TO MONTH", "-P1Y2M", "interval_ym"),
        ("JSON", '{"a":1}', '{"a":1}', "json"),
        ("GEOMETRY", "POINT(1 2)", "POINT(1 2)", "string"),
    ],
)  # fmt: skip
def test_declared_types_read_as_spec_003_says(declared, raw, text, logical):
    assert canonicalizer_for(DIALECT)({"c": raw}, {"c": declared}, "Asia/Shanghai") == ({"c": text}, {"c": logical})


@pytest.mark.parametrize(
    ("declared", "raw"),
    [("INT", "12x"), ("BIGINT", "1e999999999"), ("BOOLEAN", "2"), ("BLOB", "[base64 string]"),
     ("TIMESTAMP", "0000-00-00 00:00:00"), ("DATE", "2020-13-01"), ("ZONED_DATETIME", "2020-11-25 00:01:02 Mars/Base"),
     ("INTERVAL_DAY_TO_SECOND", "INTERVAL '4' YEAR"), ("INTERVAL_YEAR_TO_MONTH", "three years"),
     ("datetime", "1590315269000.123")],
)  # fmt: skip
def test_unreadable_values_are_canonical_errors(declared, raw):
    with pytest.raises(CanonicalError, match="column 'c'"):
        canonicalizer_for(DIALECT)({"c": raw}, {"c": declared}, "UTC")


def test_the_sample_name_mismatch_keeps_values_and_types():
    canonical, types = canonicalizer_for(DIALECT)({"col1": "3", "col9": "hello world"}, {"int8": "TINYINT"}, "UTC")
    assert canonical == {"col1": "3", "col9": "hello world"}
    assert types == {"int8": "tinyint", "col1": "string", "col9": "string"}


@pytest.mark.parametrize(
    ("declared", "logical"),
    [("INT64", "bigint"), ("decimal(38, 10)", "decimal(38,10)"), ("NUMBER(10)", "decimal"), ("varchar(20)", "string"),
     ("binary", "binary"), ("Timestamp With Time Zone", "zoned_datetime"), (None, "string")],
)  # fmt: skip
def test_declared_type_names(declared, logical):
    assert logical_type(declared) == logical


def test_encoded_images_decode_to_the_oracle_without_spark(messages):
    decode = canonicalizer_for(DIALECT)
    checked = 0
    for m in messages:
        doc = load_json(m.value)
        (want,) = m.expected
        if want["event_kind"] != "ROW":
            continue
        types = {c["name"]: c["type"] for c in doc["schema"]["column"]}
        for side in ("before", "after"):
            image = doc["payload"][side]
            got = None if image is None else decode(
                {k: None if v is None else str(v) for k, v in image["data"].items()}, types, "UTC")[0]  # fmt: skip
            assert got == want[side]
        checked += 1
    assert checked > 150


def test_every_malformation_kind_changes_the_message(messages):
    encoder = encoder_for(DIALECT)
    rng = random.Random(3)
    for kind in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds:
        for m in [m for m in messages if m.is_row_message][:40]:
            assert encoder.malform(m, kind, rng) != m.value


# ---------------------------------------------------------------- (c) staging model on Spark


def test_spec_fixtures_are_json_and_cover_every_example():
    pairs = expected_pairs(FIXTURES)
    assert len(pairs) == 6
    for path, expected in pairs:
        json.loads(path.read_text(encoding="utf-8"))
        assert expected and all("error_code" in row for row in expected)


@pytest.fixture(scope="module")
def staged(messages) -> dict[str, Any]:
    """One dbt run over: the spec examples, the encoded workload, every malformation kind, a tombstone."""
    return stage_stream(DIALECT, [(p.read_bytes(), e) for p, e in expected_pairs(FIXTURES)], messages)


@pytest.mark.spark
def test_spark_every_landing_row_is_staged_once_in_contract_shape(staged):
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

    run_dbt("test", "--select", "stg_oms_dataworks_json__changes")


@pytest.mark.spark
def test_spark_generated_stream_with_delivery_faults_matches_the_oracle(tmp_path):
    from generated_oracle import check_generated_stream

    check_generated_stream(DIALECT, tmp_path)
