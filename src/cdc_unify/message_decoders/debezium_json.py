"""Debezium JSON (Kafka Connect JsonConverter), with or without the `schema`/`payload` wrapper.

The whole message decoder lives here as pure functions, so it is testable without Spark:
`decode_message(value, key, landing)` turns one Kafka record into staged rows
(docs/staged-contract.md), quarantine rows included; `decode_arrow_batches` is the thin
wrapper the Python staging model runs through `DataFrame.mapInArrow`.

Message kinds (docs/dialects/debezium_json.md has the full mapping):
- change events: `payload.op` c/u/d/r/t, plus CloudCanal's `i` (insert) and `a` (alter);
- schema change events: `databaseName` / `ddl` / `tableChanges` (a list in Debezium, a single
  object in CloudCanal's flavour) -> one DDL row per table change;
- transaction metadata `{"status": "BEGIN"|"END", "id": ...}` and heartbeats `{"ts_ms": ...}`;
- a null value is a tombstone.
With a `schema`, values are decoded through their Connect type and semantic name
(io.debezium.time.*, org.apache.kafka.connect.data.Decimal, ...); without one, they are
kept as sent.  The key (JSON, with or without schema) gives the primary-key columns.
`event_id`, `sequence` and `primary_key` are computed exactly as the SQL macros in
macros/staging.sql compute them (their twins in message_decoders/_staged_rows.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from json.encoder import encode_basestring
from typing import Any

import pyarrow as pa

from cdc_unify.canonical import (
    CanonicalError,
    check_decimal_size,
    fmt_binary,
    fmt_bool,
    fmt_date,
    fmt_datetime,
    fmt_decimal,
    fmt_double,
    fmt_float32,
    fmt_integer,
    fmt_time,
    parse_base64,
    parse_decimal_text,
    parse_float_text,
    parse_integer_text,
)
from cdc_unify.canonicalizers._mysql_types import jdbc_logical_type, mysql_logical_type
from cdc_unify.canonicalizers._value_text import (
    Interval,
    ds_text,
    instant_text,
    interval_ds_from_nanos,
    parse_interval,
    ym_text,
)
from cdc_unify.contract import NO_FEED, NO_FEED_DETAIL, STAGED_COLUMNS
from cdc_unify.message_decoders._ddl import statement_op
from cdc_unify.message_decoders._staged_rows import (
    STAGED_ARROW_SCHEMA,
    binlog_position,
    cdc_event_id,
    cdc_primary_key,
    cdc_sequence,
    landing_natural_id,
    position_of_digits,
    sha256_hex,
)
from cdc_unify.message_decoders._strict_json import loads_strict

DIALECT = "debezium_json"
EPOCH_DATE = dt.date(1970, 1, 1)
EPOCH = dt.datetime(1970, 1, 1)
UTC = dt.timezone.utc
# Debezium's column.propagate.source.type schema parameter.
SOURCE_COLUMN_TYPE = "__debezium.source.column.type"
# Envelope fields set when the connector emits the event, not when the source changed.
EMISSION_FIELDS = ("ts_ms", "ts_us", "ts_ns")

ROW_OPS = {"c": "INSERT", "i": "INSERT", "u": "UPDATE", "d": "DELETE", "r": "SNAPSHOT"}


class Quarantine(Exception):
    """The message cannot be staged: one quarantine row with `code` (contract.ERROR_CODES)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class Landing:
    """The landing row's coordinates, copied into every staged row."""

    feed: str | None
    topic: str | None
    partition: int | None
    offset: int | None
    timestamp: dt.datetime | None
    landed_at: dt.datetime | None


