"""dts_avro: (a) the encoder writes the spec's Record, (b) the pure decoder reads values,
records and broken bytes as dts_avro.md says, (c, marked `spark`) the Python staging model
stages the spec examples, an encoded workload and every malformation kind, and the Python
twins of the staging macros equal the SQL macros byte for byte.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import re
import struct
from collections import Counter
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import fastavro
import pytest

from cdc_unify.canonical import IntervalYM
from cdc_unify.generator.encoders import dts_avro as dts_encoder
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE, EncodedMessage
from cdc_unify.generator.encoders.dts_avro import avro_value, encode_record, operation_offset
from cdc_unify.generator.model import Column, Position, SourceChange, TableSchema, Transaction, Workload
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from cdc_unify.message_decoders import _staged_rows as twins
from cdc_unify.message_decoders import dts_avro as d
from spec_fixtures import expected_pairs
from staged_stream import (
    assert_every_value_staged_in_contract_shape,
    assert_expected_rows,
    assert_malformed_quarantined,
    assert_tombstone,
    stage_stream,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC = Path("/work/shared/format-specs/dts_avro.md")
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "spec_examples" / "dts_avro"
DIALECT = "dts_avro"
UTC = dt.UTC
NS = "com.alibaba.dts.formats.avro."

# Copied from dts_avro.md section 1.1 (wire order) and the Operation enum.
SPEC_RECORD_FIELDS = [
    "version", "id", "sourceTimestamp", "sourcePosition", "safeSourcePosition", "sourceTxid", "source",
    "operation", "objectName", "processTimestamps", "tags", "fields", "beforeImages", "afterImages", "bornTimestamp",
]  # fmt: skip
SPEC_OPERATIONS = ["INSERT", "UPDATE", "DELETE", "DDL", "BEGIN", "COMMIT", "ROLLBACK", "ABORT", "HEARTBEAT",
                   "CHECKPOINT", "COMMAND", "FILL", "FINISH", "CONTROL", "RDB", "NOOP", "INIT"]  # fmt: skip
SPEC_VALUE_BRANCHES = {"Integer", "Character", "Decimal", "Float", "Timestamp", "DateTime", "TimestampWithTimeZone",
                       "BinaryGeometry", "TextGeometry", "BinaryObject", "TextObject", "EmptyObject"}  # fmt: skip


def read_raw(value: bytes, with_born: bool = True) -> dict[str, Any]:
    """The datum as fastavro reads it with the full public schema (bornTimestamp required)."""
    schema = fastavro.parse_schema(json.loads(d.SCHEMA_PATH.read_text()))[-1]
    if not with_born:
        schema = d.record_schema(False)
    return fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True)


def record(**fields: Any) -> dict[str, Any]:
    """A MySQL record in fastavro's Python form; fields override the defaults."""
    base = {
        "version": 0, "id": 7, "sourceTimestamp": 1606233662, "sourcePosition": "154@3",
        "safeSourcePosition": "100@3", "sourceTxid": "tx-1", "source": {"sourceType": "MySQL", "version": "8.0"},
        "operation": "INSERT", "objectName": "db.t", "processTimestamps": None,
        "tags": {"pk_uk_info": '{"PRIMARY":["id"]}'}, "fields": [{"name": "id", "dataTypeNumber": 8}],
        "beforeImages": None, "afterImages": [(NS + "Integer", {"precision": 8, "value": "1"})],
        "bornTimestamp": 1606233662,
    }  # fmt: skip
    base.update(fields)
    return base


def stage(value: bytes | None, offset: int = 0) -> dict[str, Any]:
    return d.stage_message("feed", "topic", 0, offset, value)


@pytest.fixture(scope="module")
def workload() -> Workload:
    return build_workload(WorkloadOptions(events=220), seed=5)


@pytest.fixture(scope="module")
def messages(workload) -> list[EncodedMessage]:
    return list(encoder_for(DIALECT).encode(workload, random.Random(2)))


