"""Oracle GoldenGate for Big Data JSON, operation modeled (docs/dialects/ogg_json.md).

The encoder is checked against the field names and op codes of Oracle's documentation and
against the workload it encodes; (marked `spark`) the staging model against Oracle's samples
(expected rows written by hand), an encoded workload, every malformation kind, a replayed
operation and the traps the dialect page lists.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_unify.contract import STAGED_COLUMNS
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE, EncodedMessage
from cdc_unify.generator.encoders.ogg_json import SOURCE_TIME_ZONE
from cdc_unify.generator.model import Workload
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from spec_fixtures import utc

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "spec_examples" / "ogg_json"
DIALECT = "ogg_json"
# Names from Oracle's JSON formatter documentation (operation modeled messages).
DOC_FIELDS = {"table", "op_type", "op_ts", "current_ts", "pos", "primary_keys", "tokens", "before", "after"}
DOC_OP_TYPES = {"I", "U", "D", "T"}
WALL_CLOCK = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\.\d{6}"

# Messages for the traps (docs/dialects/ogg_json.md), each with the staged columns it must give.
TRAPS: list[tuple[str, dict[str, Any] | str, dict[str, Any]]] = [
    (
        "full op names, catalog-qualified table, current_ts with a space, nanoseconds in op_ts",
        {"table": "CDB.SHOP.T", "op_type": "UPDATE", "op_ts": "2024-01-01 08:00:00.123456789",
         "current_ts": "2024-01-01 08:00:01.5", "pos": "00000000010000000042", "primary_keys": ["ID"],
         "before": {"ID": 1}, "after": {"ID": 2, "V": "x"}},
        {"op": "UPDATE", "database_name": "CDB", "schema_name": "SHOP", "table_name": "T", "primary_key": '["2"]',
         "before_is_partial": True, "after_is_partial": True, "event_ts_precision": "ns",
         "event_ts": dt.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=dt.UTC),
         "emitted_ts": dt.datetime(2024, 1, 1, 0, 0, 1, 500000, tzinfo=dt.UTC)},
    ),
    (
        "bare table name, update without a before image, flag of a missing after column",
        {"table": "T", "op_type": "U", "after": {"ID": 5, "V": None, "V_isMissing": True, "ID_isMissing": False}},
        {"op": "UPDATE", "database_name": None, "table_name": "T", "before": None, "after": {"ID": "5"},
         "before_is_partial": None, "after_is_partial": True, "primary_key_source": "none", "event_ts": None},
    ),
    (
        "truncate with both images null and primary_keys: no key",
        {"table": "S.T", "op_type": "TRUNCATE", "op_ts": "2024-01-01 08:00:00.000000", "primary_keys": ["ID"],
         "before": None, "after": None},
        {"event_kind": "DDL", "op": "TRUNCATE", "primary_key": None, "before": None, "after": None,
         "primary_key_columns": ["ID"]},
    ),
    (
        "an insert's before image is ignored; numbers keep their digits",
        '{"table":"S.T","op_type":"I","before":{"X":1},"after":{"ID":1.50,"F":1E-7,"B":true}}',
        {"op": "INSERT", "before": None, "after": {"ID": "1.50", "F": "1E-7", "B": "true"}, "after_is_partial": False},
    ),
]  # fmt: skip


@pytest.fixture(scope="module")
def workload() -> Workload:
    return build_workload(WorkloadOptions(events=160), seed=20240101)


@pytest.fixture(scope="module")
def messages(workload) -> list[EncodedMessage]:
    return list(encoder_for(DIALECT).encode(workload, random.Random(7)))


def as_sent(value: bytes) -> Any:
    """A message parsed the way the staging model reads it: every number as its exact text."""
    return json.loads(value, parse_float=str, parse_int=str)


# ---------------------------------------------------------------- (a) the encoder speaks the format
def test_encoder_uses_the_documented_fields_and_op_types(messages):
    docs = [as_sent(m.value) for m in messages]
    assert {d["op_type"] for d in docs} == DOC_OP_TYPES
    for doc in docs:
        assert set(doc) <= DOC_FIELDS
        assert re.fullmatch(WALL_CLOCK, doc["op_ts"]) and doc["op_ts"].endswith(".000000")
        assert re.fullmatch(WALL_CLOCK, doc["current_ts"]) and "T" in doc["current_ts"]
        images = {name for name in ("before", "after") if name in doc}
        assert images == {"I": {"after"}, "U": {"before", "after"}, "D": {"before"}, "T": set()}[doc["op_type"]]
    positions = [d["pos"] for d in docs]
    assert all(re.fullmatch(r"\d{20}", p) for p in positions)
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def test_updates_are_compressed_to_key_and_changed_columns(messages):
    updates = [d for d in map(as_sent, (m.value for m in messages)) if d["op_type"] == "U"]
    assert updates
    for doc in updates:
        before, after = doc["before"], doc["after"]
        assert set(doc["primary_keys"]) <= set(after) <= set(before)
        if doc["primary_keys"]:
            changed = {c for c in after if c not in doc["primary_keys"]}
            assert all(after[c] != before[c] for c in changed)


def test_key_changes_are_one_update_and_truncates_carry_no_images(workload, messages):
    key_changes = sum(
        1 for tx in workload.transactions for c in tx.changes
        if c.op == "UPDATE" and c.key_of(c.before) != c.key_of(c.after)
    )  # fmt: skip
    moved = [
        row for m in messages for row in m.expected
        if row["op"] == "UPDATE" and row["primary_key_columns"] and row["primary_key"] != json.dumps(
            [row["before"][c] for c in row["primary_key_columns"]], separators=(",", ":"))
    ]  # fmt: skip
    assert key_changes and len(moved) == key_changes
    truncates = [row for m in messages for row in m.expected if row["op"] == "TRUNCATE"]
    assert truncates and all(r["before"] is None and r["after"] is None for r in truncates)


def test_wall_clock_zone_is_the_dbt_default():
    project = yaml.safe_load((REPO_ROOT / "dbt_project.yml").read_text())
    assert project["vars"]["source_time_zone"] == SOURCE_TIME_ZONE


def test_every_malformation_kind_is_produced(messages):
    encoder = encoder_for(DIALECT)
    rng = random.Random(3)
    rows = [m for m in messages if m.is_row_message]
    for kind in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds:
        assert encoder.malform(rng.choice(rows), kind, rng) != rng.choice(rows).value


# ---------------------------------------------------------------- (b) the staging model, in Spark


def _fixtures() -> list[tuple[bytes, dict[str, Any]]]:
    pairs = []
    for path in sorted(FIXTURES.glob("[0-9][0-9]_*.json")):
        if path.name.endswith(".expected.json"):
            continue
        (expected,) = json.loads(path.with_name(path.name.replace(".json", ".expected.json")).read_text())
        for column in ("event_ts", "emitted_ts"):
            if expected.get(column):
                expected[column] = dt.datetime.fromisoformat(expected[column].replace("Z", "+00:00"))
        pairs.append((path.read_bytes(), expected))
    return pairs


def _replayed(message: EncodedMessage) -> bytes:
    """The same operation formatted again from the trail: only current_ts differs."""
    replayed, count = re.subn(rb'"current_ts":"[^"]*"', b'"current_ts":"2099-06-01T00:00:00.000000"', message.value)
    assert count == 1
    return replayed


def _truncate_as_printed() -> bytes:
    fixed = (FIXTURES / "04_truncate.json").read_text()
    printed = fixed.replace('"pos":"00000000000000005480"\n', '"pos":"00000000000000005480",\n')
    assert printed != fixed
    return printed.encode()


@pytest.fixture(scope="module")
def staged(messages) -> dict[str, Any]:
    """One dbt run over: Oracle's samples, an encoded workload, every malformation, replays, the
    traps, the truncate sample as printed, a tombstone."""
    from harness import stage_messages

    encoder = encoder_for(DIALECT)
    rng = random.Random(11)
    row_messages = [m for m in messages if m.is_row_message]
    kinds = [k for k in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds for _ in range(3)]
    parts: dict[str, list] = {
        "fixtures": _fixtures(),
        "messages": messages,
        "malformed": [(kind, encoder.malform(rng.choice(row_messages), kind, rng)) for kind in kinds],
        "replayed": messages[:: len(messages) // 5][:5],
        "traps": TRAPS,
        "printed_truncate": [_truncate_as_printed()],
        "tombstone": [None],
    }
    values = [
        *(v for v, _ in parts["fixtures"]),
        *(m.value for m in parts["messages"]),
        *(v for _, v in parts["malformed"]),
        *(_replayed(m) for m in parts["replayed"]),
        *((doc if isinstance(doc, str) else json.dumps(doc)).encode() for _, doc, _ in parts["traps"]),
        *parts["printed_truncate"],
        *parts["tombstone"],
    ]
    rows = iter(stage_messages(DIALECT, values))
    sliced = {name: [next(rows) for _ in part] for name, part in parts.items()}
    assert next(rows, None) is None
    return {"parts": parts, "rows": sliced, "count": len(values)}


def _assert_subset(row: dict, expected: dict, where: str) -> None:
    for column, value in expected.items():
        assert utc(row[column]) == value, f"{where}: {column}"


@pytest.mark.spark
def test_spark_every_landing_row_is_staged_once_in_contract_shape(staged):
    rows = [row for part in staged["rows"].values() for row in part]
    assert sorted(r["landing_offset"] for r in rows) == list(range(staged["count"]))
    assert list(rows[0]) == [name for name, _ in STAGED_COLUMNS]
    assert {r["dialect"] for r in rows} == {DIALECT}


@pytest.mark.spark
def test_spark_spec_examples_decode_as_written_by_hand(staged):
    for (_, expected), row in zip(staged["parts"]["fixtures"], staged["rows"]["fixtures"], strict=True):
        _assert_subset(row, expected, f"fixture offset {row['landing_offset']}")


@pytest.mark.spark
def test_spark_encoded_stream_decodes_to_the_encoder_oracle(staged):
    for message, row in zip(staged["parts"]["messages"], staged["rows"]["messages"], strict=True):
        assert row["message_status"] == "decoded", row["error_detail"]
        _assert_subset(row, message.expected[0], f"offset {row['landing_offset']}")


@pytest.mark.spark
def test_spark_malformed_messages_are_quarantined_with_their_code(staged):
    malformed, rows = staged["parts"]["malformed"], staged["rows"]["malformed"]
    assert Counter(r["error_code"] for r in rows) == Counter(MALFORMED_ERROR_CODE[k] for k, _ in malformed)
    for (_, value), row in zip(malformed, rows, strict=True):
        assert row["message_status"] == "quarantined" and row["error_detail"]
        assert row["raw_value"] == value and row["event_kind"] is None


@pytest.mark.spark
def test_spark_a_replayed_operation_keeps_its_event_id(staged):
    parts, rows = staged["parts"], staged["rows"]
    first = {m.value: row["event_id"] for m, row in zip(parts["messages"], rows["messages"], strict=True)}
    for message, row in zip(parts["replayed"], rows["replayed"], strict=True):
        assert row["message_status"] == "decoded" and row["emitted_ts"].year == 2099
        assert row["event_id"] == first[message.value]


@pytest.mark.spark
def test_spark_traps_decode_as_documented(staged):
    for (name, _, expected), row in zip(staged["parts"]["traps"], staged["rows"]["traps"], strict=True):
        assert row["message_status"] == "decoded", (name, row["error_detail"])
        _assert_subset(row, expected, name)


@pytest.mark.spark
def test_spark_truncate_sample_as_printed_is_invalid_json_and_null_is_a_tombstone(staged):
    (printed,) = staged["rows"]["printed_truncate"]
    assert (printed["message_status"], printed["error_code"]) == ("quarantined", "invalid_json")
    (tombstone,) = staged["rows"]["tombstone"]
    assert tombstone["message_status"] == "tombstone" and tombstone["event_kind"] is None


@pytest.mark.spark
def test_spark_dbt_unit_and_data_tests_pass(staged):
    from harness import run_dbt

    run_dbt("test", "--select", f"stg_{DIALECT}__changes")
