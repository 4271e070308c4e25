"""Smoke test of the stack (Python model reading a SQL model); replaced by the real layers."""

from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table")
    numbers = dbt.ref("stg_smoke__numbers")
    return numbers.withColumn("is_even", (F.col("n") % 2) == 0)