# ---------------------------------------------------------------- (a) encoder vs the spec
def test_fast_record_writer_writes_what_fastavro_writes(workload, monkeypatch):
    """The encoder writes Avro bytes itself (write_record) for speed: for every record it builds,
    fastavro (encode_record) must write the very same bytes."""
    fast, pairs = dts_encoder.write_record, []

    def checked(datum: dict[str, Any], with_born_timestamp: bool = True) -> bytes:
        written = fast(datum, with_born_timestamp)
        fields = datum["fields"]  # a FieldList (a list carrying its bytes), which fastavro refuses
        plain = {**datum, "fields": list(fields) if isinstance(fields, list) else fields}
        pairs.append((written, encode_record(plain, with_born_timestamp)))
        return written

    monkeypatch.setattr(dts_encoder, "write_record", checked)
    list(encoder_for(DIALECT).encode(workload, random.Random(2)))
    assert len(pairs) > 100
    assert [i for i, (written, expected) in enumerate(pairs) if written != expected] == []


def test_shipped_schema_is_the_spec_schema_verbatim():
    spec_json = re.search(r"```json\n(\[.*?\])\n```", SPEC.read_text(encoding="utf-8"), re.S).group(1)
    assert d.SCHEMA_PATH.read_text(encoding="utf-8").strip() == spec_json
    assert [f["name"] for f in json.loads(spec_json)[-1]["fields"]] == SPEC_RECORD_FIELDS


def test_records_carry_the_spec_fields_operations_and_value_branches(messages):
    operations, branches, born = Counter(), Counter(), Counter()
    for m in messages:
        if m.expected[0]["op"] == "NOOP":
            continue  # fillers
        raw = read_raw(m.value) if _has_born(m.value) else read_raw(m.value, with_born=False)
        born[_has_born(m.value)] += 1
        assert list(raw)[: len(SPEC_RECORD_FIELDS) - 1] == SPEC_RECORD_FIELDS[:-1]
        assert m.value[0] == 0  # version 0, as in every public sample
        assert re.fullmatch(r"\d+@\d+", raw["sourcePosition"])
        assert raw["source"] == {"sourceType": "MySQL", "version": "8.0.28"}
        operations[raw["operation"]] += 1
        for image in (raw["beforeImages"], raw["afterImages"]):
            if isinstance(image, list):
                assert len(image) == len(raw["fields"])
                branches.update(item[0].removeprefix(NS) for item in image if item is not None)
        if raw["operation"] in ("INSERT", "UPDATE", "DELETE", "INIT"):
            assert "PRIMARY" in json.loads(raw["tags"]["pk_uk_info"]) or raw["tags"]["pk_uk_info"] == "{}"
            assert raw["objectName"].count(".") == 1
        if raw["operation"] == "DDL":
            assert isinstance(raw["afterImages"], str) and raw["fields"] is None and "." not in raw["objectName"]
    assert set(operations) <= set(SPEC_OPERATIONS)
    assert {"INSERT", "UPDATE", "DELETE", "DDL", "BEGIN", "COMMIT", "HEARTBEAT", "INIT"} <= set(operations)
    assert set(branches) <= SPEC_VALUE_BRANCHES
    assert {"Integer", "Character", "Decimal", "Float", "Timestamp", "DateTime", "TimestampWithTimeZone",
            "BinaryObject", "TextObject", "EmptyObject"} <= set(branches)  # fmt: skip
    assert born[True] > born[False] > 0, "most records end with bornTimestamp, some do not"


def _has_born(value: bytes) -> bool:
    stream = io.BytesIO(value)
    fastavro.schemaless_reader(stream, d.record_schema(False), None)
    return stream.tell() < len(value)


def test_fillers_are_48_bytes_and_keys_are_not_sent(messages):
    fillers = [m for m in messages if m.expected[0]["op"] == "NOOP"]
    assert fillers and all(len(m.value) == 48 for m in fillers)
    assert all(m.key is None for m in messages)


