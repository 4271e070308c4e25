"""Alibaba Canal FlatMessage JSON (spec 004), with CloudCanal's `tableChanges` on some DDL (spec 000).

Shapes the encoder emits, a deterministic mix drawn from the rng:
- consecutive changes of one table and operation in a transaction share one FlatMessage
  (multi-row INSERT/UPDATE/DELETE: `data`/`old` are parallel lists), up to a few rows each;
- a Kafka value holds one FlatMessage object, a one-element JSON array, or a whole transaction
  as a JSON array of FlatMessages (what Canal's flatMessage batching produces);
- UPDATE `old` holds only the changed columns' previous values (an explicit null when the
  previous value was NULL); DELETE rows are in `data`; full-load snapshot rows are INSERTs
  (Canal has no snapshot type);
- `pkNames` sometimes repeats the key once per row, as in the spec's multi-row samples;
- `es` (commit time) and `ts` (emission time) are epoch milliseconds;
- DDL: `isDdl` true with `sql`; TRUNCATE is the TRUNCATE type; DROP is ERASE; half of the DDL
  messages carry CloudCanal's `tableChanges` (columns + primary key after the DDL);
- a GTID FlatMessage before some transactions, MHEARTBEAT for the workload's heartbeats.

Values are JSON strings in MySQL's text form, as Canal's LogEventConvert writes them: binary
columns are the bytes decoded as ISO-8859-1, TIMESTAMP is the wall clock in the source zone,
DATETIME/TIME/TIMESTAMP carry as many fraction digits as the column's fsp, floats use Java's
`Float.toString`/`Double.toString`.  MySQL has no zoned or interval types; for those columns
the most plausible Java rendering is used (ZonedDateTime.toString, ISO-8601 durations).
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from cdc_unify.canonical import base_type, fmt_date, fmt_interval_ds, fmt_interval_ym, fmt_time, to_canonical
from cdc_unify.generator.encoders.base import EncodedMessage, Encoder, PerSchema
from cdc_unify.generator.jsontext import dump_json, load_json, plain_dumps
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Transaction, Workload
from cdc_unify.generator.truth import key_text

# The dbt var `source_time_zone` default: the zone the source server writes wall clocks in.
SOURCE_TIME_ZONE = ZoneInfo("Asia/Shanghai")
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

# Workload DDL kind -> Canal EventType name (spec 004).
CANAL_DDL_TYPES = {
    "CREATE": "CREATE",
    "ALTER": "ALTER",
    "DROP": "ERASE",
    "RENAME": "RENAME",
    "CREATE_INDEX": "CINDEX",
    "DROP_INDEX": "DINDEX",
    "QUERY": "QUERY",
    "TRUNCATE": "TRUNCATE",
}
# java.sql.Types code Canal reports in `sqlType`, per logical type (`text` columns are CLOB).
_SQL_TYPES = {
    "boolean": -6,
    "tinyint": -6,
    "smallint": 5,
    "int": 4,
    "bigint": -5,
    "ubigint": -5,
    "decimal": 3,
    "float": 7,
    "double": 8,
    "string": 12,
    "json": 12,
    "binary": 2004,
    "date": 91,
    "time": 92,
    "datetime": 93,
    "timestamp": 93,
    "zoned_datetime": 2014,
    "interval_ym": 12,
    "interval_ds": 12,
}


# dump_json (fastjson style) for documents without RawJson (Canal's values are all strings), faster.
dump_plain_json = plain_dumps()


def epoch_ms(value: dt.datetime) -> int:
    return (value - EPOCH) // dt.timedelta(milliseconds=1)


def truncate_to_ms(value: dt.datetime) -> dt.datetime:
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


# ---------------------------------------------------------------- value texts
def java_float_text(value: float, single: bool = False) -> str:
    """Java's Float/Double.toString: shortest digits, plain in [1e-3, 1e7), else `d.dddE±n`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    shortest = to_canonical("float" if single else "double", value)
    digits = Decimal(shortest)
    if 1e-3 <= abs(value) < 1e7:
        text = format(digits, "f")
        return text if "." in text else text + ".0"
    sign, ds, exponent = digits.normalize().as_tuple()
    mantissa = "".join(map(str, ds))
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E{len(mantissa) - 1 + exponent}"


_FSP_RE = re.compile(r"\((\d)\)")


