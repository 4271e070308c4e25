"""The simulated source database: what happened, independent of any message format.

The workload is a list of committed `Transaction`s, each holding `SourceChange`s.  Every
dialect encoder turns the same workload into its own messages; the truth (final state and
version history) is computed from the workload alone, never from encoded messages.

Invariants the workload guarantees (encoders and decoders may rely on them):
- transactions are committed in `seq` order; `commit_ts` strictly increases by at least
  one millisecond per transaction and has microsecond precision;
- a transaction changes a given row (table + primary key) at most once;
- `position` (a synthetic binlog file index + offset) strictly increases with every change.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    logical_type: str  # a cdc_unify.canonical logical type, e.g. "decimal(38,10)"
    mysql_type: str  # the MySQL column type text a binlog-based tool reports, e.g. "bigint(20) unsigned"
    nullable: bool = True


@dataclass(frozen=True)
class TableSchema:
    database: str
    table: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]  # empty: the table has no primary key

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(name)


@dataclass(frozen=True)
class Position:
    """A synthetic MySQL binlog coordinate: `mysql-bin.{file_index:06d}` at `offset`."""

    file_index: int
    offset: int

    @property
    def file_name(self) -> str:
        return f"mysql-bin.{self.file_index:06d}"


@dataclass(frozen=True)
class SourceChange:
    """One committed change: a row change, a truncate, a DDL statement or a snapshot row.

    op: INSERT, UPDATE, DELETE, SNAPSHOT (full-load row, `after` only), TRUNCATE
    (no images), DDL (`ddl_statement` and `ddl_kind`: CREATE, ALTER, DROP, ...).
    Images map column name -> true Python value (see canonical.to_canonical); they
    always carry every column of `schema` (full images): encoders that send partial
    images derive them.
    """

    op: str
    schema: TableSchema  # the table's schema when the change happened (after a DDL: the new schema)
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    position: Position
    ddl_statement: str | None = None
    ddl_kind: str | None = None

    def key_of(self, image: dict[str, Any] | None) -> tuple | None:
        if image is None or not self.schema.primary_key:
            return None
        return tuple(image[c] for c in self.schema.primary_key)


@dataclass(frozen=True)
class Transaction:
    seq: int  # 1, 2, 3 ... in commit order
    tx_id: str  # source transaction id / GTID-like text, unique
    commit_ts: dt.datetime  # aware, UTC, microsecond precision
    changes: tuple[SourceChange, ...]
    is_snapshot: bool = False  # full-load rows, read before the incremental stream


@dataclass
class Workload:
    tables: dict[tuple[str, str], TableSchema]  # (database, table) -> final schema
    transactions: list[Transaction] = field(default_factory=list)
    heartbeat_times: list[dt.datetime] = field(default_factory=list)
