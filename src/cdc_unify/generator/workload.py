"""A deterministic simulated OLTP workload: the source database every dialect encodes.

`build_workload(options, seed)` replays a small shop database: CREATE TABLE for each
table, a full-load snapshot, then an incremental stream of inserts, updates (one column,
several columns, primary-key changes), deletes, re-inserts of deleted keys, duplicate
rows in a table without a key, one ALTER TABLE ... ADD COLUMN and one TRUNCATE, plus
periodic heartbeats.  Only `random.Random(seed)` drives it, state is kept in lists and
insertion-ordered dicts, so the same seed gives the same workload on every run.

Images are never mutated after a change holds them: an update builds a new dict.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from cdc_unify.canonical import IntervalYM
from cdc_unify.generator.model import Column, Position, SourceChange, TableSchema, Transaction, Workload

START_TS = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
SERVER_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"  # fixed GTID source id
DATABASE = "shop"
BINLOG_HEADER = 4  # first event offset in a MySQL binlog file (after the magic bytes)

CUSTOMERS = TableSchema(
    DATABASE,
    "customers",
    (
        Column("id", "bigint", "bigint(20)", nullable=False),
        Column("name", "string", "varchar(64)"),
        Column("email", "string", "varchar(128)"),
        Column("balance", "decimal(12,2)", "decimal(12,2)"),
        Column("is_active", "boolean", "tinyint(1)"),
        Column("birth_date", "date", "date"),
        Column("created_at", "datetime", "datetime(6)"),
        Column("updated_at", "timestamp", "timestamp(6)"),
    ),
    ("id",),
)
# Added by the ALTER TABLE in the middle of the stream; existing rows get NULL.
CUSTOMERS_NEW_COLUMN = Column("loyalty_tier", "string", "varchar(16)")

ORDER_ITEMS = TableSchema(
    DATABASE,
    "order_items",
    (
        Column("order_id", "bigint", "bigint(20)", nullable=False),
        Column("line_no", "int", "int(11)", nullable=False),
        Column("sku", "string", "varchar(32)"),
        Column("qty", "smallint", "smallint(6)"),
        Column("unit_price", "decimal(10,2)", "decimal(10,2)"),
        Column("discount", "double", "double"),
        Column("note", "string", "text"),
    ),
    ("order_id", "line_no"),
)

AUDIT_LOG = TableSchema(
    DATABASE,
    "audit_log",
    (
        Column("actor", "string", "varchar(32)"),
        Column("action", "string", "varchar(16)"),
        Column("logged_at", "datetime", "datetime(3)"),
        Column("detail", "string", "text"),
        Column("amount", "decimal(10,2)", "decimal(10,2)"),
    ),
    (),
)

ALL_TYPES = TableSchema(
    DATABASE,
    "all_types",
    (
        Column("id", "int", "int(11)", nullable=False),
        Column("c_tinyint", "tinyint", "tinyint(4)"),
        Column("c_smallint", "smallint", "smallint(6)"),
        Column("c_int", "int", "int(11)"),
        Column("c_bigint", "bigint", "bigint(20)"),
        Column("c_ubigint", "ubigint", "bigint(20) unsigned"),
        Column("c_decimal", "decimal(38,10)", "decimal(38,10)"),
        Column("c_decimal_wide", "decimal(65,30)", "decimal(65,30)"),
        Column("c_float", "float", "float"),
        Column("c_double", "double", "double"),
        Column("c_bool", "boolean", "tinyint(1)"),
        Column("c_char", "string", "char(8)"),
        Column("c_varchar", "string", "varchar(255)"),
        Column("c_text", "string", "text"),
        Column("c_json", "json", "json"),
        Column("c_blob", "binary", "blob"),
        Column("c_binary", "binary", "binary(16)"),
        Column("c_date", "date", "date"),
        Column("c_time", "time", "time(6)"),
        Column("c_datetime", "datetime", "datetime(6)"),
        Column("c_timestamp", "timestamp", "timestamp(6)"),
        Column("c_zoned", "zoned_datetime", "timestamp(6) with time zone"),
        Column("c_interval_ym", "interval_ym", "interval year(2) to month"),
        Column("c_interval_ds", "interval_ds", "interval day(2) to second(6)"),
    ),
    ("id",),
)

INITIAL_SCHEMAS = (CUSTOMERS, ORDER_ITEMS, AUDIT_LOG, ALL_TYPES)

# ---------------------------------------------------------------- value pools
# Text that stresses encoders: CJK, emoji (outside the BMP, ZWJ sequences), accents,
# right-to-left, quotes, backslashes and control characters JSON must escape.
_FIRST_NAMES = (
    "Alice",
    "Bob",
    "张伟",
    "王芳",
    "李娜",
    "José",
    "Zoë",
    "Ōkubo",
    "Ελένη",
    "Дмитрий",
    "محمد",
    "佐藤",
    "O'Brien",
    'Quote "Q"',
    "Back\\slash",
    "Tab\tName",
    "New\nLine",
    "😀 Smile",
    "👩‍💻 Dev",
    "𠜎𠜱",
    "Ünïcödé",
    "김민준",
)
_LAST_NAMES = ("Smith", "陈", "Müller", "Nguyễn", "Åström", "🚀", "d'Arc", "Łukasz", "山田", "Ó Briain")
_WORDS = (
    "order",
    "refund",
    "shipped",
    "退款",
    "已发货",
    "naïve café",
    "emoji 🎉",
    "tab\tsep",
    'quote"d',
    "slash\\n",
    "line\nbreak",
    "€100",
    "日本語テキスト",
    "ok",
    "∑ math ∞",
    "🇨🇳 flag",
)
_CHAR8 = ("A", "BC", "x1", "中文", "ÄÖÜ", "zz-9", "é", "☃", "q r", "01234567")
_ACTORS = ("system", "admin", "运维", "batch-job", "José", "api:v2")
_ACTIONS = ("login", "logout", "export", "update", "delete", "approve")
_SKUS = tuple(f"SKU-{n:05d}" for n in range(0, 2000, 7)) + ("SKU-日本", "SKU-ÄÖ")
_TIERS = ("bronze", "silver", "gold", "platinum", "钻石")
_ZONES = tuple(ZoneInfo(name) for name in ("Asia/Shanghai", "Europe/Berlin", "America/New_York", "UTC", "Asia/Kolkata"))

# Edge values a careful decoder must keep exactly.
_EDGES: dict[str, tuple[Any, ...]] = {
    "tinyint": (-128, 127, 0),
    "smallint": (-32768, 32767),
    "int": (-2147483648, 2147483647),
    "bigint": (-9223372036854775808, 9223372036854775807, -1),
    "ubigint": (0, 9223372036854775807, 9223372036854775808, 10223372036854775806, 18446744073709551615),
    "double": (0.1, 1e-05, -2.5, 1.7976931348623e308, 5e-324, -0.0, 123456789012345.0),
    "float": (1.2222, -3.5, 1e-05, 3.4e38, 0.0),
}
_DATETIME_BASE = dt.datetime(1990, 1, 1)
_DATE_BASE = dt.date(1940, 1, 1)


def _float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _mysql_json(obj: dict[str, Any]) -> str:
    """JSON text as MySQL returns it: keys by length then bytes, `, ` and `: ` separators."""
    keys = sorted(obj, key=lambda k: (len(k.encode()), k.encode()))
    return (
        "{"
        + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(obj[k], ensure_ascii=False)}" for k in keys)
        + "}"
    )


def _decimal(rng: random.Random, precision: int, scale: int) -> Decimal:
    digits = rng.randint(1, precision)
    unscaled = rng.randrange(10**digits)
    if rng.random() < 0.3:
        unscaled = -unscaled
    # Built from text: Decimal arithmetic would round to the 28-digit default context.
    return Decimal(f"{unscaled}E-{scale}")


def _text(rng: random.Random, max_words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, max_words)))


class _Values:
    """Random values per logical type and per named column, all drawn from one rng."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def edge_or(self, kind: str, draw: Callable[[], Any]) -> Any:
        return self.rng.choice(_EDGES[kind]) if self.rng.random() < 0.1 else draw()

    def tinyint(self) -> int:
        return self.edge_or("tinyint", lambda: self.rng.randint(-128, 127))

    def smallint(self) -> int:
        return self.edge_or("smallint", lambda: self.rng.randint(-32768, 32767))

    def int32(self) -> int:
        return self.edge_or("int", lambda: self.rng.randint(-(2**31), 2**31 - 1))

    def bigint(self) -> int:
        return self.edge_or("bigint", lambda: self.rng.randint(-(2**63), 2**63 - 1))

    def ubigint(self) -> int:
        return self.edge_or("ubigint", lambda: self.rng.randrange(2**64))

    def float32(self) -> float:
        # At most 6 significant digits: every dialect's float text (7 digits) round-trips it.
        return self.edge_or(
            "float", lambda: _float32(float(f"{self.rng.randrange(-999999, 10**6)}e{self.rng.randint(-8, 6)}"))
        )

    def double(self) -> float:
        # At most 15 significant digits: OMS sends doubles with 16.
        return self.edge_or(
            "double", lambda: float(f"{self.rng.randrange(-(10**15) + 1, 10**15)}e{self.rng.randint(-30, 10)}")
        )

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def date(self) -> dt.date:
        return _DATE_BASE + dt.timedelta(days=self.rng.randrange(36500))

    def time(self) -> dt.time:
        us = self.rng.choice((0, 0, self.rng.randrange(1_000_000), self.rng.randrange(1000) * 1000))
        return dt.time(self.rng.randrange(24), self.rng.randrange(60), self.rng.randrange(60), us)

    def naive_datetime(self, micros: bool = True) -> dt.datetime:
        value = _DATETIME_BASE + dt.timedelta(seconds=self.rng.randrange(40 * 365 * 86400))
        fraction = self.rng.randrange(1_000_000) if micros else self.rng.randrange(1000) * 1000
        return value.replace(microsecond=fraction if self.rng.random() < 0.8 else 0)

    def instant(self) -> dt.datetime:
        # Inside MySQL's TIMESTAMP range (1970..2038).
        return self.naive_datetime().replace(tzinfo=dt.timezone.utc)

    def zoned(self) -> dt.datetime:
        return self.instant().astimezone(self.rng.choice(_ZONES))

    def interval_ym(self) -> IntervalYM:
        return IntervalYM(self.rng.randint(-1188, 1188))

    def interval_ds(self) -> dt.timedelta:
        return dt.timedelta(
            days=self.rng.randint(-99, 99),
            seconds=self.rng.randrange(86400),
            microseconds=self.rng.choice((0, self.rng.randrange(1_000_000))),
        )

    def name(self) -> str:
        return f"{self.rng.choice(_FIRST_NAMES)} {self.rng.choice(_LAST_NAMES)}"

    def json_doc(self) -> str:
        doc = {
            "id": self.rng.randrange(10**6),
            "tags": [self.rng.choice(_WORDS) for _ in range(self.rng.randint(0, 3))],
            "note": self.rng.choice(_WORDS),
            "ok": self.boolean(),
        }
        if self.rng.random() < 0.3:
            doc["nested"] = {"zh": "价格", "price": self.rng.randrange(10**6) / 100}  # MySQL key order
        return _mysql_json(doc)

    def char8(self) -> str:
        return self.rng.choice(_CHAR8)

    def blob(self) -> bytes:
        return self.rng.randbytes(self.rng.choice((0, 1, 3, 16, 64, self.rng.randrange(256))))


