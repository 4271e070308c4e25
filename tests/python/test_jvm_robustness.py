"""The JVM message functions never fail on a damaged message: every message of a generated
workload of each SQL dialect, its JSON damaged at random (seeded: tests/python/damage.py), is staged
by its function as rows (decoded, or one with the reason it was refused). An exception in a
function fails its staging model's query and so the whole build; the functions refuse per value
instead (docs/bad-input.md, "Damaged messages at random"). A failing message is found by halving
the batch and named in the failure."""

from __future__ import annotations

import json
import random

import pytest

from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from damage import damaged

pytestmark = pytest.mark.spark

DAMAGED_MESSAGES = 400
# Each SQL dialect's message function as its staging model calls it (models/staging/, macros/).
CALLS = {
    "canal_json": "cdc_canal_rows('canal_json', value, 'Asia/Shanghai')",
    "oms_canal_json": "cdc_canal_rows('oms_canal_json', value, 'Asia/Shanghai')",
    "dataworks_json": "cdc_dataworks_rows('dataworks_json', value, 'Asia/Shanghai')",
    "oms_dataworks_json": "cdc_dataworks_rows('oms_dataworks_json', value, 'Asia/Shanghai')",
    "oms_default_json": "cdc_oms_default_rows('oms_default_json', value, 'Asia/Shanghai')",
    "oms_default_ext_json": "cdc_oms_default_rows('oms_default_ext_json', value, 'Asia/Shanghai')",
    "cloudcanal_json": "cdc_cloudcanal_rows(value, 'Asia/Shanghai')",
    "oms_shareplex_json": "cdc_shareplex_rows(value, 'Asia/Shanghai')",
    "ogg_json": "cdc_ogg_rows(value, 'Asia/Shanghai')",
    "maxwell_json": "cdc_maxwell_rows(value, key)",
    "ckafka_json": "cdc_ckafka_rows(value, 'Asia/Shanghai')",
}


@pytest.fixture(scope="module")
def workload():
    return build_workload(WorkloadOptions(events=150), seed=20261207)


def damaged_messages(workload, dialect: str) -> list[tuple[bytes | None, bytes]]:
    rng = random.Random(dialect)
    messages = [m for m in encoder_for(dialect).encode(workload, random.Random(3)) if m.value]
    out = []
    for _ in range(DAMAGED_MESSAGES):
        message = rng.choice(messages)
        doc = json.loads(message.value)
        for _ in range(rng.randrange(1, 4)):
            doc = damaged(doc, rng)
        out.append((message.key, json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode()))
    return out


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_message_function_stages_every_damaged_message(workload, dialect) -> None:
    from harness import spark_session

    spark = spark_session()

    def rows_per_message(batch: list[tuple[bytes | None, bytes]]) -> list[int]:
        frame = spark.createDataFrame(batch, "key binary, value binary")
        return [r[0] for r in frame.selectExpr(f"size({CALLS[dialect]})").collect()]

    def failing(batch: list[tuple[bytes | None, bytes]]) -> tuple[bytes, str] | None:
        try:
            rows_per_message(batch)
        except Exception as exc:  # the one message that fails, named in the assertion below
            if len(batch) == 1:
                return batch[0][1], str(exc).splitlines()[0][:300]
            half = len(batch) // 2
            return failing(batch[:half]) or failing(batch[half:]) or (batch[0][1], "only the whole batch fails")
        return None

    batch = damaged_messages(workload, dialect)
    found = failing(batch)
    assert found is None, f"{dialect}: {found[1]}\n{found[0][:2000]!r}"
    counts = rows_per_message(batch)
    assert all(count >= 1 for count in counts), f"{dialect}: a damaged message staged no row"
