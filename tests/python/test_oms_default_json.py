"""OceanBase OMS group (spec 003): oms_default_json, oms_default_ext_json and oms_shareplex_json.

Encoders are checked against field names and codes copied from the spec, decoders against values
written by hand from the spec's appendix, and (marked `spark`) the staging models against the
spec's examples, an encoded workload and every malformation kind.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_unify.canonical import CanonicalError, IntervalYM
from cdc_unify.canonicalizers import canonicalizer_for
from cdc_unify.canonicalizers import oms_default_ext_json as ext_decoder
from cdc_unify.contract import STAGED_COLUMNS
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE, EncodedMessage
from cdc_unify.generator.encoders.oms_default_json import vendor_value
from cdc_unify.generator.encoders.oms_shareplex_json import SOURCE_TIME_ZONE
from cdc_unify.generator.model import Workload
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from spec_fixtures import expected_pairs, utc

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "spec_examples"
DIALECTS = ("oms_default_json", "oms_default_ext_json", "oms_shareplex_json")
DEFAULT_DIALECTS = ("oms_default_json", "oms_default_ext_json")

# Names copied from spec 003 ("Default JSON 消息格式" and "SharePlex JSON 消息格式").
DEFAULT_TOP_FIELDS = {"prevStruct", "postStruct", "allMetaData", "recordType"}
DEFAULT_META_FIELDS = {
    "checkpoint", "record_primary_key", "record_primary_value", "source_identity", "dbType",
    "storeDataSequence", "table_name", "db", "timestamp", "uniqueId",
}  # fmt: skip
DEFAULT_RECORD_TYPES = {"INSERT", "UPDATE", "DELETE", "ROW", "HEARTBEAT", "DDL"}
SHAREPLEX_TOP_FIELDS = {"data", "meta", "key"}
SHAREPLEX_META_FIELDS = {"time", "op", "posttime", "idx", "size", "seq", "table", "rowid", "trans", "scn"}
SHAREPLEX_OPS = {"ins", "upd", "del"}
# schemaType names of the spec's DefaultExtendColumnType sample and its OMS DataWorks 2.0 sample.
SPEC_SCHEMA_TYPES = {
    "TINYINT", "SMALLINT", "INT", "INT64", "BIGINT", "FLOAT", "DOUBLE", "VARCHAR", "BLOB", "DECIMAL", "DATE",
    "TIME", "DATETIME", "TIMESTAMP", "BOOLEAN", "ZONED_DATETIME", "INTERVAL_DAY_TO_SECOND", "INTERVAL_YEAR_TO_MONTH",
}  # fmt: skip


@pytest.fixture(scope="module")
def workload() -> Workload:
    return build_workload(WorkloadOptions(events=160), seed=20240101)


def encode(dialect: str, workload: Workload) -> list[EncodedMessage]:
    return list(encoder_for(dialect).encode(workload, random.Random(7)))


def as_sent(value: bytes) -> Any:
    """A message parsed the way the staging models read it: every number as its exact text."""
    return json.loads(value, parse_float=str, parse_int=str)


# ---------------------------------------------------------------- (a) encoders speak the spec
@pytest.mark.parametrize("dialect", DEFAULT_DIALECTS)
def test_default_encoders_use_the_spec_fields_and_record_types(dialect, workload):
    docs = [as_sent(m.value) for m in encode(dialect, workload)]
    assert {d["recordType"] for d in docs} == DEFAULT_RECORD_TYPES
    for doc in docs:
        assert set(doc) == DEFAULT_TOP_FIELDS
        assert set(doc["allMetaData"]) <= DEFAULT_META_FIELDS
        meta = doc["allMetaData"]
        if doc["recordType"] == "ROW":  # full load: no incremental-only fields
            assert {"timestamp", "storeDataSequence", "uniqueId"}.isdisjoint(meta)
        else:
            assert re.fullmatch(r"\d{10}", meta["timestamp"]), "epoch seconds as a string"
        if doc["recordType"] == "DDL":
            assert set(doc["postStruct"]) == {"ddl"}
        if doc["recordType"] in ("INSERT", "ROW"):
            assert doc["prevStruct"] is None and doc["postStruct"]
        if doc["recordType"] == "DELETE":
            assert doc["postStruct"] is None and doc["prevStruct"]
    order_items = next(d for d in docs if d["allMetaData"].get("table_name") == "order_items" and d["postStruct"]
                       and d["recordType"] == "INSERT")  # fmt: skip
    assert order_items["allMetaData"]["record_primary_key"] == "order_id\u0001line_no"
    assert order_items["allMetaData"]["db"].endswith(".shop")  # {tenant}.{database}
    assert order_items["allMetaData"]["record_primary_value"].count("\u0001") == 1


def test_ext_images_carry_light_type_in_the_spec_shape(workload):
    for message in encode("oms_default_ext_json", workload):
        doc = as_sent(message.value)
        if doc["recordType"] in ("DDL", "HEARTBEAT"):
            continue
        for image in (doc["prevStruct"], doc["postStruct"]):
            if image is None:
                continue
            declared = image["__light_type"]
            assert set(declared) == set(image) - {"__light_type"}
            assert all(set(entry) == {"schemaType"} for entry in declared.values())
            assert {entry["schemaType"] for entry in declared.values()} <= SPEC_SCHEMA_TYPES | {"JSON"}


def test_shareplex_encoder_uses_the_spec_fields_and_ops(workload):
    docs = [as_sent(m.value) for m in encode("oms_shareplex_json", workload)]
    assert {d["meta"]["op"] for d in docs} == SHAREPLEX_OPS
    for doc in docs:
        meta = doc["meta"]
        assert set(doc) <= SHAREPLEX_TOP_FIELDS and set(meta) <= SHAREPLEX_META_FIELDS
        assert ("key" in doc) == (meta["op"] == "upd")
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}", meta["time"])
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}", meta["posttime"])
        assert meta["rowid"].startswith(meta["table"] + "-") and meta["table"].count(".") == 1
        if meta["op"] == "upd":  # data: only the changed columns; key: the full before image
            assert set(doc["data"]) < set(doc["key"])
            assert all(doc["key"][c] != v for c, v in doc["data"].items())


def test_shareplex_wall_clock_zone_is_the_dbt_default():
    project = yaml.safe_load((REPO_ROOT / "dbt_project.yml").read_text())
    assert project["vars"]["source_time_zone"] == SOURCE_TIME_ZONE


def test_shareplex_sends_no_ddl_and_splits_key_changes(workload):
    expected = [row for m in encode("oms_shareplex_json", workload) for row in m.expected]
    assert {r["event_kind"] for r in expected} == {"ROW"}
    key_changes = sum(
        1 for tx in workload.transactions for c in tx.changes
        if c.op == "UPDATE" and c.key_of(c.before) != c.key_of(c.after)
    )  # fmt: skip
    row_changes = sum(1 for tx in workload.transactions for c in tx.changes if c.op not in ("DDL", "TRUNCATE"))
    assert key_changes > 0
    assert len(expected) == row_changes + key_changes  # each key change is a del plus an ins


@pytest.mark.parametrize(
    ("logical_type", "value", "sent"),
    [
        ("ubigint", 10223372036854775806, "10223372036854775806"),
        ("boolean", True, "1"),
        ("decimal(65,30)", Decimal("-0.000000000000000000000000000001"), "-1E-30"),
        ("decimal(12,2)", Decimal("12.5"), "12.50"),
        ("float", 1.2222000360488892, "1.2222"),
        ("double", 5e-324, "4.940656458412465e-324"),
        ("binary", b"hello world", "aGVsbG8gd29ybGQ="),
        ("time", dt.time(0, 1, 2), "00:01:02"),
        ("datetime", dt.datetime(2020, 11, 25, 0, 1, 2), "2020-11-25 00:01:02"),
        ("timestamp", dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC), "1606233662.012345"),
        ("interval_ds", dt.timedelta(days=3), "INTERVAL '3' DAY"),
        ("interval_ym", IntervalYM(48), "INTERVAL '4' YEAR"),
        ("interval_ym", IntervalYM(-14), "INTERVAL '-1-2' YEAR TO MONTH"),
    ],
)
def test_values_are_written_as_the_appendix_says(logical_type, value, sent):
    written = vendor_value(logical_type, value)
    assert getattr(written, "text", written) == sent


def test_zoned_datetime_is_written_with_its_zone_id():
    from zoneinfo import ZoneInfo

    value = dt.datetime(2020, 11, 25, 0, 1, 2, 12345, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert vendor_value("zoned_datetime", value) == "2020-11-25 00:01:02.012345 Asia/Shanghai"


# ---------------------------------------------------------------- (b) decoders
@pytest.mark.parametrize(
    ("schema_type", "text", "canonical", "logical"),
    [
        ("TINYINT", "3", "3", "tinyint"),
        ("INT64", "9223372036854775806", "9223372036854775806", "bigint"),
        ("BIGINT", "10223372036854775806", "10223372036854775806", "ubigint"),
        ("BOOLEAN", "1", "true", "boolean"),
        ("FLOAT", "1.2222", "1.2222", "float"),
        ("DOUBLE", "9.999999999999", "9.999999999999", "double"),
        ("DECIMAL", "12.50", "12.5", "decimal"),
        ("DECIMAL", "1.50E-3", "0.0015", "decimal"),
        ("decimal(10, 2)", "12.50", "12.5", "decimal(10,2)"),
        ("VARCHAR", "hello world", "hello world", "string"),
        ("BLOB", "aGVsbG8gd29ybGQ=", "aGVsbG8gd29ybGQ=", "binary"),
        ("DATE", "2020-11-25", "2020-11-25", "date"),
        ("TIME", "00:01:02.012345000", "00:01:02.012345", "time"),
        ("DATETIME", "2020-11-25 00:01:02", "2020-11-25 00:01:02", "datetime"),
        ("DATETIME", "2020-11-25 00:01:02.012345 Asia/Shanghai", "2020-11-24T16:01:02.012345Z[Asia/Shanghai]",
         "zoned_datetime"),
        ("DATETIME", "2020-11-25 00:01:02 +08:00", "2020-11-24T16:01:02Z[+08:00]", "zoned_datetime"),
        ("TIMESTAMP", "1606233662.012345", "2020-11-24T16:01:02.012345Z", "timestamp"),
        ("TIMESTAMP", "2020-11-25 00:01:02", "2020-11-25 00:01:02", "datetime"),  # Oracle tenant: DateTime form
        ("ZONED_DATETIME", "2020-11-25 00:01:02", "2020-11-24T16:01:02Z[Asia/Shanghai]", "zoned_datetime"),
        ("INTERVAL_DAY_TO_SECOND", "INTERVAL '3' DAY", "P3D", "interval_ds"),
        ("INTERVAL_DAY_TO_SECOND", "INTERVAL '-1 02:03:04.5' DAY TO SECOND", "-P1DT2H3M4.5S", "interval_ds"),
        ("INTERVAL_DAY_TO_SECOND", "+03 04:05:06.000000", "P3DT4H5M6S", "interval_ds"),
        ("INTERVAL_YEAR_TO_MONTH", "INTERVAL '4' YEAR", "P4Y", "interval_ym"),
        ("INTERVAL_YEAR_TO_MONTH", "INTERVAL '1-2' YEAR TO MONTH", "P1Y2M", "interval_ym"),
        ("GEOMETRY", "POINT(1 2)", "POINT(1 2)", "string"),
    ],
)  # fmt: skip
def test_ext_decoder_reads_the_appendix_forms(schema_type, text, canonical, logical):
    assert ext_decoder.read_value(schema_type, text, "Asia/Shanghai") == (canonical, logical)


@pytest.mark.parametrize(
    ("schema_type", "text"),
    [
        ("INT", "abc"),
        ("INT", "3.5"),
        ("DATE", "0000-00-00"),  # the appendix: illegal dates are sent as they are
        ("TIMESTAMP", "0000-00-00 00:00:00"),
        ("BLOB", "not base64!"),
        ("DATETIME", "2020-11-25 00:01:02 Mars/Olympus"),
        ("DATETIME", "0001-01-01 00:00:00 +08:00"),
        ("DECIMAL", "1E+999999999"),
        ("TIME", "25:61:00"),
        ("INTERVAL_DAY_TO_SECOND", "INTERVAL '4' YEAR"),
        ("INTERVAL_DAY_TO_SECOND", "INTERVAL '1 25:00:00' DAY TO SECOND"),
    ],
)
def test_ext_decoder_refuses_unreadable_values(schema_type, text):
    with pytest.raises(CanonicalError):
        ext_decoder.canonicalize_image({"c": text}, {"c": schema_type}, "Asia/Shanghai")


def test_ext_decoder_keeps_untyped_values_and_unmatched_types():
    # The spec sample's trap: `__light_type` names (int8, ...) match no image key (col1, ...).
    values = {"col1": "3", "col7": "9.99E-308", "col8": None}
    types = {"int8": "TINYINT", "localDate": "DATE"}
    canonical, logical = ext_decoder.canonicalize_image(values, types, "Asia/Shanghai")
    assert canonical == values
    assert logical == {"col1": "string", "col7": "string", "col8": "string", "int8": "tinyint", "localDate": "date"}


def _images(dialect: str, doc: dict[str, Any]) -> dict[str, dict | None]:
    if dialect == "oms_shareplex_json":
        op = doc["meta"]["op"]
        return {"before": doc.get("key") if op == "upd" else (doc["data"] if op == "del" else None),
                "after": doc["data"] if op != "del" else None}  # fmt: skip
    return {"before": doc["prevStruct"], "after": doc["postStruct"]}


# oms_default_json and oms_shareplex_json keep values as sent (no value decoder; their message
# functions): their Spark tests check them.
@pytest.mark.parametrize("dialect", ["oms_default_ext_json"])
def test_encoded_values_decode_to_the_oracle_without_spark(dialect, workload):
    """Every image of every row message, read as the model reads it, canonicalises to `expected`."""
    decode = canonicalizer_for(dialect)
    checked = 0
    for message in encode(dialect, workload):
        expected = message.expected[0]
        if expected["event_kind"] != "ROW":
            continue
        for side, image in _images(dialect, as_sent(message.value)).items():
            if image is None:
                assert expected[side] is None
                continue
            types = {c: t["schemaType"] for c, t in image.pop("__light_type", {}).items()}
            assert decode(image, types, SOURCE_TIME_ZONE)[0] == expected[side]
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_malformation_kind_is_produced(dialect, workload):
    encoder = encoder_for(dialect)
    rows = [m for m in encode(dialect, workload) if m.is_row_message]
    rng = random.Random(3)
    for kind in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds:
        for message in rows[:40]:
            assert encoder.malform(message, kind, rng) != message.value


# ---------------------------------------------------------------- (c) staging models on Spark


def _fixture_expectations(dialect: str) -> list[tuple[bytes, list[dict]]]:
    return [(path.read_bytes(), expected) for path, expected in expected_pairs(FIXTURES / dialect)]


def _assert_subset(staged: dict, expected: dict, where: str) -> None:
    for column, value in expected.items():
        assert utc(staged[column]) == value, f"{where}: {column}"


@pytest.fixture(scope="module")
def staged(workload) -> dict[str, dict[str, Any]]:
    """One dbt run per dialect over: the spec examples, an encoded workload, every malformation, a tombstone."""
    from harness import stage_messages

    results = {}
    for dialect in DIALECTS:
        encoder = encoder_for(dialect)
        fixtures = _fixture_expectations(dialect)
        messages = encode(dialect, workload)
        rng = random.Random(11)
        row_messages = [m for m in messages if m.is_row_message]
        kinds = [k for k in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds for _ in range(3)]
        malformed = [(kind, encoder.malform(rng.choice(row_messages), kind, rng)) for kind in kinds]
        redelivered = messages[:: len(messages) // 5][:5]
        values = [
            *(v for v, _ in fixtures),
            *(m.value for m in messages),
            *(v for _, v in malformed),
            *(m.value for m in redelivered),
            None,
        ]
        rows = stage_messages(dialect, values)
        results[dialect] = {"fixtures": fixtures, "messages": messages, "malformed": malformed,
                            "redelivered": redelivered, "values": values, "rows": rows}  # fmt: skip
    return results


def _slices(result: dict[str, Any]) -> dict[str, list[dict]]:
    """The staged rows of each part of the landed values, in landing order."""
    rows = iter(result["rows"])
    parts = {name: len(result[name]) for name in ("fixtures", "messages", "malformed", "redelivered")}
    sliced = {name: [next(rows) for _ in range(size)] for name, size in parts.items()}
    sliced["tombstone"] = list(rows)
    return sliced


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_every_landing_row_is_staged_once_in_contract_shape(staged, dialect):
    rows = staged[dialect]["rows"]
    assert [r["landing_offset"] for r in rows] == list(range(len(staged[dialect]["values"])))
    assert list(rows[0]) == [name for name, _ in STAGED_COLUMNS]
    assert {r["dialect"] for r in rows} == {dialect}


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_spec_examples_decode_as_written_by_hand(staged, dialect):
    fixture_rows = _slices(staged[dialect])["fixtures"]
    for (_, expected), row in zip(staged[dialect]["fixtures"], fixture_rows, strict=True):
        _assert_subset(row, expected[0], f"{dialect} fixture offset {row['landing_offset']}")


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_encoded_stream_decodes_to_the_encoder_oracle(staged, dialect):
    stream_rows = _slices(staged[dialect])["messages"]
    assert len(stream_rows) == len(staged[dialect]["messages"])
    for message, row in zip(staged[dialect]["messages"], stream_rows, strict=True):
        assert row["message_status"] == "decoded", row["error_detail"]
        _assert_subset(row, message.expected[0], f"{dialect} offset {row['landing_offset']}")


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_malformed_messages_are_quarantined_with_their_code(staged, dialect):
    result = staged[dialect]
    bad_rows = _slices(result)["malformed"]
    assert Counter(r["error_code"] for r in bad_rows) == Counter(
        MALFORMED_ERROR_CODE[k] for k, _ in result["malformed"]
    )
    for (_, value), row in zip(result["malformed"], bad_rows, strict=True):
        assert row["message_status"] == "quarantined" and row["error_detail"]
        assert row["raw_value"] == value and row["event_kind"] is None


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_null_value_is_a_tombstone(staged, dialect):
    (row,) = _slices(staged[dialect])["tombstone"]
    assert row["message_status"] == "tombstone" and row["error_code"] is None and row["event_kind"] is None


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_redelivered_message_keeps_its_event_id(staged, dialect):
    parts = _slices(staged[dialect])
    first_ids = {
        message.value: row["event_id"]
        for message, row in zip(staged[dialect]["messages"], parts["messages"], strict=True)
    }
    assert len(set(first_ids.values())) == len(first_ids), "distinct messages, distinct ids"
    for message, row in zip(staged[dialect]["redelivered"], parts["redelivered"], strict=True):
        assert row["message_status"] == "decoded"
        assert row["event_id"] == first_ids[message.value]


@pytest.mark.spark
def test_spark_spec_insert_with_its_trailing_comma_is_invalid_json(staged):
    from harness import stage_messages

    fixed = (FIXTURES / "oms_default_json" / "01_insert.json").read_text()
    as_in_the_spec = fixed.replace('"col14":"1606233662.012345"\n', '"col14":"1606233662.012345",\n')
    assert as_in_the_spec != fixed
    (row,) = stage_messages("oms_default_json", [as_in_the_spec.encode()])
    assert (row["message_status"], row["error_code"]) == ("quarantined", "invalid_json")


@pytest.mark.spark
def test_spark_dbt_unit_and_data_tests_pass(staged):
    from harness import run_dbt

    selectors = [f"stg_{d}__changes" for d in DIALECTS]
    run_dbt("test", "--select", *selectors)