def _column_generators(values: _Values) -> dict[str, dict[str, Callable[[], Any]]]:
    """table -> column -> value draw for every non-key column (keys are assigned, not drawn)."""
    v = values
    rng = values.rng
    return {
        "customers": {
            "name": v.name,
            "email": lambda: f"user{rng.randrange(10**7)}@example.{rng.choice(('com', 'cn', 'de'))}",
            "balance": lambda: _decimal(rng, 12, 2),
            "is_active": v.boolean,
            "birth_date": v.date,
            "created_at": v.naive_datetime,
            "updated_at": v.instant,
            "loyalty_tier": lambda: rng.choice(_TIERS),
        },
        "order_items": {
            "sku": lambda: rng.choice(_SKUS),
            "qty": lambda: rng.randint(1, 500),
            "unit_price": lambda: _decimal(rng, 10, 2),
            "discount": lambda: rng.choice((0.0, 0.05, 0.1, 0.125, 0.333, 0.2)),
            "note": lambda: _text(rng, 6),
        },
        "audit_log": {
            "actor": lambda: rng.choice(_ACTORS),
            "action": lambda: rng.choice(_ACTIONS),
            "logged_at": lambda: v.naive_datetime(micros=False),
            "detail": lambda: _text(rng, 4),
            "amount": lambda: _decimal(rng, 10, 2),
        },
        "all_types": {
            "c_tinyint": v.tinyint,
            "c_smallint": v.smallint,
            "c_int": v.int32,
            "c_bigint": v.bigint,
            "c_ubigint": v.ubigint,
            "c_decimal": lambda: _decimal(rng, 38, 10),
            "c_decimal_wide": lambda: _decimal(rng, 65, 30),
            "c_float": v.float32,
            "c_double": v.double,
            "c_bool": v.boolean,
            "c_char": v.char8,
            "c_varchar": v.name,
            "c_text": lambda: _text(rng, 30),
            "c_json": v.json_doc,
            "c_blob": v.blob,
            "c_binary": lambda: rng.randbytes(16),
            "c_date": v.date,
            "c_time": v.time,
            "c_datetime": v.naive_datetime,
            "c_timestamp": v.instant,
            "c_zoned": v.zoned,
            "c_interval_ym": v.interval_ym,
            "c_interval_ds": v.interval_ds,
        },
    }


