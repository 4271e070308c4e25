"""Check a staging model against the generator's oracle for one dialect (Spark; used by the
dts_avro, dataworks_json and oms_dataworks_json tests).

`check_generated_stream(dialect, out_dir)` generates a small workload with every delivery
fault (duplicates, tombstones, malformed messages, late batch), stages both batches through
dbt, and asserts: one staged row per landing message; every expected row of
`expected-events.jsonl` equal to its staged row; quarantine counts per error code equal to
the manifest's malformed counts; a redelivered message keeps its original's event_id.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

from cdc_unify.generator.run import generate

# Columns of expected-events.jsonl that describe delivery, not the staged row.
_DELIVERY_ONLY = {"batch", "late"}
_TIMESTAMPS = {"event_ts", "emitted_ts", "landing_timestamp"}


def _staged_value(column: str, value: Any) -> Any:
    if column in _TIMESTAMPS and isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC)  # PySpark returns naive local datetimes
    return value


def _expected_value(column: str, value: Any) -> Any:
    if column in _TIMESTAMPS and isinstance(value, str):
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def check_generated_stream(dialect: str, out_dir: Path, events: int = 300, seed: int = 3) -> None:
    from harness import stage_generated

    manifest = generate(events, seed, out_dir, dialects=[dialect])["per_dialect"][dialect]
    rows = stage_generated(dialect, out_dir)
    staged = {(r["landing_partition"], r["landing_offset"], r["row_index"]): r for r in rows}
    assert len(staged) == len(rows) == manifest["totals"]["messages"]

    for want in _jsonl(out_dir / dialect / "expected-events.jsonl"):
        row = staged[(want["landing_partition"], want["landing_offset"], want["row_index"])]
        for column, value in want.items():
            if column in _DELIVERY_ONLY:
                continue
            assert _staged_value(column, row[column]) == _expected_value(column, value), (
                f"{dialect} {want['landing_partition']}/{want['landing_offset']} {want.get('op')}: {column} "
                f"{row['error_detail']}"
            )

    quarantined = Counter(r["error_code"] for r in rows if r["message_status"] == "quarantined")
    assert quarantined == Counter(manifest["malformed_by_error_code"])
    faults = _jsonl(out_dir / dialect / "faults.jsonl")
    assert sum(r["message_status"] == "tombstone" for r in rows) == sum(f["fault"] == "tombstone" for f in faults)
    for fault in (f for f in faults if f["fault"] == "duplicate"):
        origin = fault["of"]
        again = staged[(fault["landing_partition"], fault["landing_offset"], 0)]
        first = staged[(origin["landing_partition"], origin["landing_offset"], 0)]
        assert again["event_id"] == first["event_id"] and again["message_status"] == first["message_status"]
