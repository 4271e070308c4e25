"""The bad-input corpus (tests/fixtures/bad_inputs, docs/bad-input.md): per dialect, messages
built from the dialect's spec examples and broken on purpose, each with the outcome its fixture
file states (quarantined with an error code, or kept as a decoded row), landed between good
neighbours (the unchanged spec examples, expected as their .expected.json files say).

(a) the corpus is well formed and covers every class for every dialect; (b) the dialects decoded
in Python (debezium_json, dts_avro) give every expected outcome without Spark; (c, marked
`spark`) the whole corpus of every dialect lands, one dbt build stages it, and every message is
quarantined with its code and a reason in cdc_dead_letters or decoded as expected, every good
neighbour's rows are there and the reconciliation test passes.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import pytest

from cdc_unify.canonical import fmt_instant
from cdc_unify.contract import DIALECTS, ERROR_CODES, LANDING_COLUMNS, NO_FEED, NO_FEED_DETAIL, STAGED_COLUMNS
from cdc_unify.generator.encoders.dts_avro import operation_offset
from cdc_unify.message_decoders import debezium_json, dts_avro

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "tests" / "fixtures" / "bad_inputs"
SPEC = REPO_ROOT / "tests" / "fixtures" / "spec_examples"
SCHEMA = "cdc_bad_inputs"
STAGED = dict(STAGED_COLUMNS)
# Bad-input classes every dialect's corpus holds at least one message of (docs/bad-input.md).
REQUIRED_CLASSES = {
    "truncated", "invalid_utf8", "deep_nesting", "huge_value", "unknown_op", "missing_field", "wrong_type",
    "identifier_injection",
}  # fmt: skip
JSON_ONLY_CLASSES = {"duplicate_keys"}
AVRO_ONLY_CLASSES = {"wrong_union_branch", "oversized_length", "trailing_garbage"}
# What a landed message passes through to cdc_dead_letters and cdc_feed_health (not int_row_changes
# nor int_schema_registry, which read only decoded rows).
CORPUS_MODELS = (
    "path:models/staging", "int_staged_events", "int_quarantine", "int_change_events", "cdc_dead_letters",
    "cdc_feed_health",
)  # fmt: skip
# The columns of a spec example's expected rows that depend on where it landed.
LANDING_DEPENDENT = {"sequence", "event_id"}


@dataclass(frozen=True)
class Message:
    dialect: str
    label: str  # the case's name, or "good <spec example>"
    bad_class: str | None  # None for a good neighbour
    value: bytes | None
    expected: tuple[dict[str, Any], ...]  # staged rows in row_index order (a subset of columns each)


# ---------------------------------------------------------------- building the messages
def _walk(doc: Any, path: list) -> tuple[Any, Any]:
    """The container of `path`'s last step and that step (a key or an index)."""
    for step in path[:-1]:
        doc = doc[step]
    return doc, path[-1]


def _generated(edit: dict[str, Any]) -> tuple[str, str]:
    """A value too big to store, as text and as the JSON text a JSON message holds it as: a long
    string, or arrays nested `depth` deep (in an Avro string: their JSON text)."""
    if edit["generate"] == "long_text":
        text = "x" * edit["bytes"]
        return text, json.dumps(text)
    if edit["generate"] == "long_number":
        text = "9" * edit["bytes"]
        return text, text
    if edit["generate"] == "nested_arrays":
        text = "[" * edit["depth"] + "]" * edit["depth"]
        return text, text
    raise ValueError(f"unknown generator {edit['generate']!r}")


def _encode_avro(doc: dict[str, Any]) -> bytes:
    from test_dts_avro import avro_json_to_datum

    out = io.BytesIO()
    fastavro.schemaless_writer(out, dts_avro.record_schema(True), avro_json_to_datum(doc))
    return out.getvalue()