def _extreme_rows() -> list[dict[str, Any]]:
    """Two all_types rows holding every maximum and minimum the types allow (ids 2 and 3)."""
    high = {
        "c_tinyint": 127,
        "c_smallint": 32767,
        "c_int": 2147483647,
        "c_bigint": 9223372036854775807,
        "c_ubigint": 18446744073709551615,
        "c_decimal": Decimal("9" * 28 + "." + "9" * 10),
        "c_decimal_wide": Decimal("9" * 35 + "." + "9" * 30),
        "c_float": _float32(3.4e38),
        "c_double": 1.7976931348623e308,
        "c_bool": True,
        "c_char": "01234567",
        "c_varchar": "😀" * 255,
        "c_text": "长" * 1000,
        "c_json": _mysql_json({"max": 18446744073709551615}),
        "c_blob": bytes(range(256)),
        "c_binary": b"\xff" * 16,
        "c_date": dt.date(9999, 12, 31),
        "c_time": dt.time(23, 59, 59, 999999),
        "c_datetime": dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        "c_timestamp": dt.datetime(2038, 1, 19, 3, 14, 7, 999999, tzinfo=dt.timezone.utc),
        "c_zoned": dt.datetime(2038, 1, 19, 11, 14, 7, 999999, tzinfo=ZoneInfo("Asia/Shanghai")),
        "c_interval_ym": IntervalYM(99 * 12 + 11),
        "c_interval_ds": dt.timedelta(days=99, seconds=86399, microseconds=999999),
    }
    low = {
        "c_tinyint": -128,
        "c_smallint": -32768,
        "c_int": -2147483648,
        "c_bigint": -9223372036854775808,
        "c_ubigint": 0,
        "c_decimal": Decimal("-" + "9" * 28 + "." + "9" * 10),
        "c_decimal_wide": Decimal("-0." + "0" * 29 + "1"),
        "c_float": _float32(-1.1755e-38),
        "c_double": 5e-324,
        "c_bool": False,
        "c_char": "",
        "c_varchar": "",
        "c_text": "",
        "c_json": _mysql_json({}),
        "c_blob": b"",
        "c_binary": b"\x00" * 16,
        "c_date": dt.date(1000, 1, 1),
        "c_time": dt.time(0, 0, 0),
        "c_datetime": dt.datetime(1000, 1, 1, 0, 0, 0),
        "c_timestamp": dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc),
        "c_zoned": dt.datetime(1970, 1, 1, 8, 0, 1, 1, tzinfo=ZoneInfo("Asia/Shanghai")),
        "c_interval_ym": IntervalYM(-(99 * 12 + 11)),
        "c_interval_ds": -dt.timedelta(days=99, seconds=86399, microseconds=999999),
    }
    return [{"id": 2, **high}, {"id": 3, **low}]