def fraction_digits(microsecond: int, mysql_type: str) -> str:
    """`.ffffff` cut to the column's fsp (MySQL pads to fsp); all six digits if fsp would lose some."""
    m = _FSP_RE.search(mysql_type)
    fsp = int(m.group(1)) if m else 0
    text = f"{microsecond:06d}"
    if text[fsp:].strip("0"):
        fsp = 6
    return f".{text[:fsp]}" if fsp else ""


def mysql_wall_text(value: dt.datetime, mysql_type: str) -> str:
    """`YYYY-MM-DD HH:MM:SS[.f]` of a naive wall clock, with the column's fraction digits."""
    return f"{fmt_date(value)} {value:%H:%M:%S}{fraction_digits(value.microsecond, mysql_type)}"


def mysql_time_text(value: dt.time | dt.timedelta, mysql_type: str) -> str:
    if isinstance(value, dt.timedelta):
        return fmt_time(value)  # signed duration of day: fraction digits as needed
    return f"{value:%H:%M:%S}{fraction_digits(value.microsecond, mysql_type)}"


def zoned_java_text(value: dt.datetime) -> str:
    """Java ZonedDateTime.toString: `2020-11-25T00:01:02.012345+08:00[Asia/Shanghai]`."""
    offset = value.utcoffset() or dt.timedelta(0)
    sign = "-" if offset < dt.timedelta(0) else "+"
    hours, rem = divmod(abs(offset), dt.timedelta(hours=1))
    offset_text = "Z" if not offset else f"{sign}{hours:02d}:{rem // dt.timedelta(minutes=1):02d}"
    frac = f".{value.microsecond:06d}".rstrip("0").rstrip(".")
    return f"{fmt_date(value)}T{value:%H:%M:%S}{frac}{offset_text}[{value.tzinfo.key}]"


def source_wall_clock(value: dt.datetime) -> dt.datetime:
    """An instant as the source server's wall clock (naive)."""
    return value.astimezone(SOURCE_TIME_ZONE).replace(tzinfo=None)


def wall_clock_instant(value: dt.datetime) -> dt.datetime:
    """The instant a source wall clock denotes when read back (fold 0: the message cannot say
    which of two repeated DST hours it meant)."""
    return source_wall_clock(value).replace(tzinfo=SOURCE_TIME_ZONE)


def canal_value_text(column: Column, value: Any) -> str | None:
    """A true value as Canal writes it (a JSON string), or None for SQL NULL."""
    if value is None:
        return None
    kind = base_type(column.logical_type)
    if kind == "boolean":
        return "1" if value else "0"
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return str(value)
    if kind == "decimal":
        return format(value, "f")  # BigDecimal.toPlainString
    if kind in ("float", "double"):
        return java_float_text(value, single=kind == "float")
    if kind == "binary":
        return value.decode("latin-1")
    if kind == "date":
        return fmt_date(value)
    if kind == "time":
        return mysql_time_text(value, column.mysql_type)
    if kind == "datetime":
        return mysql_wall_text(value, column.mysql_type)
    if kind == "timestamp":
        return mysql_wall_text(source_wall_clock(value), column.mysql_type)
    if kind == "zoned_datetime":
        return zoned_java_text(value)
    if kind == "interval_ym":
        return fmt_interval_ym(value)
    if kind == "interval_ds":
        return fmt_interval_ds(value)
    return str(value)  # string, json


def canal_expected_text(column: Column, value: Any) -> str | None:
    """Canonical text decoding must give for a true value: TIMESTAMP travels as a source wall
    clock, so it is the instant that wall clock denotes; everything else is exact."""
    if value is not None and base_type(column.logical_type) == "timestamp":
        return to_canonical("timestamp", wall_clock_instant(value))
    return to_canonical(column.logical_type, value)


def key_json(pk_columns: Sequence[str], before: dict | None, after: dict | None) -> str | None:
    """The staged `primary_key` (macro cdc_primary_key): after's key value, else before's."""
    if not pk_columns:
        return None
    values = [(after or {}).get(c) if (after or {}).get(c) is not None else (before or {}).get(c) for c in pk_columns]
    return key_text(values)


def routing_key(change: SourceChange) -> str:
    """Canal partitions by table: the key the fault injector hashes."""
    return f"{change.schema.database}.{change.schema.table}"


