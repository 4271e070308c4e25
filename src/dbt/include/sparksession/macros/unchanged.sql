{#-
    Tables and views that a run would leave as they are are not rebuilt. A table or view is a pure
    function of its SQL and its parents' rows: when its compiled SQL is the one it was built from
    (an MD5 kept as a table property, adapter.fingerprint) and every parent is a model this
    invocation left unchanged (an incremental model that wrote no row, or a table or view skipped
    here), the materialization runs `select 0 as rows_written` instead and the adapter remembers
    the relation as unchanged, so the relation's data tests check nothing (macros/test_scope.sql):
    their rows were checked when they last changed. A source parent, a parent this invocation did
    not run, a changed SQL (a var such as typed_entities) or --full-refresh rebuilds it.
-#}

{% macro sparksession_unchanged(kind, target_relation) -%}
  {%- if flags.FULL_REFRESH or model.language != 'sql' or not model.depends_on.nodes -%}
    {{ return(false) }}
  {%- endif -%}
  {%- set existing = adapter.get_relation(database=database, schema=schema, identifier=model.alias) -%}
  {%- if existing is none or existing.type != kind -%}
    {{ return(false) }}
  {%- endif -%}
  {%- for parent_id in model.depends_on.nodes -%}
    {%- set parent = graph.nodes.get(parent_id) -%}
    {%- if parent is none or parent.resource_type != 'model' -%}
      {{ return(false) }}
    {%- endif -%}
    {%- set parent_relation = api.Relation.create(
        database=parent.database, schema=parent.schema, identifier=parent.alias
    ) -%}
    {%- if adapter.wrote_rows(invocation_id, parent_relation) is not false -%}
      {{ return(false) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(adapter.fingerprint(target_relation) == local_md5(compiled_code)) }}
{%- endmacro %}

{% macro sparksession_skip_unchanged(target_relation) -%}
  {%- call statement('main') -%}
    select 0 as rows_written
  {%- endcall -%}
  {% do adapter.record_unchanged(invocation_id, target_relation) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmacro %}

{% macro sparksession_build_unless_unchanged(kind) -%}
  {%- set target_relation = api.Relation.create(
      identifier=model.alias, schema=schema, database=database, type=kind
  ) -%}
  {%- if sparksession_unchanged(kind, target_relation) -%}
    {{ return(sparksession_skip_unchanged(target_relation)) }}
  {%- endif -%}
  {%- set result = materialization_table_spark() if kind == 'table' else create_or_replace_view() -%}
  {% do adapter.set_fingerprint(target_relation, kind, local_md5(compiled_code)) %}
  {{ return(result) }}
{%- endmacro %}

{% materialization table, adapter='sparksession', supported_languages=['sql', 'python'] -%}
  {{ return(sparksession_build_unless_unchanged('table')) }}
{%- endmaterialization %}

{% materialization view, adapter='sparksession' -%}
  {{ return(sparksession_build_unless_unchanged('view')) }}
{%- endmaterialization %}
