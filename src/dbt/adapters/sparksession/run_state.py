"""What one dbt invocation learns about its incremental writes, kept by the adapter for the macros
that run after them (dbt runs nodes in threads: every access holds the lock).

- Models that found nothing new when they compiled (macro cdc_skip_write_when_nothing_new): their
  materialization then writes nothing and runs no query. Their SQL would read and write nothing
  anyway, but Spark would still analyse, plan and start the whole plan over empty inputs, seconds
  a model on every run.
- How many rows each incremental write of the invocation had: the data tests of a model this
  invocation ran know what it wrote without a query, and whether the keys a key test looks up
  are few enough to broadcast (macros/test_scope.sql).
- The incremental models it built whole (a first build: the table created anew): every row they
  hold is then what this invocation wrote, so their data tests check every row as such, without
  narrowing the table to its newest rows first (macros/test_scope.sql).
- The views it kept or re-created with the SQL they had: their rows are their parents' rows, so
  what a parent wrote tells their data tests what to check, without a query
  (macros/test_scope.sql).
- The newest values (newest_values) each model asked for of its table while it compiled for a
  full build: its materialization keeps them with the table it writes, so that its first
  incremental run reads them without a scan.
- The newest built_at of every relation a data test scopes, and the rows stamped with it where
  no write of the invocation counted them: one query per relation, not one per test (a model has
  up to twenty tests, which compile concurrently: the later ones wait for the first one's query).
- The failing rows per test of a model's tests of each row (not_null, accepted_values,
  expression_is_true), counted by one query per scope (row_checks).
- The data tests whose compile found that their query could return no row (an empty scope, or no
  failing row in the query the model's tests of each row shared): their materialization stores a
  passing result instead of sending Spark a query over nothing (about 50 ms of planning and
  running each, on every test of every build).
- What each model that keeps some rows of its input read of it (newest_values.read_until): stored
  with its table once its write is in, by its materialization.
- Whether the run-start hook applied what killed runs left (sparksession_apply_killed_writes): a
  model's materialization then has nothing of a killed run to apply, and asks nothing of the
  metastore and the file system for it.

State of an earlier invocation in the same process (dbt's Python API) is dropped when a call names
another invocation id.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def relation_key(relation: Any) -> str:
    return f"{relation.schema}.{relation.identifier}".lower()


class RunState:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._invocation: str | None = None
        self._nothing_new: set[str] = set()
        self._tests_passed: set[str] = set()
        self._wrote_rows: dict[str, int] = {}
        self._built_whole: set[str] = set()
        self._newest_built_at: dict[str, int | None] = {}
        self._counted_rows: dict[str, int] = {}
        self._row_check_failures: dict[str, dict[str, int] | None] = {}
        self._querying: dict[str, threading.Lock] = {}
        self._views_following: set[str] = set()
        self._kept: dict[str, set[tuple[str | None, str]]] = {}
        self._read: dict[str, tuple[str, dict[str, int]]] = {}
        self._killed_writes_applied = False

    def _of(self, invocation_id: str) -> None:
        if invocation_id != self._invocation:
            self._invocation = invocation_id
            self._nothing_new.clear()
            self._tests_passed.clear()
            self._wrote_rows.clear()
            self._built_whole.clear()
            self._newest_built_at.clear()
            self._counted_rows.clear()
            self._row_check_failures.clear()
            self._querying.clear()
            self._views_following.clear()
            self._kept.clear()
            self._read.clear()
            self._killed_writes_applied = False

    def mark_nothing_new(self, invocation_id: str, relation: Any) -> None:
        with self._lock:
            self._of(invocation_id)
            self._nothing_new.add(relation_key(relation))

    def take_nothing_new(self, invocation_id: str, relation: Any) -> bool:
        """Whether the model's compile found nothing new; the mark is used once."""
        with self._lock:
            self._of(invocation_id)
            key = relation_key(relation)
            found = key in self._nothing_new
            self._nothing_new.discard(key)
            return found

    def mark_test_passed(self, invocation_id: str, test_id: str) -> None:
        with self._lock:
            self._of(invocation_id)
            self._tests_passed.add(test_id)

    def take_test_passed(self, invocation_id: str, test_id: str) -> bool:
        """Whether data test `test_id`'s compile found that its query returns no row; used once."""
        with self._lock:
            self._of(invocation_id)
            found = test_id in self._tests_passed
            self._tests_passed.discard(test_id)
            return found

    def mark_killed_writes_applied(self, invocation_id: str) -> None:
        with self._lock:
            self._of(invocation_id)
            self._killed_writes_applied = True

    def killed_writes_applied(self, invocation_id: str) -> bool:
        """Whether this invocation's run-start hook applied every killed run's pending write."""
        with self._lock:
            self._of(invocation_id)
            return self._killed_writes_applied

    def keep_newest(self, invocation_id: str, relation: Any, group: str | None, value: str) -> None:
        with self._lock:
            self._of(invocation_id)
            self._kept.setdefault(relation_key(relation), set()).add((group, value))

    def kept_newest(self, invocation_id: str, relation: Any) -> list[tuple[str | None, str]]:
        """The (group, value) pairs asked for by keep_newest, in a stable order."""
        with self._lock:
            self._of(invocation_id)
            return sorted(self._kept.get(relation_key(relation), ()), key=str)

    def will_have_read(self, invocation_id: str, relation: Any, source: str, newest: dict[str, int]) -> None:
        with self._lock:
            self._of(invocation_id)
            self._read[relation_key(relation)] = (source, newest)

    def take_read(self, invocation_id: str, relation: Any) -> tuple[str, dict[str, int]] | None:
        """(source, newest landing per feed) as will_have_read left it for `relation`; used once."""
        with self._lock:
            self._of(invocation_id)
            return self._read.pop(relation_key(relation), None)

    def record_write(self, invocation_id: str, relation: Any, rows: int) -> None:
        """This invocation wrote `rows` rows of `relation` (0: it left it as it was)."""
        with self._lock:
            self._of(invocation_id)
            self._wrote_rows[relation_key(relation)] = rows
            self._newest_built_at.pop(relation_key(relation), None)
            self._counted_rows.pop(relation_key(relation), None)

    def record_built_whole(self, invocation_id: str, relation: Any) -> None:
        """This invocation built `relation` whole: every row it holds is one this invocation wrote."""
        with self._lock:
            self._of(invocation_id)
            self._built_whole.add(relation_key(relation))

    def built_whole(self, invocation_id: str, relation: Any) -> bool:
        with self._lock:
            self._of(invocation_id)
            return relation_key(relation) in self._built_whole

    def wrote_rows(self, invocation_id: str, relation: Any) -> bool | None:
        """Whether this invocation's incremental write of `relation` had rows; None: no such write."""
        written = self.written_rows(invocation_id, relation)
        return None if written is None else written > 0

    def written_rows(self, invocation_id: str, relation: Any) -> int | None:
        """The rows this invocation's write of `relation` had; None: no such write."""
        with self._lock:
            self._of(invocation_id)
            return self._wrote_rows.get(relation_key(relation))

    def record_view(self, invocation_id: str, relation: Any, same_sql: bool) -> None:
        """A view this invocation kept or re-created; `same_sql`: with the SQL it had before."""
        with self._lock:
            self._of(invocation_id)
            if same_sql:
                self._views_following.add(relation_key(relation))
            else:
                self._views_following.discard(relation_key(relation))

    def view_follows_parents(self, invocation_id: str, relation: Any) -> bool:
        """Whether this invocation kept or re-created the view with its former SQL (its rows changed
        only as its parents' did)."""
        with self._lock:
            self._of(invocation_id)
            return relation_key(relation) in self._views_following

    def newest_built_at(self, invocation_id: str, relation: Any, query: Callable[[], int | None]) -> int | None:
        """`query()` (the relation's newest built_at in microseconds), run once per relation: a
        caller that comes while it runs waits for its answer."""
        return self._once(invocation_id, relation_key(relation), self._newest_built_at, query)

    def counted_rows(self, invocation_id: str, relation: Any, query: Callable[[], int]) -> int:
        """`query()` (the rows of `relation` its last write stamped), run once per relation, as
        newest_built_at."""
        return self._once(invocation_id, relation_key(relation), self._counted_rows, query)

    def row_check_failures(
        self, invocation_id: str, sql: str, query: Callable[[], dict[str, int] | None]
    ) -> dict[str, int] | None:
        """`query()` (failing rows per test, row_checks.query `sql`), run once per query text, as
        newest_built_at. Not dropped by record_write: a model's tests run after its write."""
        return self._once(invocation_id, sql, self._row_check_failures, query)

    def _once(self, invocation_id: str, key: str, answers: dict[str, Any], query: Callable[[], Any]) -> Any:
        with self._lock:
            self._of(invocation_id)
            if key in answers:
                return answers[key]
            pending = self._querying.setdefault(f"{id(answers)}:{key}", threading.Lock())
        with pending:
            with self._lock:
                if key in answers:
                    return answers[key]
            answer = query()
            with self._lock:
                answers[key] = answer
        return answer