def _byte_edit(dialect: str, value: bytes, edit: dict[str, Any]) -> bytes:
    if "keep_bytes" in edit:
        assert 0 <= edit["keep_bytes"] < len(value), edit
        return value[: edit["keep_bytes"]]
    if "append_hex" in edit:
        return value + bytes.fromhex(edit["append_hex"])
    if "overwrite_hex" in edit:
        # Avro positions: the operation enum's byte, or the objectName union's branch right after it.
        at = operation_offset(value) + {"operation": 0, "objectName": 1}[edit["at"]]
        patch = bytes.fromhex(edit["overwrite_hex"])
        return value[:at] + patch + value[at + len(patch) :]
    if "replace_hex" in edit:
        old, new = bytes.fromhex(edit["replace_hex"]), bytes.fromhex(edit["with_hex"])
        assert value.count(old) == 1, f"{dialect}: {edit['replace_hex']} occurs {value.count(old)} times"
        return value.replace(old, new)
    if "replace" in edit:
        old = edit["replace"].encode("utf-8")
        # `with_latin1` spells raw bytes (0x00-0xff) as the code points of the same numbers.
        new = edit["with_latin1"].encode("latin-1") if "with_latin1" in edit else edit["with"].encode("utf-8")
        assert value.count(old) == 1, f"{dialect}: {edit['replace']!r} occurs {value.count(old)} times"
        return value.replace(old, new)
    raise ValueError(f"unknown edit {edit!r}")


def build_value(dialect: str, case: dict[str, Any], base: str) -> tuple[bytes | None, dict[str, str]]:
    """The case's message and the generated texts by name. A case is `value` (the whole text),
    `tombstone`, or `edits` applied in order to its spec example (`base`, default the corpus's):
    `set`/`delete` on the parsed document, `generate` a big value there, then byte edits on the
    message as the dialect writes it (compact JSON, or the Avro datum)."""
    if case.get("tombstone"):
        return None, {}
    if "value" in case:
        return case["value"].encode("utf-8"), {}
    doc = json.loads((SPEC / dialect / case.get("base", base)).read_text(encoding="utf-8"))
    generated: dict[str, tuple[str, str]] = {}
    byte_edits = []
    for edit in case["edits"]:
        if "set" in edit:
            parent, step = _walk(doc, edit["set"])
            parent[step] = edit["to"]
        elif "delete" in edit:
            parent, step = _walk(doc, edit["delete"])
            del parent[step]
        elif "generate" in edit:
            generated[edit["name"]] = _generated(edit)
            if edit["path"]:
                parent, step = _walk(doc, edit["path"])
                parent[step] = f"@@{edit['name']}@@"
            else:
                doc = f"@@{edit['name']}@@"
        else:
            byte_edits.append(edit)
    if dialect == "dts_avro":
        # Avro strings hold the generated text itself (it cannot be spliced in after encoding).
        value = _encode_avro(json.loads(_splice(json.dumps(doc), generated, as_string=True)))
    else:
        compact = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        value = _splice(compact, generated, as_string=False).encode()
    for edit in byte_edits:
        value = _byte_edit(dialect, value, edit)
    return value, {name: text for name, (text, _) in generated.items()}


def _splice(text: str, generated: dict[str, tuple[str, str]], as_string: bool) -> str:
    """Puts each generated value where its placeholder string is: as its JSON text (nested arrays
    stay arrays) or, `as_string`, as a JSON string of its text."""
    for name, (value, value_json) in generated.items():
        placeholder = json.dumps(f"@@{name}@@")
        assert text.count(placeholder) == 1, name
        text = text.replace(placeholder, json.dumps(value) if as_string else value_json)
    return text


def _expected_row(row: dict[str, Any], generated: dict[str, str]) -> dict[str, Any]:
    """A fixture's expected row with the generated texts in place of their placeholders."""

    def fill(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, str) and value.startswith("@@") and value.endswith("@@"):
            return generated[value[2:-2]]
        return value

    return {"row_index": 0, **{k: fill(v) for k, v in row.items()}}


def good_neighbours(dialect: str) -> list[Message]:
    """Every spec example of the dialect, unchanged, expected as its .expected.json says."""
    from test_dts_avro import fixture_value

    messages = []
    for path in sorted((SPEC / dialect).glob("[0-9][0-9]_*.json")):
        if path.name.endswith(".expected.json"):
            continue
        expected = json.loads(path.with_name(path.name.replace(".json", ".expected.json")).read_text())
        value = fixture_value(path) if dialect == "dts_avro" else path.read_bytes()
        rows = tuple({k: v for k, v in row.items() if k not in LANDING_DEPENDENT} for row in expected)
        messages.append(Message(dialect, f"good {path.name}", None, value, rows))
    return messages


