"""Maxwell's daemon JSON (docs/dialects/maxwell_json.md).

The encoder's value spellings are checked against Java's rules written out by hand; the staging
model (marked `spark`) against the examples of Maxwell's public docs (tests/fixtures/spec_examples/
maxwell_json, expected rows written by hand), the format's traps, and a generated stream with
every delivery fault (generated_oracle).
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_unify.contract import STAGED_COLUMNS
from cdc_unify.generator.encoders.maxwell_json import decimal_text, kafka_key
from cdc_unify.generator.model import TableSchema

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples" / "maxwell_json"


@pytest.mark.parametrize(
    ("value", "logical_type", "java"),
    [
        (Decimal("0"), "decimal(38,10)", "0E-10"),
        (Decimal("0.00000015"), "decimal(38,10)", "1.500E-7"),
        (Decimal("12.5"), "decimal(12,2)", "12.50"),
        (Decimal("-3"), "decimal(10,0)", "-3"),
    ],
)
def test_decimals_are_spelt_as_java_bigdecimal_tostring(value, logical_type, java) -> None:
    assert decimal_text(value, logical_type) == java


def test_kafka_keys_lower_case_the_key_names_in_both_forms() -> None:
    schema = TableSchema("shop", "T", (), ("order_id", "line_no"))
    data = {"order_id": 7, "line_no": 2}
    assert json.loads(kafka_key(schema, data, array_form=False)) == {
        "database": "shop",
        "table": "T",
        "pk.order_id": 7,
        "pk.line_no": 2,
    }
    assert json.loads(kafka_key(schema, data, array_form=True)) == ["shop", "T", [{"order_id": 7}, {"line_no": 2}]]


def _messages(path: Path) -> list[bytes]:
    if path.suffix == ".jsonl":
        return [line.encode("utf-8") for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [path.read_bytes()]


def _comparable(column: str, value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.UTC).isoformat().replace("+00:00", "Z")
    return value


def _assert_rows(got: list[dict], expected: list[dict], label: str) -> None:
    assert len(got) == len(expected), label
    for index, (row, want) in enumerate(zip(got, expected, strict=True)):
        for column, value in want.items():
            if column in dict(STAGED_COLUMNS):
                assert _comparable(column, row[column]) == value, f"{label} #{index}: {column} ({row['error_detail']})"


@pytest.mark.spark
def test_spec_examples_decode_to_their_expected_rows() -> None:
    from harness import stage_messages

    fixtures = sorted(p for p in FIXTURES.glob("[0-9][0-9]_*") if ".expected." not in p.name and p.suffix != ".md")
    assert len(fixtures) >= 9
    values = [m for path in fixtures for m in _messages(path)]
    rows = stage_messages("maxwell_json", values)
    at = 0
    for path in fixtures:
        expected = json.loads(path.with_name(path.name.split(".")[0] + ".expected.json").read_text(encoding="utf-8"))
        _assert_rows(rows[at : at + len(expected)], expected, path.name)
        at += len(expected)
    assert at == len(rows)


def _row(type_: str, data: str, fields: str = "") -> bytes:
    """A row message; `data` and `fields` as JSON text, so numbers keep their spelling."""
    return f'{{"database":"d","table":"t","type":"{type_}","ts":1700000000,{fields}"data":{data}}}'.encode()


@pytest.mark.spark
def test_traps_keys_positions_and_embedded_json() -> None:
    """Key names from a lower-casing Kafka key (hash and array form, key order kept), the value's
    primary_key_columns winning, a commit row sorting after its xoffset rows at one position,
    exact decimals, embedded JSON numbers as sent (not turned into strings or doubles), DDL ts in milliseconds."""
    from harness import stage_messages

    at = '"xid":9,"position":"bin.000002:40",'
    values = [
        _row("insert", '{"OrderId":1,"Line":2,"amount":0.10}', at + '"xoffset":0,'),
        _row("update", '{"OrderId":1,"Line":2,"amount":0E-10}', at + '"commit":true,"old":{"amount":12.50},'),
        _row(
            "insert",
            '{"id":5,"doc":{"b":[1,12.50,1E400,123456789012345678901234567890123456789012345],"a":null}}',
            '"primary_key_columns":["id"],',
        ),
        _row("delete", '{"id":5}'),
        b'{"type":"table-drop","database":"d","table":"t","ts":1700000000123,"sql":"drop table t"}',
    ]
    keys = [
        b'{"database":"d","table":"t","pk.line":2,"pk.orderid":1}',
        b'["d","t",[{"line":2},{"orderid":1}]]',
        b'{"database":"d","table":"t","_uuid":"x"}',
        b'{"database":"d","table":"t","_uuid":"6f1c"}',
        b"0b6f7a8e-uuid-of-a-ddl",
    ]
    insert, update, embedded, unkeyed, drop = stage_messages("maxwell_json", values, keys)
    assert insert["primary_key_columns"] == update["primary_key_columns"] == ["Line", "OrderId"]
    assert insert["primary_key"] == update["primary_key"] == '["2","1"]'
    assert insert["after"]["amount"] == "0.10"
    assert update["before"] == {"OrderId": "1", "Line": "2", "amount": "12.50"}
    assert update["after"]["amount"] == "0E-10"
    assert insert["sequence"] < update["sequence"]
    assert insert["source_position"] == "bin.000002:40" and update["transaction_id"] == "9"
    assert (embedded["primary_key_columns"], embedded["primary_key_source"]) == (["id"], "message")
    # keys sorted, every number's text as sent (a variant rounded the last to a double, 1E400 to "Infinity")
    assert embedded["after"]["doc"] == '{"a":null,"b":[1,12.50,1E400,123456789012345678901234567890123456789012345]}'
    assert (unkeyed["primary_key_columns"], unkeyed["primary_key"], unkeyed["op"]) == ([], None, "DELETE")
    assert (drop["event_kind"], drop["op"], drop["event_ts_precision"]) == ("DDL", "DROP", "ms")
    assert _comparable("event_ts", drop["event_ts"]) == "2023-11-14T22:13:20.123000Z"


@pytest.mark.spark
def test_generated_stream_decodes_to_its_expected_events(tmp_path) -> None:
    from generated_oracle import check_generated_stream

    check_generated_stream("maxwell_json", tmp_path)