# ---------------------------------------------------------------- JSON with exact numbers
class JsonNumber(str):
    """A JSON number, kept as the exact text it was sent as (no float round trip)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_text(text: str) -> Any:
    """Strict JSON (no NaN/Infinity tokens, no repeated key, no nesting too deep to parse);
    numbers become JsonNumber."""
    return loads_strict(text, parse_int=JsonNumber, parse_float=JsonNumber, parse_constant=_reject_constant)


# JsonConverter with schemas enabled sends the same `schema` text with every event of a table: about
# 2 KB of the bench workload's 2.5 KB messages and three quarters of their parse. Each distinct
# schema text of a compact envelope is parsed once per worker and its parsed object shared (nothing
# here changes a parsed document); SCHEMA_TEXTS_KEPT bounds them.
ENVELOPE_HEAD = '{"schema":'
ENVELOPE_PAYLOAD = ',"payload":'
SCHEMA_TEXTS_KEPT = 256
_parsed_schemas: dict[str, dict[str, Any]] = {}


def parse_envelope_text(text: str) -> Any:
    """parse_json_text(text), the same document or the same error, with the `schema` of a compact
    envelope (`{"schema":...,"payload":...}`) taken from the schema texts parsed before."""
    if not text.startswith(ENVELOPE_HEAD):
        return parse_json_text(text)
    for end in _payload_ends(text):
        schema = _parsed_schemas.get(text[len(ENVELOPE_HEAD) : end])
        if schema is None:
            continue
        # The text from ENVELOPE_HEAD to `end` is a whole JSON value (it parsed alone), so a parse of
        # the message reads exactly that value there and then the members after it.
        try:
            rest = parse_json_text("{" + text[end + 1 :])
        except ValueError:
            rest = None
        if isinstance(rest, dict) and "schema" not in rest:
            return {"schema": schema, **rest}
        break
    doc = parse_json_text(text)
    if isinstance(doc, dict) and isinstance(doc.get("schema"), dict):
        schema_text = json_text(doc["schema"])
        end = len(ENVELOPE_HEAD) + len(schema_text)
        if text.startswith(ENVELOPE_PAYLOAD, end) and text[len(ENVELOPE_HEAD) : end] == schema_text:
            if len(_parsed_schemas) >= SCHEMA_TEXTS_KEPT:
                _parsed_schemas.clear()
            _parsed_schemas[schema_text] = doc["schema"]
    return doc


def _payload_ends(text: str, most: int = 4) -> Iterator[int]:
    """Where the schema of a compact envelope may end: the first `most` places ENVELOPE_PAYLOAD
    stands in `text` (a schema may hold that text itself, in a parameter or a doc string)."""
    end = text.find(ENVELOPE_PAYLOAD, len(ENVELOPE_HEAD))
    for _ in range(most):
        if end < 0:
            return
        yield end
        end = text.find(ENVELOPE_PAYLOAD, end + 1)


_JSON_LITERALS = {None: "null", True: "true", False: "false"}


def json_text(value: Any, sort_keys: bool = False) -> str:
    """Compact JSON text of a parsed value, numbers exactly as sent. Strings go through
    `encode_basestring`, which is what `json.dumps(text, ensure_ascii=False)` calls after building
    an encoder: that build was a third of the decoder's time (every message's content is rendered
    for its natural id)."""
    if isinstance(value, JsonNumber):
        return str(value)
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None or isinstance(value, bool):
        return _JSON_LITERALS[value]
    if isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else value.items()
        return "{" + ",".join(f"{encode_basestring(k)}:{json_text(v, sort_keys)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(json_text(v, sort_keys) for v in value) + "]"
    raise TypeError(f"not a parsed JSON value: {type(value).__name__}")


def as_sent_text(value: Any) -> str | None:
    """A value without a declared type: JSON strings unquoted, numbers as their digits, nested JSON as text."""
    if value is None:
        return None
    if isinstance(value, bool):
        return fmt_bool(value)
    if isinstance(value, str):
        return str(value)
    return json_text(value)


# ---------------------------------------------------------------- Connect schema -> canonical text
_TIME_UNITS = {
    "io.debezium.time.Time": 1_000_000,  # int32 milliseconds, in nanoseconds per unit
    "io.debezium.time.MicroTime": 1_000,
    "io.debezium.time.NanoTime": 1,
}
_TIMESTAMP_UNITS = {
    "io.debezium.time.Timestamp": 1_000_000,
    "io.debezium.time.MicroTimestamp": 1_000,
    "io.debezium.time.NanoTimestamp": 1,
}
_DURATION_UNITS = {"io.debezium.time.MicroDuration": 1_000, "io.debezium.time.NanoDuration": 1}
_INTEGER_TYPES = {"int8": "tinyint", "int16": "smallint", "int32": "int", "int64": "bigint"}
_STRING_NAMES = {
    "io.debezium.data.Enum",
    "io.debezium.data.EnumSet",
    "io.debezium.data.Uuid",
    "io.debezium.data.Xml",
    "io.debezium.time.ZonedTime",
    "io.debezium.data.Ltree",
}
_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"


def _need_number(value: Any, what: str) -> str:
    if not isinstance(value, JsonNumber):
        raise CanonicalError(f"{what} expects a JSON number, got {as_sent_text(value)!r}")
    return str(value)


def _need_string(value: Any, what: str) -> str:
    if not isinstance(value, str) or isinstance(value, JsonNumber):
        raise CanonicalError(f"{what} expects a JSON string, got {as_sent_text(value)!r}")
    return value


def _integer(value: Any, what: str) -> int:
    return parse_integer_text(_need_number(value, what))


def decode_connect_decimal(value: Any, scale: int) -> Decimal:
    """Connect Decimal: base64 big-endian two's-complement unscaled value (or a JSON number
    when the converter's decimal.format is NUMERIC)."""
    if isinstance(value, JsonNumber):
        return parse_decimal_text(value)
    unscaled = int.from_bytes(parse_base64(_need_string(value, "Decimal")), "big", signed=True)
    # Built from text (Decimal arithmetic would round to 28 digits), once its size is known to be sane.
    return check_decimal_size(Decimal(f"{fmt_integer(unscaled)}E{-scale}"))