# ---------------------------------------------------------------- options
@dataclass(frozen=True)
class WorkloadOptions:
    events: int = 300  # row changes to generate (snapshot rows included), approximately
    max_tx_changes: int = 5  # a transaction holds 1..max_tx_changes changes
    snapshot_share: float = 0.1  # share of `events` read by the full-load snapshot
    snapshot_chunk: int = 50  # rows per snapshot transaction
    heartbeat_every: dt.timedelta = dt.timedelta(seconds=10)
    binlog_file_size: int = 1 << 16  # rotate to the next binlog file past this offset
    alter_at: float = 0.4  # ADD COLUMN after this share of the incremental changes
    truncate_at: float = 0.7  # TRUNCATE order_items after this share


# (table, op) draws of the incremental phase, with weights.
_OP_WEIGHTS: tuple[tuple[str, str, float], ...] = (
    ("customers", "insert", 6),
    ("customers", "update_one", 8),
    ("customers", "update_many", 4),
    ("customers", "delete", 2),
    ("customers", "pk_change", 0.5),
    ("customers", "reinsert", 0.7),
    ("order_items", "insert", 10),
    ("order_items", "update_one", 5),
    ("order_items", "update_many", 3),
    ("order_items", "delete", 3),
    ("order_items", "pk_change", 0.5),
    ("order_items", "reinsert", 0.7),
    ("audit_log", "insert", 6),
    ("audit_log", "insert_duplicate", 0.5),
    ("audit_log", "update", 1),
    ("audit_log", "delete", 1),
    ("all_types", "insert", 4),
    ("all_types", "update_one", 4),
    ("all_types", "update_many", 3),
    ("all_types", "delete", 1.5),
    ("all_types", "reinsert", 0.3),
)
# Every kind once, each in its own transaction, at the start of the incremental phase, so
# that even a tiny workload holds them all (re-inserts after their deletes have committed).
_FORCED_OPS: tuple[tuple[str, str], ...] = (
    ("customers", "insert"),
    ("customers", "update_one"),
    ("customers", "update_many"),
    ("customers", "pk_change"),
    ("customers", "delete"),
    ("order_items", "insert"),
    ("order_items", "update_one"),
    ("order_items", "update_many"),
    ("order_items", "pk_change"),
    ("order_items", "delete"),
    ("audit_log", "insert"),
    ("audit_log", "insert_duplicate"),
    ("audit_log", "update"),
    ("audit_log", "delete"),
    ("all_types", "insert"),
    ("all_types", "update_one"),
    ("all_types", "update_many"),
    ("all_types", "delete"),
    ("customers", "reinsert"),
    ("order_items", "reinsert"),
    ("all_types", "reinsert"),
)


