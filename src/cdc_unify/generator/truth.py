"""The truth: every source table's final state and full version history, from the workload alone.

Never computed from encoded messages, so it can judge every dialect's pipeline.

Rules (docs/generator.md repeats them):
- a version starts when a row is inserted (or read by the snapshot) and ends at the commit
  time of the change that ends it; intervals are half-open `[valid_from, valid_to)`,
  `valid_to` is None while the version is current;
- an UPDATE starts a new version only when a value changes (canonical text compared, a
  column absent from an image counts as NULL); an UPDATE that changes the primary key
  ends the old key's version and starts the new key's;
- DELETE ends the version; TRUNCATE ends every open version of the table; DDL creates no
  versions (a column added later is simply absent from older versions' rows);
- keyed tables: `key` is the staged `primary_key` text, the JSON array of the key's
  canonical values (`["1000","2"]`);
- tables without a primary key: a row's identity is its full canonical image (`key` is the
  image as JSON with sorted keys); the state is a multiset, identical rows are separate
  versions, and a DELETE/UPDATE of one of several identical rows ends the copy that
  started first.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from cdc_unify.canonical import fmt_instant, to_canonical
from cdc_unify.generator.jsontext import plain_dumps, sorted_dumps
from cdc_unify.generator.model import Column, SourceChange, TableSchema, Workload

Row = dict[str, str | None]
_Formatter = tuple[str, Callable[[Any], str]]
TRUTH_DIR = "truth"


_plain_dumps = plain_dumps()
_sorted_dumps = sorted_dumps()


def key_text(values: Iterable[str | None]) -> str:
    """The staged `primary_key`: what Spark's `to_json(array<string>)` writes."""
    return _plain_dumps(list(values))


def row_text(row: Row) -> str:
    return _sorted_dumps(row)


def same_row(a: Row, b: Row) -> bool:
    """Equal canonical images, a missing column counting as NULL."""
    return all(a.get(k) == b.get(k) for k in a.keys() | b.keys())


def parse_instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass(slots=True)
class Version:
    key: str
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    row: Row

    def valid_at(self, instant: dt.datetime) -> bool:
        return self.valid_from <= instant and (self.valid_to is None or instant < self.valid_to)


@dataclass
class SchemaVersion:
    effective_from: dt.datetime
    ddl_kind: str
    ddl_statement: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]


@dataclass
class TableTruth:
    database: str
    table: str
    primary_key: tuple[str, ...]
    versions: list[Version] = field(default_factory=list)
    schema_versions: list[SchemaVersion] = field(default_factory=list)
    _open: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def identity(self) -> str:
        return "primary_key" if self.primary_key else "row"

    # ------------------------------------------------------------ building
    def start(self, key: str, row: Row, at: dt.datetime) -> None:
        version = Version(key, at, None, row)
        self.versions.append(version)
        if self.primary_key:
            if key in self._open:
                raise ValueError(f"{self.name}: key {key} inserted at {at} while already present")
            self._open[key] = version
        else:
            self._open.setdefault(key, deque()).append(version)

    def end(self, key: str, at: dt.datetime) -> None:
        if self.primary_key:
            version = self._open.pop(key, None)
        else:
            copies = self._open.get(key)
            version = copies.popleft() if copies else None
            if copies is not None and not copies:
                del self._open[key]
        if version is None:
            raise ValueError(f"{self.name}: change at {at} of row {key} which does not exist")
        version.valid_to = at

    def change(self, key: str, row: Row, at: dt.datetime) -> None:
        current = self._open.get(key)
        if current is None:
            raise ValueError(f"{self.name}: update at {at} of key {key} which does not exist")
        if not same_row(current.row, row):
            self.end(key, at)
            self.start(key, row, at)

    def end_all(self, at: dt.datetime) -> None:
        for entry in self._open.values():
            for version in entry if isinstance(entry, deque) else (entry,):
                version.valid_to = at
        self._open.clear()

    # ------------------------------------------------------------ reading
    def state_at(self, instant: dt.datetime) -> list[Row]:
        """Rows present at `instant` (a multiset for a table without a key), sorted by key."""
        return [v.row for v in sorted((v for v in self.versions if v.valid_at(instant)), key=_version_order)]

    def final_state(self) -> list[Row]:
        return [v.row for v in sorted((v for v in self.versions if v.valid_to is None), key=_version_order)]

    def history(self) -> list[Version]:
        return sorted(self.versions, key=_version_order)


def _version_order(v: Version) -> tuple[str, dt.datetime]:
    return (v.key, v.valid_from)


@dataclass
class Truth:
    tables: dict[str, TableTruth]  # "database.table" -> its truth

    def state_at(self, instant: dt.datetime) -> dict[str, list[Row]]:
        return {name: t.state_at(instant) for name, t in self.tables.items()}

    def final_state(self) -> dict[str, list[Row]]:
        return {name: t.final_state() for name, t in self.tables.items()}


