"""Landing files into landing.<dialect> (docs/landing.md): reading, validation, duplicates, the CLI, the macro."""

import datetime as dt
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

import jinja2
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from cdc_unify import landing
from cdc_unify.cli import main
from cdc_unify.contract import DIALECTS, LANDING_COLUMNS, LANDING_SCHEMA, NO_FEED, landing_table_ddl
from cdc_unify.landing import LandingError, load_files, prepare_load

MACROS = Path(__file__).resolve().parents[2] / "macros" / "landing.sql"
LANDED_AT = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.UTC)
# Valid JSON, invalid UTF-8, a CRLF line, an empty line and a last line without newline.
JSONL = b'{"id": 1, "name": "\xe4\xb8\xad"}\n\xff\xfe{"broken": \n{"id": 2}\r\n\n{"id": 3}'


def jsonl_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(line number, bytes) of every non-empty line: what the loader must land."""
    return [(number, line) for number, line in enumerate(data.split(b"\n")) if line]


def kafka_parquet(path: Path, **overrides: pa.Array) -> Path:
    """A Parquet file with the Kafka record columns (two partitions, a tombstone), optionally changed."""
    columns = {
        "topic": pa.array(["orders", "orders", "orders"]),
        "partition": pa.array([0, 1, 1], pa.int32()),
        "offset": pa.array([41, 7, 8], pa.int64()),
        "timestamp": pa.array(
            [dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC), None, dt.datetime(2024, 1, 2, tzinfo=dt.UTC)],
            pa.timestamp("ms", tz="UTC"),
        ),
        "key": pa.array([b'{"id":1}', None, b'{"id":1}'], pa.binary()),
        "value": pa.array([b'{"op":"c"}\n', b"\x00\xff binary", None], pa.binary()),
    }
    columns.update(overrides)
    pq.write_table(pa.table(columns), path)
    return path


@pytest.fixture
def feed() -> str:
    """A feed no other test uses, so tests sharing one warehouse do not see each other's rows."""
    return f"test_{uuid.uuid4().hex[:12]}"


# ---------------------------------------------------------------- reading files (no Spark)


def test_jsonl_lines_land_byte_exact_with_line_numbers_as_offsets(tmp_path):
    path = tmp_path / "messages.jsonl"
    path.write_bytes(JSONL)
    (file,) = prepare_load("canal_json", "orders_db", [path]).files
    expected = jsonl_lines(JSONL)
    assert file.kind == "jsonl"
    assert file.records.schema == landing.RECORD_SCHEMA
    assert file.records.column("value").to_pylist() == [line for _, line in expected]
    assert file.records.column("offset").to_pylist() == [number for number, _ in expected]
    assert set(file.records.column("partition").to_pylist()) == {0}
    assert set(file.records.column("topic").to_pylist()) == {"orders_db"}
    assert file.records.column("timestamp").null_count == len(expected)
    assert file.records.column("key").null_count == len(expected)
    assert b"\xff\xfe" in file.records.column("value")[1].as_py()
    assert file.records.column("value")[2].as_py().endswith(b"\r")


@pytest.mark.parametrize("data", [b"", b"\n\n", b"a", b"a\n", b"\nb\n\nc"])
def test_jsonl_edge_cases(data):
    records = landing.jsonl_records(data, topic="t")
    expected = jsonl_lines(data)
    assert list(zip(records.column("offset").to_pylist(), records.column("value").to_pylist(), strict=True)) == expected


def test_parquet_records_keep_tombstones_and_coordinates(tmp_path):
    path = kafka_parquet(tmp_path / "records.parquet")
    (file,) = prepare_load("debezium_json", "f", [path]).files
    original = pq.read_table(path)
    assert file.kind == "parquet"
    assert file.ignored_columns == ()
    assert file.records.schema == landing.RECORD_SCHEMA
    for name in ("topic", "partition", "offset", "key", "value", "timestamp"):
        assert file.records.column(name).to_pylist() == original.column(name).to_pylist(), name
    assert file.records.column("value")[2].as_py() is None


