"""The generator core: workload, truth, faults and files, judged with a tiny JSON test encoder.

The test encoder is deliberately independent of the real dialect encoders: one JSON
message per run of same-table changes in a transaction (so multi-row messages exist),
one per DDL/TRUNCATE and per heartbeat.  Its `decode` inverts `encode`, which lets the
tests check the landing coordinates written to expected-events.jsonl.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from cdc_unify.canonical import LOGICAL_TYPES, base_type, fmt_instant, to_canonical
from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS, MALFORMED_ERROR_CODE, EncodedMessage, Encoder
from cdc_unify.generator.faults import FaultOptions, iso_instant
from cdc_unify.generator.model import SourceChange, Workload
from cdc_unify.generator.run import generate
from cdc_unify.generator.truth import compute_truth, load_truth
from cdc_unify.generator.workload import WorkloadOptions, build_workload

EVENTS = 400
SEED = 7


# ---------------------------------------------------------------- test encoder
def _image(change: SourceChange, image: dict[str, Any] | None) -> dict[str, str | None] | None:
    if image is None:
        return None
    return {c.name: to_canonical(c.logical_type, image[c.name]) for c in change.schema.columns}


def _row_expected(change: SourceChange, row_index: int, ts: dt.datetime) -> dict[str, Any]:
    before, after = _image(change, change.before), _image(change, change.after)
    keys = list(change.schema.primary_key)
    image = after or before
    return {
        "row_index": row_index,
        "event_kind": "ROW",
        "op": change.op,
        "database_name": change.schema.database,
        "table_name": change.schema.table,
        "primary_key_columns": keys,
        "primary_key": json.dumps([image[k] for k in keys], separators=(",", ":")) if keys and image else None,
        "before": before,
        "after": after,
        "before_is_partial": False,
        "after_is_partial": False,
        "event_ts": ts,
    }


class JsonTestEncoder(Encoder):
    extra_malformed_kinds = ("wrong_shape",)

    def __init__(self, dialect: str = "test_json") -> None:
        self.dialect = dialect

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        beats = list(workload.heartbeat_times)
        for tx in workload.transactions:
            while beats and beats[0] < tx.commit_ts:
                yield self._heartbeat(beats.pop(0))
            group: list[SourceChange] = []
            for change in tx.changes:
                if group and (change.op in ("DDL", "TRUNCATE") or change.schema is not group[0].schema):
                    yield self._message(tx.tx_id, tx.commit_ts, group)
                    group = []
                group.append(change)
                if change.op in ("DDL", "TRUNCATE"):
                    yield self._message(tx.tx_id, tx.commit_ts, group)
                    group = []
            if group:
                yield self._message(tx.tx_id, tx.commit_ts, group)
        for beat in beats:
            yield self._heartbeat(beat)

    def _heartbeat(self, at: dt.datetime) -> EncodedMessage:
        value = json.dumps({"type": "HEARTBEAT", "ts": fmt_instant(at)}).encode()
        return EncodedMessage(
            value,
            None,
            "heartbeat",
            at,
            ({"row_index": 0, "event_kind": "HEARTBEAT", "op": "HEARTBEAT"},),
            is_row_message=False,
        )

    def _message(self, tx_id: str, ts: dt.datetime, changes: list[SourceChange]) -> EncodedMessage:
        first = changes[0]
        table = f"{first.schema.database}.{first.schema.table}"
        if first.op == "DDL":
            body = {
                "type": "DDL",
                "kind": first.ddl_kind,
                "sql": first.ddl_statement,
                "table": table,
                "ts": fmt_instant(ts),
                "pos": f"{first.position.file_name}:{first.position.offset}",
            }
            expected = (
                {
                    "row_index": 0,
                    "event_kind": "DDL",
                    "op": first.ddl_kind,
                    "ddl_statement": first.ddl_statement,
                    "database_name": first.schema.database,
                    "table_name": first.schema.table,
                },
            )
            return EncodedMessage(json.dumps(body).encode(), None, table, ts, expected, is_row_message=False)
        expected = tuple(_row_expected(c, i, ts) for i, c in enumerate(changes))
        body = {
            "type": "ROW",
            "table": table,
            "tx": tx_id,
            "ts": fmt_instant(ts),
            "rows": [
                {
                    "op": c.op,
                    "pos": f"{c.position.file_name}:{c.position.offset}",
                    "before": e["before"],
                    "after": e["after"],
                }
                for c, e in zip(changes, expected, strict=True)
            ],
        }
        pk = expected[0]["primary_key"]
        key = pk.encode() if pk is not None and len(changes) == 1 else None
        routing = f"{table}|{pk}" if key is not None else table
        return EncodedMessage(json.dumps(body, ensure_ascii=False).encode(), key, routing, ts, expected)

    def malform(self, message: EncodedMessage, kind: str, rng: random.Random) -> bytes:
        value = message.value
        if kind == "invalid_json":
            return value[: len(value) // 2]
        if kind == "invalid_utf8":
            return b"\xff\xfe" + value
        body = json.loads(value)
        if kind == "missing_field":
            del body["type"]
        elif kind == "unknown_op":
            body["rows"][0]["op"] = "MERGE"
        elif kind == "wrong_value_type":
            image = body["rows"][0]["after"] or body["rows"][0]["before"]
            image[next(iter(image))] = {"not": "a value"}
        elif kind == "wrong_shape":
            body = [body]
        return json.dumps(body, ensure_ascii=False).encode()


def decode(value: bytes) -> list[dict[str, Any]]:
    """The test encoder's messages back to (a subset of) their expected rows."""
    body = json.loads(value)
    if body["type"] == "HEARTBEAT":
        return [{"row_index": 0, "event_kind": "HEARTBEAT"}]
    if body["type"] == "DDL":
        return [{"row_index": 0, "event_kind": "DDL", "ddl_statement": body["sql"]}]
    return [
        {
            "row_index": i,
            "event_kind": "ROW",
            "op": r["op"],
            "before": r["before"],
            "after": r["after"],
            "event_ts": body["ts"],
        }
        for i, r in enumerate(body["rows"])
    ]


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def workload() -> Workload:
    return build_workload(WorkloadOptions(events=EVENTS), SEED)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("gen-a")
    manifest = generate(EVENTS, SEED, out, ["test_json"], encoders={"test_json": JsonTestEncoder()})
    return out, manifest


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _landing(out: Path, dialect: str = "test_json") -> dict[tuple[int, int, int], dict[str, Any]]:
    rows = {}
    for batch in (1, 2):
        for i, rec in enumerate(pq.read_table(out / dialect / f"batch-{batch}.parquet").to_pylist()):
            rows[(batch, rec["partition"], rec["offset"])] = {**rec, "position": i}
    return rows