@pytest.mark.parametrize(
    ("column", "value", "item"),
    [
        (Column("c", "ubigint", "bigint(20) unsigned"), 18446744073709551615,
         ("Integer", {"precision": 8, "value": "18446744073709551615"})),
        (Column("c", "boolean", "tinyint(1)"), True, ("Integer", {"precision": 1, "value": "1"})),
        (Column("c", "decimal(38,10)", "decimal(38,10)"), d.c.parse_decimal_text("-1E-30"),
         ("Decimal", {"value": "-1E-30", "precision": 1, "scale": 30})),
        (Column("c", "binary", "binary(2)"), b"\x00\xff", ("Character", {"charset": "binary", "value": b"\x00\xff"})),
        (Column("c", "binary", "blob"), b"\x00\xff", ("BinaryObject", {"type": "BLOB", "value": b"\x00\xff"})),
        (Column("c", "json", "json"), '{"a": 1}', ("TextObject", {"type": "JSON", "value": '{"a": 1}'})),
        (Column("c", "timestamp", "timestamp(6)"), dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=UTC),
         ("Timestamp", {"timestamp": 1606233662, "millis": 12345})),
        (Column("c", "time", "time(6)"), -dt.timedelta(hours=838, minutes=59, seconds=59),
         ("DateTime", {"year": None, "month": None, "day": None, "hour": -838, "minute": -59, "second": -59,
                       "millis": 0})),
        (Column("c", "zoned_datetime", "timestamp(6) with time zone"),
         dt.datetime(2020, 11, 25, 0, 1, 2, 12345, tzinfo=ZoneInfo("Asia/Shanghai")),
         ("TimestampWithTimeZone", {"value": {"year": 2020, "month": 11, "day": 25, "hour": 0, "minute": 1,
                                              "second": 2, "millis": 12345}, "timezone": "Asia/Shanghai"})),
        (Column("c", "interval_ym", "interval year(2) to month"), IntervalYM(-14),
         ("Character", {"charset": "utf8mb4", "value": b"-01-02"})),
        (Column("c", "interval_ds", "interval day(2) to second(6)"),
         dt.timedelta(days=3, hours=4, minutes=5, seconds=6, microseconds=500000),
         ("Character", {"charset": "utf8mb4", "value": b"+03 04:05:06.500000"})),
    ],
)  # fmt: skip
def test_values_are_sent_as_the_union_branch_dts_writes(column, value, item):
    assert avro_value(column, value, random.Random(1)) == (NS + item[0], item[1])


def test_ambiguous_zoned_wall_clock_is_sent_with_its_offset():
    # 2021-10-31 02:30 happened twice in Berlin; the second one (fold=1) is UTC+1.
    value = dt.datetime(2021, 10, 31, 2, 30, tzinfo=ZoneInfo("Europe/Berlin"), fold=1)
    name, datum = avro_value(Column("c", "zoned_datetime", "x"), value, random.Random(1))
    assert datum["timezone"] == "+01:00"
    canonical, _ = d.canonical_value((name, datum), 181, d.ValueContext())
    assert canonical == "2021-10-31T01:30:00Z[+0100]"


