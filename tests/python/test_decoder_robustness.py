"""The Python message decoders never raise on a damaged message: every message of a generated
workload, damaged at random (seeded), stages as decoded or quarantined rows, as the bad-input
corpus' hand-written cases do (docs/bad-input.md). An exception would fail the staging model and
so the whole build. Debezium JSON: members of the parsed document (schema, payload, key) replaced
by values of another JSON type, or removed; DTS Avro: bytes overwritten and values cut short."""

from __future__ import annotations

import json
import random

import pytest

from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from cdc_unify.message_decoders import debezium_json as dbz
from cdc_unify.message_decoders import dts_avro
from damage import damaged

DAMAGED_MESSAGES = 3000


@pytest.fixture(scope="module")
def workload():
    return build_workload(WorkloadOptions(events=200), seed=20261206)


def test_debezium_decoder_stages_every_damaged_message(workload) -> None:
    rng = random.Random(1)
    messages = [m for m in encoder_for("debezium_json").encode(workload, random.Random(7)) if m.value]
    statuses: dict[str, int] = {}
    for _ in range(DAMAGED_MESSAGES):
        message = rng.choice(messages)
        doc = json.loads(message.value)
        for _ in range(rng.randrange(1, 4)):
            doc = damaged(doc, rng)
        key = message.key
        if key and rng.random() < 0.3:
            key = json.dumps(damaged(json.loads(key), rng)).encode()
        value = json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode()
        for row in dbz.decode_message(value, key, dbz.Landing("feed", "topic", 0, 1, None, None)):
            statuses[row["message_status"]] = statuses.get(row["message_status"], 0) + 1
    assert set(statuses) == {"decoded", "quarantined"}, statuses


def test_dts_avro_decoder_stages_every_damaged_message(workload) -> None:
    rng = random.Random(2)
    messages = [m for m in encoder_for("dts_avro").encode(workload, random.Random(2)) if m.value]
    statuses: dict[str, int] = {}
    for _ in range(DAMAGED_MESSAGES):
        value = bytearray(rng.choice(messages).value)
        for _ in range(rng.randrange(1, 4)):
            value[rng.randrange(len(value))] = rng.randrange(256)
        if rng.random() < 0.2:
            value = value[: rng.randrange(len(value))]
        row = dts_avro.stage_message("feed", "topic", 0, 1, bytes(value))
        statuses[row["message_status"]] = statuses.get(row["message_status"], 0) + 1
    assert set(statuses) == {"decoded", "quarantined"}, statuses
