{#- Landing tables (docs/landing.md), created if missing so `dbt build` works on a fresh warehouse.
    The column list and the dialect list mirror cdc_unify.contract (LANDING_COLUMNS, DIALECTS,
    landing_table_ddl); tests/python/test_landing.py renders this file and fails if they differ. -#}

{% macro landing_table_ddl(dialect) -%}
    {%- set columns = [
        ("feed", "string"),
        ("topic", "string"),
        ("partition", "int"),
        ("offset", "bigint"),
        ("timestamp", "timestamp"),
        ("key", "binary"),
        ("value", "binary"),
        ("landed_at", "timestamp"),
    ] -%}
    create table if not exists `landing`.`{{ dialect }}` (
    {%- for name, data_type in columns -%}
        `{{ name }}` {{ data_type }}{{ ", " if not loop.last else "" }}
    {%- endfor -%}
    ) using parquet
{%- endmacro %}

{% macro create_landing_tables() -%}
    {#- Run as an on-run-start hook: executes its statements and renders nothing. -#}
    {%- set dialects = [
        "canal_json",
        "cloudcanal_json",
        "debezium_json",
        "dts_avro",
        "dataworks_json",
        "ckafka_json",
        "oms_default_json",
        "oms_default_ext_json",
        "oms_canal_json",
        "oms_dataworks_json",
        "oms_shareplex_json",
        "maxwell_json",
        "ogg_json",
    ] -%}
    {%- if execute -%}
        {%- do run_query("create schema if not exists `landing`") -%}
        {#- One listing instead of a metastore lookup per table on every run (all exist after the first). -#}
        {%- set existing = run_query("show tables in `landing`").columns['tableName'].values() -%}
        {%- for dialect in dialects if dialect not in existing -%}
            {%- do run_query(landing_table_ddl(dialect)) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
