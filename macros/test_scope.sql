{#-
    Data tests scoped to what a run wrote (docs/testing.md). Every generic data test reads the
    relation it checks through get_where_subquery; here that relation is narrowed to the rows the
    latest run of the tested model wrote (its newest built_at) and, for a test of a key invariant,
    to every row of the keys those rows carry. Var cdc_test_scope: all checks every row.
-#}

{% macro get_where_subquery(relation) -%}
    {#- Overrides dbt's macro of the same name, which applies the `where` test config (kept here:
        the scope narrows what `where` leaves). Called while a test node compiles, so `model` is the
        test node and `config` its config. Returns a subquery without an alias, so a test may
        alias it as it aliases a table. -#}
    {%- set where = config.get('where', '') -%}
    {%- set scoped_run = cdc_test_is_scoped() -%}
    {%- set live = cdc_test_live_rows() -%}
    {#- A model this invocation built whole: what its last run wrote is every row it holds. A model
        that appends builds then holds one build of each key, so its live rows need no window for
        each key's newest build, scoped or not (a --full-refresh build checks every row). -#}
    {%- set built_whole = execute and cdc_test_reads_one_build() -%}
    {%- if live and not (scoped_run or built_whole) -%}
        {%- set source = '(' ~ cdc_live_rows(relation, live) ~ ')' -%}
    {%- elif live -%}
        {#- What the last run wrote of a model that appends builds: every live row of every build
            key it touched (a build holds its key's rows whole), so a key test needs no more; of a
            model built whole, every live row. -#}
        {%- set source = '(select * from ' ~ relation ~ ' where ' ~ live.present ~ ' is not null)' -%}
    {%- else -%}
        {%- set source = relation | string -%}
    {%- endif -%}
    {%- set base = '(select * from ' ~ source ~ ' as cdc_tested where ' ~ where ~ ')' if where else source -%}
    {#- Built whole and scoped: read as it is (no filter on its newest built_at, no second read for
        the keys that run touched). -#}
    {%- set reads_one_build = scoped_run and built_whole -%}
    {%- set newest = cdc_test_newest_built_at(relation) if scoped_run and not reads_one_build else none -%}
    {#- Rows one run wrote are whole builds of their keys (a model that appends builds, or a view
        of such a model's live rows): a key test needs no other row. -#}
    {%- set whole_builds = live or cdc_test_shows_live_builds() -%}
    {%- set keys_scoped = scoped_run and not (whole_builds or reads_one_build) -%}
    {%- set keys = cdc_test_scope_keys(model.test_metadata) if keys_scoped else none -%}
    {%- set broadcast = keys is not none and cdc_test_broadcasts_keys(relation, newest) -%}
    {%- set matches = [] -%}
    {%- for key in keys or [] -%}
        {%- do matches.append('cdc_scoped_rows.' ~ key ~ ' <=> cdc_touched_keys.' ~ key) -%}
    {%- endfor -%}
    {%- set scoped -%}
        {%- if not scoped_run or reads_one_build -%}
            (select * from {{ base }})
        {%- elif keys is none -%}
            (select * from {{ base }} as cdc_scoped_rows where built_at = {{ newest }})
        {%- else -%}
            (
                select {{ cdc_broadcast_keys(['cdc_touched_keys'], broadcast) }} cdc_scoped_rows.*
                from {{ base }} as cdc_scoped_rows
                left semi join (
                    select distinct {{ keys | join(', ') }}
                    from {{ base }} as cdc_written_rows
                    where built_at = {{ newest }}
                ) as cdc_touched_keys
                    on {{ matches | join(' and ') }}
            )
        {%- endif -%}
    {%- endset -%}
    {%- set runs_tests = execute and cdc_invocation_runs_tests() -%}
    {%- if runs_tests and newest == 'cast(null as timestamp)' and cdc_test_fails_on_tested_rows(model.test_metadata) -%}
        {#- The scope is empty (the model's last run wrote no row) and the test's failing rows
            come from it: its materialization passes it without a query (adapter.pass_without_query,
            dbt/include/sparksession/macros/test.sql). -#}
        {%- do adapter.pass_without_query(invocation_id, model.unique_id) -%}
    {%- elif runs_tests and newest != 'cast(null as timestamp)'
        and adapter.passes_row_check(invocation_id, graph.nodes, model.unique_id, scoped, selected_resources) -%}
        {#- A test of each row (not_null, accepted_values, expression_is_true) that one query,
            shared with the model's other such tests, found without a failing row in this scope
            reads nothing (adapter row_checks) and passes without a query; one with failing rows
            reads its scope and reports them. Only when tests run: `dbt compile` and `dbt docs
            generate` show each test's own query. -#}
        {%- do adapter.pass_without_query(invocation_id, model.unique_id) -%}
        {{ return('(select * from ' ~ scoped ~ ' as cdc_checked where false)') }}
    {%- endif -%}
    {{ return(scoped) }}
{%- endmacro %}

{% macro cdc_test_newest_built_at(relation) -%}
    {#- The newest built_at of `relation` (what its last run wrote), written into the test as a
        constant, so the test's scan skips the row groups of older runs. Known without a query for
        a model this invocation (a `dbt build`) left unchanged: an incremental model that wrote no
        row, or a table or view its materialization did not rebuild (dbt/include/sparksession/
        macros/unchanged.sql): null, so that the scope is empty and Spark reads nothing: what the
        last change wrote was checked by that run's tests. For an incremental model this
        invocation wrote rows of: the invocation's own stamp (cdc_built_at). Otherwise read once
        per relation and invocation (adapter.newest_built_at_micros; null for a relation without
        rows): a table or view rebuilt keeps its parent's built_at while its rows may have changed
        (e.g. a typed mart after a change of var typed_entities), so it is checked. Except a view
        kept or re-created with its former SQL whose parents this invocation wrote
        (cdc_view_wrote_via_parents): its newest rows are what they wrote, so the invocation's
        stamp, or null if they wrote none;
        a query would evaluate the whole view (its joins and aggregates) to find what is known. -#}
    {%- set wrote_rows = adapter.wrote_rows(invocation_id, relation) -%}
    {%- if wrote_rows is not none -%}
        {{ return(cdc_built_at() if wrote_rows else 'cast(null as timestamp)') }}
    {%- endif -%}
    {%- set tested = cdc_tested_node() -%}
    {%- set wrote_via_parents = cdc_view_wrote_via_parents(tested) if tested is not none else none -%}
    {%- if wrote_via_parents is not none -%}
        {{ return(cdc_built_at() if wrote_via_parents else 'cast(null as timestamp)') }}
    {%- endif -%}
    {%- set micros = adapter.newest_built_at_micros(invocation_id, relation) -%}
    {{ return('cast(null as timestamp)' if micros is none else 'timestamp_micros(' ~ (micros | int) ~ ')') }}
{%- endmacro %}

{% macro cdc_test_broadcasts_keys(relation, newest) -%}
    {#- Whether a key test broadcasts the keys the last run wrote (cdc_touched_keys) to its scan of
        the tested relation, decided as the models decide (cdc_may_broadcast): yes while the rows
        that run stamped (`newest`: its built_at) are at most var cdc_broadcast_key_limit. Known
        without a query for a write of this invocation (adapter.rows_of_last_write) and bounded
        without one for a view it kept or re-created with its former SQL (cdc_view_rows_via_parents:
        the count would evaluate the view, e.g. the redelivery count of cdc_change_events).
        Broadcast, each stored key is looked up where it is read; shuffled, every stored key of the
        relation is sorted to meet the few new ones (docs/testing.md). -#}
    {%- set limit = cdc_broadcast_key_limit() -%}
    {%- if limit <= 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set tested = cdc_tested_node() -%}
    {%- set via_parents = cdc_view_rows_via_parents(tested) if tested is not none else none -%}
    {{ return((via_parents if via_parents is not none
        else adapter.rows_of_last_write(invocation_id, relation, newest)) <= limit) }}
{%- endmacro %}

{% macro cdc_test_broadcasts_scope() -%}
    {#- Whether a test that looks the values of its scope up in another relation (found_in) may
        broadcast them: when it checks what the tested model's last run wrote (cdc_test_scoped_newest)
        and that run stamped no row or at most var cdc_broadcast_key_limit rows
        (cdc_test_broadcasts_keys). A test of every row never broadcasts: its values are unbounded. -#}
    {%- set newest = cdc_test_scoped_newest() -%}
    {{ return(newest is not none and (newest == 'cast(null as timestamp)'
        or cdc_test_broadcasts_keys(cdc_node_relation(cdc_tested_node()), newest))) }}
{%- endmacro %}

{% macro cdc_test_scoped_newest() -%}
    {#- The newest built_at of the rows the tested model's last run wrote (cdc_test_newest_built_at),
        when the compiling test checks those rows alone (cdc_test_is_scoped, and not a model this
        invocation built whole); none otherwise. What a lookup broadcasts (cdc_test_broadcasts_scope)
        and where found_in's recent_parent_first reads the parent's newest rows from. -#}
    {%- if not cdc_test_is_scoped() or cdc_test_reads_one_build() -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(cdc_test_newest_built_at(cdc_node_relation(cdc_tested_node()))) }}
{%- endmacro %}

{% macro cdc_test_reads_one_build() -%}
    {#- Whether every row the compiling test reads is one this invocation wrote: the tested model was
        built whole by it (cdc_built_whole). -#}
    {%- set tested = cdc_tested_node() -%}
    {{ return(tested is not none and cdc_built_whole(tested)) }}
{%- endmacro %}

{% macro cdc_built_whole(node) -%}
    {#- Whether every row `node` shows was written by this invocation: an incremental model it built
        whole (a first build, adapter.built_whole), or a view whose every parent is such a model or
        view (a view shows its parents' rows). A source or any other parent: false. -#}
    {%- if node.resource_type != 'model' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if node.config.materialized != 'view' -%}
        {{ return(adapter.built_whole(invocation_id, cdc_node_relation(node))) }}
    {%- endif -%}
    {%- for parent_id in node.depends_on.nodes -%}
        {%- set parent = graph.nodes.get(parent_id) -%}
        {%- if parent is none or not cdc_built_whole(parent) -%}
            {{ return(false) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(node.depends_on.nodes | length > 0) }}
{%- endmacro %}

{% macro cdc_view_wrote_via_parents(node) -%}
    {#- For a view this invocation kept or re-created with its former SQL: whether its parents wrote
        rows in this invocation (cdc_view_rows_via_parents), so whether rows with the invocation's
        stamp may show in it. None when that is not known without a query. -#}
    {%- set rows = cdc_view_rows_via_parents(node) -%}
    {{ return(none if rows is none else rows > 0) }}
{%- endmacro %}

{% macro cdc_view_rows_via_parents(node) -%}
    {#- For a view this invocation kept or re-created with its former SQL: the rows its parents wrote
        in this invocation (an incremental parent's write, or a parent view's own parents', followed
        up the lineage), summed. The project's views show each parent row at most once (a
        projection, a filter, an anti join, a join to a unique key), so this bounds the rows with
        the invocation's stamp that show in the view. None when that is not known without a query:
        any other node, or a parent this invocation did not write (a source, a table, a model it
        did not run). -#}
    {%- if node.resource_type != 'model' or node.config.materialized != 'view'
        or not adapter.view_follows_parents(invocation_id, cdc_node_relation(node)) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set found = namespace(rows=0) -%}
    {%- for parent_id in node.depends_on.nodes -%}
        {%- set parent = graph.nodes.get(parent_id) -%}
        {%- if parent is none or parent.resource_type != 'model' -%}
            {{ return(none) }}
        {%- endif -%}
        {%- set rows = adapter.written_rows(invocation_id, cdc_node_relation(parent)) -%}
        {%- if rows is none -%}
            {%- set rows = cdc_view_rows_via_parents(parent) -%}
        {%- endif -%}
        {%- if rows is none -%}
            {{ return(none) }}
        {%- endif -%}
        {%- set found.rows = found.rows + rows -%}
    {%- endfor -%}
    {{ return(found.rows) }}
{%- endmacro %}

{% macro cdc_tested_node() -%}
    {#- The graph node the compiling data test checks (`model` is the test node here); none for a
        test attached to no node, or while dbt parses. -#}
    {{ return(graph.nodes.get(model.attached_node) if execute and model.attached_node else none) }}
{%- endmacro %}

{% macro cdc_node_relation(node) -%}
    {#- The relation of a model node of the graph. -#}
    {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) }}
{%- endmacro %}

{% macro cdc_test_live_rows() -%}
    {#- The config live_rows of the model the compiling test checks (cdc_live_rows: a model that
        appends builds and whose live rows are the newest build of each key), none for any other. -#}
    {%- set tested = cdc_tested_node() -%}
    {{ return(tested.config.get('live_rows') if tested is not none else none) }}
{%- endmacro %}

{% macro cdc_test_shows_live_builds() -%}
    {#- Whether the model the compiling test checks is a view of an appending model's live rows
        (config shows_live_builds, e.g. cdc_row_history, cdc_current_rows and the typed marts): it
        shows each build key's rows of one build, stamped with that build's built_at, so the rows
        of the last run are the whole live rows of the keys it touched, and a key test whose key
        lies within one build key (a row identity, a version of one) needs no semi join over
        the view. -#}
    {%- set tested = cdc_tested_node() -%}
    {{ return(tested is not none and tested.config.get('shows_live_builds', false)) }}
{%- endmacro %}

{% macro cdc_test_scope() -%}
    {#- The var cdc_test_scope: last_run (the default) or all; anything else is a compile error. -#}
    {%- set scope = var('cdc_test_scope', 'last_run') -%}
    {%- if scope not in ('last_run', 'all') -%}
        {{ exceptions.raise_compiler_error(
            'var cdc_test_scope must be last_run (check what the last run wrote) or all (check every row), not '
            ~ scope
        ) }}
    {%- endif -%}
    {{ return(scope) }}
{%- endmacro %}

{% macro cdc_test_is_scoped() -%}
    {#- Whether the compiling test checks only what the last run wrote: scope last_run, not a
        --full-refresh invocation (its builds write every row anew; a model configured
        full_refresh: false would keep older ones), and the tested node a model whose YAML lists
        a built_at column (every model that stamps its rows: a model without it is checked whole),
        and the model built, unless tests run. -#}
    {%- if not execute or cdc_test_scope() == 'all' or flags.FULL_REFRESH -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set tested = cdc_tested_node() -%}
    {%- if tested is none or tested.resource_type != 'model' or 'built_at' not in tested.columns -%}
        {{ return(false) }}
    {%- endif -%}
    {#- `dbt compile` or `dbt docs generate` before the model's first build: no run to scope to, and
        no table to read its newest built_at from. A test that runs needs the table anyway. -#}
    {{ return(cdc_invocation_runs_tests() or load_relation(cdc_node_relation(tested)) is not none) }}
{%- endmacro %}

{% macro cdc_invocation_runs_tests() -%}
    {#- Whether this dbt invocation runs data tests (`dbt build`, `dbt test`, `dbt retry`), as
        opposed to compiling them (`dbt compile`, `dbt docs generate`). -#}
    {{ return(flags.WHICH in ('build', 'test', 'retry')) }}
{%- endmacro %}

{% macro cdc_test_fails_on_tested_rows(test) -%}
    {#- Whether a generic test's failing rows are rows, or groups of rows, of the relation it tests
        (what get_where_subquery scopes), so that it fails on none when that scope is empty: dbt's
        not_null, unique, accepted_values and relationships and this project's generic tests
        (macros/generic_tests.sql, no_cast_failures in macros/typed_marts.sql). Any other test (a
        package's, a singular test) runs its query whatever its scope. -#}
    {{ return(test is not none and test.name in [
        'not_null', 'unique', 'accepted_values', 'relationships',
        'one_current_version_per_key', 'no_overlapping_versions', 'valid_interval', 'messages_reconciled',
        'expression_is_true', 'unique_combination_of_columns', 'found_in', 'no_cast_failures',
    ]) }}
{%- endmacro %}

{% macro cdc_test_scope_keys(test) -%}
    {#- The key columns of a test of a key invariant (a uniqueness, one current version or
        version tiling per key: a new row can break it together with an older row of its key),
        as the test names them (quoted where it quotes them); none for a test of each row on its own. -#}
    {%- set key_arguments = {
        'unique': 'column_name',
        'unique_combination_of_columns': 'combination_of_columns',
        'one_current_version_per_key': 'key_columns',
        'no_overlapping_versions': 'key_columns',
    } -%}
    {%- set keys = test.kwargs.get(key_arguments.get(test.name, ''), none) -%}
    {%- set quoted = [] -%}
    {%- for key in ([keys] if keys is string else keys or []) -%}
        {%- do quoted.append(cdc_quote_identifier(key) if test.kwargs.get('quote_columns') else key) -%}
    {%- endfor -%}
    {{ return(quoted if keys is not none else none) }}
{%- endmacro %}