# ---------------------------------------------------------------- (b) decoder, by hand from the spec
@pytest.mark.parametrize(
    ("item", "type_number", "text", "logical"),
    [
        (None, 8, None, "bigint"),
        (("Integer", {"precision": 8, "value": "10223372036854775806"}), 8, "10223372036854775806", "bigint"),
        (("Integer", {"precision": 0, "value": "-7"}), 1, "-7", "tinyint"),
        (("Character", {"charset": "utf8mb4", "value": "héllo 😀".encode()}), 253, "héllo 😀", "string"),
        (("Character", {"charset": "gbk", "value": "中文".encode("gbk")}), 253, "中文", "string"),
        (("Character", {"charset": "latin1", "value": b"\x80\x81caf\xe9"}), 254, "€\x81café", "string"),
        (("Character", {"charset": "ucs2", "value": b"\x4e\x2d"}), 254, "中", "string"),
        (("Character", {"charset": "binary", "value": b"hello world"}), 254, "aGVsbG8gd29ybGQ=", "binary"),
        (("Decimal", {"value": "12.50", "precision": 4, "scale": 2}), 246, "12.5", "decimal"),
        (("Decimal", {"value": "1E+3", "precision": 1, "scale": -3}), 246, "1000", "decimal"),
        (("Decimal", {"value": "NaN", "precision": 0, "scale": 0}), 246, "NaN", "decimal"),
        (("Float", {"value": struct.unpack("<f", struct.pack("<f", 1.2222))[0], "precision": 8, "scale": 15}), 4,
         "1.2222", "float"),
        (("Float", {"value": 0.1, "precision": 8, "scale": 15}), 5, "0.1", "double"),
        (("Timestamp", {"timestamp": 1606233662, "millis": 12345}), 7, "2020-11-24T16:01:02.012345Z", "timestamp"),
        (("DateTime", {"year": 2020, "month": 11, "day": 25, "hour": None, "minute": None, "second": None,
                       "millis": None}), 10, "2020-11-25", "date"),
        (("DateTime", {"year": None, "month": None, "day": None, "hour": 0, "minute": 1, "second": 2,
                       "millis": 500}), 11, "00:01:02.0005", "time"),
        (("DateTime", {"year": None, "month": None, "day": None, "hour": -838, "minute": -59, "second": -59,
                       "millis": 0}), 11, "-838:59:59", "time"),
        (("DateTime", {"year": 2020, "month": 11, "day": 25, "hour": 0, "minute": 1, "second": 2,
                       "millis": 12345}), 12, "2020-11-25 00:01:02.012345", "datetime"),
        (("DateTime", {"year": 2024, "month": None, "day": None, "hour": None, "minute": None, "second": None,
                       "millis": None}), 13, "2024", "smallint"),
        (("TimestampWithTimeZone", {"value": {"year": 2020, "month": 11, "day": 25, "hour": 0, "minute": 1,
                                              "second": 2, "millis": 12345}, "timezone": "Asia/Shanghai"}), 181,
         "2020-11-24T16:01:02.012345Z[Asia/Shanghai]", "zoned_datetime"),
        (("TimestampWithTimeZone", {"value": {"year": 2020, "month": 11, "day": 25, "hour": 0, "minute": 1,
                                              "second": 2, "millis": 0}, "timezone": "+08:00"}), 181,
         "2020-11-24T16:01:02Z[+0800]", "zoned_datetime"),
        (("BinaryGeometry", {"type": "WKB", "value": b"\x01\x01"}), 255, "AQE=", "binary"),
        (("TextGeometry", {"type": "WKT", "value": "POINT(1 2)"}), 255, "POINT(1 2)", "string"),
        (("BinaryObject", {"type": "BLOB", "value": b"hello world"}), 252, "aGVsbG8gd29ybGQ=", "binary"),
        (("BinaryObject", {"type": "JSON", "value": b'{"a":1}'}), 245, '{"a":1}', "json"),
        (("TextObject", {"type": "JSON", "value": '{"a": 1}'}), 245, '{"a": 1}', "json"),
        (("TextObject", {"type": "ENUM", "value": "red"}), 247, "red", "string"),
        (("TextObject", {"type": "bool", "value": "t"}), 16, "true", "boolean"),
        (("EmptyObject", "NULL"), 3, None, "int"),
        (("Character", {"charset": "utf8mb4", "value": b"+01-02"}), 182, "P1Y2M", "interval_ym"),
        (("Character", {"charset": "utf8mb4", "value": b"-03 04:05:06.500000"}), 183, "-P3DT4H5M6.5S", "interval_ds"),
    ],
)  # fmt: skip
def test_value_branches_read_as_the_spec_describes(item, type_number, text, logical):
    full_item = None if item is None else (NS + item[0], item[1])
    assert d.canonical_value(full_item, type_number, d.ValueContext()) == (text, logical)


def test_datetime_fraction_is_nanoseconds_outside_mysql_and_postgresql():
    item = (NS + "DateTime", {"year": 2020, "month": 1, "day": 2, "hour": 3, "minute": 4, "second": 5,
                              "millis": 123456789})  # fmt: skip
    oracle = d.ValueContext.of("Oracle", "123")
    assert d.canonical_value(item, 180, oracle) == ("2020-01-02 03:04:05.123456789", "datetime")
    with pytest.raises(d.c.CanonicalError):
        d.canonical_value(item, 12, d.ValueContext.of("MySQL", "1@2"))  # 123456789 µs is no fraction


