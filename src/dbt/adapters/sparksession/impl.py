"""dbt-spark's adapter, plus Python models executed in the dbt process's own SparkSession."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.events.types import SQLQuery
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.events.contextvars import get_node_info
from dbt_common.events.functions import fire_event
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.utils import cast_to_str
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from dbt.adapters.sparksession import compaction, new_rows, newest_values, pending_writes, row_checks
from dbt.adapters.sparksession.connections import SparkSessionConnectionManager
from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper
from dbt.adapters.sparksession.run_state import RunState, relation_key

logger = AdapterLogger("SparkSession")

# What the SQL of an incremental model's pending write (adapter.write_pending) is logged after.
PENDING_WRITE_COMMENT = "/* sparksession: pending write */"

# The table property holding the fingerprint (MD5 of the compiled SQL) a table or view was built from.
FINGERPRINT = "cdc_unify.built_from"
# Table properties under this prefix describe how a table lays out its rows (e.g. its key_bucket
# count): set from the model's config tblproperties when it is built whole, fixed after that.
LAYOUT = "cdc_unify.layout"


class SparkSessionAdapter(SparkAdapter):
    ConnectionManager = SparkSessionConnectionManager

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> dict[str, Any]:
        return {**super()._get_adapter_specific_run_info(config), "adapter_type": "sparksession"}

    @available
    def apply_pending_write(self, invocation_id: str, target: BaseRelation, layout: dict[str, Any]) -> bool:
        """Finish (or, left by a killed run, redo) an incremental write: pending_writes.apply_pending
        (`layout`: pending_writes.Layout.of), after a merge of small files a killed run left
        (compaction.apply_killed). Nothing to do, and nothing asked, when this invocation's
        run-start hook applied every killed write already (apply_killed_writes): no pending write
        appears during a run but the run's own, which apply_written applies."""
        if self._run.killed_writes_applied(invocation_id):
            return False
        return self.apply_killed_write(target, layout)

    @available
    def apply_killed_writes(self, invocation_id: str, writes: list[tuple[BaseRelation, dict[str, Any]]]) -> int:
        """apply_killed_write for each (target, layout) of the run-start hook whose table shows work
        a killed run left (a pending folder, the pending table of a version before them, a merge not
        finished: compaction.killed_left_work); the others, every one on most runs, are skipped
        after one look at their schemas' tables (pending_writes.table_locations) and at their
        folders. Returns how many were applied; once all are, the invocation's materializations
        skip apply_pending_write."""
        session = self._session()
        locations = pending_writes.table_locations(session, {target.schema for target, _ in writes})
        applied = 0
        for target, layout in writes:
            location = pending_writes.located(locations, target)
            if location is None:
                continue
            legacy = pending_writes.located(locations, pending_writes.legacy_pending(target))
            if legacy is not None:
                pending_writes.adopt_legacy_pending(session, target, legacy)
            files, folder = pending_writes.folder_at(session, location)
            pending = files.exists(pending_writes.pending_folder(files, folder))
            if (pending or compaction.killed_left_work(session, target, locations)) and self.apply_killed_write(
                target, layout
            ):
                applied += 1
        self._run.mark_killed_writes_applied(invocation_id)
        return applied

    def apply_killed_write(self, target: BaseRelation, layout: dict[str, Any]) -> bool:
        """A killed run's pending write (or merge) of an existing table, applied when the next run
        starts. Not for macros: the run-start hook calls apply_killed_writes, which calls this only
        for the models whose tables show work left, and a materialization apply_pending_write."""
        session, write_layout = self._session(), pending_writes.Layout.of(layout)
        merged = compaction.apply_killed(session, target, len(write_layout.partition_by))
        return pending_writes.apply_pending(session, target, write_layout) or merged

    @available
    def write_pending(
        self, sql: str, target: BaseRelation, layout: dict[str, Any], file_format: str, on_schema_change: str
    ) -> AdapterResponse:
        """An incremental SQL model's rows (query `sql`) written as the pending write of `target`
        (pending_writes.write_pending); what dbt records as the model's main statement."""
        session, write_layout = self._session(), pending_writes.Layout.of(layout)
        # As dbt logs a statement's SQL (dbt.log, and the events tests collect).
        connection = self.connections.get_thread_connection()
        fire_event(
            SQLQuery(
                conn_name=cast_to_str(connection.name), sql=f"{PENDING_WRITE_COMMENT}\n{sql}", node_info=get_node_info()
            )
        )
        with self.connections.exception_handler(sql):
            try:
                frame = session.sql(sql)
                pending_writes.write_pending(
                    session, frame, target, write_layout.partition_by, file_format, on_schema_change
                )
            except pending_writes.SchemaChanged as exc:
                raise DbtRuntimeError(str(exc)) from exc
        return AdapterResponse(_message="OK")

    @available
    def apply_written(self, invocation_id: str, target: BaseRelation, layout: dict[str, Any]) -> int:
        """Apply the pending write a run has just made (pending_writes.apply_written), remember for
        the invocation's data tests how many rows it had, then merge the small files of the
        partitions it appended to (compaction, with the layout's compact_fan_in)."""
        session, write_layout = self._session(), pending_writes.Layout.of(layout)
        applied = pending_writes.apply_written(session, target, write_layout)
        self._run.record_write(invocation_id, target, applied.rows)
        if write_layout.compact_fan_in and applied.appended:
            merged = compaction.compact(
                session, target, write_layout.partition_by, applied.appended, write_layout.compact_fan_in
            )
            log_merged(target, merged, write_layout.compact_fan_in)
        return applied.rows

    @available
    def compact_built(self, target: BaseRelation, layout: dict[str, Any]) -> int:
        """After a full build of `target`: the small files it wrote into the partitions the model
        appends to, merged (compaction.compact_built) before any incremental run finds them."""
        write_layout = pending_writes.Layout.of(layout)
        merged = compaction.compact_built(self._session(), target, write_layout)
        log_merged(target, merged, write_layout.compact_fan_in)
        return merged

    @available
    def skip_write(self, invocation_id: str, relation: BaseRelation) -> str:
        """Called while a model compiles that found nothing new: its materialization writes nothing
        (run_state). Returns '' so that a template may call it inline."""
        self._run.mark_nothing_new(invocation_id, relation)
        return ""

    @available
    def write_skipped(self, invocation_id: str, relation: BaseRelation) -> bool:
        """Whether the model about to be written found nothing new when it compiled; then also
        remembered as a write without rows."""
        skipped = self._run.take_nothing_new(invocation_id, relation)
        if skipped:
            self._run.record_write(invocation_id, relation, 0)
        return skipped

    @available
    def pass_without_query(self, invocation_id: str, test_id: str) -> str:
        """Called while data test `test_id` compiles in a build or test run, when its query can
        return no row (macros/test_scope.sql): its materialization then stores a passing result
        without the query (passing_test_result). Returns '' for inline calls."""
        self._run.mark_test_passed(invocation_id, test_id)
        return ""

    @available
    def passes_without_query(self, invocation_id: str, test_id: str) -> bool:
        """Whether data test `test_id`'s compile called pass_without_query in this invocation."""
        return self._run.take_test_passed(invocation_id, test_id)

    @available
    def passing_test_result(self) -> tuple[AdapterResponse, Any]:
        """(response, table) of a data test that counted no failing row, as its query over no row
        would have returned them (failures 0, neither warn nor error)."""
        from dbt_common.clients import agate_helper

        table = agate_helper.table_from_data_flat(
            [{"failures": 0, "should_warn": False, "should_error": False}],
            ["failures", "should_warn", "should_error"],
        )
        return AdapterResponse(_message="OK (no query: no row can fail)", code="NO QUERY", rows_affected=0), table

    @available
    def record_unchanged(self, invocation_id: str, relation: BaseRelation) -> str:
        """A table or view this invocation left as it was (unchanged.sql); '' for inline calls."""
        self._run.record_write(invocation_id, relation, 0)
        return ""

    @available
    def fingerprint(self, relation: BaseRelation) -> str | None:
        """The fingerprint a table or view was built with (table property FINGERPRINT); None without one."""
        rows = self._session().sql(f"show tblproperties {pending_writes.quoted(relation)}").collect()
        return next((row.value for row in rows if row.key == FINGERPRINT), None)

    @available
    def layout_changes(self, relation: BaseRelation, wanted: dict[str, Any] | None) -> list[str]:
        """The layout properties (LAYOUT) of config tblproperties `wanted` that table `relation`
        holds with another value, each as `name: <table's> -> <wanted>` (name without the prefix).
        Those it holds none of (a table built before layouts were kept) it keeps from now on, as
        `wanted` has them. No query without `wanted`."""
        layout = {key: str(value) for key, value in (wanted or {}).items() if key.startswith(LAYOUT + ".")}
        if not layout:
            return []
        table = pending_writes.quoted(relation)
        held = newest_values.stored(self._session(), table, LAYOUT)
        changes = [
            f"{key[len(LAYOUT) + 1 :]}: {held[key]} -> {value}"
            for key, value in sorted(layout.items())
            if key in held and held[key] != value
        ]
        if not changes:
            newest_values.store(
                self._session(), table, {key: value for key, value in layout.items() if key not in held}
            )
        return changes

    @available
    def created_before(self, relation: BaseRelation, parents: list[BaseRelation]) -> bool:
        """Whether no relation of `parents` was created (a table made, a view made or re-created;
        writes keep the time) after `relation` was, by the metastore's creation times. Those are
        seconds: a parent made in the view's second was made before it by the same invocation
        (dbt makes a view after its parents, and an invocation takes longer than a second to
        reach its first model). False when one is missing (the caller then re-creates `relation`,
        and Spark says what is missing)."""
        catalog = self._session()._jsparkSession.sharedState().externalCatalog()

        def created(of: BaseRelation) -> int:
            return int(catalog.getTable(of.schema.lower(), of.identifier.lower()).createTime())

        try:
            made = created(relation)
            return all(created(parent) <= made for parent in parents)
        except Py4JJavaError:
            return False

    @available
    def set_fingerprint(self, relation: BaseRelation, kind: str, fingerprint: str) -> str:
        """Stores what a table or view (`kind`) was built from; '' for inline calls."""
        self._session().sql(
            f"alter {kind} {pending_writes.quoted(relation)} set tblproperties ('{FINGERPRINT}' = '{fingerprint}')"
        )
        return ""

    @available
    def wrote_rows(self, invocation_id: str, relation: BaseRelation) -> bool | None:
        """Whether this invocation's write of `relation` had rows: False also for a table or view it
        left unchanged; None: this invocation did not materialise it."""
        return self._run.wrote_rows(invocation_id, relation)

    @available
    def record_built_whole(self, invocation_id: str, relation: BaseRelation) -> str:
        """An incremental model's full build made `relation` anew in this invocation (its data tests
        then check every row, macros/test_scope.sql); '' for inline calls."""
        self._run.record_built_whole(invocation_id, relation)
        return ""

    @available
    def built_whole(self, invocation_id: str, relation: BaseRelation) -> bool:
        """Whether this invocation built `relation` whole (record_built_whole)."""
        return self._run.built_whole(invocation_id, relation)

    @available
    def written_rows(self, invocation_id: str, relation: BaseRelation) -> int | None:
        """The rows this invocation's write of `relation` had: 0 also for a table or view it left
        unchanged; None: this invocation did not materialise it."""
        return self._run.written_rows(invocation_id, relation)

    @available
    def rows_of_last_write(self, invocation_id: str, relation: BaseRelation, built_at: str) -> int:
        """How many rows of `relation` the last write stamped (`built_at`: that write's built_at, a
        SQL expression): the count of this invocation's write of it when it made one, else counted
        once per relation and invocation (a view, a table its materialization rebuilt)."""
        written = self._run.written_rows(invocation_id, relation)
        if written is not None:
            return written

        def query() -> int:
            sql = f"select count(*) from {pending_writes.quoted(relation)} where built_at = {built_at}"
            return int(self._session().sql(sql).collect()[0][0])

        return self._run.counted_rows(invocation_id, relation, query)

    @available
    def record_view(self, invocation_id: str, relation: BaseRelation, same_sql: bool) -> str:
        """A view this invocation kept or re-created, `same_sql` if with the SQL it had; '' for inline calls."""
        self._run.record_view(invocation_id, relation, same_sql)
        return ""

    @available
    def view_follows_parents(self, invocation_id: str, relation: BaseRelation) -> bool:
        """Whether this invocation kept or re-created the view with the SQL it had (its rows then changed
        only as its parents' rows did)."""
        return self._run.view_follows_parents(invocation_id, relation)

    @available
    def newest_built_at_micros(self, invocation_id: str, relation: BaseRelation) -> int | None:
        """The newest built_at of `relation` in microseconds (None: no row), queried once per
        relation and invocation."""

        def query() -> int | None:
            return (
                self._session()
                .sql(f"select unix_micros(max(built_at)) from {pending_writes.quoted(relation)}")
                .collect()[0][0]
            )

        return self._run.newest_built_at(invocation_id, relation, query)

    @available
    def passes_row_check(
        self, invocation_id: str, nodes: dict[str, Any], test_id: str, scoped: str, selected: list[str]
    ) -> bool:
        """Whether data test `test_id`, a test of each row (row_checks) reading `scoped` (its scope,
        macros/test_scope.sql), finds no failing row: counted together with the model's other such
        tests, one query per scope and invocation. False when it is checked alone, fails, or the
        shared query fails: the test then runs its own query."""
        checks = row_checks.checks_with(nodes, test_id, set(selected or ()))
        if len(checks) < 2:
            return False
        sql = row_checks.query(scoped, checks)

        def count() -> dict[str, int] | None:
            try:
                row = self._session().sql(sql).collect()[0]
            except Exception as error:  # noqa: BLE001 - each test then runs, and reports, its own query
                logger.debug(f"row checks of {len(checks)} tests not shared: {str(error).splitlines()[0]}")
                return None
            logger.debug(f"row checks: {len(checks)} tests counted in one query")
            return row_checks.failures(row, checks)

        failures = self._run.row_check_failures(invocation_id, sql, count)
        return failures is not None and failures.get(test_id) == 0

    @available
    def newest_values(self, relation: BaseRelation, group: str | None, value: str) -> list[list[Any]]:
        """[group, newest `value` in microseconds] per `group` of table `relation`'s rows (one pair with
        group None without `group`; none for a table without such rows): kept with the table and
        read without a scan while its files are those it was computed from (newest_values)."""
        return newest_pairs(pending_writes.newest_of(self._session(), relation, newest_values.Newest(group, value)))

    @available
    def rows_past_from_footers(
        self,
        relations: list[BaseRelation],
        group: str | None,
        value: str,
        held: list[list[Any]],
        only: list[str] | None = None,
        no_feed: str | None = None,
        partitioned: bool = False,
    ) -> list[list[Any]] | None:
        """[group, rows] per group of the rows of tables `relations` past watermarks `held` ([group,
        microseconds] pairs), as new_rows.Past counts them (`only`: of those groups alone; a group
        without a name is `no_feed`), from their Parquet footers: no Spark job. None where one of
        the tables' footers does not tell it (new_rows.count, pending_writes.rows_past; a
        partitioned table unless `partitioned`: models of this project, whose partitions are the
        folders their writes make): the caller runs its query."""
        session = self._session()
        past = new_rows.Past(
            group,
            value,
            {row[0]: int(row[1]) for row in held},
            None if only is None else frozenset(only),
            no_feed,
        )
        total: dict[str | None, int] = {}
        for relation in relations:
            found = pending_writes.rows_past(session, relation, past, partitioned)
            if found is None:
                return None
            for key, rows in found.items():
                total[key] = total.get(key, 0) + rows
        return [[key, rows] for key, rows in sorted(total.items(), key=lambda item: (item[0] is None, item[0] or ""))]

    @available
    def kept_newest_values(self, relation: BaseRelation, group: str | None, value: str) -> list[list[Any]] | None:
        """As newest_values, but only as kept with the table (no scan): None when table `relation`
        keeps no such value matching its files (a small table, a table changed by another writer, a
        landing table or a view: one read of its properties).
        What a downstream model asks of a table it reads, to learn which groups may have rows past
        its own watermarks without reading them."""
        session = self._session()
        found = newest_values.kept(
            session,
            pending_writes.quoted(relation),
            newest_values.Newest(group, value),
            lambda: pending_writes.table_folder(session, relation),
        )
        return None if found is None else newest_pairs(found)

    @available
    def raised_to_read_until(
        self, relation: BaseRelation, source: BaseRelation, held: list[list[Any]]
    ) -> list[list[Any]]:
        """The watermarks `held` of model `relation` ([feed, microseconds] pairs of the newest row it
        keeps) each raised to the newest landing of table `source` it has read up to, and the feeds
        it has read without keeping a row added (newest_values.read_until): a model that keeps some
        rows of its input reads each of its rows once."""
        read = newest_values.read_until(self._session(), pending_writes.quoted(relation), relation_key(source))
        return newest_pairs(newest_values.merged(newest_values.values_of(held), read))

    @available
    def will_have_read(
        self, invocation_id: str, relation: BaseRelation, source: BaseRelation, newest: list[list[Any]]
    ) -> str:
        """Called while a model compiles: it reads table `source` up to `newest` ([feed, microseconds]
        pairs, as kept_newest_values gives them), stored with its table by store_read_until once its
        write is in. '' for inline calls."""
        self._run.will_have_read(invocation_id, relation, relation_key(source), newest_values.values_of(newest))
        return ""

    @available
    def store_read_until(self, invocation_id: str, relation: BaseRelation) -> str:
        """After the write of model `relation` (or a run that wrote nothing): what will_have_read
        said it read, stored with its table (newest_values.store_read_until). '' for inline calls."""
        read = self._run.take_read(invocation_id, relation)
        if read is not None:
            newest_values.store_read_until(self._session(), pending_writes.quoted(relation), *read)
        return ""

    @available
    def keep_newest(self, invocation_id: str, relation: BaseRelation, group: str | None, value: str) -> str:
        """Called while a model compiles for a full build: the newest `value` per `group` its
        incremental runs will ask of its table (newest_values), kept with the table once its
        materialization has written it (store_newest). '' for inline calls."""
        self._run.keep_newest(invocation_id, relation, group, value)
        return ""

    @available
    def store_newest(self, invocation_id: str, relation: BaseRelation) -> str:
        """After a full build of table `relation`: the newest values asked for by keep_newest,
        computed from the new table and kept with it. '' for inline calls."""
        kept = self._run.kept_newest(invocation_id, relation)
        if kept:
            newest_values.store_computed(*self._table_files(relation), [newest_values.Newest(*pair) for pair in kept])
        return ""

    @available
    def partition_sizes(self, relation: BaseRelation, depth: int) -> dict[str, int]:
        """Bytes of data files per partition folder of `relation` (`depth` partition columns), from a
        listing of its folders: what a model reads to decide which partitions to rewrite."""
        return pending_writes.partition_sizes(self._session(), relation, int(depth))

    @available
    def drop_legacy_pending_write(self, target: BaseRelation) -> None:
        """Discard the pending table a version before pending folders left for `target` (a full
        build replaces what it would have changed; its pending folder goes with its table)."""
        legacy = pending_writes.legacy_pending(target)
        self._session().sql(f"drop table if exists {pending_writes.quoted(legacy)}")
        pending_writes.clear_unregistered_location(self._session(), legacy)

    @available
    def drop_compaction(self, target: BaseRelation) -> None:
        """Discard a killed run's merge of small files of `target` (a full build replaces the table)."""
        compaction.drop(self._session(), target)

    @available
    def clear_unregistered_location(self, relation: BaseRelation) -> bool:
        """Before `create table as`: remove the leftovers of a killed one (pending_writes)."""
        return pending_writes.clear_unregistered_location(self._session(), relation)

    def _table_files(self, relation: BaseRelation) -> tuple[SparkSession, pending_writes.TableFiles, str, Any]:
        """The session, its file operations, the quoted name and the folder of table `relation`: what
        newest_values works on."""
        session = self._session()
        files, root = pending_writes.table_folder(session, relation)
        return session, files, pending_writes.quoted(relation), root

    @property
    def _run(self) -> RunState:
        if "_cdc_run_state" not in self.__dict__:
            self.__dict__["_cdc_run_state"] = RunState()
        return self.__dict__["_cdc_run_state"]

    def _session(self) -> SparkSession:
        credentials: Any = self.config.credentials
        return credentials.session()


def newest_pairs(found: dict[str | None, int]) -> list[list[Any]]:
    """Newest values as the macros read them: [group, microseconds] pairs."""
    return [[group, micros] for group, micros in found.items()]


def log_merged(target: BaseRelation, merged: int, fan_in: int) -> None:
    if merged:
        logger.info(f"{target.identifier}: {merged} small files merged (compact_fan_in {fan_in})")