# ---------------------------------------------------------------- determinism
def test_same_seed_gives_byte_identical_files(generated: tuple[Path, dict], tmp_path: Path) -> None:
    out, _ = generated
    generate(EVENTS, SEED, tmp_path, ["test_json"], encoders={"test_json": JsonTestEncoder()})
    first, second = _files(out), _files(tmp_path)
    assert first.keys() == second.keys()
    assert {
        "manifest.json",
        "test_json/batch-1.parquet",
        "test_json/batch-2.parquet",
        "test_json/expected-events.jsonl",
        "test_json/faults.jsonl",
        "truth/tables.json",
    } <= first.keys()
    assert [name for name in first if first[name] != second[name]] == []


def test_output_does_not_depend_on_the_hash_seed(generated: tuple[Path, dict], tmp_path: Path) -> None:
    """Another process with another PYTHONHASHSEED writes the same bytes (no set/hash order leaks)."""
    out, _ = generated
    here = Path(__file__).resolve().parent
    code = (
        "import sys; from pathlib import Path; from test_generator_core import JsonTestEncoder, EVENTS, SEED; "
        "from cdc_unify.generator.run import generate; "
        "generate(EVENTS, SEED, Path(sys.argv[1]), ['test_json'], encoders={'test_json': JsonTestEncoder()})"
    )
    env = {
        **os.environ,
        "PYTHONHASHSEED": "12345",
        "PYTHONPATH": os.pathsep.join([str(here.parents[1] / "src"), str(here), os.environ.get("PYTHONPATH", "")]),
    }
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env=env, cwd=here)
    assert _files(out) == _files(tmp_path)


def test_different_seed_gives_different_files(generated: tuple[Path, dict], tmp_path: Path) -> None:
    out, _ = generated
    generate(EVENTS, SEED + 1, tmp_path, ["test_json"], encoders={"test_json": JsonTestEncoder()})
    for name in ("test_json/batch-1.parquet", "truth/shop.customers.history.jsonl", "truth/shop.all_types.state.jsonl"):
        assert (out / name).read_bytes() != (tmp_path / name).read_bytes(), name


# ---------------------------------------------------------------- workload
def _changed_columns(change: SourceChange) -> set[str]:
    return {k for k in change.after if change.before.get(k) != change.after[k]}


def _key(change: SourceChange, image: dict[str, Any]) -> tuple:
    schema = change.schema
    return tuple(image[k] for k in schema.primary_key) if schema.primary_key else tuple(image.values())


