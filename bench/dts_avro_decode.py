"""Decode throughput of dts_avro (fastavro over Arrow batches) against the JSON SQL path.

The same simulated workload is encoded twice: as DTS Avro records and as DataWorks JSON
messages (the JSON dialect closest to it: one message per row change, typed images).
Both land in memory as Kafka-shaped rows and are decoded by Spark, timed on this machine:

- dts_avro: `mapInArrow(decode_arrow_batches)`, the whole staging decoder of the Python model
  (fastavro, canonical values, ids, sequence);
- dataworks_json, from_json: the JSON SQL path's parse, `from_json` of every message into
  the DataWorks struct;
- dataworks_json, cdc_dataworks_rows: the JVM message function of the SQL staging model (read,
  checks, both images decoded), what that model spends per message before its explode and write.

Every run writes to Spark's `noop` sink (all rows computed, nothing stored); the best of
`--repeat` runs is reported, after one warm-up run each.

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python bench/dts_avro_decode.py --events 20000
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession

from cdc_unify.contract import LANDING_COLUMNS, staged_schema_ddl
from cdc_unify.generator.encoders import encoder_for
from cdc_unify.generator.workload import WorkloadOptions, build_workload
from cdc_unify.message_decoders.dts_avro import decode_arrow_batches
from cdc_unify.spark import get_spark

DATAWORKS_SCHEMA = (
    "struct<schema: struct<dataColumn: array<struct<name: string, type: string>>, primaryKey: array<string>,"
    " source: struct<dbType: string, dbName: string, tableName: string>>,"
    " payload: struct<before: struct<dataColumn: map<string, string>>, after: struct<dataColumn: map<string, string>>,"
    " sequenceId: string, op: string, timestamp: struct<eventTime: bigint, systemTime: bigint>>, version: string>"
)
LANDED_AT = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


def landing_frame(spark: SparkSession, values: list[bytes]) -> DataFrame:
    """Kafka-shaped landing rows, cached in memory so the timing is the decode alone."""
    rows = [("bench", "bench", 0, offset, LANDED_AT, None, value, LANDED_AT) for offset, value in enumerate(values)]
    schema = ", ".join(f"`{name}` {typ}" for name, typ in LANDING_COLUMNS)
    frame = spark.createDataFrame(rows, schema).repartition(spark.sparkContext.defaultParallelism).cache()
    frame.count()
    return frame


def avro_decode(frame: DataFrame) -> DataFrame:
    return frame.mapInArrow(decode_arrow_batches, staged_schema_ddl())


def json_parse(frame: DataFrame) -> DataFrame:
    return frame.selectExpr(f"from_json(cast(value as string), '{DATAWORKS_SCHEMA}') as msg").selectExpr(
        "msg.payload.op", "msg.payload.before.dataColumn as before", "msg.payload.after.dataColumn as after",
        "map_from_entries(transform(msg.schema.dataColumn, c -> struct(c.name, c.type))) as types",
        "timestamp_millis(msg.payload.timestamp.eventTime) as event_ts",
    )  # fmt: skip


def json_staged_rows(frame: DataFrame) -> DataFrame:
    return frame.selectExpr("inline(cdc_dataworks_rows('dataworks_json', value, 'Asia/Shanghai'))")


def best_rate(decode: Callable[[DataFrame], DataFrame], frame: DataFrame, messages: int, repeat: int) -> float:
    """Messages per second of the fastest of `repeat` runs (after one warm-up run)."""
    timings = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        decode(frame).write.format("noop").mode("overwrite").save()
        timings.append(time.perf_counter() - started)
    return messages / min(timings[1:])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000, help="row changes of the simulated workload")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per path (the best one counts)")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    workload = build_workload(WorkloadOptions(events=args.events), args.seed)
    avro_values = [m.value for m in encoder_for("dts_avro").encode(workload, random.Random(args.seed))]
    json_values = [m.value for m in encoder_for("dataworks_json").encode(workload, random.Random(args.seed))]

    spark = get_spark(master=args.master, warehouse=tempfile.mkdtemp(prefix="cdc-unify-bench-"))
    avro = landing_frame(spark, avro_values)
    json_frame = landing_frame(spark, json_values)
    cores = spark.sparkContext.defaultParallelism
    results = [
        ("dts_avro: fastavro + staging over Arrow batches", len(avro_values), best_rate(
            avro_decode, avro, len(avro_values), args.repeat)),
        ("dataworks_json: from_json (JSON SQL path, parse only)", len(json_values), best_rate(
            json_parse, json_frame, len(json_values), args.repeat)),
        ("dataworks_json: cdc_dataworks_rows (the model's function)", len(json_values), best_rate(
            json_staged_rows, json_frame, len(json_values), args.repeat)),
    ]  # fmt: skip
    print(f"workload: {args.events} row changes, seed {args.seed}; Spark {spark.version}, master {args.master} "
          f"({cores} cores); best of {args.repeat} runs")  # fmt: skip
    for label, messages, rate in results:
        print(f"{label:<58} {messages:>8} messages  {rate:>10,.0f} messages/s")
    spark.stop()


if __name__ == "__main__":
    main()