@pytest.mark.parametrize(
    "item",
    [
        ("Integer", {"precision": 8, "value": "12x"}),
        ("Integer", {"precision": 8, "value": "1e3456789"}),
        ("Character", {"charset": "utf8mb4", "value": b"\xff\xfe"}),
        ("Character", {"charset": "no-such-charset", "value": b"a"}),
        ("Decimal", {"value": "1.2.3", "precision": 0, "scale": 0}),
        ("Timestamp", {"timestamp": 1, "millis": 1_000_000}),
        ("DateTime", {"year": 2020, "month": 13, "day": 1, "hour": None, "minute": None, "second": None,
                      "millis": None}),
        ("DateTime", {"year": None, "month": 1, "day": None, "hour": None, "minute": None, "second": None,
                      "millis": None}),
        ("TimestampWithTimeZone", {"value": {"year": 2020, "month": 1, "day": 1, "hour": 0, "minute": 0,
                                             "second": 0, "millis": 0}, "timezone": "Mars/Olympus"}),
    ],
)  # fmt: skip
def test_unreadable_values_are_canonical_errors(item):
    with pytest.raises(d.c.CanonicalError):
        d.canonical_value((NS + item[0], item[1]), 8, d.ValueContext())


def test_none_placeholder_leaves_the_column_out_and_marks_the_image_partial():
    fields = [("id", 8), ("name", 253), ("note", 253)]
    items = [(NS + "Integer", {"precision": 8, "value": "3"}), (NS + "EmptyObject", "NONE"), None]
    values, types, partial = d.canonical_image(fields, items, d.ValueContext())
    assert values == {"id": "3", "note": None}
    assert types == {"id": "bigint", "name": "string", "note": "string"}
    assert partial is True


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("mydb", ["mydb"]),
        ("mydb.t1", ["mydb", "t1"]),
        ("db.public.orders", ["db", "public", "orders"]),
        ("my\\u002Edb.t\\u002E1", ["my.db", "t.1"]),
    ],
)
def test_object_names_split_on_dots_and_unescape(name, parts):
    assert d.split_object_name(name) == parts


@pytest.mark.parametrize(
    ("statement", "parsed"),
    [
        ("create table t1(a bigint primary key, b varchar(100))", ("CREATE", None, "t1")),
        ("CREATE TABLE IF NOT EXISTS `shop`.`a``b` (id int)", ("CREATE", "shop", "a`b")),
        ("/* dts */ ALTER TABLE `shop`.`customers` ADD COLUMN x int", ("ALTER", "shop", "customers")),
        ("TRUNCATE TABLE `shop`.`order_items`", ("TRUNCATE", "shop", "order_items")),
        ("drop table if exists t", ("DROP", None, "t")),
        ("rename table a to b", ("RENAME", None, "a")),
        ("create unique index ix on db.t (a)", ("CREATE_INDEX", "db", "t")),
        ("drop index ix on t", ("DROP_INDEX", None, "t")),
        ("grant select on *.* to u", ("QUERY", None, None)),
    ],
)
def test_ddl_statements_give_op_and_table(statement, parsed):
    assert d.parse_ddl(statement) == parsed


def test_position_number_reads_offset_at_file_index_else_the_id():
    assert d.position_number("72469@78", 5) == 78 * 2**32 + 72469
    assert d.position_number("0/16B3748<->0/16B3790", 5) == 5
    assert d.position_number("x", -1) is None
    # A position cdc_sequence cannot sort (beyond 38 digits) has no number, and no digits crash int().
    assert d.position_number("9" * 5000 + "@78", 5) is None
    assert d.position_number("72469@" + "9" * 30, 5) is None
    assert d.position_number("\u0663@78", 5) == 5


def test_born_timestamp_is_optional_and_trailing_bytes_are_not():
    with_born = encode_record(record())
    without = encode_record(record(), with_born_timestamp=False)
    assert len(with_born) > len(without)
    assert d.decode_record(with_born)["bornTimestamp"] == 1606233662
    assert "bornTimestamp" not in d.decode_record(without)
    assert stage(with_born)["after"] == stage(without)["after"] == {"id": "1"}
    assert stage(with_born[:-1] + b"\x80\x01" * 30)["error_code"] == "invalid_avro"  # bytes after bornTimestamp
    assert stage(with_born[:-1] + b"\x80" * 30)["error_code"] == "invalid_avro"  # unfinished varint


