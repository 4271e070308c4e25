{#-
    Python models of the sparksession adapter run in dbt's own SparkSession (see
    dbt/adapters/sparksession/python_submissions.py). dbt-spark's py_write_table writes Delta
    unless told otherwise and ignores partition_by; here the project's file_format (default
    parquet, the only table format available locally) and partition_by apply to Python models
    as they do to SQL models, so incremental insert_overwrite works for both. A model reads the
    invocation's start as `dbt.run_started_at` (a UTC datetime), as SQL models read jinja's.
    Config `write_distributed_by` (SQL and Python models): the rows are distributed by these
    columns before they are written, so that each partition folder gets one file per write
    instead of one per task (sparksession_distributed).
-#}

{% macro sparksession__create_table_as(temporary, relation, compiled_code, language='sql') -%}
    {#- A killed `create table as` leaves files in a folder no table owns; Spark then refuses the
        folder to the next one (dbt/adapters/sparksession/pending_writes.py). -#}
    {%- if not temporary -%}
        {% do adapter.clear_unregistered_location(relation) %}
    {%- endif -%}
    {%- if language == 'python' -%}
        {{ sparksession_py_write_table(compiled_code, relation) }}
    {%- else -%}
        {{ spark__create_table_as(temporary, relation, sparksession_distributed(compiled_code), language) }}
    {%- endif -%}
{%- endmacro %}

{% macro sparksession_config_columns(name) -%}
    {#- The model's config `name` (partition_by, write_distributed_by: a column name or a list of
        them) as a list of column names, empty when the model has none. -#}
    {%- set columns = config.get(name) or [] -%}
    {{ return([columns] if columns is string else columns) }}
{%- endmacro %}

{% macro sparksession_distributed(compiled_code) -%}
    {#- A SQL model's query, its rows distributed by config write_distributed_by when it has one.
        Without it, each write task writes a file into every partition folder it has rows for
        (4 tasks x 64 key_buckets = 256 files), and every later scan of the table lists and opens
        them all: distributed by the partition columns, each folder gets one file per write. -#}
    {%- set columns = sparksession_config_columns('write_distributed_by') -%}
    {%- if not columns -%}
        {{ return(compiled_code) }}
    {%- endif -%}
    {%- set quoted = [] -%}
    {%- for column in columns -%}
        {%- do quoted.append('`' ~ column | replace('`', '``') ~ '`') -%}
    {%- endfor -%}
    {{ return('select * from (\n' ~ compiled_code ~ '\n) as sparksession_distributed\ndistribute by ' ~ quoted | join(', ')) }}
{%- endmacro %}

{% macro sparksession_py_write_table(compiled_code, target_relation) -%}
    {%- set file_format = config.get('file_format', 'parquet') or 'parquet' -%}
    {%- set partition_by = sparksession_config_columns('partition_by') %}
{{ sparksession_py_model_frame(compiled_code) }}
writer = df.write.mode("overwrite").format({{ file_format | tojson }})
{%- if partition_by %}
writer = writer.partitionBy(*{{ partition_by | tojson }})
{%- endif %}
writer.saveAsTable({{ target_relation | string | tojson }})
{%- endmacro %}

{% macro sparksession_py_write_pending(compiled_code, target_relation, on_schema_change) -%}
    {#- An incremental Python model's rows written as its table's pending write
        (dbt/adapters/sparksession/pending_writes.py write_pending). -#}
    {%- set file_format = config.get('file_format', 'parquet') or 'parquet' -%}
    {%- set partition_by = sparksession_config_columns('partition_by') %}
{{ sparksession_py_model_frame(compiled_code) }}
from dbt.adapters.sparksession import pending_writes

pending_writes.write_pending(
    spark,
    df,
    pending_writes.Named({{ target_relation.schema | tojson }}, {{ target_relation.identifier | tojson }}),
    {{ partition_by | tojson }},
    {{ file_format | tojson }},
    {{ on_schema_change | tojson }},
)
{%- endmacro %}

{% macro sparksession_py_model_frame(compiled_code) -%}
    {#- The model's code, then its result as Spark DataFrame `df`, distributed by config
        write_distributed_by when it has one. -#}
    {%- set distributed_by = sparksession_config_columns('write_distributed_by') %}
{# the code must start on a line of its own, whatever indentation precedes this call #}
{{ compiled_code }}


# --- sparksession adapter: materialise the model's result --- #
import datetime

import pandas
import pyspark.sql

dbt = dbtObj(spark.table)
# When this dbt invocation started (UTC): jinja's run_started_at, which SQL models read through
# macro cdc_built_at, given to Python models too so both stamp the rows they write alike.
dbt.run_started_at = datetime.datetime.fromisoformat({{ (run_started_at.strftime("%Y-%m-%dT%H:%M:%S.%f") ~ "+00:00") | tojson }})
df = model(dbt, spark)
if isinstance(df, pandas.DataFrame):
    df = spark.createDataFrame(df)
elif hasattr(df, "to_spark"):
    df = df.to_spark()
if not isinstance(df, pyspark.sql.DataFrame):
    raise TypeError(f"a dbt Python model must return a Spark or pandas DataFrame, not {type(df)}")
{%- if distributed_by %}
df = df.repartition(*{{ distributed_by | tojson }})
{%- endif %}
{%- endmacro %}
