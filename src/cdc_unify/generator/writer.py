"""Byte-stable output files: landing Parquet (Kafka record shape) and sorted-key JSON lines."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from cdc_unify.canonical import fmt_datetime
from cdc_unify.generator.faults import Record, iso_instant
from cdc_unify.generator.jsontext import sorted_dumps

LANDING_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
    ]
)
ROW_GROUP_ROWS = 100_000
# Fixed writer options: the same records always give the same bytes.
_PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "version": "2.6",
    "data_page_version": "1.0",
    "use_dictionary": ["topic"],
    "write_statistics": True,
}


def write_landing(path: Path, topic: str, records: list[Record]) -> int:
    """One landing Parquet file, rows in landing order; returns the row count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(path, LANDING_SCHEMA, **_PARQUET_OPTIONS) as writer:
        for start in range(0, max(len(records), 1), ROW_GROUP_ROWS):
            chunk = records[start : start + ROW_GROUP_ROWS]
            columns = [
                pa.array([topic] * len(chunk), pa.string()),
                pa.array([r[0] for r in chunk], pa.int32()),
                pa.array([r[1] for r in chunk], pa.int64()),
                pa.array([r[2] for r in chunk], pa.timestamp("us", tz="UTC")),
                pa.array([r[3] for r in chunk], pa.binary()),
                pa.array([r[4] for r in chunk], pa.binary()),
            ]
            writer.write_table(pa.Table.from_arrays(columns, schema=LANDING_SCHEMA))
    return len(records)


def json_default(value: Any) -> Any:
    """JSON of the times expected rows hold (event_ts, emitted_ts): canonical text.  Anything
    else that is not JSON is an encoder bug (values must be canonical text) and fails."""
    if isinstance(value, dt.datetime):
        return iso_instant(value) if value.tzinfo is not None else fmt_datetime(value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r:.80} as JSON")


dumps = sorted_dumps(json_default)


class JsonLines:
    """A JSON-lines file written one object at a time (sorted keys, `\\n` endings)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed by __exit__
        self.count = 0

    def write(self, obj: dict[str, Any]) -> None:
        self._fh.write(dumps(obj) + "\n")
        self.count += 1

    def __enter__(self) -> JsonLines:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._fh.close()


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True, default=json_default) + "\n", encoding="utf-8"
    )
