"""What the DataWorks encoders share: dataworks_json (versions 0.0.1/1.0.0, spec 001) and
oms_dataworks_json (OceanBase OMS's DataWorks 2.0, spec 003).

Both are Java tools writing compact JSON (non-ASCII unescaped) with numbers as exact
digits; both name operations the same way and shape DDL, transaction and GTID events alike.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from abc import abstractmethod
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from cdc_unify.canonical import IntervalYM, to_canonical
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder, EventStream, stream_in_source_order
from cdc_unify.generator.jsontext import RawJson, dump_json, load_json
from cdc_unify.generator.model import Workload
from cdc_unify.generator.truth import key_text

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

# Workload DDL kind -> the DataWorks op name (spec 001 op list; ERASE is DROP, CINDEX/DINDEX indexes).
DDL_OP_NAMES = {
    "CREATE": "CREATE",
    "ALTER": "ALTER",
    "DROP": "ERASE",
    "QUERY": "QUERY",
    "TRUNCATE": "TRUNCATE",
    "RENAME": "RENAME",
    "CREATE_INDEX": "CINDEX",
    "DROP_INDEX": "DINDEX",
}


def epoch_ms(value: dt.datetime) -> int:
    return (value - EPOCH) // dt.timedelta(milliseconds=1)


def truncate_to_ms(value: dt.datetime) -> dt.datetime:
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def java_double_text(value: float, single: bool = False) -> str:
    """Java's Double/Float.toString: shortest digits, plain in [1e-3, 1e7), else `d.dddE±n`."""
    if math.isnan(value) or math.isinf(value):
        return to_canonical("double", value)
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits = Decimal(to_canonical("float" if single else "double", value))
    if 1e-3 <= abs(value) < 1e7:
        text = format(digits, "f")
        return text if "." in text else text + ".0"
    sign, mantissa_digits, exponent = digits.normalize().as_tuple()
    mantissa = "".join(map(str, mantissa_digits))
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E{len(mantissa) - 1 + exponent}"


def json_number(value: float, single: bool = False) -> Any:
    """A double as a JSON number (Java text), or the string `NaN`/`Infinity` JSON cannot hold."""
    text = java_double_text(value, single)
    return text if not math.isfinite(value) else RawJson(text)


def oracle_interval_text(value: IntervalYM | dt.timedelta) -> str:
    """Oracle's TO_CHAR of an interval: `+01-02` or `+03 04:05:06.500000`."""
    if isinstance(value, IntervalYM):
        sign = "-" if value.months < 0 else "+"
        years, months = divmod(abs(value.months), 12)
        return f"{sign}{years:02d}-{months:02d}"
    sign = "-" if value < dt.timedelta(0) else "+"
    secs, micros = divmod(abs(value) // dt.timedelta(microseconds=1), 1_000_000)
    days, rem = divmod(secs, 86400)
    return f"{sign}{days:02d} {rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}.{micros:06d}"


def time_text(value: dt.time) -> str:
    """MySQL's TIME text: `HH:MM:SS`, with six fraction digits when there is a fraction."""
    return f"{value:%H:%M:%S}" + (f".{value.microsecond:06d}" if value.microsecond else "")


def staged_key(pk: list[str], before: dict | None, after: dict | None) -> str | None:
    """The staged primary_key of expected images: each key column from the after image, else the before image."""
    if not pk:
        return None
    values = [(after or {}).get(c) for c in pk]
    return key_text(v if v is not None else (before or {}).get(c) for c, v in zip(pk, values, strict=True))


# ---------------------------------------------------------------- malformations of a JSON message
def invalid_json(value: bytes, rng: random.Random) -> bytes:
    """A proper prefix of a JSON object is never valid JSON."""
    return value[: rng.randint(1, len(value) - 1)]


def invalid_utf8(value: bytes, marker: bytes) -> bytes:
    """Bytes that are no UTF-8 right inside the first string after `marker` (e.g. `"op":"`)."""
    at = value.index(marker) + len(marker)
    return value[:at] + b"\xff\xfe" + value[at:]


class DataWorksFamilyEncoder(Encoder):
    """The workload as a DataWorks-family stream (heartbeats between transactions) and the
    family's malformations; a dialect names its fields and starts its own stream."""

    extra_malformed_kinds = ("wrong_shape",)
    image_field: str  # payload.before / payload.after: {image_field: {column: value}}
    schema_columns_field: str  # schema.<field>: [{"name", "type"}]
    untyped_types: tuple[str, ...]  # declared types any text is a value of
    unknown_ops: tuple[str, ...]  # op names the dialect does not define
    # A message with no typed value: its first column is declared this type, with a value it is not.
    retype_to: str

    @abstractmethod
    def stream(self, workload: Workload, rng: random.Random) -> EventStream:
        """The dialect's writer of this workload's messages."""

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        return stream_in_source_order(self.stream(workload, rng), workload)

    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        if kind == "invalid_json":
            return invalid_json(message.value, rng)
        if kind == "invalid_utf8":
            return invalid_utf8(message.value, b'"op":"')
        doc = load_json(message.value)
        payload = doc["payload"]
        if kind == "missing_field":
            del payload["op"]
        elif kind == "unknown_op":
            payload["op"] = rng.choice(self.unknown_ops)
        elif kind == "wrong_value_type":
            self._break_a_typed_value(doc)
        elif kind == "wrong_shape":
            image = "after" if payload["after"] is not None else "before"
            payload[image] = {self.image_field: [payload[image][self.image_field]]}
        else:
            raise ValueError(f"unknown malformation {kind!r}")
        return dump_json(doc).encode("utf-8")

    def _break_a_typed_value(self, doc: dict[str, Any]) -> None:
        """Text that cannot be read as its column's declared type."""
        declared = {c["name"]: c["type"] for c in doc["schema"][self.schema_columns_field]}
        for image in (doc["payload"]["after"], doc["payload"]["before"]):
            if image is None:
                continue
            for name, value in image[self.image_field].items():
                if declared.get(name) not in (None, *self.untyped_types) and value is not None:
                    image[self.image_field][name] = f"not a {declared[name]}"
                    return
        column = doc["schema"][self.schema_columns_field][0]
        column["type"] = self.retype_to
        for image in (doc["payload"]["after"], doc["payload"]["before"]):
            if image is not None:
                image[self.image_field][column["name"]] = f"not a {self.retype_to}"
