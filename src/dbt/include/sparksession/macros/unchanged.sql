{#-
    Tables and views that a run would leave as they are are not rebuilt. A table or view is a pure
    function of its SQL and its parents' rows: when its compiled SQL is the one it was built from
    (an MD5 kept as a table property, adapter.fingerprint) and every parent is a model this
    invocation left unchanged (an incremental model that wrote no row, or a table or view skipped
    here), the materialization runs `select 0 as rows_written` instead and the adapter remembers
    the relation as unchanged, so the relation's data tests check nothing (macros/test_scope.sql):
    their rows were checked when they last changed. A source parent, a parent this invocation did
    not run, a changed SQL (a var such as typed_entities) or --full-refresh rebuilds it.
    A view is not re-created either when only its parents' rows changed: Spark reads a view's SQL
    again at every query, so with the SQL it was made from and no parent made anew since it was
    (a table built whole, a view re-created: either may have changed its columns), it already
    shows their new rows. Re-creating the seven views cost the +10,000 run of mixed:1M about 2.5 s
    (docs/benchmarks.md, "Views kept while only their parents' rows change"). Its data tests learn
    what changed from its parents, as for a view re-created with the same SQL.
-#}

{% macro sparksession_model_parents() -%}
  {#- The relations of the model's parents, when a relation built from its SQL and their rows may
      be left as it is: a SQL model with parents, every one a model, and no --full-refresh. None
      otherwise. -#}
  {%- if flags.FULL_REFRESH or model.language != 'sql' or not model.depends_on.nodes -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set parents = [] -%}
  {%- for parent_id in model.depends_on.nodes -%}
    {%- set parent = graph.nodes.get(parent_id) -%}
    {%- if parent is none or parent.resource_type != 'model' -%}
      {{ return(none) }}
    {%- endif -%}
    {%- do parents.append(api.Relation.create(database=parent.database, schema=parent.schema, identifier=parent.alias)) -%}
  {%- endfor -%}
  {{ return(parents) }}
{%- endmacro %}

{% macro sparksession_parents_unchanged() -%}
  {#- Every parent is a model this invocation left unchanged, and nothing forces a rebuild. -#}
  {%- set parents = sparksession_model_parents() -%}
  {%- if parents is none -%}
    {{ return(false) }}
  {%- endif -%}
  {%- for parent_relation in parents -%}
    {%- if adapter.wrote_rows(invocation_id, parent_relation) is not false -%}
      {{ return(false) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(true) }}
{%- endmacro %}

{% macro sparksession_same_sql(kind, target_relation) -%}
  {#- The relation exists as a `kind` built from this compiled SQL (its fingerprint). -#}
  {%- set existing = adapter.get_relation(database=database, schema=schema, identifier=model.alias) -%}
  {%- if existing is none or existing.type != kind -%}
    {{ return(false) }}
  {%- endif -%}
  {{ return(adapter.fingerprint(target_relation) == local_md5(compiled_code)) }}
{%- endmacro %}

{% macro sparksession_view_outlives_parents(target_relation) -%}
  {#- Every parent is a model whose table or view existed, as it is now, before this view was made
      (adapter.created_before), and nothing forces a rebuild. -#}
  {%- set parents = sparksession_model_parents() -%}
  {{ return(parents is not none and adapter.created_before(target_relation, parents)) }}
{%- endmacro %}

{% macro sparksession_keep_view(target_relation) -%}
  {#- The view stays as it is and shows its parents' new rows: its data tests follow them. -#}
  {%- call statement('main') -%}
    select 0 as rows_written
  {%- endcall -%}
  {% do adapter.record_view(invocation_id, target_relation, true) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmacro %}

{% macro sparksession_skip_unchanged(target_relation) -%}
  {%- call statement('main') -%}
    select 0 as rows_written
  {%- endcall -%}
  {% do adapter.record_unchanged(invocation_id, target_relation) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmacro %}

{% materialization table, adapter='sparksession', supported_languages=['sql', 'python'] -%}
  {#- dbt-spark's table materialization for Parquet (the project's only format), with the skip.
      Written out, not wrapped: dbt runs a Python model only from a `statement` the
      materialization itself calls. -#}
  {%- set language = model['language'] -%}
  {%- set target_relation = api.Relation.create(identifier=model.alias, schema=schema, database=database, type='table') -%}
  {%- if sparksession_parents_unchanged() and sparksession_same_sql('table', target_relation) -%}
    {{ return(sparksession_skip_unchanged(target_relation)) }}
  {%- endif -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model.alias) -%}
  {{ run_hooks(pre_hooks) }}
  {%- if old_relation is not none -%}
    {{ adapter.drop_relation(old_relation) }}
  {%- endif -%}
  {%- call statement('main', language=language) -%}
    {{ create_table_as(False, target_relation, compiled_code, language) }}
  {%- endcall -%}
  {% do adapter.set_fingerprint(target_relation, 'table', local_md5(compiled_code)) %}
  {% do apply_grants(target_relation, config.get('grants'), should_revoke(old_relation, full_refresh_mode=True)) %}
  {% do persist_docs(target_relation, model) %}
  {% do persist_constraints(target_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}

{% materialization view, adapter='sparksession' -%}
  {%- set target_relation = api.Relation.create(identifier=model.alias, schema=schema, database=database, type='view') -%}
  {%- set same_sql = sparksession_same_sql('view', target_relation) -%}
  {%- if same_sql and sparksession_parents_unchanged() -%}
    {{ return(sparksession_skip_unchanged(target_relation)) }}
  {%- endif -%}
  {%- if same_sql and sparksession_view_outlives_parents(target_relation) -%}
    {{ return(sparksession_keep_view(target_relation)) }}
  {%- endif -%}
  {%- set result = create_or_replace_view() -%}
  {% do adapter.set_fingerprint(target_relation, 'view', local_md5(compiled_code)) %}
  {#- Re-created with the same SQL: its data tests learn what changed from its parents. -#}
  {% do adapter.record_view(invocation_id, target_relation, same_sql) %}
  {{ return(result) }}
{%- endmaterialization %}
