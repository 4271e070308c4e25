"""get_spark (cdc_unify.spark) on a running session: asked with the settings it was last given, it
returns the session as it is; asked with other settings, it configures it again."""

from __future__ import annotations

import os
import re

import pytest

from cdc_unify import jvm
from cdc_unify.commands.sql_server import DRIVER_MEMORY_ENV
from cdc_unify.spark import collector_options, get_spark
from harness import REPO_ROOT, TEST_SPARK_CONF, harness_root, spark_session

pytestmark = pytest.mark.spark


def test_the_same_settings_return_the_session_without_configuring_it_again(monkeypatch) -> None:
    session = spark_session()
    registered = []
    monkeypatch.setattr(jvm, "register", registered.append)

    assert spark_session() is session
    assert registered == []

    other = {**TEST_SPARK_CONF, "spark.sql.shuffle.partitions": "3"}
    warehouse = str(harness_root() / "warehouse")
    assert get_spark(master="local[2]", warehouse=warehouse, extra_conf=other) is session
    assert registered == [session]
    assert session.conf.get("spark.sql.shuffle.partitions") == "3"

    assert spark_session() is session
    assert registered == [session, session]
    assert session.conf.get("spark.sql.shuffle.partitions") == TEST_SPARK_CONF["spark.sql.shuffle.partitions"]


def test_the_driver_jvm_collects_garbage_with_the_parallel_collector() -> None:
    """The driver's JVM options reach the JVM PySpark starts (a setting in SparkConf alone would not,
    once the JVM runs): its collectors are the parallel collector's, not G1's."""
    if not collector_options(os.environ):
        pytest.skip("the environment's JVM options choose the collector")
    management = spark_session()._jvm.java.lang.management.ManagementFactory
    collectors = {bean.getName() for bean in management.getGarbageCollectorMXBeans()}

    assert collectors == {"PS Scavenge", "PS MarkSweep"}


def test_the_suites_session_has_the_heap_dbts_session_gets_from_the_profile() -> None:
    """The shared session is built before any profile is read; with Spark's default heap (1g) it ran
    out of memory planning the intermediate models' unit tests late in the suite."""
    runtime = spark_session()._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()

    profiles = (REPO_ROOT / "profiles" / "profiles.yml").read_text(encoding="utf-8")
    # The first target's default (local), unless the environment sets it for both.
    profile_default = re.search(r"spark\.driver\.memory: .*env_var\('CDC_UNIFY_DRIVER_MEMORY', '(\w+)'\)", profiles)
    assert profile_default is not None
    expected = os.environ.get(DRIVER_MEMORY_ENV, profile_default.group(1))

    assert TEST_SPARK_CONF["spark.driver.memory"] == expected
    assert f"-Xmx{expected}" in list(runtime.getInputArguments())


def test_a_partitioned_write_keeps_its_rows_unsorted() -> None:
    """A write into a partitioned table goes through open files per partition, not a sort of its
    rows by partition (session_conf: spark.sql.maxConcurrentOutputFileWriters)."""
    spark = spark_session()
    spark.sql("create database if not exists session_checks")
    spark.sql("drop table if exists session_checks.partitioned")
    spark.sql("create table session_checks.partitioned (id bigint, part boolean) using parquet partitioned by (part)")
    try:
        plan = spark.sql(
            "explain insert into session_checks.partitioned select id, id % 2 = 0 as part from range(10)"
        ).collect()[0][0]
        spark.sql("insert into session_checks.partitioned select id, id % 2 = 0 as part from range(10)")
        rows = spark.table("session_checks.partitioned").groupBy("part").count().collect()
    finally:
        spark.sql("drop database if exists session_checks cascade")

    assert "WriteFiles" in plan
    assert "Sort [" not in plan
    assert {(row["part"], row["count"]) for row in rows} == {(True, 5), (False, 5)}