def _schema_param(schema: dict[str, Any], name: str) -> str | None:
    params = schema.get("parameters")
    value = params.get(name) if isinstance(params, dict) else None
    return None if value is None else str(value)


def _decimal_type(schema: dict[str, Any]) -> tuple[str, int]:
    scale_text = _schema_param(schema, "scale")
    if scale_text is None or not scale_text.lstrip("-").isdigit():
        raise CanonicalError("Decimal schema has no integer `scale` parameter")
    precision = _schema_param(schema, "connect.decimal.precision")
    scale = int(scale_text)
    logical = f"decimal({precision},{scale})" if precision and precision.isdigit() and scale >= 0 else "decimal"
    if scale == 0 and "UNSIGNED" in (_schema_param(schema, SOURCE_COLUMN_TYPE) or "").upper():
        logical = "ubigint"  # bigint.unsigned.handling.mode=precise
    return logical, scale


def _interval_type(schema: dict[str, Any], interval: Interval) -> str:
    """Year-month or day-time: the propagated source column type says; else the value's parts do."""
    source_type = (_schema_param(schema, SOURCE_COLUMN_TYPE) or "").upper()
    if "YEAR" in source_type or "MONTH" in source_type:
        return "interval_ym"
    if "DAY" in source_type or "SECOND" in source_type:
        return "interval_ds"
    if interval.months and interval.nanos:
        return "string"  # a mixed interval (PostgreSQL) has no canonical interval type: kept as sent
    return "interval_ym" if interval.months else "interval_ds"


def schema_type_text(schema: dict[str, Any]) -> str:
    """column_source_types entry: the semantic name, else the Connect type."""
    return str(schema.get("name") or schema.get("type") or "")


def schema_logical_type(schema: dict[str, Any]) -> str:
    """The logical type a field schema declares (without looking at a value)."""
    name, typ = schema.get("name"), schema.get("type")
    if name == _DECIMAL:
        try:
            return _decimal_type(schema)[0]
        except CanonicalError:
            return "decimal"
    if name == _VARIABLE_DECIMAL:
        return "decimal"
    if name == "io.debezium.time.Date":
        return "date"
    if name in _TIME_UNITS:
        return "time"
    if name in _TIMESTAMP_UNITS:
        return "datetime"
    if name == "io.debezium.time.ZonedTimestamp":
        return "timestamp"
    if name == "io.debezium.time.Year":
        return "int"
    if name == "io.debezium.data.Json":
        return "json"
    if name == "io.debezium.data.Bits":
        return "binary"
    if name in _DURATION_UNITS:
        return "interval_ds"
    if name == "io.debezium.time.Interval":
        return _interval_type(schema, Interval(0, 0, None)) if _schema_param(schema, SOURCE_COLUMN_TYPE) else "string"
    if name in _STRING_NAMES:
        return "string"
    if typ in _INTEGER_TYPES:
        if typ == "int16" and (_schema_param(schema, SOURCE_COLUMN_TYPE) or "").upper().startswith("TINYINT"):
            return "tinyint"
        return _INTEGER_TYPES[typ]
    return {
        "float32": "float",
        "float64": "double",
        "boolean": "boolean",
        "string": "string",
        "bytes": "binary",
        "struct": "json",
        "array": "json",
        "map": "json",
    }.get(str(typ), "string")


def _float_value(value: Any, what: str) -> float:
    # Jackson writes NaN and the infinities as JSON strings.
    if isinstance(value, str) and not isinstance(value, JsonNumber) and value in ("NaN", "Infinity", "-Infinity"):
        return parse_float_text(value)
    return parse_float_text(_need_number(value, what))