def corpus(dialect: str) -> list[Message]:
    """The dialect's bad messages, each between two good neighbours (cycling through them)."""
    spec = json.loads((CORPUS / dialect / "cases.json").read_text(encoding="utf-8"))
    good = good_neighbours(dialect)
    messages = [good[0]]
    for i, case in enumerate(spec["cases"]):
        value, generated = build_value(dialect, case, spec["base"])
        messages.append(
            Message(dialect, case["name"], case["class"], value, (_expected_row(case["expect"], generated),))
        )
        messages.append(good[(i + 1) % len(good)])
    return messages


# ---------------------------------------------------------------- comparing rows
def _comparable(value: Any, column_type: str) -> Any:
    """Instants as canonical UTC text (PySpark returns naive datetimes in the local zone; the
    fixtures write them as ISO text)."""
    if column_type == "timestamp" and isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, dt.datetime):
        return fmt_instant(value.astimezone(dt.UTC) if value.tzinfo is None else value)
    return value


def assert_staged(message: Message, rows: list[dict[str, Any]], offset: int) -> None:
    label = f"{message.dialect} offset {offset} ({message.label})"
    assert [r["row_index"] for r in rows] == [e["row_index"] for e in message.expected], label
    for row, want in zip(rows, message.expected, strict=True):
        for column, value in want.items():
            assert column in STAGED, f"{label}: {column} is not a staged column"
            got = _comparable(row[column], STAGED[column])
            if got != _comparable(value, STAGED[column]):
                shown = got if len(repr(got)) < 300 else f"{repr(got)[:300]}..."
                raise AssertionError(f"{label}: {column} = {shown!r}, want {value!r} ({row['error_detail']})")
        if want.get("message_status") == "quarantined":
            assert row["error_detail"], f"{label}: quarantined without a reason"
            assert row["raw_value"] == message.value, f"{label}: raw_value is not the message as landed"


# ---------------------------------------------------------------- (a) the corpus itself
@pytest.mark.parametrize("dialect", DIALECTS)
def test_corpus_covers_every_class_with_a_known_outcome(dialect):
    messages = corpus(dialect)
    bad = [m for m in messages if m.bad_class]
    classes = {m.bad_class for m in bad}
    required = REQUIRED_CLASSES | (AVRO_ONLY_CLASSES if dialect == "dts_avro" else JSON_ONLY_CLASSES)
    assert required <= classes, f"{dialect} lacks {sorted(required - classes)}"
    assert len({m.label for m in bad}) == len(bad), "case names repeat"
    for message in bad:
        (want,) = message.expected
        assert want["message_status"] in ("decoded", "quarantined", "tombstone"), message.label
        assert (want["message_status"] == "quarantined") == (want.get("error_code") in ERROR_CODES), message.label
    # Every bad message sits between two good ones, and none is a spec example unchanged.
    assert all(m.bad_class is None for m in messages[::2])
    good_values = {m.value for m in messages if m.bad_class is None}
    assert not good_values & {m.value for m in bad}


# ---------------------------------------------------------------- (b) Python decoders, no Spark
def _python_rows(dialect: str, message: Message, offset: int) -> list[dict[str, Any]]:
    if dialect == "dts_avro":
        return [dts_avro.stage_message("feed", "topic", 0, offset, message.value)]
    landing = debezium_json.Landing("feed", "topic", 0, offset, None, None)
    return debezium_json.decode_message(message.value, None, landing)


@pytest.mark.parametrize("dialect", ["debezium_json", "dts_avro"])
def test_python_decoders_give_every_expected_outcome_without_spark(dialect):
    for offset, message in enumerate(corpus(dialect)):
        assert_staged(message, _python_rows(dialect, message, offset), offset)


@pytest.mark.parametrize("feed", [None, ""])
def test_python_decoders_quarantine_a_message_without_a_feed(feed):
    """As cdc_staged_select does in SQL: one quarantined row under NO_FEED, its bytes kept."""
    landing_columns = {"topic": "t", "partition": 0, "offset": 3, "timestamp": None, "landed_at": None, "key": None}
    json_value = no_feed_messages("debezium_json")[0].value
    (json_row,) = debezium_json.decode_records([{"feed": feed, "value": json_value, **landing_columns}])
    avro_value = no_feed_messages("dts_avro")[0].value
    avro_row = dts_avro.stage_message(feed, "t", 0, 3, avro_value)
    for staged, value in ((json_row, json_value), (avro_row, avro_value)):
        got = (staged["source_name"], staged["row_index"], staged["message_status"], staged["error_code"])
        assert got == (NO_FEED, 0, "quarantined", "no_feed")
        assert (staged["error_detail"], staged["raw_value"]) == (NO_FEED_DETAIL, value)


