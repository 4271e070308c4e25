"""dataworks_json: (a) the encoder writes spec 001's messages, (b) the value decoder reads the six
declared types, (c, marked `spark`) the SQL staging model stages the spec examples, an encoded
workload and every malformation kind, and its dbt unit and data tests pass.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_unify.canonical import CanonicalError, IntervalYM
from cdc_unify.canonicalizers import canonicalizer_for
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, EncodedMessage
from cdc_unify.generator.encoders.dataworks_json import SOURCE_TIME_ZONE, json_value
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
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "spec_examples" / "dataworks_json"
DIALECT = "dataworks_json"
UTC = dt.UTC

# Copied from spec 001 (消息总体格式, 同步任务心跳消息格式, 参数说明 and 字段类型).
SPEC_TOP_LEVEL = {"schema", "payload", "version"}
SPEC_SCHEMA_FIELDS = {"dataColumn", "primaryKey", "source"}
SPEC_SOURCE_FIELDS = {"dbType", "dbVersion", "dbName", "schemaName", "tableName"}
SPEC_PAYLOAD_FIELDS = {"before", "after", "sequenceId", "scn", "op", "timestamp", "ddl"}
SPEC_TIMESTAMP_FIELDS = {"eventTime", "systemTime", "checkpointTime"}
SPEC_TYPES = {"BOOLEAN", "DOUBLE", "DATE", "BYTES", "LONG", "STRING"}
SPEC_OPS = {"INSERT", "UPDATE_BEFOR", "UPDATE_AFTER", "DELETE", "TRANSACTION_BEGIN", "TRANSACTION_END", "CREATE",
            "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX", "GTID", "XACOMMIT", "XAROLLBACK",
            "MHEARTBEAT"}  # fmt: skip
SPEC_HEARTBEAT = {
    "schema": {"dataColumn": None, "primaryKey": None, "source": None},
    "payload": {"before": None, "after": None, "sequenceId": None,
                "timestamp": {"eventTime": 1620457659000, "checkpointTime": 1620457659000}, "op": "MHEARTBEAT",
                "ddl": None},
    "version": "0.0.1",
}  # fmt: skip


@pytest.fixture(scope="module")
def messages() -> list[EncodedMessage]:
    return list(encoder_for(DIALECT).encode(build_workload(WorkloadOptions(events=220), seed=5), random.Random(2)))


def docs(messages: list[EncodedMessage]) -> list[dict[str, Any]]:
    return [load_json(m.value) for m in messages]


# ---------------------------------------------------------------- (a) encoder vs the spec
def test_messages_carry_the_spec_fields_ops_and_types(messages):
    ops, types, versions = Counter(), Counter(), Counter()
    for doc in docs(messages):
        assert set(doc) == SPEC_TOP_LEVEL
        assert set(doc["schema"]) == SPEC_SCHEMA_FIELDS
        assert set(doc["payload"]) <= SPEC_PAYLOAD_FIELDS and {"op", "timestamp"} <= set(doc["payload"])
        assert set(doc["payload"]["timestamp"]) <= SPEC_TIMESTAMP_FIELDS
        assert all(len(str(v)) == 13 for v in doc["payload"]["timestamp"].values())
        ops[doc["payload"]["op"]] += 1
        versions[doc["version"]] += 1
        if doc["schema"]["source"] is not None:
            assert set(doc["schema"]["source"]) <= SPEC_SOURCE_FIELDS
        for column in doc["schema"]["dataColumn"] or []:
            assert set(column) == {"name", "type"}
            types[column["type"]] += 1
    assert set(ops) <= SPEC_OPS
    assert {"INSERT", "UPDATE_BEFOR", "UPDATE_AFTER", "DELETE", "MHEARTBEAT", "TRANSACTION_BEGIN", "TRANSACTION_END",
            "GTID", "CREATE", "ALTER", "TRUNCATE"} <= set(ops)  # fmt: skip
    assert set(types) == SPEC_TYPES
    assert set(versions) == {"0.0.1", "1.0.0"}


def test_heartbeats_have_the_spec_shape_exactly(messages):
    beats = [doc for doc in map(json.loads, (m.value for m in messages)) if doc["payload"]["op"] == "MHEARTBEAT"]
    assert beats
    for doc in beats:
        event_time = doc["payload"]["timestamp"]["eventTime"]
        shape = json.loads(json.dumps(SPEC_HEARTBEAT).replace("1620457659000", str(event_time)))
        assert doc == shape


def test_updates_come_in_both_styles_and_split_halves_share_the_sequence_id(messages):
    all_docs = docs(messages)
    single = [d for d in all_docs if d["payload"]["op"] == "UPDATE_AFTER" and d["payload"]["before"] is not None]
    halves = [(a, b) for a, b in zip(all_docs, all_docs[1:], strict=False) if a["payload"]["op"] == "UPDATE_BEFOR"]
    assert single and halves
    for before_half, after_half in halves:
        assert after_half["payload"]["op"] == "UPDATE_AFTER"
        assert before_half["payload"]["sequenceId"] == after_half["payload"]["sequenceId"]
        assert before_half["payload"]["after"] is None and after_half["payload"]["before"] is None
    sequence_ids = [int(d["payload"]["sequenceId"]) for d in all_docs if d["payload"]["sequenceId"]]
    assert sequence_ids == sorted(sequence_ids)


def test_tables_without_a_key_carry_the_rds_row_id(messages):
    keyless = [d for d in docs(messages) if d["schema"]["source"] and d["schema"]["primaryKey"] is None]
    assert keyless
    for doc in keyless:
        assert {"name": "#alibaba_rds_row_id#", "type": "LONG"} in doc["schema"]["dataColumn"]


@pytest.mark.parametrize(
    ("column", "value", "sent"),
    [
        (Column("c", "ubigint", "bigint(20) unsigned"), 18446744073709551615, "18446744073709551615"),
        (Column("c", "double", "double"), 1e-05, "1.0E-5"),
        (Column("c", "float", "float"), 1.2222000360488892, "1.2222"),
        (Column("c", "boolean", "tinyint(1)"), True, True),
        (Column("c", "binary", "blob"), b"hello world", "aGVsbG8gd29ybGQ="),
        (Column("c", "date", "date"), dt.date(2020, 5, 24), "1590249600000"),
        (Column("c", "datetime", "datetime(6)"), dt.datetime(2020, 5, 24, 18, 14, 29, 123456), "1590315269123"),
        (Column("c", "timestamp", "timestamp(6)"), dt.datetime(2020, 5, 24, 10, 14, 29, tzinfo=UTC), "1590315269000"),
        (Column("c", "decimal(10,2)", "decimal(10,2)"), Decimal("12.50"), "12.50"),
        (Column("c", "time", "time(6)"), dt.time(0, 1, 2, 500), "00:01:02.000500"),
        (Column("c", "interval_ym", "interval year(2) to month"), IntervalYM(14), "+01-02"),
    ],
)
def test_values_are_sent_in_their_declared_type(column, value, sent):
    assert json_value(column, value) == sent


def test_wall_clocks_are_read_in_the_dbt_default_zone():
    assert f'source_time_zone: "{SOURCE_TIME_ZONE}"' in (REPO_ROOT / "dbt_project.yml").read_text()


# ---------------------------------------------------------------- (b) value decoder
@pytest.mark.parametrize(
    ("declared", "raw", "text", "logical"),
    [
        ("LONG", "10223372036854775806", "10223372036854775806", "bigint"),
        ("LONG", "-7", "-7", "bigint"),
        ("long", "15", "15", "bigint"),
        ("DOUBLE", "1.0E-5", "1e-05", "double"),
        ("DOUBLE", "1.2222", "1.2222", "double"),
        ("DOUBLE", "NaN", "NaN", "double"),
        ("BOOLEAN", "true", "true", "boolean"),
        ("BOOLEAN", "false", "false", "boolean"),
        ("DATE", "1590315269000", "2020-05-24T10:14:29Z", "timestamp"),
        ("DATE", "-1", "1969-12-31T23:59:59.999Z", "timestamp"),
        ("BYTES", "aGVsbG8gd29ybGQ=", "aGVsbG8gd29ybGQ=", "binary"),
        ("STRING", "12.50", "12.50", "string"),
        ("STRING", "AAIUMPAAFAACxExAAE", "AAIUMPAAFAACxExAAE", "string"),
        ("GEOMETRY", "POINT(1 2)", "POINT(1 2)", "string"),
        (None, "1E+3", "1E+3", "string"),
    ],
)
def test_declared_types_read_as_spec_001_says(declared, raw, text, logical):
    types = {} if declared is None else {"c": declared}
    assert canonicalizer_for(DIALECT)({"c": raw}, types, "Asia/Shanghai") == ({"c": text}, {"c": logical})


@pytest.mark.parametrize(
    ("declared", "raw"),
    [("LONG", "12x"), ("LONG", "1.5"), ("LONG", "1e999999999"), ("DOUBLE", "abc"), ("BOOLEAN", "maybe"),
     ("DATE", "yesterday"), ("DATE", "1e30"), ("BYTES", "[base64 string]")],
)  # fmt: skip
def test_unreadable_values_are_canonical_errors(declared, raw):
    with pytest.raises(CanonicalError, match="column 'c'"):
        canonicalizer_for(DIALECT)({"c": raw}, {"c": declared}, "UTC")


def test_types_cover_declared_columns_without_values_and_values_without_types():
    canonical, types = canonicalizer_for(DIALECT)({"a": "1", "b": None}, {"a": "LONG", "z": "DATE"}, "UTC")
    assert canonical == {"a": "1", "b": None}
    assert types == {"a": "bigint", "z": "timestamp", "b": "string"}


def test_encoded_images_decode_to_the_oracle_without_spark(messages):
    decode = canonicalizer_for(DIALECT)
    checked = 0
    for m in messages:
        doc = load_json(m.value)
        (want,) = m.expected
        if want["event_kind"] != "ROW":
            continue
        types = {c["name"]: c["type"] for c in doc["schema"]["dataColumn"]}
        for side in ("before", "after"):
            image = doc["payload"][side]
            got = None
            if image is not None:
                raw = {k: None if v is None else json.dumps(v) if isinstance(v, bool) else str(v)
                       for k, v in image["dataColumn"].items()}  # fmt: skip
                got = decode(raw, types, "UTC")[0]
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
    assert len(pairs) == 8
    for path, expected in pairs:
        json.loads(path.read_text(encoding="utf-8"))
        assert expected and all("error_code" in row for row in expected)


@pytest.fixture(scope="module")
def staged(messages) -> dict[str, Any]:
    """One dbt run over: the spec examples, the encoded workload, every malformation kind, a
    redelivery of the workload's middle message, a tombstone."""
    middle = len(messages) // 2
    fixtures = [(p.read_bytes(), e) for p, e in expected_pairs(FIXTURES)]
    run = stage_stream(DIALECT, fixtures, messages, after=(messages[middle].value, None))
    return run | {"redelivered_of": run["n_fixtures"] + middle}