def decode_connect_value(
    value: Any, schema: dict[str, Any], described: tuple[str, str] | None = None
) -> tuple[str | None, str]:
    """(canonical text, logical type) of one field value through its Connect field schema;
    `described` is the schema's (schema_type_text, schema_logical_type) where known."""
    what, logical = described or (schema_type_text(schema), schema_logical_type(schema))
    if value is None:
        return None, logical
    name, typ = schema.get("name"), schema.get("type")
    if name == _DECIMAL:
        logical, scale = _decimal_type(schema)
        return fmt_decimal(decode_connect_decimal(value, scale)), logical
    if name == _VARIABLE_DECIMAL:
        if not isinstance(value, dict) or "scale" not in value or "value" not in value:
            raise CanonicalError("VariableScaleDecimal expects {scale, value}")
        return fmt_decimal(decode_connect_decimal(value["value"], _integer(value["scale"], "scale"))), logical
    if name == "io.debezium.time.Date":
        try:
            return fmt_date(EPOCH_DATE + dt.timedelta(days=_integer(value, what))), logical
        except OverflowError:
            raise CanonicalError(f"{value} days is out of range") from None
    if name in _TIME_UNITS:
        total_ns = _integer(value, what) * _TIME_UNITS[name]
        sign = -1 if total_ns < 0 else 1
        micros, nanos = divmod(abs(total_ns), 1000)
        try:
            duration = sign * dt.timedelta(microseconds=micros)
        except OverflowError:
            raise CanonicalError(f"{value} is out of range for {name}") from None
        return fmt_time(duration, (micros % 1_000_000) * 1000 + nanos), logical
    if name in _TIMESTAMP_UNITS:
        total_ns = _integer(value, what) * _TIMESTAMP_UNITS[name]
        micros, nanos = divmod(total_ns, 1000)
        try:
            wall = EPOCH + dt.timedelta(microseconds=micros)
        except OverflowError:
            raise CanonicalError(f"{value} is out of range for {name}") from None
        return fmt_datetime(wall, wall.microsecond * 1000 + nanos), logical
    if name == "io.debezium.time.ZonedTimestamp":
        return instant_text(_need_string(value, what), "UTC"), logical
    if name in _DURATION_UNITS:
        total_ns = _integer(value, what) * _DURATION_UNITS[name]
        return interval_ds_from_nanos(total_ns), logical
    if name == "io.debezium.time.Interval":
        text = _need_string(value, what)
        interval = parse_interval(text)
        logical = _interval_type(schema, interval)
        if logical == "interval_ym":
            return ym_text(interval, text), logical
        if logical == "interval_ds":
            return ds_text(interval, text), logical
        return text, logical
    if logical == "json":
        return (_need_string(value, what) if typ == "string" else json_text(value)), logical
    if name in ("io.debezium.data.Bits",) or typ == "bytes":
        return fmt_binary(parse_base64(_need_string(value, what))), logical
    if typ in _INTEGER_TYPES:
        return fmt_integer(_integer(value, what)), logical
    if typ == "float32":
        return fmt_float32(_float_value(value, what)), logical
    if typ == "float64":
        return fmt_double(_float_value(value, what)), logical
    if typ == "boolean":
        if not isinstance(value, bool):
            raise CanonicalError(f"boolean expects true/false, got {as_sent_text(value)!r}")
        return fmt_bool(value), logical
    if typ == "string":
        return _need_string(value, what), logical
    return as_sent_text(value), logical


def field_schemas(struct_schema: Any) -> dict[str, dict[str, Any]]:
    """Field name -> field schema of a Connect struct schema (empty when there is none)."""
    if not isinstance(struct_schema, dict):
        return {}
    fields = struct_schema.get("fields")
    if not isinstance(fields, list):
        return {}
    return {str(f["field"]): f for f in fields if isinstance(f, dict) and "field" in f}


@dataclass(frozen=True)
class Image:
    values: dict[str, str | None]
    source_types: dict[str, str] | None
    types: dict[str, str]


# The fields of each image schema described once: a schema parsed once (parse_envelope_text) is
# the same object in every event of its table. Kept with the schema itself, so that its id names
# no other object while the entry lives; IMAGE_SCHEMAS_KEPT bounds them.
IMAGE_SCHEMAS_KEPT = 1024
_described_images: dict[int, tuple[dict[str, Any], dict[str, tuple[dict[str, Any], tuple[str, str]]]]] = {}


def described_fields(image_schema: dict[str, Any]) -> dict[str, tuple[dict[str, Any], tuple[str, str]]]:
    """Field name -> (field schema, (schema_type_text, schema_logical_type)) of a struct schema."""
    kept = _described_images.get(id(image_schema))
    if kept is not None and kept[0] is image_schema:
        return kept[1]
    fields = field_schemas(image_schema)
    for col, schema in fields.items():
        if not all(isinstance(schema.get(part), str | None) for part in ("name", "type")):
            raise Quarantine("wrong_shape", f"the schema of field {col!r} has a name or type that is not a string")
    described = {
        col: (schema, (schema_type_text(schema), schema_logical_type(schema))) for col, schema in fields.items()
    }
    if len(_described_images) >= IMAGE_SCHEMAS_KEPT:
        _described_images.clear()
    _described_images[id(image_schema)] = (image_schema, described)
    return described


def decode_image(image: dict[str, Any], image_schema: dict[str, Any] | None) -> Image:
    """One before/after struct -> canonical texts and types; as sent (type `string`) without a schema."""
    if image_schema is None:
        return Image({c: as_sent_text(v) for c, v in image.items()}, None, {c: "string" for c in image})
    fields = described_fields(image_schema)
    values: dict[str, str | None] = {}
    types: dict[str, str] = {}
    source_types: dict[str, str] = {}
    for col in [*fields, *(c for c in image if c not in fields)]:
        field = fields.get(col)
        if field is None:  # a value the schema does not describe: kept as sent
            values[col], types[col] = as_sent_text(image.get(col)), "string"
            continue
        schema, described = field
        try:
            source_types[col] = described[0]
            text, types[col] = decode_connect_value(image.get(col), schema, described)
            if col in image:
                values[col] = text
        except CanonicalError as exc:
            raise Quarantine("invalid_value", f"column {col!r} ({described[0]}): {exc}") from None
    return Image(values, source_types, types)