def create_table_statement(schema: TableSchema) -> str:
    cols = [f"`{c.name}` {c.mysql_type}{'' if c.nullable else ' NOT NULL'}" for c in schema.columns]
    if schema.primary_key:
        cols.append("PRIMARY KEY (" + ", ".join(f"`{k}`" for k in schema.primary_key) + ")")
    return f"CREATE TABLE `{schema.database}`.`{schema.table}` (" + ", ".join(cols) + ")"


# ---------------------------------------------------------------- table state
class _KeyedRows:
    """Current rows of a keyed table with O(1) random pick and removal."""

    def __init__(self) -> None:
        self.rows: dict[tuple, dict[str, Any]] = {}
        self._keys: list[tuple] = []
        self._index: dict[tuple, int] = {}

    def put(self, key: tuple, row: dict[str, Any]) -> None:
        if key not in self.rows:
            self._index[key] = len(self._keys)
            self._keys.append(key)
        self.rows[key] = row

    def remove(self, key: tuple) -> dict[str, Any]:
        idx = self._index.pop(key)
        last = self._keys.pop()
        if last != key:
            self._keys[idx] = last
            self._index[last] = idx
        return self.rows.pop(key)

    def pick(self, rng: random.Random, table: str, touched: set) -> tuple | None:
        """A random current key not yet touched by the open transaction (None if none found)."""
        for _ in range(6):
            if not self._keys:
                return None
            key = self._keys[rng.randrange(len(self._keys))]
            if (table, key) not in touched:
                return key
        return None

    def keys(self) -> list[tuple]:
        return list(self._keys)

    def clear(self) -> None:
        self.rows.clear()
        self._keys.clear()
        self._index.clear()