class _Canonicaliser:
    """Canonical images, with the formatters of a schema object looked up once."""

    def __init__(self) -> None:
        self._formatters: dict[int, tuple[TableSchema, list[_Formatter], list[_Formatter]]] = {}

    def _for(self, schema: TableSchema) -> tuple[TableSchema, list[_Formatter], list[_Formatter]]:
        cached = self._formatters.get(id(schema))
        if cached is None or cached[0] is not schema:
            every = [(c.name, partial(to_canonical, c.logical_type)) for c in schema.columns]
            keys = [f for f in every if f[0] in schema.primary_key] if schema.primary_key else every
            cached = self._formatters[id(schema)] = (schema, every, keys)
        return cached

    def __call__(self, schema: TableSchema, image: dict[str, Any], key_only: bool = False) -> Row:
        formatters = self._for(schema)[2 if key_only else 1]
        return {name: None if (v := image[name]) is None else fmt(v) for name, fmt in formatters}

    @staticmethod
    def ident(schema: TableSchema, row: Row) -> str:
        return key_text(row[k] for k in schema.primary_key) if schema.primary_key else row_text(row)


def compute_truth(workload: Workload) -> Truth:
    tables = {f"{db}.{t}": TableTruth(db, t, schema.primary_key) for (db, t), schema in workload.tables.items()}
    canon = _Canonicaliser()
    for tx in workload.transactions:
        for change in tx.changes:
            _apply(tables[f"{change.schema.database}.{change.schema.table}"], change, tx.commit_ts, canon)
    return Truth(tables)


def _apply(table: TableTruth, change: SourceChange, at: dt.datetime, canon: _Canonicaliser) -> None:
    op = change.op
    if op == "DDL":
        table.schema_versions.append(
            SchemaVersion(
                at, change.ddl_kind or "", change.ddl_statement or "", change.schema.columns, change.schema.primary_key
            )
        )
        return
    if op == "TRUNCATE":
        table.end_all(at)
        return
    schema = change.schema
    after = canon(schema, change.after) if change.after is not None else None
    new = canon.ident(schema, after) if after is not None else None
    # Of a before image only its identity is needed: the key columns, or the whole row.
    old = canon.ident(schema, canon(schema, change.before, key_only=True)) if change.before is not None else None
    if op in ("INSERT", "SNAPSHOT"):
        table.start(new, after, at)
    elif op == "DELETE":
        table.end(old, at)
    elif op == "UPDATE":
        if old == new:
            table.change(new, after, at)
        else:
            table.end(old, at)
            table.start(new, after, at)
    else:
        raise ValueError(f"unknown workload op {op!r}")


# ---------------------------------------------------------------- files
def _column_json(col: Column) -> dict[str, Any]:
    return {"name": col.name, "logical_type": col.logical_type, "mysql_type": col.mysql_type, "nullable": col.nullable}


def _ts(value: dt.datetime | None) -> str | None:
    return None if value is None else fmt_instant(value)


def write_truth(truth: Truth, out_dir: Path) -> dict[str, dict[str, int]]:
    """`tables.json`, then per table `<db>.<table>.state.jsonl` and `.history.jsonl`; returns counts."""
    out_dir.mkdir(parents=True, exist_ok=True)
    catalog = {}
    counts = {}
    for name, table in sorted(truth.tables.items()):
        history = table.history()
        current = [v for v in history if v.valid_to is None]
        catalog[name] = {
            "database": table.database,
            "table": table.table,
            "primary_key": list(table.primary_key),
            "identity": table.identity,
            "schema_versions": [
                {
                    "effective_from": _ts(s.effective_from),
                    "ddl_kind": s.ddl_kind,
                    "ddl_statement": s.ddl_statement,
                    "columns": [_column_json(c) for c in s.columns],
                    "primary_key": list(s.primary_key),
                }
                for s in table.schema_versions
            ],
        }
        with open(out_dir / f"{name}.state.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for v in current:
                fh.write(_sorted_dumps({"key": v.key, "row": v.row}) + "\n")
        with open(out_dir / f"{name}.history.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            number, previous = 0, None
            for v in history:
                number = number + 1 if v.key == previous else 1
                previous = v.key
                fh.write(
                    _sorted_dumps(
                        {
                            "key": v.key,
                            "version": number,
                            "valid_from": _ts(v.valid_from),
                            "valid_to": _ts(v.valid_to),
                            "row": v.row,
                        }
                    )
                    + "\n"
                )
        counts[name] = {"rows": len(current), "versions": len(history)}
    (out_dir / "tables.json").write_text(_sorted_dumps(catalog) + "\n", encoding="utf-8")
    return counts


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)


def load_truth(out_dir: Path) -> Truth:
    """The truth written by `write_truth`, for tests that judge a pipeline's output."""
    catalog = json.loads((out_dir / "tables.json").read_text(encoding="utf-8"))
    tables = {}
    for name, meta in catalog.items():
        table = TableTruth(meta["database"], meta["table"], tuple(meta["primary_key"]))
        for s in meta["schema_versions"]:
            cols = tuple(Column(c["name"], c["logical_type"], c["mysql_type"], c["nullable"]) for c in s["columns"])
            table.schema_versions.append(
                SchemaVersion(
                    parse_instant(s["effective_from"]), s["ddl_kind"], s["ddl_statement"], cols, tuple(s["primary_key"])
                )
            )
        for rec in _read_jsonl(out_dir / f"{name}.history.jsonl"):
            valid_to = rec["valid_to"]
            table.versions.append(
                Version(
                    rec["key"],
                    parse_instant(rec["valid_from"]),
                    None if valid_to is None else parse_instant(valid_to),
                    rec["row"],
                )
            )
        tables[name] = table
    return Truth(tables)