# ---------------------------------------------------------------- message fields
def _object(parent: dict[str, Any], field: str, where: str, required: bool = True) -> dict[str, Any] | None:
    value = parent.get(field)
    if value is None:
        if required:
            raise Quarantine("missing_field", f"{where}{field} is missing or null")
        return None
    if not isinstance(value, dict):
        raise Quarantine("wrong_shape", f"{where}{field} is not a JSON object")
    return value


def _text_field(parent: dict[str, Any], field: str, where: str, required: bool = True) -> str | None:
    value = parent.get(field)
    if value is None:
        if required:
            raise Quarantine("missing_field", f"{where}{field} is missing or null")
        return None
    if isinstance(value, dict | list):
        raise Quarantine("wrong_shape", f"{where}{field} is not a scalar")
    return as_sent_text(value)


_EPOCH_UNITS = (("ts_ns", "ns", 1), ("ts_us", "us", 1_000), ("ts_ms", "ms", 1_000_000))


def epoch_field(parent: dict[str, Any], where: str, required: bool = True) -> tuple[dt.datetime | None, str | None]:
    """The finest of ts_ns / ts_us / ts_ms -> (UTC timestamp truncated to microseconds, precision)."""
    for field, precision, ns_per_unit in _EPOCH_UNITS:
        raw = parent.get(field)
        if raw is None:
            continue
        if not isinstance(raw, JsonNumber) or not raw.lstrip("-").isdigit():
            raise Quarantine("invalid_timestamp", f"{where}{field} is not an integer epoch: {as_sent_text(raw)!r}")
        micros = int(raw) * ns_per_unit // 1000
        try:
            return dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=micros), precision
        except OverflowError:
            raise Quarantine("invalid_timestamp", f"{where}{field} is out of range: {raw}") from None
    if required:
        raise Quarantine("missing_field", f"{where}ts_ms is missing or null")
    return None, None


_BINLOG_INDEX_RE = re.compile(r"(\d+)$")


def source_position(source: dict[str, Any]) -> tuple[str | None, int | None]:
    """(position as sent, sortable number): MySQL `file:pos` (file index * 2^32 + pos),
    PostgreSQL `lsn`, Oracle `scn`, SQL Server `commit_lsn`."""
    file_name, pos = source.get("file"), source.get("pos")
    if isinstance(file_name, str) and isinstance(pos, JsonNumber) and pos.isdigit():
        m = _BINLOG_INDEX_RE.search(file_name)
        return f"{file_name}:{pos}", binlog_position(m.group(1), pos) if m else None
    for field in ("lsn", "scn", "commit_lsn"):
        raw = source.get(field)
        if raw is not None and not isinstance(raw, dict | list):
            text = as_sent_text(raw)
            return text, position_of_digits(text)
    return None, None


def ddl_op(statement: str | None, change_type: str | None, default: str) -> str:
    """DDL kind from the statement's leading keywords; without a statement, the tableChanges type."""
    if statement and statement.strip():
        return statement_op(statement)
    kind = (change_type or "").upper()
    return kind if kind in ("CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE") else default


def table_id_parts(table_id: str) -> list[str]:
    """`"db"."table"` (quotes doubled inside) or `db.table` -> identifier parts."""
    parts, current, quoted, i = [], [], False, 0
    while i < len(table_id):
        ch = table_id[i]
        if ch == '"':
            if quoted and table_id[i + 1 : i + 2] == '"':
                current.append('"')
                i += 1
            else:
                quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def ddl_column_type(column: dict[str, Any]) -> str | None:
    """A tableChanges column's type text: `typeExpression` when it carries arguments, else
    `typeName` + `(length[,scale])`, so `DECIMAL` + 12 + 2 reads as `DECIMAL(12,2)`."""
    expression = column.get("typeExpression") or column.get("typeName")
    if not isinstance(expression, str):
        return None
    if "(" in expression:
        return expression
    length, scale = column.get("length"), column.get("scale")
    if isinstance(length, JsonNumber):
        return f"{expression}({length}{f',{scale}' if isinstance(scale, JsonNumber) else ''})"
    return expression


# ---------------------------------------------------------------- message kinds
@dataclass
class Event:
    """The decoded fields of one staged row, before landing coordinates and ids are added."""

    event_kind: str
    op: str
    natural_id: str
    source_db_type: str | None = None
    database_name: str | None = None
    schema_name: str | None = None
    table_name: str | None = None
    primary_key_columns: list[str] | None = None
    primary_key_source: str = "none"
    before: Image | None = None
    after: Image | None = None
    column_source_types: dict[str, str] | None = None
    column_types: dict[str, str] | None = None
    event_ts: dt.datetime | None = None
    event_ts_precision: str | None = None
    emitted_ts: dt.datetime | None = None
    source_position: str | None = None
    position_number: int | None = None
    transaction_id: str | None = None
    ddl_statement: str | None = None