def test_parquet_extra_columns_are_ignored_and_reported_and_compatible_types_cast(tmp_path):
    path = kafka_parquet(
        tmp_path / "spark_kafka_source.parquet",
        partition=pa.array([0, 1, 1], pa.int64()),
        offset=pa.array([41, 7, 8], pa.uint32()),
        timestamp=pa.array([dt.datetime(2024, 1, 2, 3, 4, 5), None, None], pa.timestamp("ns")),
        key=pa.nulls(3),
        timestampType=pa.array([0, 0, 0], pa.int32()),
    )
    (file,) = prepare_load("debezium_json", "f", [path]).files
    assert file.ignored_columns == ("timestampType",)
    assert file.records.schema == landing.RECORD_SCHEMA
    assert file.records.column("partition").to_pylist() == [0, 1, 1]
    # A zone-less timestamp is read as UTC.
    assert file.records.column("timestamp")[0].as_py() == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert file.records.column("key").null_count == 3


@pytest.mark.parametrize(
    ("overrides", "drop", "message"),
    [
        ({}, "offset", "missing column(s) offset"),
        ({"partition": pa.array(["0", "1", "1"])}, None, "column partition has type string, expected an integer"),
        ({"value": pa.array(["a", "b", "c"])}, None, "column value has type string, expected binary"),
        ({"timestamp": pa.array([1, 2, 3], pa.int64())}, None, "column timestamp has type int64, expected a timestamp"),
        (
            {"offset": pa.array([1, None, 3], pa.int64())},
            None,
            "null values in column(s) that every Kafka record has: offset (1)",
        ),
        ({"partition": pa.array([0, 2**40, 1], pa.int64())}, None, "values do not fit the landing types"),
    ],
)
def test_parquet_with_wrong_columns_is_rejected(tmp_path, overrides, drop, message):
    path = kafka_parquet(tmp_path / "bad.parquet", **overrides)
    if drop:
        pq.write_table(pq.read_table(path).drop_columns([drop]), path)
    with pytest.raises(LandingError) as err:
        prepare_load("canal_json", "f", [path])
    assert str(path) in str(err.value)
    assert message in str(err.value)


def test_every_column_problem_is_named_at_once(tmp_path):
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"topic": pa.array([1]), "value": pa.array(["x"])}), path)
    with pytest.raises(LandingError) as err:
        prepare_load("canal_json", "f", [path])
    text = str(err.value)
    for part in ("missing column(s) partition, offset, timestamp, key", "column topic has type int64", "column value"):
        assert part in text