def test_workload_invariants(workload: Workload) -> None:
    previous_ts, previous_pos = None, None
    for tx in workload.transactions:
        assert tx.commit_ts.tzinfo == dt.timezone.utc
        if previous_ts is not None:
            assert tx.commit_ts - previous_ts >= dt.timedelta(milliseconds=1)
        previous_ts = tx.commit_ts
        touched = Counter()
        for change in tx.changes:
            pos = (change.position.file_index, change.position.offset)
            assert previous_pos is None or pos > previous_pos
            previous_pos = pos
            names = set(change.schema.column_names)
            images = [image for image in (change.before, change.after) if image is not None]
            assert all(set(image) == names for image in images)  # full images of the schema at that time
            touched.update({(change.schema.table, _key(change, image)) for image in images})
        assert all(n == 1 for n in touched.values()), touched  # a transaction touches a row once
    assert [tx.seq for tx in workload.transactions] == list(range(1, len(workload.transactions) + 1))
    assert len({tx.tx_id for tx in workload.transactions}) == len(workload.transactions)


def test_workload_holds_every_operation_kind(workload: Workload) -> None:
    kinds: Counter = Counter()
    deleted: set = set()
    first_ddl = [tx.changes[0] for tx in workload.transactions[:4]]
    assert [(c.op, c.ddl_kind) for c in first_ddl] == [("DDL", "CREATE")] * 4
    assert {c.schema.table for c in first_ddl} == {"customers", "order_items", "audit_log", "all_types"}
    assert workload.transactions[4].is_snapshot
    added_at = None
    for tx in workload.transactions:
        kinds["multi_change_tx"] += len(tx.changes) > 1
        for change in tx.changes:
            table = change.schema.table
            kinds[change.op] += 1
            if change.op == "DDL" and change.ddl_kind == "ALTER":
                assert "ADD COLUMN" in change.ddl_statement
                assert "loyalty_tier" in change.schema.column_names
                added_at = tx.seq
            if change.op == "UPDATE":
                n = len(_changed_columns(change))
                kinds["update_one_column" if n == 1 else "update_several_columns"] += 1
                if change.schema.primary_key and _key(change, change.before) != _key(change, change.after):
                    kinds["pk_change"] += 1
            if change.op == "DELETE":
                deleted.add((table, _key(change, change.before)))
            if change.op == "INSERT" and change.schema.primary_key and (table, _key(change, change.after)) in deleted:
                kinds["delete_then_reinsert"] += 1
            if change.op == "TRUNCATE":
                kinds["truncate_" + table] += 1
            if added_at and tx.seq > added_at and table == "customers" and change.after:
                kinds["rows_with_added_column"] += "loyalty_tier" in change.after
    for kind in (
        "SNAPSHOT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "DDL",
        "update_one_column",
        "update_several_columns",
        "pk_change",
        "delete_then_reinsert",
        "truncate_order_items",
        "rows_with_added_column",
        "multi_change_tx",
    ):
        assert kinds[kind] > 0, kind
    assert len(workload.heartbeat_times) >= 2
    assert workload.heartbeat_times == sorted(workload.heartbeat_times)


def test_workload_covers_every_logical_type_with_nulls_and_edges(workload: Workload) -> None:
    seen_types, null_columns, non_null_columns = set(), set(), set()
    ubigint_max = 0
    for tx in workload.transactions:
        for change in tx.changes:
            for image in (change.before, change.after):
                for col in change.schema.columns if image else ():
                    seen_types.add(base_type(col.logical_type))
                    target = null_columns if image[col.name] is None else non_null_columns
                    target.add((change.schema.table, col.name))
                    if col.logical_type == "ubigint" and image[col.name] is not None:
                        ubigint_max = max(ubigint_max, image[col.name])
    assert set(LOGICAL_TYPES) <= seen_types
    nullable = {(s.table, c.name) for s in workload.tables.values() for c in s.columns if c.nullable}
    assert nullable <= null_columns
    assert nullable <= non_null_columns
    assert ubigint_max > 2**63


def test_workload_is_deterministic() -> None:
    def digest(w: Workload) -> str:
        return hashlib.sha256(repr((w.transactions, w.heartbeat_times)).encode()).hexdigest()

    assert digest(build_workload(WorkloadOptions(events=150), 3)) == digest(
        build_workload(WorkloadOptions(events=150), 3)
    )
    assert digest(build_workload(WorkloadOptions(events=150), 3)) != digest(
        build_workload(WorkloadOptions(events=150), 4)
    )


# ---------------------------------------------------------------- truth
def _naive_states(workload: Workload) -> list[tuple[dt.datetime, dict[str, Counter]]]:
    """Replay row by row with plain dicts/lists: the state after every transaction."""
    rows: dict[str, list[dict[str, str | None]]] = defaultdict(list)
    states = []
    for tx in workload.transactions:
        for change in tx.changes:
            table = f"{change.schema.database}.{change.schema.table}"
            current = rows[table]
            if change.op == "TRUNCATE":
                current.clear()
            if change.before is not None:
                before = _image(change, change.before)
                match = [r for r in current if all(r.get(k) == v for k, v in before.items())]
                current.remove(match[0])
            if change.after is not None:
                current.append(_image(change, change.after))
        states.append((tx.commit_ts, {t: Counter(json.dumps(r, sort_keys=True) for r in rs) for t, rs in rows.items()}))
    return states