def test_a_cut_datum_is_quarantined_with_the_same_detail_in_every_process():
    # the image ends in a double, which fastavro reports as "cannot read double from <stream repr>"
    image = [(NS + "Float", {"value": 0.1, "precision": 8, "scale": 15})]
    value = encode_record(record(afterImages=image, fields=[{"name": "x", "dataTypeNumber": 5}]))
    cut_details = {stage(value[:end])["error_detail"] for end in range(len(value) - 1, 40, -1)}
    reader_details = [d for d in cut_details if d and d.startswith("not a DTS Record datum: EOFError")]
    assert reader_details, cut_details
    # fastavro names the stream by its repr; an address would differ between the build and a rebuild
    assert not [detail for detail in reader_details if " at 0x" in detail], reader_details
    assert [detail for detail in reader_details if detail.endswith("cannot read double from the value")]


def test_operation_ordinals_outside_the_enum_are_unknown_ops():
    value = encode_record(record())
    op_at = operation_offset(value)
    assert value[op_at] == 0  # INSERT = ordinal 0
    for ordinal_byte in (2 * 17, 2 * 40, 1):  # 17, 40 and -1 (fastavro would wrap -1 to INIT)
        row = stage(value[:op_at] + bytes([ordinal_byte]) + value[op_at + 1 :])
        assert (row["message_status"], row["error_code"]) == ("quarantined", "unknown_op")


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"objectName": None}, "missing_field"),
        ({"objectName": "onlydb"}, "wrong_shape"),
        ({"fields": None}, "missing_field"),
        ({"fields": "id"}, "wrong_shape"),
        ({"afterImages": None}, "missing_field"),
        ({"afterImages": "text"}, "wrong_shape"),
        ({"afterImages": []}, "wrong_shape"),
        ({"operation": "UPDATE"}, "missing_field"),
        ({"tags": {"pk_uk_info": '{"PRIMARY":["id"'}}, "invalid_json"),
        ({"tags": {"pk_uk_info": '["id"]'}}, "wrong_shape"),
        ({"operation": "DDL", "afterImages": None}, "missing_field"),
        ({"afterImages": [(NS + "Integer", {"precision": 8, "value": "x"})]}, "invalid_value"),
        ({"sourceTimestamp": 2**62}, "invalid_timestamp"),
    ],
)
def test_broken_records_are_quarantined_with_their_code(fields, code):
    value = encode_record(record(**fields))
    row = stage(value)
    assert (row["message_status"], row["error_code"], row["raw_value"]) == ("quarantined", code, value)
    assert row["error_detail"] and row["event_kind"] is None


def test_invalid_utf8_in_an_avro_string_is_invalid_utf8():
    value = encode_record(record(sourceTxid="abc")).replace(b"\x06abc", b"\x06a\xffc")
    assert stage(value)["error_code"] == "invalid_utf8"


def test_short_values_that_are_no_record_are_fillers_longer_ones_are_quarantined():
    filler = stage(bytes(48))
    assert (filler["message_status"], filler["event_kind"], filler["op"]) == ("decoded", "OTHER", "NOOP")
    assert (filler["primary_key_columns"], filler["primary_key_source"]) == ([], "none")
    assert stage(bytes(49))["error_code"] == "invalid_avro"
    tombstone = stage(None, offset=9)
    assert (tombstone["message_status"], tombstone["event_kind"], tombstone["error_code"]) == ("tombstone", None, None)


def test_identical_fillers_are_distinct_events_named_by_their_offset():
    """A filler has no content of its own (every 48 zero bytes are alike): it exists to move one
    offset forward, so its identity is that offset, as a tombstone's is; identical bytes are no
    evidence of a redelivery."""
    first, second, again = stage(bytes(48), offset=4), stage(bytes(48), offset=5), stage(bytes(48), offset=4)
    assert first["event_id"] != second["event_id"]
    assert first["event_id"] == again["event_id"]  # the same landing row staged twice
    assert first["event_id"] == twins.cdc_event_id("feed", DIALECT, "filler:topic:0:4", 0)
    noop = encode_record(record(operation="NOOP", objectName=None, fields=None, afterImages=None))
    assert stage(noop, offset=4)["event_id"] == stage(noop, offset=5)["event_id"]  # a NOOP record has an id