@pytest.mark.parametrize(
    ("dialect", "feed", "name", "content", "message"),
    [
        ("nope_json", "f", "a.jsonl", b"{}\n", "unknown dialect 'nope_json'"),
        ("canal_json", " ", "a.jsonl", b"{}\n", "the feed name must not be empty"),
        ("canal_json", "f", "a.csv", b"{}\n", "unsupported file type"),
        ("canal_json", "f", "missing.jsonl", None, "cannot read file: No such file or directory"),
        ("canal_json", "f", "corrupt.parquet", b"PAR1 not really parquet", "not a Parquet file of Kafka records"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(tmp_path, dialect, feed, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LandingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        prepare_load(dialect, feed, [path])


def test_cli_bad_input_exits_1_with_one_line_and_no_traceback(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_bytes(b"{}\n")
    code = main(["load", "--dialect", "canal_json", "--feed", "f", str(good), str(tmp_path / "missing.jsonl")])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("cdc-unify load: error: ")
    assert "missing.jsonl" in captured.err
    assert "Traceback" not in captured.err


# ---------------------------------------------------------------- the dbt macro


def render_create_landing_tables(existing: tuple[str, ...] = ()) -> list[str]:
    """The statements macros/landing.sql runs, rendered as dbt would (execute=True, run_query), on a
    schema `landing` that lists the tables `existing` (its listing is not among the statements)."""
    statements: list[str] = []

    def run_query(sql: str) -> Any:
        if str(sql).startswith("show tables in "):
            return SimpleNamespace(columns={"tableName": SimpleNamespace(values=lambda: existing)})
        statements.append(str(sql))
        return None

    env = jinja2.Environment(extensions=["jinja2.ext.do"], undefined=jinja2.StrictUndefined)
    template = env.from_string(MACROS.read_text(), globals={"execute": True, "run_query": run_query})
    assert str(template.module.create_landing_tables()).strip() == ""
    return statements


def test_macro_ddl_is_the_contract_ddl():
    assert render_create_landing_tables() == [
        f"create schema if not exists `{LANDING_SCHEMA}`",
        *[landing_table_ddl(dialect) for dialect in DIALECTS],
    ]


def test_macro_creates_only_the_tables_the_schema_lacks():
    assert render_create_landing_tables(existing=tuple(DIALECTS[1:])) == [
        f"create schema if not exists `{LANDING_SCHEMA}`",
        landing_table_ddl(DIALECTS[0]),
    ]
    assert render_create_landing_tables(existing=tuple(DIALECTS)) == [f"create schema if not exists `{LANDING_SCHEMA}`"]


# ---------------------------------------------------------------- Spark: writing


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """One session for the module (JVM start is slow); tests isolate themselves by feed."""
    from cdc_unify.spark import get_spark

    return get_spark(master="local[2]", warehouse=str(tmp_path_factory.mktemp("loader") / "warehouse"))


def landed(spark, dialect: str, feed: str) -> list[dict]:
    return (
        spark.table(f"{LANDING_SCHEMA}.{dialect}")
        .where(f"feed = '{feed}'")
        .orderBy("topic", "partition", "offset")
        .toArrow()
        .to_pylist()
    )


def ledger(spark, feed: str) -> list[dict]:
    return spark.table(landing.LEDGER_TABLE).where(f"feed = '{feed}'").orderBy("file_path").toArrow().to_pylist()


@pytest.mark.spark
def test_round_trip_of_both_file_kinds(spark, tmp_path, feed):
    jsonl = tmp_path / "messages.jsonl"
    jsonl.write_bytes(JSONL)
    parquet = kafka_parquet(tmp_path / "records.parquet")
    prepared = prepare_load("debezium_json", feed, [jsonl, parquet])
    result = landing.write_load(spark, prepared, landed_at=LANDED_AT)
    assert result.rows == len(jsonl_lines(JSONL)) + 3

    rows = landed(spark, "debezium_json", feed)
    assert [name for name, _ in LANDING_COLUMNS] == list(rows[0])
    expected = [
        {"feed": feed, "landed_at": LANDED_AT, **record}
        for file in prepared.files
        for record in file.records.to_pylist()
    ]
    key = lambda row: (row["topic"], row["partition"], row["offset"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(expected, key=key)
    by_topic = {row["topic"]: row for row in rows if row["offset"] == 0}
    assert by_topic[feed]["value"] == JSONL.split(b"\n")[0]
    tombstones = [row for row in rows if row["value"] is None]
    assert [(t["topic"], t["partition"], t["offset"]) for t in tombstones] == [("orders", 1, 8)]

    entries = ledger(spark, feed)
    assert [(e["dialect"], e["file_sha256"], e["rows"]) for e in entries] == [
        ("debezium_json", file.sha256, file.records.num_rows)
        for file in sorted(prepared.files, key=lambda f: str(f.path.resolve()))
    ]


@pytest.mark.spark
def test_landed_since_selects_the_new_loads_and_runs_no_task_without_one(spark, tmp_path):
    """What a Python staging model decodes (landing.landed_since): every row on a full build, the
    loads of each feed landed after its newest staged one, and a feed never staged whole. With
    nothing new, the selection runs no task: a decoder mapped over it is never called, so no Python
    worker starts."""
    at = [dt.datetime(2024, 1, 1, hour, tzinfo=dt.UTC) for hour in range(4)]
    rows = [("a", at[0], 1), ("a", at[2], 2), ("b", at[1], 3), ("c", at[3], 4), (None, at[3], 5), ("", at[0], 6)]
    rows.append((NO_FEED, at[2], 7))
    # Read from files, as a landing table is: a selection of rows given in memory is computed
    # while Spark plans it, never by a task.
    spark.createDataFrame(rows, "feed string, landed_at timestamp, n int").write.parquet(str(tmp_path / "landed"))
    landed_rows = spark.read.parquet(str(tmp_path / "landed"))
    micros = lambda stamp: int(stamp.timestamp() * 1_000_000)  # noqa: E731
    numbers = lambda df: sorted(row["n"] for row in df.collect())  # noqa: E731
    assert numbers(landing.landed_since(landed_rows, None)) == [1, 2, 3, 4, 5, 6, 7]
    assert numbers(landing.landed_since(landed_rows, {"a": micros(at[1]), "b": micros(at[1])})) == [2, 4, 5, 6, 7]
    # A null or empty feed is NO_FEED (staged under it): held, its rows are read past its watermark alone.
    held = {"a": micros(at[1]), "b": micros(at[1]), NO_FEED: micros(at[1])}
    assert numbers(landing.landed_since(landed_rows, held)) == [2, 4, 5, 7]
    assert numbers(landing.landed_since(landed_rows, {**held, NO_FEED: micros(at[3])})) == [2, 4]

    def never_called(batches):
        raise AssertionError("a decoder ran over a selection with nothing new")
        yield from batches

    quiet = landing.landed_since(landed_rows.where("feed in ('a', 'b')"), {"a": micros(at[3]), "b": micros(at[3])})
    assert quiet.mapInArrow(never_called, quiet.schema).count() == 0

    # The SQL models' copy of the rule (macro cdc_landed_after_held) selects the same rows, and with
    # the feeds that have new rows named, those feeds' rows alone.
    for held in (
        {"a": micros(at[1]), "b": micros(at[1])},
        {"a": micros(at[1]), NO_FEED: micros(at[1])},
        {NO_FEED: micros(at[3])},
    ):
        sql_rows = landed_rows.where(landed_after_held_sql(held))
        assert numbers(sql_rows) == numbers(landing.landed_since(landed_rows, held))
    held = {"a": micros(at[1]), NO_FEED: micros(at[1])}
    assert numbers(landed_rows.where(landed_after_held_sql(held, ["a", NO_FEED]))) == [2, 5, 7]
    assert numbers(landed_rows.where(landed_after_held_sql({"a": micros(at[1])}, [NO_FEED, "c"]))) == [4, 5, 6, 7]
    assert landed_after_held_sql(held, []) == "(false)"


def _macro(path: Path, name: str) -> str:
    """One macro's definition (a file with a `test` block does not load outside dbt)."""
    text = path.read_text()
    start = text.index("{% macro " + name + "(")
    return text[start : text.index("{%- endmacro %}", start) + len("{%- endmacro %}")]


def landed_after_held_sql(held: dict[str, int], new_feeds: list[str] | None = None) -> str:
    """The predicate macro cdc_landed_after_held writes for watermarks `held` (feed -> micros)."""
    from test_typed_marts import _DbtEnvironment, _return, _Returned

    macros = Path(__file__).resolve().parents[2] / "macros"
    env = _DbtEnvironment(extensions=["jinja2.ext.do"])
    env.globals["return"] = _return
    sources = [
        (macros / "summaries.sql").read_text(),
        _macro(macros / "typed_marts.sql", "cdc_string_literal"),
        _macro(macros / "intermediate.sql", "cdc_no_feed"),
    ]
    module = env.from_string("\n".join(sources)).module

    def literal(feed: str) -> str:
        return str(module.cdc_string_literal(feed)).strip()

    given: dict[str, Any] = {
        "feeds": [{"literal": literal(f), "until": f"timestamp_micros({u})"} for f, u in held.items()]
    }
    if new_feeds is not None:
        given["new_feeds"] = [literal(feed) for feed in new_feeds]
    try:
        module.cdc_landed_after_held(given, "feed")
    except _Returned as returned:
        return returned.value
    raise AssertionError("cdc_landed_after_held returned nothing")


@pytest.mark.spark
def test_duplicate_load_is_refused_unless_allowed(spark, tmp_path, feed):
    path = tmp_path / "batch.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": 2}\n')
    load_files(spark, "canal_json", feed, [path])
    copy = tmp_path / "renamed_copy.jsonl"
    copy.write_bytes(path.read_bytes())

    with pytest.raises(LandingError, match="already loaded into canal_json for feed .*renamed_copy.jsonl"):
        load_files(spark, "canal_json", feed, [copy])
    assert len(landed(spark, "canal_json", feed)) == 2

    # Another feed or another dialect is a different landing: not a duplicate.
    load_files(spark, "canal_json", feed + "_other", [path])
    load_files(spark, "oms_canal_json", feed, [path])

    load_files(spark, "canal_json", feed, [copy], allow_duplicates=True)
    rows = landed(spark, "canal_json", feed)
    # The redelivered file lands again at the next offsets of the feed's log: same values, new coordinates.
    values = [b'{"id": 1}', b'{"id": 2}']
    assert [(row["offset"], row["value"]) for row in rows] == list(enumerate(values + values))
    assert len(ledger(spark, feed)) == 3  # canal_json twice, oms_canal_json once


@pytest.mark.spark
def test_same_content_twice_in_one_command_is_refused_unless_allowed(spark, tmp_path, feed):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b'{"id": 1}\n')
    second.write_bytes(b'{"id": 1}\n')
    with pytest.raises(LandingError, match="b.jsonl"):
        load_files(spark, "canal_json", feed, [first, second])
    assert landed(spark, "canal_json", feed) == []
    load_files(spark, "canal_json", feed, [first, second], allow_duplicates=True)
    assert len(landed(spark, "canal_json", feed)) == 2


@pytest.mark.spark
def test_one_bad_file_writes_nothing(spark, tmp_path, feed):
    good = tmp_path / "good.jsonl"
    good.write_bytes(b'{"id": 1}\n')
    bad = kafka_parquet(tmp_path / "bad.parquet", value=pa.array(["a", "b", "c"]))
    with pytest.raises(LandingError, match="bad.parquet"):
        load_files(spark, "canal_json", feed, [good, bad])
    assert landed(spark, "canal_json", feed) == []
    assert ledger(spark, feed) == []
    # The good file alone was not marked as loaded by the failed command.
    load_files(spark, "canal_json", feed, [good])
    assert len(landed(spark, "canal_json", feed)) == 1


@pytest.mark.spark
def test_every_landing_table_exists_after_a_load(spark, tmp_path, feed):
    path = tmp_path / "one.jsonl"
    path.write_bytes(b"{}\n")
    load_files(spark, "dts_avro", feed, [path])
    tables = {row.tableName for row in spark.sql(f"show tables in {LANDING_SCHEMA}").collect()}
    assert set(DIALECTS) | {"load_ledger"} <= tables
    for dialect in DIALECTS:
        schema = spark.table(f"{LANDING_SCHEMA}.{dialect}").schema
        assert [(f.name, f.dataType.simpleString()) for f in schema] == list(LANDING_COLUMNS)


@pytest.mark.spark
def test_kafka_source_shape_maps_to_landing_rows(spark, feed):
    """What the streaming ingestion job (docs/landing.md) does to each micro-batch of Spark's Kafka source."""
    from pyspark.sql import functions as F

    source = spark.createDataFrame(
        [(b"k", b"v", "topic_a", 3, 99, LANDED_AT, 0, [("h", b"1")])],
        "key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, "
        "timestampType int, headers array<struct<key:string,value:binary>>",
    )
    rows = landing.kafka_to_landing(source, feed, F.lit(LANDED_AT))
    assert [(f.name, f.dataType.simpleString()) for f in rows.schema] == list(LANDING_COLUMNS)
    landing.create_landing_tables(spark)
    landing.append_landing(rows, "ckafka_json")
    assert landed(spark, "ckafka_json", feed) == [
        {
            "feed": feed,
            "topic": "topic_a",
            "partition": 3,
            "offset": 99,
            "timestamp": LANDED_AT,
            "key": b"k",
            "value": b"v",
            "landed_at": LANDED_AT,
        }
    ]


@pytest.mark.spark
def test_cli_load_prints_rows_per_file(spark, tmp_path, feed, capsys):
    jsonl = tmp_path / "messages.jsonl"
    jsonl.write_bytes(JSONL)
    parquet = kafka_parquet(tmp_path / "records.parquet", timestampType=pa.array([0, 0, 0], pa.int32()))
    code = main(["load", "--dialect", "oms_default_json", "--feed", feed, str(jsonl), str(parquet)])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out == [
        f"{jsonl}: {len(jsonl_lines(JSONL))} rows",
        f"{parquet}: 3 rows (ignored columns: timestampType)",
        f"loaded {len(jsonl_lines(JSONL)) + 3} rows from 2 files into landing.oms_default_json (feed '{feed}')",
    ]
    assert len(landed(spark, "oms_default_json", feed)) == len(jsonl_lines(JSONL)) + 3
    code = main(["load", "--dialect", "oms_default_json", "--feed", feed, str(jsonl)])
    assert code == 1
    assert "--allow-duplicates" in capsys.readouterr().err


@pytest.mark.spark
def test_cli_refuses_a_feed_already_landed_as_another_dialect(spark, tmp_path, feed, capsys):
    """A source table is identified by its feed: two dialects under one feed would share rows."""
    jsonl = tmp_path / "messages.jsonl"
    jsonl.write_bytes(JSONL)
    assert main(["load", "--dialect", "canal_json", "--feed", feed, str(jsonl)]) == 0
    capsys.readouterr()
    code = main(["load", "--dialect", "debezium_json", "--feed", feed, "--allow-duplicates", str(jsonl)])
    err = capsys.readouterr().err
    assert (code, err.count("\n")) == (1, 1)
    assert f"feed '{feed}' is already landed as canal_json, not debezium_json" in err
    assert landed(spark, "debezium_json", feed) == []


# ---------------------------------------------------------------- Spark: unique coordinates (issue 20)

# Issue 20: two `.jsonl` files of one canal_json feed; line 0 of the first is malformed, line 0 of
# the second a valid two-row INSERT. With offsets = line numbers both were (feed, 0, 0).
MALFORMED = b'{"type":"INSERT","database":"d","table":"t","es":1,"ts":1,"pkNames":["id"],"data":"oops"}'
TWO_ROW_INSERT = (
    b'{"type":"INSERT","database":"d","table":"t","es":2,"ts":2,"pkNames":["id"],'
    b'"mysqlType":{"id":"bigint"},"data":[{"id":"1"},{"id":"2"}]}'
)


def daily_files(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "day-1.jsonl", tmp_path / "day-2.jsonl"
    first.write_bytes(MALFORMED + b"\n\n" + TWO_ROW_INSERT.replace(b'"1"', b'"3"') + b"\n")
    second.write_bytes(TWO_ROW_INSERT + b"\n")
    return first, second


def assert_one_log(rows: list[dict], entries: list[dict], files: dict[str, bytes]) -> None:
    """Every record has its own (topic, partition, offset), and offset - first_offset of its file's
    ledger entry is its line number in that file (the independent oracle: the files' own lines)."""
    coordinates = [(row["topic"], row["partition"], row["offset"]) for row in rows]
    assert len(set(coordinates)) == len(coordinates), coordinates
    by_offset = {row["offset"]: row["value"] for row in rows}
    expected = {
        entry["first_offset"] + number: line
        for entry in entries
        for number, line in jsonl_lines(files[Path(entry["file_path"]).name])
    }
    assert by_offset == expected


@pytest.mark.spark
@pytest.mark.parametrize("loads", ["one load", "two loads"])
def test_jsonl_files_of_one_feed_never_share_coordinates(spark, tmp_path, feed, loads):
    first, second = daily_files(tmp_path)
    if loads == "one load":
        load_files(spark, "canal_json", feed, [first, second])
    else:
        load_files(spark, "canal_json", feed, [first])
        load_files(spark, "canal_json", feed, [second])
    entries = sorted(ledger(spark, feed), key=lambda entry: entry["first_offset"])
    # Consecutive ranges in command order, each as long as its file has lines (the empty one too).
    assert [(Path(e["file_path"]).name, e["first_offset"], e["end_offset"]) for e in entries] == [
        ("day-1.jsonl", 0, 3),
        ("day-2.jsonl", 3, 4),
    ]
    rows = landed(spark, "canal_json", feed)
    assert_one_log(rows, entries, {first.name: first.read_bytes(), second.name: second.read_bytes()})
    assert {row["value"] for row in rows if row["offset"] in (0, 3)} == {MALFORMED, TWO_ROW_INSERT}


@pytest.mark.spark
def test_redelivered_files_get_new_coordinates_and_parquet_keeps_its_own(spark, tmp_path, feed):
    first, second = daily_files(tmp_path)
    load_files(spark, "canal_json", feed, [first, second])
    # The feed's own topic name in a Kafka export: later .jsonl offsets start after its records.
    kafka = kafka_parquet(
        tmp_path / "export.parquet", topic=pa.array([feed] * 3), partition=pa.array([0, 0, 1], pa.int32())
    )
    load_files(spark, "canal_json", feed, [kafka, second, first], allow_duplicates=True)
    entries = ledger(spark, feed)
    placed = {(Path(e["file_path"]).name, e["first_offset"], e["end_offset"]) for e in entries}
    # day-2 was loaded at 3, then again after the Kafka records' offsets 41 and 7 of partition 0.
    assert placed == {
        ("day-1.jsonl", 0, 3),
        ("day-2.jsonl", 3, 4),
        ("export.parquet", None, 42),
        ("day-2.jsonl", 42, 43),
        ("day-1.jsonl", 43, 46),
    }
    rows = landed(spark, "canal_json", feed)
    coordinates = [(row["topic"], row["partition"], row["offset"]) for row in rows]
    assert len(set(coordinates)) == len(coordinates) == 3 + 2 * (len(jsonl_lines(first.read_bytes())) + 1)
    assert [(row["partition"], row["offset"]) for row in rows if row["key"] is not None or row["value"] is None] == [
        (0, 41),
        (1, 8),
    ]


@pytest.mark.spark
def test_a_ledger_from_before_offsets_is_migrated_and_continues_after_the_landed_offsets(spark, tmp_path, feed):
    """An existing warehouse: its ledger lacks first_offset/end_offset and its .jsonl offsets were
    line numbers restarting in every file; the next load continues after the highest one."""
    spark.sql(f"drop table {landing.LEDGER_TABLE}")
    spark.sql(
        f"create table {landing.LEDGER_TABLE} (`dialect` string, `feed` string, `file_sha256` string, "
        "`file_path` string, `rows` bigint, `landed_at` timestamp) using parquet"
    )
    spark.sql(f"insert into {landing.LEDGER_TABLE} values ('canal_json', '{feed}', 'x', '/old.jsonl', 6, now())")
    spark.sql(
        f"insert into {LANDING_SCHEMA}.canal_json select '{feed}', '{feed}', 0, id, null, null, "
        "cast('{}' as binary), now() from range(6)"
    )
    first, _ = daily_files(tmp_path)
    load_files(spark, "canal_json", feed, [first])
    assert spark.table(landing.LEDGER_TABLE).columns == [name for name, _ in landing.LEDGER_COLUMNS]
    entries = [e for e in ledger(spark, feed) if e["file_path"] != "/old.jsonl"]
    assert [(e["first_offset"], e["end_offset"]) for e in entries] == [(6, 9)]
    rows = landed(spark, "canal_json", feed)
    assert [row["offset"] for row in rows] == [0, 1, 2, 3, 4, 5, 6, 8]


def local_path(uri: str) -> str:
    """`file:/x` and `file:///x` (Hadoop and Spark spell a local file either way) as `/x`."""
    return "/" + uri.removeprefix("file:").lstrip("/")


def feed_files(spark, dialect: str, feed: str) -> set[str]:
    rows = spark.table(f"{LANDING_SCHEMA}.{dialect}").where(f"feed = '{feed}'").selectExpr("input_file_name() as f")
    return {local_path(row.f) for row in rows.distinct().collect()}


@pytest.mark.spark
def test_rewrite_landing_writes_int96_files_again_as_micros_with_the_same_rows_and_names(spark, tmp_path, feed, capsys):
    """Files landed before the session wrote TIMESTAMP_MICROS have no min/max for landed_at; the
    command writes them again, and a second run finds nothing."""
    path = tmp_path / "old.jsonl"
    path.write_bytes(JSONL)
    setting = "spark.sql.parquet.outputTimestampType"
    previous = spark.conf.get(setting)
    spark.conf.set(setting, "INT96")
    try:
        landing.write_load(spark, prepare_load("canal_json", feed, [path]), landed_at=LANDED_AT)
    finally:
        spark.conf.set(setting, previous)
    files = feed_files(spark, "canal_json", feed)
    rows = landed(spark, "canal_json", feed)
    found = {(local_path(rewrite.path), rewrite.columns) for rewrite in landing.int96_landing_files(spark)}
    assert {path for path, _ in found} == files and {columns for _, columns in found} == {("timestamp", "landed_at")}

    assert main(["rewrite-landing", "--dry-run"]) == 0
    assert "would rewrite 1 file of the landing tables" in capsys.readouterr().out
    assert {local_path(rewrite.path) for rewrite in landing.int96_landing_files(spark)} == files

    assert main(["rewrite-landing"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"rewrote {len(rows)} rows in 1 file of the landing tables", out
    assert feed_files(spark, "canal_json", feed) == files
    assert landed(spark, "canal_json", feed) == rows
    assert landing.int96_landing_files(spark) == []
    for file in files:
        metadata = pq.read_metadata(file)
        landed_at = metadata.row_group(0).column(metadata.schema.names.index("landed_at"))
        assert landed_at.statistics.has_min_max and landed_at.statistics.max == LANDED_AT

    assert main(["rewrite-landing"]) == 0
    assert capsys.readouterr().out.strip() == "no landing file stores timestamps as INT96: nothing to rewrite"


@pytest.mark.spark
def test_the_landing_test_warns_of_rows_without_landed_at_per_table_and_feed(spark, feed):
    """The singular data test landing_rows_without_landed_at (docs/testing.md, "The landing
    tables") warns, never fails, when a writer lands rows without landed_at (no incremental
    staging run would read them), names their landing table and feed with how many, and passes
    once they are gone. The rows are landed in files of their own and removed after, as the
    landing tables are shared with the rest of the suite."""
    from harness import DEFAULT_SCHEMA, dbt_target, run_dbt

    dialect = "maxwell_json"
    table = landing.landing_table(dialect)

    def checked() -> tuple[str, int]:
        results = run_dbt("test", "--select", "landing_rows_without_landed_at").result.results
        (outcome,) = [result for result in results if result.node.resource_type == "test"]
        return str(outcome.status), outcome.failures

    assert checked() == ("pass", 0)
    before = set(spark.table(table).inputFiles())
    records = spark.createDataFrame(
        [(feed, 0, offset, None, b'{"type":"insert"}') for offset in range(3)],
        "topic string, partition int, offset long, key binary, value binary",
    ).selectExpr("*", "cast(null as timestamp) as timestamp")
    landing.append_landing(landing.kafka_to_landing(records, feed, F.lit(None).cast("timestamp")), dialect)
    spark.sql(f"refresh table {table}")
    added = set(spark.table(table).inputFiles()) - before
    try:
        assert checked() == ("warn", 1)
        compiled = next(dbt_target(DEFAULT_SCHEMA, None).glob("compiled/**/landing_rows_without_landed_at.sql"))
        found = [tuple(row) for row in spark.sql(compiled.read_text()).collect()]
        assert found == [(dialect, feed, 3)]
    finally:
        for path in added:
            Path(urlparse(path).path).unlink()
        spark.sql(f"refresh table {table}")
    assert checked() == ("pass", 0)


@pytest.mark.spark
def test_a_load_is_written_in_row_groups_a_scan_can_split(spark, tmp_path, feed, monkeypatch):
    """One file per load, but in row groups of LANDING_ROW_GROUP_BYTES: Parquet splits a file
    between tasks only at row groups, and a staging model has no shuffle to spread its work."""
    path = tmp_path / "many.jsonl"
    path.write_bytes(b"\n".join(b'{"id": %d, "pad": "%s"}' % (i, b"x" * 200) for i in range(3000)))
    monkeypatch.setattr(landing, "LANDING_ROW_GROUP_BYTES", 64 * 1024)
    landing.write_load(spark, prepare_load("maxwell_json", feed, [path]), landed_at=LANDED_AT)
    (file,) = feed_files(spark, "maxwell_json", feed)
    metadata = pq.ParquetFile(file).metadata
    assert metadata.num_rows == 3000 and metadata.num_row_groups > 4
    sizes = [metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups)]
    assert max(sizes) < 2 * 64 * 1024


@pytest.mark.spark
def test_the_session_writes_per_row_columns_without_a_dictionary(spark, tmp_path):
    """PER_ROW_COLUMNS are written as plain values, even where a dictionary would pay (each value
    here five times); every other column, an image's keys included, keeps its dictionary."""
    out = tmp_path / "staged"
    spark.range(5000).selectExpr(
        "sha2(cast(id % 1000 as string), 256) as event_id",
        "'canal_json' as dialect",
        "map('id', cast(id % 1000 as string), 'status', 'open') as after",
    ).coalesce(1).write.parquet(str(out))
    (file,) = out.glob("*.parquet")
    row_group = pq.ParquetFile(file).metadata.row_group(0)
    encodings = {
        row_group.column(i).path_in_schema: set(row_group.column(i).encodings) for i in range(row_group.num_columns)
    }
    dictionary = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
    assert not encodings["event_id"] & dictionary and not encodings["after.key_value.value"] & dictionary
    assert encodings["dialect"] & dictionary and encodings["after.key_value.key"] & dictionary