def test_truth_state_at_matches_naive_replay(workload: Workload) -> None:
    truth = compute_truth(workload)
    states = _naive_states(workload)
    previous: dict[str, Counter] = {}
    for commit_ts, state in states:
        just_before = commit_ts - dt.timedelta(microseconds=1)
        for name, table in truth.tables.items():
            assert _normalised(table.state_at(just_before)) == _normalised_counter(previous.get(name, Counter()))
            assert _normalised(table.state_at(commit_ts)) == _normalised_counter(state.get(name, Counter()))
        previous = state
    far = states[-1][0] + dt.timedelta(days=1)
    assert {n: _normalised(t.state_at(far)) for n, t in truth.tables.items()} == {
        n: _normalised(t.final_state()) for n, t in truth.tables.items()
    }


def _normalised(rows: list[dict[str, str | None]]) -> Counter:
    """A column absent from a version (added later by DDL) compares as NULL."""
    return Counter(json.dumps({k: v for k, v in r.items() if v is not None}, sort_keys=True) for r in rows)


def _normalised_counter(counter: Counter) -> Counter:
    return _normalised([r for text, n in counter.items() for r in [json.loads(text)] * n])


def test_truth_history_intervals(workload: Workload) -> None:
    truth = compute_truth(workload)
    commits = {tx.commit_ts for tx in workload.transactions}
    for table in truth.tables.values():
        by_key = defaultdict(list)
        for version in table.history():
            by_key[version.key].append(version)
            assert version.valid_from in commits
            assert version.valid_to is None or (version.valid_to in commits and version.valid_from < version.valid_to)
        for versions in by_key.values():
            for earlier, later in zip(versions, versions[1:], strict=False):
                if table.primary_key:  # keyed: one open version at a time, never overlapping
                    assert earlier.valid_to is not None and earlier.valid_to <= later.valid_from
                    if earlier.valid_to == later.valid_from:  # touching versions: a value changed
                        assert earlier.row != later.row
        assert table.final_state() == [v.row for v in table.history() if v.valid_to is None]
    audit = truth.tables["shop.audit_log"]
    assert audit.identity == "row"
    assert any(n > 1 for n in Counter(v.key for v in audit.history()).values())  # duplicate rows


def test_truth_files_round_trip(generated: tuple[Path, dict], workload: Workload) -> None:
    out, manifest = generated
    loaded, computed = load_truth(out / "truth"), compute_truth(workload)
    assert loaded.tables.keys() == computed.tables.keys()
    probes = [tx.commit_ts for tx in workload.transactions[::7]]
    for name, table in computed.tables.items():
        assert manifest["truth"][name] == {"rows": len(table.final_state()), "versions": len(table.versions)}
        assert loaded.tables[name].final_state() == table.final_state()
        for probe in probes:
            assert loaded.tables[name].state_at(probe) == table.state_at(probe)
        state_lines = _read_jsonl(out / "truth" / f"{name}.state.jsonl")
        assert [line["row"] for line in state_lines] == table.final_state()
    catalog = json.loads((out / "truth" / "tables.json").read_text())
    customers = catalog["shop.customers"]["schema_versions"]
    assert [s["ddl_kind"] for s in customers] == ["CREATE", "ALTER"]
    assert customers[-1]["columns"][-1]["name"] == "loyalty_tier"


# ---------------------------------------------------------------- faults and files
def test_manifest_counts_match_files(generated: tuple[Path, dict]) -> None:
    out, manifest = generated
    info = manifest["per_dialect"]["test_json"]
    landing = _landing(out)
    faults = _read_jsonl(out / "test_json" / "faults.jsonl")
    expected = _read_jsonl(out / "test_json" / "expected-events.jsonl")
    for batch in ("1", "2"):
        counts = info["batches"][batch]
        in_batch = [k for k in landing if k[0] == int(batch)]
        assert len(in_batch) == counts["messages"] == info["files"][f"batch-{batch}.parquet"]
        by_fault = Counter(f["fault"] for f in faults if f["batch"] == int(batch))
        assert by_fault["duplicate"] == counts["duplicates"]
        assert by_fault["tombstone"] == counts["tombstones"]
        assert by_fault["malformed"] == counts["malformed"]
        sources = {
            (e["batch"], e["landing_partition"], e["landing_offset"]) for e in expected if e["batch"] == int(batch)
        }
        assert len(sources) == counts["source_messages"]
        assert (
            counts["messages"]
            == counts["source_messages"] + counts["duplicates"] + counts["tombstones"] + counts["malformed"]
        )
        assert counts["source_messages"] == counts["row_messages"] + counts["non_row_messages"]
    # Every landed message is either a source message or exactly one listed fault.
    fault_coords = [(f["batch"], f["landing_partition"], f["landing_offset"]) for f in faults]
    source_coords = {(e["batch"], e["landing_partition"], e["landing_offset"]) for e in expected}
    assert len(fault_coords) == len(set(fault_coords))
    assert source_coords.isdisjoint(fault_coords)
    assert source_coords | set(fault_coords) == set(landing)
    assert Counter(f["kind"] for f in faults if f["fault"] == "malformed") == Counter(info["malformed_by_kind"])
    assert Counter(f["error_code"] for f in faults if f["fault"] == "malformed") == Counter(
        info["malformed_by_error_code"]
    )