def test_records_map_operations_to_staged_events():
    update = record(
        operation="UPDATE",
        beforeImages=[(NS + "Integer", {"precision": 8, "value": "1"})],
        afterImages=[(NS + "Integer", {"precision": 8, "value": "2"})],
    )
    row = stage(encode_record(update))
    assert (row["event_kind"], row["op"], row["primary_key"]) == ("ROW", "UPDATE", '["2"]')
    assert (row["before"], row["after"]) == ({"id": "1"}, {"id": "2"})
    init = stage(encode_record(record(operation="INIT")))
    assert (init["event_kind"], init["op"]) == ("ROW", "SNAPSHOT")
    for operation, kind in (("BEGIN", "TRANSACTION"), ("COMMIT", "TRANSACTION"), ("ROLLBACK", "TRANSACTION"),
                            ("HEARTBEAT", "HEARTBEAT"), ("CHECKPOINT", "OTHER"), ("NOOP", "OTHER")):  # fmt: skip
        row = stage(encode_record(record(operation=operation, objectName=None, fields=None, afterImages=None)))
        assert (row["event_kind"], row["op"], row["before"], row["after"]) == (kind, operation, None, None)
    no_key = stage(encode_record(record(tags={})))
    assert (no_key["primary_key_columns"], no_key["primary_key_source"], no_key["primary_key"]) == ([], "none", None)


def test_redelivered_message_keeps_its_event_id():
    value = encode_record(record())
    assert stage(value, offset=3)["event_id"] == stage(value, offset=90)["event_id"]
    assert stage(value)["event_id"] != stage(encode_record(record(id=8)))["event_id"]


# ---------------------------------------------------------------- (b) the whole stream without Spark
def test_encoded_stream_decodes_to_the_oracle_without_spark(messages):
    checked = Counter()
    for offset, m in enumerate(messages):
        row = stage(m.value, offset)
        (want,) = m.expected
        assert {k: row[k] for k in want} == want, row["error_detail"]
        checked[want["event_kind"]] += 1
    assert checked["ROW"] > 150 and checked["DDL"] >= 5 and checked["HEARTBEAT"] and checked["TRANSACTION"]


def test_partial_images_are_in_the_stream(messages):
    partial = [e for m in messages for e in m.expected if e.get("before_is_partial") or e.get("after_is_partial")]
    assert partial and all(set(e["before"]) == set(e["primary_key_columns"]) for e in partial)


def test_every_malformation_kind_is_quarantined_with_its_code(messages):
    encoder = encoder_for(DIALECT)
    rng = random.Random(3)
    row_messages = [m for m in messages if m.is_row_message]
    for kind in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds:
        for m in rng.sample(row_messages, 25):
            value = encoder.malform(m, kind, rng)
            assert value != m.value and len(value) > 48
            assert stage(value)["error_code"] == MALFORMED_ERROR_CODE[kind], kind


def test_handmade_edge_rows_round_trip():
    schema = TableSchema("d.b", "t.x", (Column("k", "int", "int(11)", nullable=False),
                                        Column("t", "time", "time(6)"),
                                        Column("z", "zoned_datetime", "timestamp with time zone")), ("k",))  # fmt: skip
    after = {"k": 1, "t": dt.time(23, 59, 59, 999999),
             "z": dt.datetime(2021, 10, 31, 2, 30, tzinfo=ZoneInfo("Europe/Berlin"), fold=1)}  # fmt: skip
    ts = dt.datetime(2024, 1, 1, 0, 0, 1, 500, tzinfo=UTC)
    tx = Transaction(1, "gtid:1", ts, (SourceChange("INSERT", schema, None, after, Position(1, 4)),))
    workload = Workload({("d.b", "t.x"): schema}, [tx], [])
    messages = list(encoder_for(DIALECT).encode(workload, random.Random(1)))
    row_message = next(m for m in messages if m.is_row_message)
    assert read_raw(row_message.value, with_born=_has_born(row_message.value))["objectName"] == "d\\u002Eb.t\\u002Ex"
    row = stage(row_message.value)
    assert (row["database_name"], row["table_name"]) == ("d.b", "t.x")
    assert row["after"] == {"k": "1", "t": "23:59:59.999999", "z": "2021-10-31T01:30:00Z[+0100]"}
    assert row["event_ts"] == dt.datetime(2024, 1, 1, 0, 0, 1, tzinfo=UTC)