def natural_id_of(payload: dict[str, Any], drop_emission_fields: bool) -> str:
    """Hash of the payload without the fields the connector sets at emission: a re-sent event
    (after a connector restart) has the same identity."""
    content = {k: v for k, v in payload.items() if not (drop_emission_fields and k in EMISSION_FIELDS)}
    return sha256_hex(json_text(content, sort_keys=True).encode("utf-8"))


def decode_key(key: bytes | None) -> list[str]:
    """Primary-key columns in key order from the Kafka key (JSON with or without schema)."""
    if key is None:
        return []
    try:
        doc = parse_envelope_text(key.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Quarantine("wrong_shape", "the message key is not JSON text") from None
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise Quarantine("wrong_shape", "the message key is not a JSON object")
    if "schema" in doc and "payload" in doc:
        fields = list(field_schemas(doc["schema"]))
        if fields:
            return fields
        doc = doc["payload"]
        if doc is None:
            return []
        if not isinstance(doc, dict):
            raise Quarantine("wrong_shape", "the message key payload is not a JSON object")
    return list(doc)


def _source_block(payload: dict[str, Any], required_table: bool) -> dict[str, Any]:
    source = _object(payload, "source", "payload.")
    assert source is not None
    _text_field(source, "db", "source.")
    if required_table:
        _text_field(source, "table", "source.")
    return source


def _common(
    payload: dict[str, Any], source: dict[str, Any], event_kind: str, op: str, drop_emission_fields: bool = True
) -> Event:
    event_ts, precision = epoch_field(source, "source.")
    emitted_ts, _ = epoch_field(payload, "payload.", required=False)
    position, number = source_position(source)
    transaction = payload.get("transaction")
    tx_id = transaction.get("id") if isinstance(transaction, dict) else None
    if tx_id is None:
        tx_id = source.get("gtid")
    connector = _text_field(source, "connector", "source.", required=False)
    return Event(
        event_kind=event_kind,
        op=op,
        natural_id=natural_id_of(payload, drop_emission_fields),
        source_db_type=connector.lower() if connector else None,
        database_name=_text_field(source, "db", "source.", required=False),
        schema_name=_text_field(source, "schema", "source.", required=False),
        table_name=_text_field(source, "table", "source.", required=False),
        event_ts=event_ts,
        event_ts_precision=precision,
        emitted_ts=emitted_ts,
        source_position=position,
        position_number=number,
        transaction_id=None if tx_id is None or isinstance(tx_id, dict | list) else as_sent_text(tx_id),
    )


def _image(payload: dict[str, Any], field: str, required: bool) -> dict[str, Any] | None:
    image = _object(payload, field, "payload.", required=required)
    if required and not image:
        # CloudCanal sends `{}` for the image an operation does not have; a required one must not be empty.
        raise Quarantine("missing_field", f"payload.{field} is empty")
    return image or None


def decode_row_change(payload: dict[str, Any], value_schema: Any, key: bytes | None, op: str) -> list[Event]:
    source = _source_block(payload, required_table=True)
    if op == "t":
        event = _common(payload, source, "DDL", "TRUNCATE")
        event.primary_key_columns = []
        return [event]
    staged_op = ROW_OPS[op]
    after = _image(payload, "after", required=True) if staged_op != "DELETE" else None
    before = _image(payload, "before", required=staged_op == "DELETE") if staged_op in ("UPDATE", "DELETE") else None
    schemas = field_schemas(value_schema) if value_schema is not None else None
    event = _common(payload, source, "ROW", staged_op)
    event.before = decode_image(before, schemas.get("before") if schemas is not None else None) if before else None
    event.after = decode_image(after, schemas.get("after") if schemas is not None else None) if after else None
    images = [i for i in (event.before, event.after) if i is not None]  # after's types win
    event.column_types = {c: t for i in images for c, t in i.types.items()}
    source_types = [i.source_types for i in images if i.source_types is not None]
    event.column_source_types = {c: t for s in source_types for c, t in s.items()} if source_types else None
    event.primary_key_columns = decode_key(key)
    event.primary_key_source = "message" if event.primary_key_columns else "none"
    return [event]


def decode_schema_change(payload: dict[str, Any], op_code: str | None) -> list[Event]:
    source = _source_block(payload, required_table=False)
    statement = _text_field(payload, "ddl", "payload.", required=False)
    changes = payload.get("tableChanges")
    if isinstance(changes, dict):  # CloudCanal's flavour: one object, no `id`
        changes = [changes]
    if changes is None:
        changes = []
    if not isinstance(changes, list) or not all(isinstance(c, dict) for c in changes):
        raise Quarantine("wrong_shape", "payload.tableChanges is not a list of objects")
    default_op = "ALTER" if op_code == "a" else "QUERY"
    base = _common(payload, source, "DDL", ddl_op(statement, None, default_op))
    database = _text_field(payload, "databaseName", "payload.", required=False) or base.database_name
    schema_name = _text_field(payload, "schemaName", "payload.", required=False) or base.schema_name
    events = []
    for change in changes or [None]:
        event = dataclasses.replace(base)
        event.database_name, event.schema_name, event.ddl_statement = database, schema_name, statement
        event.primary_key_columns = []
        if change is not None:
            event.op = ddl_op(statement, _text_field(change, "type", "tableChanges[].", required=False), default_op)
            table_id = _text_field(change, "id", "tableChanges[].", required=False)
            if table_id:
                event.table_name = table_id_parts(table_id)[-1]
            _describe_table(event, _object(change, "table", "tableChanges[].", required=False))
        events.append(event)
    return events


def _describe_table(event: Event, table: dict[str, Any] | None) -> None:
    """The table's columns and key after the DDL, for the schema registry."""
    if table is None:
        return
    columns = table.get("columns") or []
    keys = table.get("primaryKeyColumnNames") or []
    if not isinstance(columns, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) for c in columns
    ):
        raise Quarantine("wrong_shape", "tableChanges[].table.columns is not a list of named columns")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise Quarantine("wrong_shape", "tableChanges[].table.primaryKeyColumnNames is not a list of names")
    ordered = sorted(enumerate(columns), key=lambda ic: (_position(ic[1], ic[0]), ic[0]))
    event.column_source_types = {}
    event.column_types = {}
    for _, column in ordered:
        type_text = ddl_column_type(column)
        event.column_source_types[column["name"]] = type_text or ""
        event.column_types[column["name"]] = mysql_logical_type(type_text) or _jdbc_logical(column.get("jdbcType"))
    event.primary_key_columns = list(dict.fromkeys(keys))
    event.primary_key_source = "ddl" if keys else "none"


