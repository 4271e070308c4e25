"""The spec fixtures of a dialect (tests/fixtures/spec_examples/<dialect>/): each example message
`NN_<name>.json` with the staged rows it must give, `NN_<name>.expected.json`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any


def expected_pairs(folder: Path) -> list[tuple[Path, list[dict]]]:
    """(example, expected rows) in file order; event_ts / emitted_ts read as aware datetimes."""
    pairs = []
    for path in sorted(folder.glob("[0-9][0-9]_*.json")):
        if path.name.endswith(".expected.json"):
            continue
        expected = json.loads(path.with_name(path.name.replace(".json", ".expected.json")).read_text())
        for row in expected:
            for column in ("event_ts", "emitted_ts"):
                if row.get(column):
                    row[column] = dt.datetime.fromisoformat(row[column].replace("Z", "+00:00"))
        pairs.append((path, expected))
    return pairs


def utc(value: Any) -> Any:
    """A staged value as comparable with an expected one: PySpark returns naive datetimes in the
    process's local zone."""
    return value.astimezone(dt.UTC) if isinstance(value, dt.datetime) else value