class _Simulator:
    def __init__(self, options: WorkloadOptions, seed: int) -> None:
        self.opt = options
        self.rng = random.Random(seed)
        self.gens = _column_generators(_Values(self.rng))
        self.schemas = {s.table: s for s in INITIAL_SCHEMAS}
        self.keyed = {"customers": _KeyedRows(), "order_items": _KeyedRows(), "all_types": _KeyedRows()}
        self.audit: list[dict[str, Any]] = []
        self.next_id = {"customers": 1, "all_types": 1, "order": 1000}
        self.next_line: dict[int, int] = {}
        self.recent_orders: list[int] = []
        self.deleted: dict[str, list[tuple]] = {"customers": [], "order_items": [], "all_types": []}
        self.clock = START_TS
        self.position = Position(1, BINLOG_HEADER)
        self.transactions: list[Transaction] = []
        self.heartbeats: list[dt.datetime] = []
        self.next_heartbeat = START_TS + options.heartbeat_every
        self.row_changes = 0
        # Per open transaction: rows already touched, keys deleted (re-insertable after commit).
        self.touched: set = set()
        self.tx_deleted: list[tuple[str, tuple]] = []

    # ------------------------------------------------------------ bookkeeping
    def _advance_position(self) -> Position:
        self.position = Position(self.position.file_index, self.position.offset + 60 + self.rng.randrange(400))
        return self.position

    def _commit(self, changes: list[SourceChange], is_snapshot: bool = False) -> None:
        # MySQL never splits a transaction across binlog files: rotate between transactions.
        self.clock += dt.timedelta(microseconds=self.rng.randrange(1000, 1_500_000))
        while self.next_heartbeat < self.clock:
            self.heartbeats.append(self.next_heartbeat)
            self.next_heartbeat += self.opt.heartbeat_every
        seq = len(self.transactions) + 1
        self.transactions.append(Transaction(seq, f"{SERVER_UUID}:{seq}", self.clock, tuple(changes), is_snapshot))
        if self.position.offset > self.opt.binlog_file_size:
            self.position = Position(self.position.file_index + 1, BINLOG_HEADER)
        for table, key in self.tx_deleted:
            self.deleted[table].append(key)
        self.tx_deleted = []
        self.touched = set()

    def _change(self, op: str, table: str, before: dict | None, after: dict | None, **ddl: str) -> SourceChange:
        if op not in ("DDL", "TRUNCATE"):
            self.row_changes += 1
        return SourceChange(op, self.schemas[table], before, after, self._advance_position(), **ddl)

    def _new_row(self, table: str, key_values: dict[str, Any], null_share: float = 0.08) -> dict[str, Any]:
        gens = self.gens[table]
        row = dict(key_values)
        for col in self.schemas[table].columns:
            if col.name not in row:
                row[col.name] = None if self.rng.random() < null_share else gens[col.name]()
        return row

    def _null_row(self, table: str, key_values: dict[str, Any]) -> dict[str, Any]:
        return {c.name: key_values.get(c.name) for c in self.schemas[table].columns}

    def _key_of(self, table: str, row: dict[str, Any]) -> tuple:
        return tuple(row[c] for c in self.schemas[table].primary_key)

    # ------------------------------------------------------------ key allocation
    def _fresh_key(self, table: str) -> dict[str, Any]:
        if table == "order_items":
            if self.recent_orders and self.rng.random() < 0.6:
                order = self.recent_orders[self.rng.randrange(len(self.recent_orders))]
            else:
                order = self.next_id["order"]
                self.next_id["order"] += 1
                self.recent_orders.append(order)
                if len(self.recent_orders) > 50:
                    self.recent_orders.pop(0)
            line = self.next_line.get(order, 1)
            self.next_line[order] = line + 1
            return {"order_id": order, "line_no": line}
        key = self.next_id[table]
        self.next_id[table] += 1
        return {"id": key}

    # ------------------------------------------------------------ row operations
    def insert(self, table: str, op: str = "INSERT", row: dict[str, Any] | None = None) -> SourceChange | None:
        if table == "audit_log":
            row = row or self._new_row(table, {})
            ident = ("audit_log", tuple(row.values()))
            if ident in self.touched:
                return None
            self.touched.add(ident)
            self.audit.append(row)
            return self._change(op, table, None, row)
        row = row or self._new_row(table, self._fresh_key(table))
        key = self._key_of(table, row)
        self.touched.add((table, key))
        self.keyed[table].put(key, row)
        return self._change(op, table, None, row)

    def insert_duplicate(self) -> SourceChange | None:
        if not self.audit:
            return None
        return self.insert("audit_log", row=dict(self.audit[self.rng.randrange(len(self.audit))]))

    def reinsert(self, table: str, key: tuple | None = None) -> SourceChange | None:
        pool = self.deleted[table]
        if key is None:
            if not pool:
                return None
            idx = self.rng.randrange(len(pool))
            pool[idx], pool[-1] = pool[-1], pool[idx]
            key = pool.pop()
        if key in self.keyed[table].rows or (table, key) in self.touched:
            return None
        names = self.schemas[table].primary_key
        return self.insert(table, row=self._new_row(table, dict(zip(names, key, strict=True))))

    def _updated(self, table: str, row: dict[str, Any], n_columns: int) -> dict[str, Any]:
        schema = self.schemas[table]
        candidates = [c.name for c in schema.columns if c.name not in schema.primary_key]
        new = dict(row)
        for name in self.rng.sample(candidates, min(n_columns, len(candidates))):
            for _ in range(8):  # a value that really differs: MySQL logs no unchanged row
                value = None if self.rng.random() < 0.05 else self.gens[table][name]()
                if value != row[name]:
                    new[name] = value
                    break
        if new == row:
            name = candidates[0]
            new[name] = self.gens[table][name]() if row[name] is None else None
        return new

    def update(self, table: str, n_columns: int) -> SourceChange | None:
        if table == "audit_log":
            return self._update_audit()
        rows = self.keyed[table]
        key = rows.pick(self.rng, table, self.touched)
        if key is None:
            return None
        before = rows.rows[key]
        after = self._updated(table, before, n_columns)
        self.touched.add((table, key))
        rows.put(key, after)
        return self._change("UPDATE", table, before, after)

    def pk_change(self, table: str) -> SourceChange | None:
        rows = self.keyed[table]
        key = rows.pick(self.rng, table, self.touched)
        if key is None:
            return None
        before = rows.rows[key]
        if table == "order_items":
            order = before["order_id"]
            line = self.next_line.get(order, before["line_no"] + 1)
            self.next_line[order] = line + 1
            new_key_values = {"order_id": order, "line_no": line}
        else:
            new_key_values = self._fresh_key(table)
        after = {**before, **new_key_values}
        if self.rng.random() < 0.5:  # sometimes other columns change in the same statement
            after = {**self._updated(table, before, 1), **new_key_values}
        new_key = self._key_of(table, after)
        self.touched.update({(table, key), (table, new_key)})
        rows.remove(key)
        rows.put(new_key, after)
        self.tx_deleted.append((table, key))
        return self._change("UPDATE", table, before, after)

    def delete(self, table: str) -> SourceChange | None:
        if table == "audit_log":
            return self._delete_audit()
        rows = self.keyed[table]
        key = rows.pick(self.rng, table, self.touched)
        if key is None:
            return None
        before = rows.remove(key)
        self.touched.add((table, key))
        self.tx_deleted.append((table, key))
        return self._change("DELETE", table, before, None)

    def _pick_audit(self) -> int | None:
        for _ in range(6):
            if not self.audit:
                return None
            idx = self.rng.randrange(len(self.audit))
            if ("audit_log", tuple(self.audit[idx].values())) not in self.touched:
                return idx
        return None

    def _update_audit(self) -> SourceChange | None:
        idx = self._pick_audit()
        if idx is None:
            return None
        before = self.audit[idx]
        after = self._updated("audit_log", before, self.rng.randint(1, 2))
        self.touched.update({("audit_log", tuple(before.values())), ("audit_log", tuple(after.values()))})
        self.audit[idx] = after
        return self._change("UPDATE", "audit_log", before, after)

    def _delete_audit(self) -> SourceChange | None:
        idx = self._pick_audit()
        if idx is None:
            return None
        before = self.audit[idx]
        self.audit[idx] = self.audit[-1]
        self.audit.pop()
        self.touched.add(("audit_log", tuple(before.values())))
        return self._change("DELETE", "audit_log", before, None)

    def run_op(self, table: str, op: str) -> SourceChange | None:
        if op == "insert":
            return self.insert(table)
        if op == "insert_duplicate":
            return self.insert_duplicate()
        if op == "update_one":
            return self.update(table, 1)
        if op in ("update_many", "update"):
            return self.update(table, self.rng.randint(2, 4))
        if op == "pk_change":
            return self.pk_change(table)
        if op == "delete":
            return self.delete(table)
        return self.reinsert(table)

    # ------------------------------------------------------------ DDL
    def ddl(self, table: str, kind: str, statement: str) -> None:
        self._commit([self._change("DDL", table, None, None, ddl_statement=statement, ddl_kind=kind)])

    def add_column(self) -> None:
        old = self.schemas["customers"]
        self.schemas["customers"] = TableSchema(
            old.database, old.table, old.columns + (CUSTOMERS_NEW_COLUMN,), old.primary_key
        )
        col = CUSTOMERS_NEW_COLUMN
        self.ddl(
            "customers", "ALTER", f"ALTER TABLE `{DATABASE}`.`customers` ADD COLUMN `{col.name}` {col.mysql_type} NULL"
        )
        rows = self.keyed["customers"]
        for key in rows.keys():
            rows.put(key, {**rows.rows[key], col.name: None})

    def truncate(self) -> list[tuple]:
        statement = f"TRUNCATE TABLE `{DATABASE}`.`order_items`"
        self._commit(
            [self._change("TRUNCATE", "order_items", None, None, ddl_statement=statement, ddl_kind="TRUNCATE")]
        )
        truncated = self.keyed["order_items"].keys()
        self.keyed["order_items"].clear()
        return self.rng.sample(truncated, min(3, len(truncated)))

    # ------------------------------------------------------------ phases
    def snapshot(self, total: int) -> None:
        shares = (("customers", 0.4), ("order_items", 0.3), ("audit_log", 0.1), ("all_types", 0.2))
        chunk: list[SourceChange] = []
        for table, share in shares:
            count = max(4, round(total * share))
            rows = self._snapshot_rows(table, count)
            for row in rows:
                change = self.insert(table, op="SNAPSHOT", row=row)
                if change is not None:  # None: an identical keyless row already in this chunk
                    chunk.append(change)
                if len(chunk) >= self.opt.snapshot_chunk:
                    self._commit(chunk, is_snapshot=True)
                    chunk = []
        if chunk:
            self._commit(chunk, is_snapshot=True)

    def _snapshot_rows(self, table: str, count: int) -> list[dict[str, Any]]:
        # The first row of every table has NULL in every nullable column; all_types also
        # holds the extreme values; the rest are random.
        if table == "audit_log":
            return [self._null_row(table, {})] + [self._new_row(table, {}) for _ in range(count - 1)]
        rows = [self._null_row(table, self._fresh_key(table))]
        if table == "all_types":
            extremes = _extreme_rows()
            self.next_id["all_types"] = 4
            rows.extend(extremes)
        rows.extend(self._new_row(table, self._fresh_key(table)) for _ in range(count - len(rows)))
        return rows

    def incremental(self, target: int, progress: Callable[[int], None] | None) -> None:
        cum_weights = list(itertools.accumulate(w for _, _, w in _OP_WEIGHTS))
        ops = [(t, o) for t, o, _ in _OP_WEIGHTS]
        forced = list(_FORCED_OPS)
        start = self.row_changes
        alter_done = truncate_done = False
        pending_reinserts: list[tuple] = []
        report_every = max(1, target // 100)
        next_report = start + report_every
        while self.row_changes - start < target or forced:
            done = self.row_changes - start
            if not alter_done and done >= target * self.opt.alter_at and not forced:
                self.add_column()
                alter_done = True
            if not truncate_done and done >= target * self.opt.truncate_at and not forced:
                pending_reinserts = self.truncate()
                truncate_done = True
            changes: list[SourceChange] = []
            if forced:
                change = self.run_op(*forced.pop(0))
                changes = [change] if change else []
            elif pending_reinserts:
                changes = [c for c in (self.reinsert("order_items", k) for k in pending_reinserts) if c]
                pending_reinserts = []
            else:
                size = 1 + int(self.rng.random() ** 2 * self.opt.max_tx_changes)
                for table, op in self.rng.choices(ops, cum_weights=cum_weights, k=size):
                    change = self.run_op(table, op)
                    if change is None and op != "insert":
                        change = self.run_op(table, "insert")
                    if change is not None:
                        changes.append(change)
            if changes:
                self._commit(changes)
            if progress and self.row_changes >= next_report:
                progress(self.row_changes)
                next_report += report_every
        if not alter_done:
            self.add_column()
        if not truncate_done:
            self.truncate()


def build_workload(options: WorkloadOptions, seed: int, progress: Callable[[int], None] | None = None) -> Workload:
    """The workload for `seed`: same options and seed -> the same workload, always."""
    sim = _Simulator(options, seed)
    for schema in INITIAL_SCHEMAS:
        sim.ddl(schema.table, "CREATE", create_table_statement(schema))
    snapshot_rows = max(16, round(options.events * options.snapshot_share))
    sim.snapshot(snapshot_rows)
    sim.incremental(max(1, options.events - sim.row_changes), progress)
    # A last heartbeat after the last commit, so freshness sees the feed alive at the end.
    sim.heartbeats.append(max(sim.next_heartbeat, sim.clock + dt.timedelta(seconds=1)))
    tables = {(s.database, s.table): s for s in sim.schemas.values()}
    return Workload(tables=tables, transactions=sim.transactions, heartbeat_times=sim.heartbeats)