def ddl_op(change: SourceChange) -> str:
    """Staged DDL op of a workload DDL/TRUNCATE change."""
    return "TRUNCATE" if change.op == "TRUNCATE" else (change.ddl_kind or "QUERY")


def ddl_statement(change: SourceChange) -> str:
    schema = change.schema
    return change.ddl_statement or f"TRUNCATE TABLE `{schema.database}`.`{schema.table}`"


def split_runs(changes: Sequence[SourceChange], max_rows: int, rng: random.Random) -> list[list[SourceChange]]:
    """Consecutive row changes of one table and op -> runs of 1..max_rows rows; DDL and TRUNCATE alone."""
    runs: list[list[SourceChange]] = []
    limit = 0
    for change in changes:
        last = runs[-1] if runs else None
        joinable = (
            last is not None
            and change.op not in ("DDL", "TRUNCATE")
            and last[0].op == change.op
            and last[0].schema == change.schema
            and len(last) < limit
        )
        if joinable:
            last.append(change)
        else:
            runs.append([change])
            limit = rng.randint(1, max_rows)
    return runs


# Per table schema, shared by its messages and expected rows (which nothing modifies).
mysql_types = PerSchema(lambda schema: {c.name: c.mysql_type for c in schema.columns})
sql_types = PerSchema(lambda schema: {c.name: _SQL_TYPES[base_type(c.logical_type)] for c in schema.columns})
column_types = PerSchema(lambda schema: {c.name: c.logical_type for c in schema.columns})


