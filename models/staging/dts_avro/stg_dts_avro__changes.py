"""Alibaba Cloud DTS Avro -> the staged contract.

A Python model because the values are Avro (fastavro; Spark's spark-avro jar is not
available): the whole decoder is cdc_unify.message_decoders.dts_avro, run on the executors over
Arrow batches with mapInArrow, never row by row on the driver.  docs/dialects/dts_avro.md.

What it reads: on an incremental run, the landing rows of each feed landed after the newest
landing it holds of that feed (staged_until: watermarks kept with its table, or for a small
table its Parquet footers or two columns of its rows; constants the Parquet scan applies,
landed_since); on a full build, every landing row.
Nothing else.
"""

from pyspark.sql import functions as F

from cdc_unify.contract import LANDING_COLUMNS, staged_schema_ddl
from cdc_unify.landing import landed_since, staged_until
from cdc_unify.message_decoders.dts_avro import decode_arrow_batches


def model(dbt, session):
    # A run decodes only the loads landed since the last one.  Said here although dbt_project.yml
    # says it for all staging: dbt-core makes a Python model `table` unless its own file or YAML
    # names a materialization (dbt/parser/base.py, dbt-core#8520).
    # keep_newest: the full build keeps the watermarks of landed_since with the table.
    dbt.config(materialized="incremental", keep_newest=[["source_name", "landed_at"]])
    held = staged_until(session, dbt.this) if dbt.is_incremental else None
    landing = landed_since(dbt.source("landing", "dts_avro"), held)
    columns = [f"`{name}`" for name, _ in LANDING_COLUMNS]
    staged_rows = landing.select(*columns).mapInArrow(decode_arrow_batches, staged_schema_ddl())
    # The run that staged the rows, as SQL staging models stamp theirs (macro cdc_built_at).
    return staged_rows.withColumn("built_at", F.lit(dbt.run_started_at))