def _position(column: dict[str, Any], default: int) -> int:
    pos = column.get("position")
    return int(pos) if isinstance(pos, JsonNumber) and pos.lstrip("-").isdigit() else default


def _jdbc_logical(code: Any) -> str:
    return jdbc_logical_type(int(code)) if isinstance(code, JsonNumber) and code.lstrip("-").isdigit() else "string"


def decode_transaction(payload: dict[str, Any]) -> list[Event]:
    status = _text_field(payload, "status", "payload.")
    if status not in ("BEGIN", "END"):
        raise Quarantine("unknown_op", f"transaction status {status!r} is not BEGIN or END")
    tx_id = _text_field(payload, "id", "payload.")
    event_ts, precision = epoch_field(payload, "payload.")
    return [
        Event(
            "TRANSACTION",
            status,
            natural_id_of(payload, False),
            event_ts=event_ts,
            event_ts_precision=precision,
            emitted_ts=event_ts,
            transaction_id=tx_id,
        )
    ]


def decode_heartbeat(payload: dict[str, Any]) -> list[Event]:
    event_ts, precision = epoch_field(payload, "payload.")
    return [
        Event(
            "HEARTBEAT",
            "HEARTBEAT",
            natural_id_of(payload, False),
            event_ts=event_ts,
            event_ts_precision=precision,
            emitted_ts=event_ts,
        )
    ]


def decode_document(doc: Any, key: bytes | None) -> list[Event]:
    """A parsed message value -> its events (Quarantine when it is not a Debezium message)."""
    if not isinstance(doc, dict):
        raise Quarantine("wrong_shape", f"the message is a JSON {type(doc).__name__}, not an object")
    value_schema = None
    if "schema" in doc and "payload" in doc:
        value_schema = doc["schema"]
        if value_schema is not None and not isinstance(value_schema, dict):
            raise Quarantine("wrong_shape", "schema is not a JSON object")
        doc = doc["payload"]
        if doc is None:
            raise Quarantine("missing_field", "payload is null")
        if not isinstance(doc, dict):
            raise Quarantine("wrong_shape", "payload is not a JSON object")
    op = doc.get("op")
    if op is not None:
        if not isinstance(op, str):  # an object or array names no operation
            raise Quarantine("unknown_op", f"op {as_sent_text(op)!r} is not a Debezium operation")
        if op in ROW_OPS or op == "t":
            return decode_row_change(doc, value_schema, key, op)
        if op == "a":
            return decode_schema_change(doc, op)
        raise Quarantine("unknown_op", f"op {as_sent_text(op)!r} is not a Debezium operation")
    if any(f in doc for f in ("ddl", "tableChanges", "databaseName")):
        return decode_schema_change(doc, None)
    if "status" in doc and "id" in doc:
        return decode_transaction(doc)
    if any(f in doc for f in ("before", "after", "source")):
        raise Quarantine("missing_field", "payload.op is missing or null")
    if doc and set(doc) <= set(EMISSION_FIELDS):
        return decode_heartbeat(doc)
    raise Quarantine("wrong_shape", "not a Debezium change event, schema change, transaction event or heartbeat")