class CanalJsonEncoder(Encoder):
    dialect = "canal_json"
    extra_malformed_kinds = ("wrong_shape",)
    # Shares of the shapes in the deterministic mix (see the module docstring).
    gtid_share = 0.2  # transactions preceded by a GTID FlatMessage
    table_changes_share = 0.5  # DDL messages carrying CloudCanal's tableChanges
    whole_tx_array_share = 0.35  # transactions sent as one JSON array value
    array_share = 0.5  # single FlatMessages wrapped in a one-element array
    duplicated_pk_names_share = 0.5  # multi-row messages repeating pkNames once per row
    max_rows_per_message = 6
    dump_value = staticmethod(dump_plain_json)  # JSON of a message: no value_text is RawJson

    # ------------------------------------------------------------ per-dialect conventions
    def value_text(self, column: Column, value: Any) -> Any:
        return canal_value_text(column, value)

    def expected_text(self, column: Column, value: Any) -> str | None:
        return canal_expected_text(column, value)

    def shape(self, message: dict[str, Any]) -> dict[str, Any]:
        """The FlatMessage as the tool writes it (field set and order)."""
        return message

    def row_op(self, change: SourceChange) -> str:
        return "INSERT" if change.op == "SNAPSHOT" else change.op

    # ------------------------------------------------------------ stream
    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        heartbeats = sorted(workload.heartbeat_times)
        self._next_id = 1
        for tx in workload.transactions:
            while heartbeats and heartbeats[0] < tx.commit_ts:
                yield from self.heartbeat(heartbeats.pop(0), rng)
            yield from self.transaction(tx, rng)
        for beat in heartbeats:
            yield from self.heartbeat(beat, rng)

    def heartbeat(self, at: dt.datetime, rng: random.Random) -> Iterator[EncodedMessage]:
        msg = self._non_row_message("MHEARTBEAT", at, rng)
        yield self._pack([msg], [self._non_row_expected("HEARTBEAT", "MHEARTBEAT", at)], "", at, rng)

    def transaction(self, tx: Transaction, rng: random.Random) -> Iterator[EncodedMessage]:
        if not tx.is_snapshot and rng.random() < self.gtid_share:
            msg = {**self._non_row_message("GTID", tx.commit_ts, rng), "gtid": tx.tx_id}
            expected = {**self._non_row_expected("TRANSACTION", "GTID", tx.commit_ts), "transaction_id": tx.tx_id}
            yield self._pack([msg], [expected], "", tx.commit_ts, rng)
        runs = split_runs(tx.changes, self.max_rows_per_message, rng)
        built = [self.flat_message(run, tx, rng) for run in runs]
        if len(built) > 1 and rng.random() < self.whole_tx_array_share:
            yield self._pack(
                [m for m, _ in built],
                [r for _, rows in built for r in rows],
                routing_key(runs[0][0]),
                tx.commit_ts,
                rng,
                force_array=True,
            )
            return
        for (msg, rows), run in zip(built, runs, strict=True):
            yield self._pack([msg], rows, routing_key(run[0]), tx.commit_ts, rng)

    # ------------------------------------------------------------ messages
    def flat_message(self, run: list[SourceChange], tx: Transaction, rng: random.Random) -> tuple[dict, list[dict]]:
        if run[0].op in ("DDL", "TRUNCATE"):
            return self.ddl_message(run[0], tx, rng)
        return self.row_message(run, tx, rng)

    def _envelope(self, at: dt.datetime, rng: random.Random) -> dict[str, Any]:
        es = epoch_ms(at)
        return {"es": es, "ts": es + rng.randrange(3000)}

    def _message_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def row_message(self, run: list[SourceChange], tx: Transaction, rng: random.Random) -> tuple[dict, list[dict]]:
        schema = run[0].schema
        op = self.row_op(run[0])
        data, old, expected = [], [], []
        for change in run:
            row = self.row_expected(change, op, tx)
            image = change.before if op == "DELETE" else change.after
            data.append({c.name: self.value_text(c, image[c.name]) for c in schema.columns})
            if op == "UPDATE":  # `old`: the columns whose expected text changed
                was, now = row["before"], row["after"]
                old.append(
                    {
                        c.name: self.value_text(c, change.before[c.name])
                        for c in schema.columns
                        if was[c.name] != now[c.name]
                    }
                )
            expected.append(row)
        pk = list(schema.primary_key)
        repeat = len(run) if len(run) > 1 and rng.random() < self.duplicated_pk_names_share else 1
        envelope = self._envelope(tx.commit_ts, rng)
        msg = {
            "data": data,
            "database": schema.database,
            "es": envelope["es"],
            "id": self._message_id(),
            "isDdl": False,
            "mysqlType": mysql_types(schema),
            "old": old or None,
            "pkNames": pk * repeat or None,
            "sql": "",
            "sqlType": sql_types(schema),
            "table": schema.table,
            "ts": envelope["ts"],
            "type": op,
        }
        emitted = EPOCH + dt.timedelta(milliseconds=envelope["ts"])
        return msg, [{**row, "emitted_ts": emitted} for row in expected]

    def image_expected(self, schema: TableSchema, image: dict | None) -> dict | None:
        if image is None:
            return None
        return {c.name: self.expected_text(c, image[c.name]) for c in schema.columns}

    def row_expected(self, change: SourceChange, op: str, tx: Transaction) -> dict[str, Any]:
        schema = change.schema
        before = self.image_expected(schema, change.before) if op != "INSERT" else None
        after = self.image_expected(schema, change.after) if op != "DELETE" else None
        return {
            "event_kind": "ROW",
            "op": op,
            "database_name": schema.database,
            "table_name": schema.table,
            "primary_key_columns": list(schema.primary_key),
            "primary_key_source": "message" if schema.primary_key else "none",
            "primary_key": key_json(schema.primary_key, before, after),
            "before": before,
            "after": after,
            "before_is_partial": False if before is not None else None,
            "after_is_partial": False if after is not None else None,
            "column_types": column_types(schema),
            "column_source_types": mysql_types(schema),
            "event_ts": truncate_to_ms(tx.commit_ts),
            "event_ts_precision": "ms",
            "source_position": None,
        }

    def ddl_message(self, change: SourceChange, tx: Transaction, rng: random.Random) -> tuple[dict, list[dict]]:
        schema = change.schema
        kind = ddl_op(change)
        envelope = self._envelope(tx.commit_ts, rng)
        msg: dict[str, Any] = {
            "data": None,
            "database": schema.database,
            "es": envelope["es"],
            "id": self._message_id(),
            "isDdl": True,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": ddl_statement(change),
            "sqlType": None,
            "table": schema.table,
            "ts": envelope["ts"],
            "type": CANAL_DDL_TYPES[kind],
        }
        expected: dict[str, Any] = {
            "event_kind": "DDL",
            "op": "DROP" if kind == "DROP" else kind,
            "database_name": schema.database,
            "table_name": schema.table,
            "ddl_statement": ddl_statement(change),
            "event_ts": truncate_to_ms(tx.commit_ts),
            "event_ts_precision": "ms",
            "primary_key_columns": [],
            "primary_key_source": "none",
            "column_types": None,
        }
        if rng.random() < self.table_changes_share:
            msg["tableChanges"] = table_changes(schema, CANAL_DDL_TYPES[kind])
            expected.update(
                primary_key_columns=list(schema.primary_key),
                primary_key_source="ddl" if schema.primary_key else "none",
                column_types={c.name: c.logical_type for c in schema.columns},
                column_source_types={c.name: c.mysql_type for c in schema.columns},
            )
        return msg, [expected]

    def _non_row_message(self, canal_type: str, at: dt.datetime, rng: random.Random) -> dict[str, Any]:
        envelope = self._envelope(at, rng)
        return {
            "data": None,
            "database": "",
            "es": envelope["es"],
            "id": self._message_id(),
            "isDdl": False,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": "",
            "sqlType": None,
            "table": "",
            "ts": envelope["ts"],
            "type": canal_type,
        }

    def _non_row_expected(self, kind: str, op: str, at: dt.datetime) -> dict[str, Any]:
        return {
            "event_kind": kind,
            "op": op,
            "database_name": None,
            "table_name": None,
            "event_ts": truncate_to_ms(at),
            "event_ts_precision": "ms",
        }

    def _pack(
        self,
        messages: list[dict],
        rows: list[dict],
        route: str,
        at: dt.datetime,
        rng: random.Random,
        force_array: bool = False,
    ) -> EncodedMessage:
        as_array = force_array or len(messages) > 1 or rng.random() < self.array_share
        shaped = [self.shape(m) for m in messages]
        value = self.dump_value(shaped if as_array else shaped[0]).encode("utf-8")
        expected = tuple({**row, "row_index": i} for i, row in enumerate(rows))
        is_row = any(r["event_kind"] == "ROW" for r in rows)
        return EncodedMessage(value, None, route, at, expected, is_row)

    # ------------------------------------------------------------ malformations
    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        return malform_canal(message.value, kind, rng)