def test_every_fault_kind_is_present_and_well_formed(generated: tuple[Path, dict]) -> None:
    out, manifest = generated
    info = manifest["per_dialect"]["test_json"]
    landing = _landing(out)
    faults = _read_jsonl(out / "test_json" / "faults.jsonl")
    expected = _read_jsonl(out / "test_json" / "expected-events.jsonl")
    real_values = {landing[(e["batch"], e["landing_partition"], e["landing_offset"])]["value"] for e in expected}
    kinds = set(COMMON_MALFORMED_KINDS) | {"wrong_shape"}
    assert set(info["malformed_by_kind"]) == kinds
    assert info["malformed_by_error_code"] == dict(
        Counter(MALFORMED_ERROR_CODE[k] for k in kinds for _ in range(info["malformed_by_kind"][k]))
    )
    malformed_values = []
    for fault in faults:
        rec = landing[(fault["batch"], fault["landing_partition"], fault["landing_offset"])]
        origin = landing[(fault["of"]["batch"], fault["of"]["landing_partition"], fault["of"]["landing_offset"])]
        assert origin["partition"] == rec["partition"]
        assert (origin["partition"], origin["offset"]) < (rec["partition"], rec["offset"])
        if fault["fault"] == "duplicate":
            assert rec["value"] == origin["value"] and rec["key"] == origin["key"]
            assert origin["value"] in real_values
        elif fault["fault"] == "tombstone":
            assert rec["value"] is None and rec["key"]
            assert any(r["op"] == "DELETE" for r in decode(origin["value"]) if r["event_kind"] == "ROW")
        else:
            malformed_values.append(rec["value"])
            assert rec["value"] not in real_values
            with pytest.raises((ValueError, KeyError, TypeError, AttributeError)):
                _strict_decode(rec["value"])
    assert len(malformed_values) == len(set(malformed_values))
    totals = info["totals"]
    assert totals["duplicates"] > 0 and totals["tombstones"] > 0 and totals["malformed"] >= len(kinds)
    assert info["batches"]["2"]["late_messages"] > 0
    assert info["late_older_than_batch1_same_row"] >= 1
    assert any(f["fault"] == "duplicate" and f["batch"] == 2 and f["of"]["batch"] == 1 for f in faults)
    assert info["identical_source_values"] == 0 and info["messages_without_expected"] == 0


def _strict_decode(value: bytes) -> None:
    rows = decode(value.decode("utf-8", errors="strict"))
    for row in rows:
        if row["event_kind"] == "ROW":
            if row["op"] not in ("INSERT", "UPDATE", "DELETE", "SNAPSHOT", "TRUNCATE"):
                raise ValueError("unknown op")
            for image in (row["before"], row["after"]):
                if image and not all(v is None or isinstance(v, str) for v in image.values()):
                    raise TypeError("value is not canonical text")


def test_expected_events_point_at_the_messages_they_describe(generated: tuple[Path, dict]) -> None:
    out, _ = generated
    landing = _landing(out)
    for line in _read_jsonl(out / "test_json" / "expected-events.jsonl"):
        rec = landing[(line["batch"], line["landing_partition"], line["landing_offset"])]
        assert line["landing_topic"] == rec["topic"] == "cdc.test_json"
        assert line["landing_timestamp"] == fmt_instant(rec["timestamp"])
        decoded = decode(rec["value"])[line["row_index"]]
        assert {k: line[k] for k in decoded} == decoded