# ---------------------------------------------------------------- staged rows
STAGED_NAMES = tuple(name for name, _ in STAGED_COLUMNS)


def _base_row(landing: Landing, row_index: int) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(STAGED_NAMES)
    row.update(
        source_name=landing.feed,
        dialect=DIALECT,
        landing_topic=landing.topic,
        landing_partition=landing.partition,
        landing_offset=landing.offset,
        landing_timestamp=landing.timestamp,
        landed_at=landing.landed_at,
        row_index=row_index,
    )
    return row


def quarantine_row(landing: Landing, value: bytes, code: str, detail: str) -> dict[str, Any]:
    row = _base_row(landing, 0)
    row.update(
        event_id=cdc_event_id(landing.feed, DIALECT, sha256_hex(value), 0),
        message_status="quarantined",
        sequence=cdc_sequence(None, None, landing.offset, 0),
        error_code=code,
        error_detail=detail,
        raw_value=value,
    )
    return row


def tombstone_row(landing: Landing) -> dict[str, Any]:
    row = _base_row(landing, 0)
    row.update(
        # a tombstone has no content, and two tombstones of one key are two records
        event_id=cdc_event_id(
            landing.feed, DIALECT, landing_natural_id("tombstone", landing.topic, landing.partition, landing.offset), 0
        ),
        message_status="tombstone",
        sequence=cdc_sequence(None, None, landing.offset, 0),
    )
    return row


def event_row(landing: Landing, row_index: int, event: Event) -> dict[str, Any]:
    before = event.before.values if event.before else None
    after = event.after.values if event.after else None
    is_row = event.event_kind == "ROW"
    row = _base_row(landing, row_index)
    row.update(
        event_id=cdc_event_id(landing.feed, DIALECT, event.natural_id, row_index),
        message_status="decoded",
        event_kind=event.event_kind,
        op=event.op,
        source_db_type=event.source_db_type,
        database_name=event.database_name,
        schema_name=event.schema_name,
        table_name=event.table_name,
        primary_key_columns=event.primary_key_columns if event.primary_key_columns is not None else [],
        primary_key_source=event.primary_key_source,
        primary_key=cdc_primary_key(event.primary_key_columns, before, after) if is_row else None,
        before=before,
        after=after,
        before_is_partial=False if is_row else None,
        after_is_partial=False if is_row else None,
        column_source_types=event.column_source_types,
        column_types=event.column_types,
        event_ts=event.event_ts,
        event_ts_precision=event.event_ts_precision,
        emitted_ts=event.emitted_ts,
        source_position=event.source_position,
        transaction_id=event.transaction_id,
        sequence=cdc_sequence(event.position_number, event.event_ts, landing.offset, row_index),
        ddl_statement=event.ddl_statement,
    )
    return row


def decode_message(value: bytes | None, key: bytes | None, landing: Landing) -> list[dict[str, Any]]:
    """One Kafka record -> its staged rows: events, one tombstone row, or one quarantine row."""
    if value is None:
        return [tombstone_row(landing)]
    if landing.feed == NO_FEED:
        return [quarantine_row(landing, value, "no_feed", NO_FEED_DETAIL)]
    try:
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Quarantine("invalid_utf8", f"the value is not UTF-8: {exc}") from None
        try:
            doc = parse_envelope_text(text)
        except ValueError as exc:
            raise Quarantine("invalid_json", f"the value is not JSON: {exc}") from None
        events = decode_document(doc, key)
    except Quarantine as q:
        return [quarantine_row(landing, value, q.code, q.detail)]
    except RecursionError:
        return [quarantine_row(landing, value, "wrong_shape", "the value nests JSON too deeply")]
    return [event_row(landing, i, event) for i, event in enumerate(events)]


# ---------------------------------------------------------------- Arrow wrapper
def decode_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Landing rows (dicts with the landing columns) -> staged rows."""
    rows: list[dict[str, Any]] = []
    for rec in records:
        # A row without a feed is staged under NO_FEED (macro cdc_staged_select).
        landing = Landing(
            rec["feed"] or NO_FEED, rec["topic"], rec["partition"], rec["offset"], rec["timestamp"], rec["landed_at"]
        )
        rows.extend(decode_message(rec["value"], rec["key"], landing))
    return rows


def decode_arrow_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow function: landing batches in, staged batches (STAGED_ARROW_SCHEMA) out."""
    for batch in batches:
        yield pa.RecordBatch.from_pylist(decode_records(batch.to_pylist()), schema=STAGED_ARROW_SCHEMA)