@pytest.mark.spark
def test_spark_every_landing_row_is_staged_once_in_contract_shape(staged):
    assert_every_value_staged_in_contract_shape(staged)


@pytest.mark.spark
def test_spark_spec_examples_and_encoded_stream_decode_as_expected(staged):
    assert_expected_rows(staged)


@pytest.mark.spark
def test_spark_split_update_halves_get_distinct_event_ids(staged):
    by_name = {p.stem: staged["by_offset"][i][0] for i, (p, _) in enumerate(expected_pairs(FIXTURES))}
    before_half, after_half = by_name["05_update_before"], by_name["06_update_after"]
    assert before_half["source_position"] == after_half["source_position"]
    assert before_half["event_id"] != after_half["event_id"]
    assert (
        before_half["sequence"].split(".")[0] == after_half["sequence"].split(".")[0] == "1620457642589000001".zfill(30)
    )


@pytest.mark.spark
def test_spark_redelivered_message_keeps_its_event_id_distinct_messages_do_not(staged):
    (again,) = staged["by_offset"][staged["n_values"] - 2]
    (original,) = staged["by_offset"][staged["redelivered_of"]]
    assert again["event_id"] == original["event_id"] and again["landing_offset"] != original["landing_offset"]
    first = staged["n_fixtures"]
    ids = Counter(r["event_id"] for r in staged["rows"] if first <= r["landing_offset"] < staged["first_malformed"])
    assert max(ids.values()) == 1


@pytest.mark.spark
def test_spark_malformed_messages_are_quarantined_with_their_code(staged):
    assert_malformed_quarantined(staged)


@pytest.mark.spark
def test_spark_null_value_is_a_tombstone(staged):
    assert_tombstone(staged, staged["n_values"] - 1)


@pytest.mark.spark
def test_spark_dbt_unit_and_data_tests_pass(staged):
    from harness import run_dbt

    run_dbt("test", "--select", "stg_dataworks_json__changes")


@pytest.mark.spark
def test_spark_generated_stream_with_delivery_faults_matches_the_oracle(tmp_path):
    from generated_oracle import check_generated_stream

    check_generated_stream(DIALECT, tmp_path)
