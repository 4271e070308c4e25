"""The Python message decoders never raise on a damaged message: every message of a generated
workload, damaged at random (seeded), stages as decoded or quarantined rows, as the bad-input
corpus' hand-written cases do (docs/bad-input.md). An exception would fail the staging model and
so the whole build. Debezium JSON: members of the parsed document (schema, payload, key) replaced
by values of another JSON type, or removed; DTS Avro: bytes overwritten and values cut short."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from cdc_unify.message_decoders import debezium_json as dbz
from cdc_unify.message_decoders import dts_avro

DAMAGED_MESSAGES = 3000
OTHER_VALUES = (None, True, 1.5, -7, 10**40, "x", "", [], {}, ["c", {"b": None}], "2020-13-45 99:99:99")


@pytest.fixture(scope="module")
def workload():
    return build_workload(WorkloadOptions(events=200), seed=20261206)


def _damaged(doc: Any, rng: random.Random) -> Any:
    """`doc` with one member somewhere in it replaced by a value of another type, or removed."""
    node, path = doc, []
    while isinstance(node, dict | list) and node and (not path or rng.random() < 0.8):
        step = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(step)
        node = node[step]
    if not path:
        return copy.deepcopy(rng.choice(OTHER_VALUES))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if rng.random() < 0.8:
        parent[path[-1]] = copy.deepcopy(rng.choice(OTHER_VALUES))
    else:
        del parent[path[-1]]
    return doc


def test_debezium_decoder_stages_every_damaged_message(workload) -> None:
    rng = random.Random(1)
    messages = [m for m in encoder_for("debezium_json").encode(workload, random.Random(7)) if m.value]
    statuses: dict[str, int] = {}
    for _ in range(DAMAGED_MESSAGES):
        message = rng.choice(messages)
        doc = json.loads(message.value)
        for _ in range(rng.randrange(1, 4)):
            doc = _damaged(doc, rng)
        key = message.key
        if key and rng.random() < 0.3:
            key = json.dumps(_damaged(json.loads(key), rng)).encode()
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
