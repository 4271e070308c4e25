"""One staging run over a dialect's whole test stream, and the checks every dialect's staged rows
pass: the spec examples, an encoded workload, three of every malformation kind the dialect's
encoder makes, then what a test adds (a tombstone by default), landed at offsets 0..n-1 in that
order and staged by the dialect's model. The dialects' test files (test_<dialect>.py) build it
once per module and keep their own test names and dialect-specific checks."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from cdc_unify.contract import STAGED_COLUMNS
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE, EncodedMessage
from spec_fixtures import utc


def stage_stream(
    dialect: str,
    fixtures: Sequence[tuple[bytes, list[dict]]],
    messages: Sequence[EncodedMessage],
    after: Sequence[bytes | None] = (None,),
) -> dict[str, Any]:
    """The staged rows of the stream (`fixtures`: each spec example's value and expected rows;
    `after`: the values landed after the malformed ones), with where each part landed:
    `by_offset` (offset -> its rows), `expected` (offset -> expected rows, for the examples and
    the workload), `malformed` ((kind, value), from offset `first_malformed`), `n_values`."""
    from harness import stage_messages

    encoder = encoder_for(dialect)
    rng = random.Random(11)
    row_messages = [m for m in messages if m.is_row_message]
    kinds = [k for k in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds for _ in range(3)]
    malformed = [(kind, encoder.malform(rng.choice(row_messages), kind, rng)) for kind in kinds]
    values = [v for v, _ in fixtures] + [m.value for m in messages] + [v for _, v in malformed] + list(after)
    rows = stage_messages(dialect, values)
    by_offset: dict[int, list[dict]] = {}
    for row in rows:
        by_offset.setdefault(row["landing_offset"], []).append(row)
    expected = [(i, exp) for i, (_, exp) in enumerate(fixtures)]
    expected += [(len(fixtures) + i, list(m.expected)) for i, m in enumerate(messages)]
    return {
        "malformed": malformed,
        "rows": rows,
        "by_offset": by_offset,
        "n_values": len(values),
        "values": values,
        "expected": expected,
        "n_fixtures": len(fixtures),
        "first_malformed": len(fixtures) + len(messages),
    }


def assert_every_value_staged_in_contract_shape(staged: dict[str, Any]) -> None:
    """Every landed value is staged: its expected rows, one row for anything else."""
    rows = staged["rows"]
    assert sorted(staged["by_offset"]) == list(range(staged["n_values"]))
    assert list(rows[0]) == [name for name, _ in STAGED_COLUMNS]
    others = staged["n_values"] - len(staged["expected"])
    assert len(rows) == sum(len(e) for _, e in staged["expected"]) + others


def assert_expected_rows(staged: dict[str, Any]) -> None:
    """Each spec example and workload message staged as its expected rows, in order."""
    for offset, expected in staged["expected"]:
        got = staged["by_offset"][offset]
        assert len(got) == len(expected), f"offset {offset}: {len(got)} rows, {len(expected)} expected"
        for row, want in zip(got, expected, strict=True):
            for column, value in want.items():
                assert utc(row[column]) == value, f"offset {offset} {want.get('op')}: {column} {row['error_detail']}"


def assert_malformed_quarantined(staged: dict[str, Any]) -> None:
    """Each malformed value is one quarantined row with its kind's error code, the value and a reason."""
    first = staged["first_malformed"]
    rows = [staged["by_offset"][first + i] for i in range(len(staged["malformed"]))]
    assert all(len(r) == 1 for r in rows)
    assert Counter(r[0]["error_code"] for r in rows) == Counter(MALFORMED_ERROR_CODE[k] for k, _ in staged["malformed"])
    for (_, value), (row,) in zip(staged["malformed"], rows, strict=True):
        assert row["message_status"] == "quarantined" and row["raw_value"] == value and row["error_detail"]


def assert_tombstone(staged: dict[str, Any], offset: int) -> None:
    (row,) = staged["by_offset"][offset]
    assert (row["message_status"], row["event_kind"], row["error_code"]) == ("tombstone", None, None)