# ---------------------------------------------------------------- spec examples
def avro_json_to_datum(value: Any, schema_type: Any = None) -> Any:
    """Avro's JSON encoding -> fastavro's Python form: a named union branch becomes
    (name, datum); `bytes` of Character/BinaryGeometry/BinaryObject become bytes."""
    if isinstance(value, list):
        return [avro_json_to_datum(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        [(branch, inner)] = value.items()
        if branch.startswith(NS):
            datum = dict(inner) if isinstance(inner, dict) else inner
            if branch.removeprefix(NS) in ("Character", "BinaryGeometry", "BinaryObject"):
                datum["value"] = datum["value"].encode("latin-1")
            return branch, datum
        if branch in ("string", "array", "long", "int"):
            return avro_json_to_datum(inner)
    return {k: avro_json_to_datum(v) for k, v in value.items()}


def fixture_value(path: Path) -> bytes:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if "value_hex" in doc:
        return bytes.fromhex(doc["value_hex"])
    datum = avro_json_to_datum(doc)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, d.record_schema(True), datum)
    return out.getvalue()


def test_spec_examples_decode_as_written_by_hand_without_spark():
    pairs = expected_pairs(FIXTURES)
    assert len(pairs) == 3
    for path, expected in pairs:
        row = stage(fixture_value(path))
        (want,) = expected
        assert {k: row[k] for k in want} == want, path.name


def test_spec_heartbeat_bytes_are_what_fastavro_writes_for_it():
    heartbeat = record(id=1, sourceTimestamp=2, sourcePosition="1@2", safeSourcePosition="", sourceTxid="",
                       source={"sourceType": "MySQL", "version": "8.0"}, operation="HEARTBEAT", objectName=None,
                       tags={}, fields=None, afterImages=None, bornTimestamp=0)  # fmt: skip
    assert encode_record(heartbeat) == fixture_value(FIXTURES / "03_heartbeat.json")


# ---------------------------------------------------------------- (c) Spark


@pytest.fixture(scope="module")
def staged(messages) -> dict[str, Any]:
    """One dbt run over: the spec examples (their expected rows without the sequence), the encoded
    workload, every malformation kind, a tombstone."""
    fixtures = [
        (fixture_value(p), [{k: v for k, v in e.items() if k != "sequence"} for e in exp])
        for p, exp in expected_pairs(FIXTURES)
    ]
    return stage_stream(DIALECT, fixtures, messages)


@pytest.mark.spark
def test_spark_every_landing_row_is_staged_once_in_contract_shape(staged):
    assert_every_value_staged_in_contract_shape(staged)


@pytest.mark.spark
def test_spark_spec_examples_and_encoded_stream_decode_as_expected(staged):
    assert_expected_rows(staged)


@pytest.mark.spark
def test_spark_rows_equal_the_pure_decoder(staged):
    compared = ("event_id", "message_status", "op", "primary_key", "before", "after", "sequence", "error_code")
    for row in staged["rows"]:
        value = staged["values"][row["landing_offset"]]
        pure = d.stage_message(row["source_name"], row["landing_topic"], 0, row["landing_offset"], value)
        assert {k: row[k] for k in compared} == {k: pure[k] for k in compared}


@pytest.mark.spark
def test_spark_malformed_messages_are_quarantined_with_their_code(staged):
    assert_malformed_quarantined(staged)


@pytest.mark.spark
def test_spark_null_value_is_a_tombstone(staged):
    assert_tombstone(staged, staged["n_values"] - 1)


@pytest.mark.spark
def test_spark_dbt_data_tests_pass(staged):
    from harness import run_dbt

    run_dbt("test", "--select", "stg_dts_avro__changes")


# ---------------------------------------------------------------- (c) Python twins == SQL macros
@pytest.mark.spark
def test_spark_generated_stream_with_delivery_faults_matches_the_oracle(tmp_path):
    from generated_oracle import check_generated_stream

    check_generated_stream(DIALECT, tmp_path)