def table_changes(schema: TableSchema, canal_type: str) -> dict[str, Any]:
    """CloudCanal's `tableChanges`: the table's columns and key after the DDL (spec 000)."""
    columns = [
        {
            "jdbcType": _SQL_TYPES[base_type(c.logical_type)],
            "name": c.name,
            "position": i,
            "typeExpression": c.mysql_type,
            "typeName": c.mysql_type.split("(")[0].split()[0],
        }
        for i, c in enumerate(schema.columns)
    ]
    return {"table": {"columns": columns, "primaryKeyColumnNames": list(schema.primary_key)}, "type": canal_type}


# ---------------------------------------------------------------- malformations
def _first_row_message(parsed: Any) -> dict:
    messages = parsed if isinstance(parsed, list) else [parsed]
    return next((m for m in messages if m.get("data")), messages[0])


def _rewrite(value: bytes, edit: Callable[[dict], None]) -> bytes:
    parsed = load_json(value)
    edit(_first_row_message(parsed))
    return dump_json(parsed).encode("utf-8")


def truncated(value: bytes, rng: random.Random) -> bytes:
    """The value cut short at a character boundary: invalid JSON, still valid UTF-8."""
    cuts = [i for i in range(1, len(value) - 1) if value[i] & 0xC0 != 0x80]
    return value[: rng.choice(cuts)]


def malform_canal(value: bytes, kind: str, rng: random.Random) -> bytes:
    """A malformed variant of a Canal-shaped row message value (canal_json, oms_canal_json)."""
    if kind == "invalid_json":
        return truncated(value, rng)
    if kind == "invalid_utf8":
        cut = rng.randrange(1, len(value) - 1)
        return value[:cut] + b"\xc3\x28" + value[cut:]
    if kind == "missing_field":
        return _rewrite(value, lambda m: m.pop("type"))
    if kind == "unknown_op":
        return _rewrite(value, lambda m: m.update(type=rng.choice(("UPSERT", "REPLACE", "MERGE"))))
    if kind == "wrong_shape":
        return _rewrite(value, lambda m: m.update(data={"rows": m["data"]}))
    if kind == "wrong_value_type":

        def break_value(m: dict) -> None:
            column = rng.choice(sorted(m["data"][0]))
            m["mysqlType"] = {**(m.get("mysqlType") or {}), column: "int(11)"}
            m["data"][0][column] = f"not-a-number-{rng.randrange(10**6)}"

        return _rewrite(value, break_value)
    raise ValueError(f"unsupported malformation kind {kind!r}")


ENCODER = CanalJsonEncoder()