# ---------------------------------------------------------------- (c) Spark: one build of every dialect
def feed_of(dialect: str) -> str:
    return f"bad_inputs_{dialect}"


# Feeds of landing rows that name none (docs/landing.md): staged under NO_FEED and quarantined.
NO_FEEDS = (None, "")


def land_without_feed(dialect: str, value: bytes, feed: str | None) -> None:
    """One landing row with `feed` (None or ''), written as a writer other than the loader would:
    the loader and the ingestion job (landing.kafka_to_landing) refuse such a feed."""
    from cdc_unify import landing
    from harness import LANDED_AT, spark_session

    record = [(feed, "no-feed-topic", 0, 0, LANDED_AT, None, value, LANDED_AT)]
    schema = ", ".join(f"`{name}` {typ}" for name, typ in LANDING_COLUMNS)
    landing.append_landing(spark_session().createDataFrame(record, schema), dialect)


def no_feed_messages(dialect: str) -> list[Message]:
    """One good message per entry of NO_FEEDS: those with the most rows, so that a message staged
    as one quarantined row is seen to leave its other rows out."""
    landed = [m for m in good_neighbours(dialect) if m.value is not None]
    return sorted(landed, key=lambda m: -len(m.expected))[: len(NO_FEEDS)]


@pytest.fixture(scope="module")
def corpus_build() -> dict[str, Any]:
    """Lands every dialect's corpus (replacing what its landing table held) and, in loads of their
    own, good messages that name no feed (NO_FEEDS); runs the models a message passes through to
    cdc_dead_letters and cdc_feed_health once into schemas of its own, then cdc_feed_health's
    messages_reconciled test, then the staging models and int_staged_events again with nothing
    new landed (which must stage nothing again). The models' other data tests check columns the
    tests below compare row by row, and run on the shared workload elsewhere in the suite."""
    from harness import LANDED_AT, land_messages, run_dbt, spark_session, table_rows

    messages = {dialect: corpus(dialect) for dialect in DIALECTS}
    for dialect, listed in messages.items():
        land_messages(dialect, [m.value for m in listed], feed_of(dialect), LANDED_AT, replace=True)
        for feed, message in zip(NO_FEEDS, no_feed_messages(dialect), strict=True):
            land_without_feed(dialect, message.value, feed)
    started = time.monotonic()
    run_dbt("run", "--full-refresh", "--select", *CORPUS_MODELS, schema=SCHEMA)
    reconciled = run_dbt("test", "--select", "test_name:messages_reconciled,cdc_feed_health", schema=SCHEMA)
    # It ran, and it alone (the project's hooks report results too).
    (reconciled_test,) = [r for r in reconciled.result.results if r.node.resource_type == "test"]
    assert reconciled_test.node.name.startswith("messages_reconciled_cdc_feed_health"), reconciled_test.node.name
    assert reconciled_test.status == "pass"
    run_dbt("run", "--select", "path:models/staging", "int_staged_events", schema=SCHEMA)
    build_seconds = time.monotonic() - started
    spark = spark_session()
    staged, no_feed_staged = {}, {}
    feed_is_none = f"source_name is null or source_name in ('', '{NO_FEED}')"
    for dialect in DIALECTS:
        table = spark.table(f"{SCHEMA}_staging.stg_{dialect}__changes")
        rows = table.where(f"source_name = '{feed_of(dialect)}'")
        staged[dialect] = [r.asDict(recursive=True) for r in rows.orderBy("landing_offset", "row_index").collect()]
        no_feed_staged[dialect] = [r.asDict(recursive=True) for r in table.where(feed_is_none).collect()]
    staged_events = spark.table(f"{SCHEMA}_intermediate.int_staged_events").where(feed_is_none)
    total = sum(len(listed) for listed in messages.values())
    bad = sum(1 for listed in messages.values() for m in listed if m.bad_class)
    print(f"\nbad-input corpus: {total} messages pushed through ({bad} bad, {total - bad} good neighbours) "
          f"in {len(DIALECTS)} dialects; dbt run + test: {build_seconds:.1f} s")  # fmt: skip
    return {
        "messages": messages,
        "staged": staged,
        "no_feed_staged": no_feed_staged,
        "no_feed_staged_events": Counter(r.dialect for r in staged_events.select("dialect").collect()),
        "dead_letters": table_rows(f"{SCHEMA}.cdc_dead_letters"),
        "feed_health": table_rows(f"{SCHEMA}.cdc_feed_health"),
    }


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_every_message_is_quarantined_or_decoded_as_its_fixture_says(corpus_build, dialect):
    by_offset: dict[int, list[dict]] = {}
    for row in corpus_build["staged"][dialect]:
        by_offset.setdefault(row["landing_offset"], []).append(row)
    messages = corpus_build["messages"][dialect]
    assert sorted(by_offset) == list(range(len(messages))), "a message has no staged row"
    # Every mismatch of the dialect at once: one build is too slow to find them one by one.
    mismatches = []
    for offset, message in enumerate(messages):
        try:
            assert_staged(message, by_offset[offset], offset)
        except AssertionError as mismatch:
            mismatches.append(str(mismatch))
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_dead_letters_hold_exactly_the_quarantined_messages_with_reasons(corpus_build, dialect):
    letters = [r for r in corpus_build["dead_letters"] if r["feed"] == feed_of(dialect)]
    got = {r["landing_offset"]: r for r in letters}
    assert len(got) == len(letters), "a message has two dead letters"
    messages = corpus_build["messages"][dialect]
    want = {i: m.expected[0]["error_code"] for i, m in enumerate(messages) if m.expected[0].get("error_code")}
    assert {offset: r["error_code"] for offset, r in got.items()} == want
    for offset, letter in got.items():
        assert letter["error_detail"] and letter["error_meaning"] == ERROR_CODES[letter["error_code"]]
        assert letter["raw_value"] == messages[offset].value