def test_delivery_order_offsets_and_timestamps(generated: tuple[Path, dict]) -> None:
    out, _ = generated
    landing = _landing(out)
    by_partition = defaultdict(list)
    for (batch, partition, offset), rec in sorted(landing.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        by_partition[partition].append((offset, batch, rec["timestamp"]))
    assert len(by_partition) == 3
    for recs in by_partition.values():
        assert [o for o, _, _ in recs] == list(range(len(recs)))  # contiguous across both batches
        assert [b for _, b, _ in recs] == sorted(b for _, b, _ in recs)  # batch 2 continues batch 1
        assert [t for _, _, t in recs] == sorted(t for _, _, t in recs)  # broker time per partition
    batch1 = sorted((k for k in landing if k[0] == 1), key=lambda k: landing[k]["position"])
    assert batch1 != sorted(batch1)  # partitions are interleaved in landing order
    expected = _read_jsonl(out / "test_json" / "expected-events.jsonl")
    rows = [e for e in expected if e["event_kind"] == "ROW" and e["batch"] == 1]
    landed = sorted(rows, key=lambda e: landing[(1, e["landing_partition"], e["landing_offset"])]["position"])
    assert [e["event_ts"] for e in landed] != sorted(e["event_ts"] for e in landed)  # out of source order


def test_late_messages_are_older_than_batch1_events_of_their_row(generated: tuple[Path, dict]) -> None:
    out, _ = generated
    expected = _read_jsonl(out / "test_json" / "expected-events.jsonl")
    batch1_ts = defaultdict(list)
    for e in expected:
        if e["batch"] == 1 and e["event_kind"] == "ROW" and e.get("primary_key"):
            batch1_ts[(e["table_name"], e["primary_key"])].append(e["event_ts"])
    late = [e for e in expected if e["late"]]
    assert late and all(e["batch"] == 2 for e in late)
    assert any(ts > e["event_ts"] for e in late for ts in batch1_ts[(e["table_name"], e.get("primary_key"))])


def test_fast_instant_text_equals_canonical_text() -> None:
    rng = random.Random(1)
    zones = (dt.timezone.utc, dt.timezone(dt.timedelta(hours=8)), dt.timezone(dt.timedelta(hours=-5, minutes=-30)))
    for _ in range(2000):
        value = dt.datetime(
            rng.randint(2, 9998),
            rng.randint(1, 12),
            rng.randint(1, 28),
            rng.randrange(24),
            rng.randrange(60),
            rng.randrange(60),
            rng.choice((0, 10, 500_000, rng.randrange(10**6))),
            tzinfo=rng.choice(zones),
        )
        assert iso_instant(value) == fmt_instant(value)


def test_zero_shares_deliver_only_the_source_messages(tmp_path: Path) -> None:
    faults = FaultOptions(
        partitions=1, duplicate_share=0, malformed_share=0, late_share=0, tombstone_share=0, tail_share=0
    )
    manifest = generate(120, SEED, tmp_path, ["test_json"], faults, encoders={"test_json": JsonTestEncoder()})
    info = manifest["per_dialect"]["test_json"]
    assert info["batches"]["2"]["messages"] == 0
    assert info["totals"]["messages"] == info["totals"]["source_messages"]
    records = pq.read_table(tmp_path / "test_json" / "batch-1.parquet").to_pylist()
    assert [r["offset"] for r in records] == list(range(len(records)))  # one partition: landing = source order


def test_cli_generate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cdc_unify import cli
    from cdc_unify.generator import run

    monkeypatch.setattr(run, "encoder_for", lambda dialect: JsonTestEncoder(dialect))
    argv = [
        "generate",
        "--events",
        "80",
        "--seed",
        "5",
        "--out",
        str(tmp_path),
        "--dialects",
        "canal_json",
        "--partitions",
        "2",
        "--malformed-share",
        "0.05",
        "--duplicate-share",
        "0.1",
        "--late-share",
        "0.1",
    ]
    assert cli.main(argv) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["dialects"] == ["canal_json"] and manifest["seed"] == 5
    assert manifest["fault_options"]["partitions"] == 2
    assert {r["partition"] for r in pq.read_table(tmp_path / "canal_json" / "batch-1.parquet").to_pylist()} == {0, 1}
    with pytest.raises(SystemExit):
        cli.main(["generate", "--out", str(tmp_path), "--late-share", "1.5"])


# ---------------------------------------------------------------- real encoders through the injector
def test_expected_rows_keep_the_status_their_encoder_gives(tmp_path: Path) -> None:
    """Debezium's own tombstones (a null value after each delete) are expected as tombstones."""
    faults = FaultOptions(
        partitions=1, duplicate_share=0, malformed_share=0, late_share=0, tombstone_share=0, tail_share=0
    )
    generate(120, SEED, tmp_path, ["debezium_json"], faults)
    landing = _landing(tmp_path, "debezium_json")
    statuses = Counter()
    for line in _read_jsonl(tmp_path / "debezium_json" / "expected-events.jsonl"):
        value = landing[(line["batch"], line["landing_partition"], line["landing_offset"])]["value"]
        assert line["message_status"] == ("tombstone" if value is None else "decoded")
        statuses[line["message_status"]] += 1
    assert statuses["tombstone"] > 0 and statuses["decoded"] > 0


def test_messages_without_content_of_their_own_are_never_redelivered(tmp_path: Path) -> None:
    """A copy of a tombstone or of a 48-zero-byte DTS filler is just another such message (staged
    under its own offset), so the injector does not pass one off as a redelivery."""
    faults = FaultOptions(duplicate_share=1.0, malformed_share=0, late_share=0, tombstone_share=0)
    generate(400, SEED, tmp_path, ["dts_avro", "debezium_json"], faults)
    for dialect, contentless in (("dts_avro", bytes(48)), ("debezium_json", None)):
        landing = _landing(tmp_path, dialect)
        assert any(rec["value"] == contentless for rec in landing.values())
        duplicates = [f for f in _read_jsonl(tmp_path / dialect / "faults.jsonl") if f["fault"] == "duplicate"]
        originals = [
            landing[(f["of"]["batch"], f["of"]["landing_partition"], f["of"]["landing_offset"])] for f in duplicates
        ]
        assert duplicates and all(rec["value"] not in (None, bytes(48)) for rec in originals)


# ---------------------------------------------------------------- worker processes (--jobs)
class _FailingEncoder(JsonTestEncoder):
    """Raises, or ends its process without a word, after the first few messages."""

    def __init__(self, dialect: str, how: str) -> None:
        super().__init__(dialect)
        self.how = how

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        for i, message in enumerate(super().encode(workload, rng)):
            if i == 5:
                if self.how == "raise":
                    raise ValueError("encoder bug on purpose")
                os._exit(3)
            yield message


@pytest.mark.slow
def test_jobs_do_not_change_the_files(tmp_path: Path) -> None:
    """Every real encoder and the truth in worker processes write exactly what one process writes."""
    from cdc_unify.contract import DIALECTS

    one, two = tmp_path / "jobs-1", tmp_path / "jobs-2"
    sequential = generate(100, SEED, one, list(DIALECTS), jobs=1)
    parallel = generate(100, SEED, two, list(DIALECTS), jobs=2)
    assert parallel == sequential
    assert {f"{d}/batch-1.parquet" for d in DIALECTS} <= _files(one).keys()
    assert [name for name, data in _files(one).items() if _files(two).get(name) != data] == []
    assert _files(one).keys() == _files(two).keys()


@pytest.mark.parametrize(
    ("how", "error", "message"),
    [
        ("raise", ValueError, "encoder bug on purpose"),
        ("exit", RuntimeError, "generating canal_json died \\(exit code 3\\)"),
    ],
)
def test_a_failing_worker_fails_the_run(tmp_path: Path, how: str, error: type, message: str) -> None:
    encoders = {"canal_json": _FailingEncoder("canal_json", how), "test_json": JsonTestEncoder()}
    with pytest.raises(error, match=message) as caught:
        generate(60, SEED, tmp_path, ["test_json", "canal_json"], encoders=encoders, jobs=2)
    if how == "raise":  # the worker's traceback comes along
        assert any("in the worker generating canal_json" in note for note in caught.value.__notes__)
    assert not (tmp_path / "manifest.json").exists()


def test_a_dialect_cannot_be_called_truth(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="folder of the truth files"):
        generate(60, SEED, tmp_path, ["truth"], encoders={"truth": JsonTestEncoder("truth")})


# ---------------------------------------------------------------- loading a generated folder (make demo)
def test_generated_loads_are_batch_1_then_batch_2_per_dialect_with_a_feed_each(tmp_path: Path) -> None:
    from cdc_unify.commands.load import PlannedLoad, generated_loads

    encoders = {d: JsonTestEncoder(d) for d in ("dts_avro", "canal_json")}
    generate(60, SEED, tmp_path, ["dts_avro", "canal_json"], encoders=encoders)
    assert generated_loads(tmp_path, "demo") == [
        PlannedLoad(dialect, f"demo_{dialect}", (tmp_path / dialect / f"batch-{batch}.parquet",))
        for dialect in ("dts_avro", "canal_json")
        for batch in (1, 2)
    ]


def test_load_generated_rejects_bad_folders_and_arguments_before_spark(
    generated: tuple[Path, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cdc_unify import cli

    out, _ = generated
    (tmp_path / "manifest.json").write_text('{"dialects": ["canal_json"]}')
    cases = [
        (["--generated", str(tmp_path / "missing")], "not a `cdc-unify generate` folder"),
        (["--generated", str(tmp_path)], "manifest.json: not a generator manifest"),
        (["--generated", str(out)], "unknown dialect 'test_json'"),
        (["--generated", str(out), "--dialect", "canal_json"], "give no PATH and no --dialect"),
        (["--dialect", "canal_json"], "give --dialect and at least one PATH"),
    ]
    for args, message in cases:
        assert cli.main(["load", "--feed", "demo", *args]) == 1
        assert message in capsys.readouterr().err


def test_load_generated_checks_every_file_before_the_first_load(tmp_path: Path) -> None:
    from cdc_unify.commands.load import check_generated, generated_loads
    from cdc_unify.landing import LandingError

    encoders = {d: JsonTestEncoder(d) for d in ("canal_json", "dts_avro")}
    generate(60, SEED, tmp_path, ["canal_json", "dts_avro"], encoders=encoders)
    (tmp_path / "dts_avro" / "batch-2.parquet").write_bytes(b"not parquet")
    plan = generated_loads(tmp_path, "demo")
    for planned in plan[:3]:
        check_generated(planned)
    with pytest.raises(LandingError, match="dts_avro/batch-2.parquet: not a Parquet file of Kafka records"):
        check_generated(plan[3])


@pytest.mark.spark
def test_load_generated_twice_lands_every_message_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cdc_unify import cli
    from cdc_unify.contract import LANDING_SCHEMA
    from harness import spark_session

    dialects = ["canal_json", "dts_avro"]
    manifest = generate(60, SEED, tmp_path, dialects, encoders={d: JsonTestEncoder(d) for d in dialects})
    spark = spark_session()
    feed = tmp_path.name  # unique in the session's warehouse
    command = ["load", "--generated", str(tmp_path), "--feed", feed, "--skip-loaded"]
    assert cli.main(command) == 0
    first = capsys.readouterr().out
    assert cli.main(command) == 0
    second = capsys.readouterr().out
    for dialect in dialects:
        landed = spark.table(f"{LANDING_SCHEMA}.{dialect}").where(f"feed = '{feed}_{dialect}'")
        batches = manifest["per_dialect"][dialect]["batches"]
        assert landed.count() == sum(b["messages"] for b in batches.values())
        # Two loads, batch 1 first: two landing times, the earlier one holding batch 1.
        by_time = sorted((r["landed_at"], r["count"]) for r in landed.groupBy("landed_at").count().collect())
        assert [n for _, n in by_time] == [batches["1"]["messages"], batches["2"]["messages"]]
        assert f"into landing.{dialect} (feed '{feed}_{dialect}')" in first
    assert second.count("skipped") == 4 and "loaded" not in second.replace("already loaded", "")


# ---------------------------------------------------------------- the shipped sample (sample/, make demo)
SAMPLE = Path(__file__).resolve().parents[2] / "sample"
ORACLE_FILES = ("expected-events.jsonl", "faults.jsonl")  # per message, large: not shipped


def _sample_files(root: Path) -> dict[str, bytes]:
    return {
        name: data for name, data in _files(root).items() if name != "README.md" and not name.endswith(ORACLE_FILES)
    }


def test_the_shipped_sample_is_small_and_every_batch_holds_its_manifest_count() -> None:
    from cdc_unify.contract import DIALECTS

    manifest = json.loads((SAMPLE / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["dialects"] == list(DIALECTS)
    for dialect in DIALECTS:
        for batch, counts in manifest["per_dialect"][dialect]["batches"].items():
            assert pq.read_metadata(SAMPLE / dialect / f"batch-{batch}.parquet").num_rows == counts["messages"]
    for table, counts in manifest["truth"].items():
        assert len(_read_jsonl(SAMPLE / "truth" / f"{table}.state.jsonl")) == counts["rows"]
    assert sum(len(data) for data in _files(SAMPLE).values()) < 5 * 2**20


@pytest.mark.slow
def test_the_shipped_sample_is_what_the_generator_writes(tmp_path: Path) -> None:
    """sample/ is `cdc-unify generate` output without the per-message oracle files: after a change
    to the generator or an encoder, regenerate it (sample/README.md)."""
    manifest = json.loads((SAMPLE / "manifest.json").read_text(encoding="utf-8"))
    faults = FaultOptions(**manifest["fault_options"])
    generate(manifest["events"], manifest["seed"], tmp_path, manifest["dialects"], faults, jobs=2)
    fresh, shipped = _sample_files(tmp_path), _sample_files(SAMPLE)
    stale = sorted(name for name in fresh.keys() | shipped.keys() if fresh.get(name) != shipped.get(name))
    assert stale == [], f"sample/ is not what the generator writes now; regenerate it (sample/README.md): {stale}"


def test_skip_loaded_refuses_a_feed_holding_files_of_another_folder_version(tmp_path: Path) -> None:
    import hashlib

    from cdc_unify.commands.load import check_no_other_files, generated_loads
    from cdc_unify.landing import LandingError

    generate(60, SEED, tmp_path, ["canal_json"], encoders={"canal_json": JsonTestEncoder("canal_json")})
    plan = generated_loads(tmp_path, "demo")
    batch1 = hashlib.sha256((tmp_path / "canal_json" / "batch-1.parquet").read_bytes()).hexdigest()
    check_no_other_files(plan, {("canal_json", "demo_canal_json", batch1), ("canal_json", "other", "f00d")})
    with pytest.raises(LandingError, match="landing.canal_json already holds other files for feed 'demo_canal_json'"):
        check_no_other_files(
            plan, {("canal_json", "demo_canal_json", batch1), ("canal_json", "demo_canal_json", "f00d")}
        )
