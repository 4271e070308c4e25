{#-
    dbt-spark's incremental materialization with kill-safe writes (dbt/adapters/sparksession/
    pending_writes.py): an incremental run writes its rows as a pending write (files in a hidden
    folder of the table's folder, marked complete after they are all written), complete before
    anything of the model's table changes, then moves its files in (append: added to the table or
    its partitions; insert_overwrite: each partition it holds replaces the table's). A pending write
    left by a killed run is applied before the model reads `this` again; a full build discards it.
    on_schema_change: ignore or fail (the write's columns are compared with the table's before it
    is written). A model that found nothing new when it compiled (macro
    cdc_skip_write_when_nothing_new) writes nothing and runs no query. Config
    `appended_partitions` (insert_overwrite only): partition folders, such as
    `event_slice=final`, or patterns (`key_bucket=*/build_tier=delta`), whose new
    files are added to instead of replacing the stored ones, for a model that appends most of its
    rows and rewrites a few partitions (int_change_events, int_row_changes). Config
    `replaced_partition_depth` N: a replaced partition swaps the folder of its first N partition
    columns whole (int_row_changes rewrites a key_bucket, its appended builds included, by
    writing its compacted `build_tier=base`). Config `compact_fan_in` (default var
    cdc_compact_fan_in): after the write, the small files of the partitions it appended to (after
    a full build: every partition it appends to) are merged by size
    (dbt/adapters/sparksession/compaction.py, kill-safe as the writes; a merge a killed run left
    is finished or dropped before the next write). Config `keep_newest` ([group, value] pairs, e.g.
    `[["source_name", "landed_at"]]`): the full build keeps max(value) per group with the table
    (dbt/adapters/sparksession/newest_values.py), for a Python model, whose code no macro
    compiles, to read as its watermarks (cdc_unify.landing.staged_until). After the write, what a
    model that keeps some rows of its input read of it (macro cdc_held_watermarks) is stored with
    its table (newest_values.read_until). Config `tblproperties` keys under `cdc_unify.layout.`
    (e.g. `cdc_unify.layout.cdc_row_buckets`, its key_bucket count): how the table lays out its rows,
    set when it is built whole; an incremental run whose config has another value for one the table
    holds fails before it writes, naming both values and the full refresh to run (a table built
    before layouts were kept takes the values of its first incremental run). Otherwise as dbt-spark's:
    same strategies (append, insert_overwrite with partition_by), schema change handling, hooks,
    grants and docs.
-#}

{% materialization incremental, adapter='sparksession', supported_languages=['sql', 'python'] -%}
  {%- set raw_file_format = config.get('file_format', default='parquet') -%}
  {%- set raw_strategy = config.get('incremental_strategy') or 'append' -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set file_format = dbt_spark_validate_get_file_format(raw_file_format) -%}
  {%- set strategy = dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) -%}
  {%- set layout = sparksession_write_layout(
      config.get('partition_by'), strategy, config.get('appended_partitions'), config.get('replaced_partition_depth'),
      config.get('compact_fan_in', var('cdc_compact_fan_in', 4))
  ) -%}
  {%- set partition_by = layout.partition_by -%}
  {%- if strategy not in ['append', 'insert_overwrite'] or (strategy == 'insert_overwrite' and not partition_by) -%}
    {{ exceptions.raise_compiler_error(
        'sparksession writes incremental models with strategy append, or insert_overwrite with partition_by; '
        ~ model.name ~ ' has ' ~ strategy ~ (' without partition_by' if strategy == 'insert_overwrite' else '')
    ) }}
  {%- endif -%}
  {%- set language = model['language'] -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set target_relation = this -%}
  {%- set existing_relation = load_relation(this) -%}
  {%- if on_schema_change not in ['ignore', 'fail'] -%}
    {{ exceptions.raise_compiler_error(
        'sparksession checks on_schema_change ignore or fail; ' ~ model.name ~ ' has ' ~ on_schema_change
    ) }}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
    {% do adapter.drop_legacy_pending_write(target_relation) %}
    {% do adapter.drop_compaction(target_relation) %}
    {%- if existing_relation is not none -%}
      {% do adapter.drop_relation(existing_relation) %}
    {%- endif -%}
    {#- Config keep_newest ([group, value] pairs): what a Python model's incremental runs will ask of
        its table (a SQL model asks while it compiles: macro cdc_keep_newest). -#}
    {%- for group, value in config.get('keep_newest') or [] -%}
      {% do adapter.keep_newest(invocation_id, target_relation, group, value) %}
    {%- endfor -%}
    {%- call statement('main', language=language) -%}
      {{ create_table_as(False, target_relation, compiled_code, language) }}
    {%- endcall -%}
    {% do persist_constraints(target_relation, model) %}
    {#- Every row of the table is this build's: its data tests check them all, as they are. -#}
    {% do adapter.record_built_whole(invocation_id, target_relation) %}
    {#- The watermarks the model's incremental runs read, kept with the table (newest_values). -#}
    {% do adapter.store_newest(invocation_id, target_relation) %}
    {#- Its own small files merged now: the first incremental run would otherwise pay for them. -#}
    {% do adapter.compact_built(target_relation, layout) %}
  {%- else -%}
    {#- The table's layout (config tblproperties under cdc_unify.layout, e.g. its key_bucket count)
        is set when it is built whole: rows laid out otherwise would not meet the ones it holds. -#}
    {%- set layout_changes = adapter.layout_changes(existing_relation, config.get('tblproperties')) -%}
    {%- if layout_changes -%}
      {{ exceptions.raise_compiler_error(
          target_relation ~ ' was built whole with another layout than this run has ('
          ~ layout_changes | join('; ') ~ '). Build it and the models built on it again with '
          ~ '`dbt build --full-refresh --select ' ~ model.name ~ '+`, or run with the value it was built with.'
      ) }}
    {%- endif -%}
    {#- A killed run's rows first, for a run whose on-run-start hook did not apply them
        (sparksession_apply_killed_writes; after it this asks nothing). -#}
    {% do adapter.apply_pending_write(invocation_id, target_relation, layout) %}
    {%- if adapter.write_skipped(invocation_id, target_relation) -%}
      {#- The model found nothing new when it compiled (adapter.skip_write): no query, no write. -#}
      {%- call statement('main') -%}
        select 0 as rows_written
      {%- endcall -%}
    {%- else -%}
      {%- if language == 'python' -%}
        {%- call statement('main', language='python') -%}
          {{ sparksession_py_write_pending(compiled_code, target_relation, on_schema_change) }}
        {%- endcall -%}
      {%- else -%}
        {#- Not a statement: the query's rows go to files (pending_writes.write_pending), written
            down in target/run as a statement's SQL is. -#}
        {%- set pending_sql = sparksession_distributed(compiled_code) -%}
        {% do write(pending_sql) %}
        {%- set response = adapter.write_pending(pending_sql, target_relation, layout, file_format, on_schema_change) -%}
        {% do store_result('main', response=response) %}
      {%- endif -%}
      {#- Just written: a write without rows is removed instead of adding an empty file. -#}
      {% do adapter.apply_written(invocation_id, target_relation, layout) %}
    {%- endif -%}
  {%- endif -%}

  {#- What the model read of a table it keeps some rows of, now that its rows are in (macro
      cdc_held_watermarks, newest_values.read_until). -#}
  {% do adapter.store_read_until(invocation_id, target_relation) %}

  {% set should_revoke = should_revoke(existing_relation, should_full_refresh()) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}

{% macro sparksession_apply_killed_writes() -%}
  {#- An on-run-start hook: the pending write a killed run left for any incremental model is applied
      before any model compiles. A model reads watermarks of its own table while it compiles
      (cdc_held_watermarks, cdc_newest_built_at), before its materialization runs: read from a
      table still missing a killed run's rows, they would make the run redo those rows. -#}
  {%- if execute -%}
    {%- set writes = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized == 'incremental' -%}
      {%- set layout = sparksession_write_layout(
          node.config.partition_by, node.config.incremental_strategy, node.config.get('appended_partitions'),
          node.config.get('replaced_partition_depth')
      ) -%}
      {%- set target = api.Relation.create(
          database=node.database, schema=node.schema, identifier=node.alias, type='table'
      ) -%}
      {%- do writes.append([target, layout]) -%}
    {%- endfor -%}
    {%- do adapter.apply_killed_writes(invocation_id, writes) -%}
  {%- endif -%}
{%- endmacro %}

{% macro sparksession_write_layout(
    partition_by, strategy, appended_partitions, replaced_partition_depth=none, compact_fan_in=0
) -%}
  {#- How an incremental write lands (pending_writes.Layout): the partition columns, whether a written
      partition replaces the table's (insert_overwrite) or is added to it, the partitions added
      to even so (config appended_partitions: folder paths or patterns), how many partition
      columns a replaced folder spans (config replaced_partition_depth; default all) and the size
      tier factor by which the small files of appended partitions are merged after a write
      (config compact_fan_in, default var cdc_compact_fan_in, 4; 0: never; compaction.py). -#}
  {%- set partition_by = partition_by or [] -%}
  {{ return({
      'partition_by': [partition_by] if partition_by is string else partition_by,
      'replace': strategy == 'insert_overwrite',
      'appended': appended_partitions or [],
      'replace_depth': replaced_partition_depth,
      'compact_fan_in': compact_fan_in,
  }) }}
{%- endmacro %}