@pytest.mark.spark
def test_spark_feed_health_reconciles_every_landed_message(corpus_build):
    health = {r["dialect"]: r for r in corpus_build["feed_health"] if r["feed"].startswith("bad_inputs_")}
    assert sorted(health) == sorted(DIALECTS)
    for dialect, listed in corpus_build["messages"].items():
        row = health[dialect]
        statuses = Counter(m.expected[0]["message_status"] for m in listed)
        assert row["landed_messages"] == len(listed), dialect
        assert row["quarantined_messages"] == statuses["quarantined"], dialect
        assert row["tombstone_messages"] == statuses["tombstone"], dialect
        assert (row["unreconciled_messages"], row["unclassified_messages"]) == (0, 0), dialect


@pytest.mark.spark
@pytest.mark.parametrize("dialect", DIALECTS)
def test_spark_a_landing_row_without_a_feed_is_quarantined_once(corpus_build, dialect):
    """A good message landed with a null or empty feed is staged once, under NO_FEED, as one
    quarantined row (no_feed) with its bytes, in SQL and Python staging alike; a later run does not
    stage it again (a null feed was re-read by every run, as no watermark holds a null group); it
    is a dead letter with its reason, and cdc_feed_health counts and reconciles it under NO_FEED."""
    values = sorted(m.value for m in no_feed_messages(dialect))
    rows = corpus_build["no_feed_staged"][dialect]
    assert sorted(r["raw_value"] for r in rows) == values, "not one staged row per message"
    for row in rows:
        got = (row["source_name"], row["row_index"], row["message_status"], row["error_code"], row["error_detail"])
        assert got == (NO_FEED, 0, "quarantined", "no_feed", NO_FEED_DETAIL)
    assert corpus_build["no_feed_staged_events"][dialect] == len(values), "staged again by the second run"
    letters = [r for r in corpus_build["dead_letters"] if r["feed"] == NO_FEED and r["dialect"] == dialect]
    assert sorted(r["raw_value"] for r in letters) == values
    assert {r["error_meaning"] for r in letters} == {ERROR_CODES["no_feed"]}
    (health,) = [r for r in corpus_build["feed_health"] if r["feed"] == NO_FEED and r["dialect"] == dialect]
    assert (health["landed_messages"], health["quarantined_messages"]) == (len(values), len(values))
    assert (health["unreconciled_messages"], health["unclassified_messages"]) == (0, 0)
