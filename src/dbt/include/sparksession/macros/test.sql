{% materialization test, adapter='sparksession' -%}
  {#- dbt's test materialization, except for a test whose compile found that its query can return
      no row (adapter.pass_without_query, called by get_where_subquery in macros/test_scope.sql: its
      scope is empty, or the query its model's tests of each row shared counted no failing row of
      it). Such a test stores the result its query would have returned (no failure) instead of
      sending Spark a query over nothing: about 50 ms of planning and running a test, on every test
      of every build, most of a quiet build's test time. Only while it counts failing rows as dbt
      does by default: a test storing its failures, or with its own fail_calc, warn_if or error_if
      (which may fire on no row), runs its query. -#}
  {%- set default_count = config.get('fail_calc') == 'count(*)' and not should_store_failures() -%}
  {%- set default_severity = config.get('warn_if') == '!= 0' and config.get('error_if') == '!= 0' -%}
  {%- if adapter.passes_without_query(invocation_id, model.unique_id) and default_count and default_severity -%}
    {%- set passed = adapter.passing_test_result() -%}
    {%- do store_result('main', response=passed[0], agate_table=passed[1]) -%}
    {{ return({'relations': []}) }}
  {%- endif -%}
  {{ return(dbt.materialization_test_default()) }}
{%- endmaterialization %}
