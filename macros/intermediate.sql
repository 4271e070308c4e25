{#- Building blocks of the intermediate layer (docs/semantics.md explains the rules they implement). -#}

{% macro cdc_dialects() -%}
    {#-
        Dialects whose staging models int_staged_events unions; `--vars '{cdc_dialects: [...]}'`
        narrows it (e.g. a deployment that lands only two formats). dbt resolves `ref` while
        parsing, before it knows which models exist, and a ref to a missing model fails the
        whole project's parse: so this list names exactly the staging models the project ships.
        It must equal cdc_unify.contract.DIALECTS (tests/python/test_marts_macros.py checks it).
    -#}
    {{ return(var('cdc_dialects', [
        'canal_json',
        'cloudcanal_json',
        'debezium_json',
        'dts_avro',
        'dataworks_json',
        'ckafka_json',
        'oms_default_json',
        'oms_default_ext_json',
        'oms_canal_json',
        'oms_dataworks_json',
        'oms_shareplex_json',
        'maxwell_json',
        'ogg_json',
    ])) }}
{%- endmacro %}

{% macro cdc_staged_columns() -%}
    {#- The staged contract (cdc_unify.contract.STAGED_COLUMNS) as (name, Spark type) pairs, in order. -#}
    {{ return([
        ('event_id', 'string'),
        ('source_name', 'string'),
        ('dialect', 'string'),
        ('landing_topic', 'string'),
        ('landing_partition', 'int'),
        ('landing_offset', 'bigint'),
        ('landing_timestamp', 'timestamp'),
        ('landed_at', 'timestamp'),
        ('row_index', 'int'),
        ('message_status', 'string'),
        ('event_kind', 'string'),
        ('op', 'string'),
        ('source_db_type', 'string'),
        ('tenant_name', 'string'),
        ('database_name', 'string'),
        ('schema_name', 'string'),
        ('table_name', 'string'),
        ('primary_key_columns', 'array<string>'),
        ('primary_key_source', 'string'),
        ('primary_key', 'string'),
        ('before', 'map<string,string>'),
        ('after', 'map<string,string>'),
        ('before_is_partial', 'boolean'),
        ('after_is_partial', 'boolean'),
        ('column_source_types', 'map<string,string>'),
        ('column_types', 'map<string,string>'),
        ('event_ts', 'timestamp'),
        ('event_ts_precision', 'string'),
        ('emitted_ts', 'timestamp'),
        ('source_position', 'string'),
        ('transaction_id', 'string'),
        ('sequence', 'string'),
        ('ddl_statement', 'string'),
        ('error_code', 'string'),
        ('error_detail', 'string'),
        ('raw_value', 'binary'),
    ]) }}
{%- endmacro %}

{% macro cdc_error_codes() -%}
    {#- The quarantine error codes and their meaning (cdc_unify.contract.ERROR_CODES). -#}
    {{ return({
        'invalid_utf8': 'The message value is not valid UTF-8 text.',
        'invalid_json': 'The message value is not valid JSON.',
        'invalid_avro': "The message value is not a decodable Avro datum of the dialect's schema (e.g. truncated).",
        'wrong_shape': "Valid JSON/Avro, but not the structure the dialect defines (wrong top-level type, wrong field type).",
        'missing_field': 'A field the dialect requires is absent or null (e.g. op/type, table name, images).',
        'unknown_op': 'The operation code is not one the dialect defines.',
        'invalid_value': 'A column value cannot be read as its declared type (e.g. text in an integer column).',
        'invalid_timestamp': "A message timestamp cannot be read in the dialect's documented unit/format.",
        'no_feed': "The landing row names no feed (column feed is null or empty), so no source system's history can hold it.",
    }) }}
{%- endmacro %}

{% macro cdc_no_feed() -%}
    {#- The feed a landing row without one is staged under (cdc_unify.contract.NO_FEED). -#}
    {{ return('(no feed)') }}
{%- endmacro %}

{% macro cdc_feed_of_landing(feed_column='feed') -%}
    {#- A landing row's feed as staging stages it: cdc_no_feed() for a null or empty one. -#}
    {{ return("coalesce(nullif(" ~ feed_column ~ ", ''), " ~ cdc_string_literal(cdc_no_feed()) ~ ")") }}
{%- endmacro %}

{% macro cdc_change_event_column_names() -%}
    {#- The canonical change event (DESIGN-BRIEF "Canonical change event") plus lineage columns. -#}
    {{ return([
        'event_id', 'source_name', 'dialect',
        'landing_topic', 'landing_partition', 'landing_offset', 'landing_timestamp', 'landed_at', 'row_index',
        'event_kind', 'op', 'source_db_type', 'tenant_name', 'database_name', 'schema_name', 'table_name',
        'primary_key_columns', 'primary_key_source', 'primary_key',
        'before', 'after', 'before_is_partial', 'after_is_partial', 'column_source_types', 'column_types',
        'event_ts', 'event_ts_precision', 'emitted_ts', 'source_position', 'transaction_id', 'sequence',
        'ddl_statement', 'split_before_event_id', 'delivery_count',
    ]) }}
{%- endmacro %}

{% macro cdc_table_key(feed_column='source_name') -%}
    {#- One string naming a source table (feed, tenant, database, schema, table); a null part is not 'null'. -#}
    to_json(array({{ feed_column }}, tenant_name, database_name, schema_name, table_name))
{%- endmacro %}

{% macro cdc_pair_key_columns() -%}
    {#- The columns naming a split update's pair key: the n-th UPDATE_BEFORE and the n-th
        UPDATE_AFTER with the same values of them are one update (int_change_events pairs them,
        cdc_feed_health counts the pairs). -#}
    {{ return([
        'source_name', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name', 'source_position',
    ]) }}
{%- endmacro %}

{% macro cdc_overlay(base, overlay) -%}
    {#- `overlay` wins over `base` key by key; a key absent from `overlay` keeps base's value, a null overwrites. -#}
    map_concat(
        map_filter(coalesce({{ base }}, map()), (k, v) -> not map_contains_key(coalesce({{ overlay }}, map()), k)),
        coalesce({{ overlay }}, map())
    )
{%- endmacro %}

{% macro cdc_map_json(image) -%}
    {#- A map as a JSON object with sorted keys: comparable and hashable (Spark cannot compare maps). -#}
    to_json(map_from_entries(array_sort(map_entries({{ image }}))))
{%- endmacro %}

{% macro cdc_row_buckets() -%}
    {#-
        Number of `key_bucket` partitions of int_row_changes, int_row_versions and int_current_rows
        (each appends its builds to them and compacts them one by one), and of int_change_events'
        pair slices. A layout (cdc_row_buckets_layout): changing it needs `--full-refresh`. 16:
        every scoped read of these tables lists and opens a file or two per bucket it reads, and a
        run of a few thousand messages reads every bucket; against 64, a +10,000 run of mixed:1M
        took 11% less and its full build 10% less (docs/benchmarks.md, "Sixteen key buckets").
    -#}
    {{ return(var('cdc_row_buckets', 16)) }}
{%- endmacro %}

{% macro cdc_row_buckets_layout() -%}
    {#- The config tblproperties of a model whose table is laid out by cdc_row_buckets: the count is
        kept with the table when it is built whole, and an incremental run with another count fails
        before it writes (the sparksession incremental materialization): rows hashed into other
        buckets or slices would not meet the ones stored, and an identity would hold two builds. -#}
    {{ return({'cdc_unify.layout.cdc_row_buckets': cdc_row_buckets() | string}) }}
{%- endmacro %}

{% macro cdc_truncate_slice_property() -%}
    {#- The config tblproperties entry of int_change_events saying that the table was built whole with
        every TRUNCATE in partition event_slice=truncate. Set only when the table is built whole (not
        a layout key, which an incremental run of a table built before would take on while its
        earlier truncates still lie in event_slice=final). -#}
    {{ return({'cdc_unify.truncate_slice': 'true'}) }}
{%- endmacro %}

{% macro cdc_truncates_of(events) -%}
    {#- The `where` clause that finds the TRUNCATE events of `events` (int_change_events): its
        partition event_slice=truncate (a few rows) when the table says it holds them all there
        (cdc_truncate_slice_property), otherwise the op of every event (a table built whole before
        the partition existed, until `dbt build --full-refresh --select int_change_events+`, and
        while parsing or in a dbt unit test, whose inputs no query can read). One metastore call. -#}
    {%- set sliced = namespace(value=false) -%}
    {%- if execute and model.resource_type != 'unit_test' and load_relation(events) is not none -%}
        {%- for row in run_query('show tblproperties ' ~ events) -%}
            {%- if row[0] == 'cdc_unify.truncate_slice' and row[1] == 'true' -%}
                {%- set sliced.value = true -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return("event_slice = 'truncate' and op = 'TRUNCATE'" if sliced.value else "op = 'TRUNCATE'") }}
{%- endmacro %}

{% macro cdc_check_row_buckets() -%}
    {#- On an incremental run of a model whose table cdc_row_buckets lays out: fails when the table
        holds a partition of a bucket this run's count does not have (key_bucket=<n>,
        event_slice=pair_<n>, n >= the count). The count kept with the table
        (cdc_row_buckets_layout) catches any change, but a table built before counts were kept
        takes its first incremental run's count: this keeps that run from taking a smaller one,
        e.g. a new default. One metastore call, no file listed. -#}
    {%- if not (execute and is_incremental()) or model.resource_type == 'unit_test' -%}
        {{ return('') }}
    {%- endif -%}
    {%- set buckets = cdc_row_buckets() | int -%}
    {%- for partition in run_query('show partitions ' ~ this).columns[0].values() -%}
        {%- set number = partition.split('/')[0].split('=', 1)[1].split('_')[-1] -%}
        {%- if number.isdigit() and number | int >= buckets -%}
            {{ exceptions.raise_compiler_error(
                this ~ ' holds partition ' ~ partition.split('/')[0] ~ ', more buckets than this run'
                ~ "'s cdc_row_buckets (" ~ buckets ~ '): it was built with another count. Build it and the models '
                ~ 'built on it again with `dbt build --full-refresh --select ' ~ model.name
                ~ '+`, or run with the count it was built with.'
            ) }}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{% macro cdc_key_bucket(table_key, identity) -%}
    {#- The key_bucket of a row identity: the partition int_row_changes and int_row_versions keep
        its rows in. -#}
    pmod(xxhash64({{ table_key }}, {{ identity }}), {{ cdc_row_buckets() }})
{%- endmacro %}

{% macro cdc_count_rows(count_sql) -%}
    {#- The number `count_sql` (a `select count(*) ...`) gives when the run starts: how many new rows
        an incremental run finds, counted before its main query so that the query can be planned for
        them (cdc_may_broadcast; none at all: its filters become `false` and Spark reads nothing).
        None while parsing and in a dbt unit test, whose inputs are fixtures no query can read. -#}
    {%- if not execute or model.resource_type == 'unit_test' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set rows = run_query(count_sql).columns[0].values()[0] | int -%}
    {{ log(this.identifier ~ ': ' ~ rows ~ ' new rows') }}
    {{ return(rows) }}
{%- endmacro %}

{% macro cdc_skip_write_when_nothing_new(new_rows) -%}
    {#- Called by an incremental model with the counts of new rows in each of its inputs
        (cdc_count_rows, cdc_held_watermarks' new_rows, cdc_built_since's rows): when every one is 0,
        its materialization writes nothing and runs no query (adapter.skip_write). The model's SQL
        would read nothing then (its filters are `false`), but Spark would still analyse, plan and
        start its whole plan over the empty inputs: seconds a model on every quiet run. Nothing
        while parsing, on a full build and in a dbt unit test (no counts). -#}
    {%- set counts = new_rows if new_rows is iterable and new_rows is not string else [new_rows] -%}
    {%- set all_zero = counts | select('equalto', 0) | list | length == counts | length -%}
    {%- if execute and is_incremental() and counts and all_zero -%}
        {%- do adapter.skip_write(invocation_id, this) -%}
    {%- endif -%}
{%- endmacro %}

{% macro cdc_built_since(input) -%}
    {#- The rows of `input` (a model that stamps built_at) built since this model last wrote: those
        with a built_at newer than the newest of `this`, counted when the run starts. Returns
        {'predicate': ..., 'rows': count}: the predicate compares with a constant the Parquet scan
        skips older row groups by, `false` when there are no such rows (Spark plans an empty input);
        `true` (rows none) on a full build; a subquery comparison (rows none) in a dbt unit test. -#}
    {%- if not is_incremental() -%}
        {%- do cdc_keep_newest(none, 'built_at') -%}
        {{ return({'predicate': 'true', 'rows': none}) }}
    {%- endif -%}
    {%- set built_until = cdc_newest_built_at(this) -%}
    {%- if cdc_built_nothing_since(input, built_until) -%}
        {{ log(this.identifier ~ ': 0 new rows (' ~ input.identifier ~ ' built none since, as kept with its table)') }}
        {{ return({'predicate': 'false', 'rows': 0}) }}
    {%- endif -%}
    {#- Counted from the footers of its Parquet files where they tell it (each run's rows are files
        of their own): no Spark job. `input` is a model, whose partitions are the folders its writes
        make under its table's folder. -#}
    {%- set counted = adapter.rows_past_from_footers(
        [input], none, 'built_at', [[none, built_until[17:-1] | int]], partitioned=true
    ) if built_until.startswith('timestamp_micros(') else none -%}
    {%- if counted is not none -%}
        {%- set rows = counted | map(attribute=1) | sum -%}
        {{ log(this.identifier ~ ': ' ~ rows ~ ' new rows (' ~ input.identifier ~ ', from its footers)') }}
    {%- else -%}
        {%- set rows = cdc_count_rows('select count(*) from ' ~ input ~ ' where built_at > ' ~ built_until) -%}
    {%- endif -%}
    {{ return({'predicate': 'false' if rows == 0 else 'built_at > ' ~ built_until, 'rows': rows}) }}
{%- endmacro %}

{% macro cdc_built_nothing_since(input, built_until) -%}
    {#- Whether table `input` holds no row with a built_at past `built_until` (cdc_newest_built_at's
        `timestamp_micros(...)` constant), known without a query: the newest built_at kept with the
        table (adapter.kept_newest_values: a table property and one listing, no data file) is not
        past it. A kept value is the newest the table's writes have held, never older than its
        newest row. False when the table keeps none (a small table, one changed by another writer)
        or `built_until` is no such constant (a full build, a unit test, parsing, a model without
        rows yet): the caller counts. So a run with nothing new counts nothing, where the count
        opened the footer of every data file of the input (0.9-1.2 s for int_row_versions or
        int_row_changes at a million messages, 128 files each). -#}
    {%- if not built_until.startswith('timestamp_micros(') -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set kept = adapter.kept_newest_values(input, none, 'built_at') -%}
    {{ return(kept is not none and (kept == [] or (kept[0][1] | int) <= (built_until[17:-1] | int))) }}
{%- endmacro %}

{% macro cdc_may_broadcast(new_rows) -%}
    {#-
        Whether an incremental run of a model (int_staged_events' lookup of earlier deliveries,
        int_change_events, int_row_changes, cdc_feed_health's pair keys) broadcasts the key sets it
        filters rows of the history by (cdc_broadcast_keys), decided when the run starts: yes while the new
        rows its keys come from (`new_rows`, cdc_count_rows) are at most var
        `cdc_broadcast_key_limit` (default 500,000; 0: never). Broadcast, the wide side is filtered
        where it is read instead of shuffled whole to meet the keys (Spark cannot know a key set is
        small before it runs); above the limit (a backfill without `--full-refresh`) the keys are
        shuffled, as broadcasting an unbounded key set goes through the driver's memory. In a dbt
        unit test (no count) the keys are broadcast.
    -#}
    {%- set limit = cdc_broadcast_key_limit() -%}
    {%- if not (execute and is_incremental()) or limit <= 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if new_rows is none -%}
        {{ return(true) }}
    {%- endif -%}
    {{ log(this.identifier ~ ': key sets ' ~ ('broadcast' if new_rows <= limit else 'shuffled')) }}
    {{ return(new_rows <= limit) }}
{%- endmacro %}

{% macro cdc_broadcast_key_limit() -%}
    {#- The var cdc_broadcast_key_limit (default 500,000; 0: never broadcast): the most rows a key
        set broadcast by a model (cdc_may_broadcast) or a data test (cdc_test_broadcasts_keys) may
        come from. -#}
    {{ return(var('cdc_broadcast_key_limit', 500000) | int) }}
{%- endmacro %}

{% macro cdc_broadcast_keys(key_sets, broadcast) -%}
    {#- The broadcast hint of a select that filters wide rows by the key sets `key_sets` (CTE names),
        if `broadcast` (cdc_may_broadcast). -#}
    {%- if broadcast -%}
        /*+ broadcast({{ key_sets | join(', ') }}) */
    {%- endif -%}
{%- endmacro %}

{% macro cdc_row_units(events, suffix, event_ids=none, broadcast=false) -%}
    {#- CTEs `images_<suffix>` .. `units_<suffix>`: the units of the row events of `events` (a CTE of
        int_row_changes' events), or of those whose event_id the CTE `event_ids` holds, one per
        identity an event leaves (unit_sign -1) or reaches (+1; 0 for an update that stays on its
        identity), each with its key_bucket. A unit depends on its event alone, so a run can
        compute the units of any subset of events. #}
images_{{ suffix }} as (
    select
        {% if event_ids %}{{ cdc_broadcast_keys([event_ids], broadcast) }} {% endif %}{{ events }}.*,
        -- The row before the change (key columns a partial before image lacks are unchanged) and
        -- after it, whole, for a keyless row's identity only: a keyed row's identity takes its key
        -- columns alone (leaving_key_values), and merging two maps for every event cost 6% of a
        -- full build's int_row_changes.
        case when not is_keyed then {{ cdc_overlay('after', 'before') }} end as leaving_image,
        case when not is_keyed then {{ cdc_overlay('before', 'after') }} end as reaching_image
    from {{ events }}
    {%- if event_ids %}
        left semi join {{ event_ids }} on {{ events }}.event_id = {{ event_ids }}.event_id
    {%- endif %}
    where {{ events }}.op <> 'TRUNCATE'
),

moves_{{ suffix }} as (
    select
        *,
        case
            when is_keyed and (size(leaving_key_values) = 0 or exists(leaving_key_values, v -> v is null))
                then primary_key
            when is_keyed then to_json(leaving_key_values)
            else sha2({{ cdc_map_json('leaving_image') }}, 256)
        end as leaving_identity,
        case
            when is_keyed then primary_key
            else sha2({{ cdc_map_json('reaching_image') }}, 256)
        end as reaching_identity
    from (
        select
            *,
            -- the key columns of the row before the change: the before image's, else the after image's
            transform(
                primary_key_columns,
                c -> case when map_contains_key(coalesce(before, map()), c) then before[c] else after[c] end
            ) as leaving_key_values
        from images_{{ suffix }}
    ) as keyed_images
),

unit_candidates_{{ suffix }} as (
    select
        *,
        array(
            case
                when op = 'DELETE' or (op in ('UPDATE', 'UPDATE_AFTER') and not keeps_identity)
                    then named_struct('unit_sign', -1, 'sub_order', 0, 'identity', leaving_identity)
            end,
            case
                when op in ('INSERT', 'SNAPSHOT', 'UPDATE', 'UPDATE_AFTER')
                    then named_struct(
                            'unit_sign', case when keeps_identity then 0 else 1 end,
                            'sub_order', 1,
                            'identity', reaching_identity
                        )
            end
        ) as candidates
    from (
        select
            *,
            op in ('UPDATE', 'UPDATE_AFTER') and leaving_identity = reaching_identity as keeps_identity
        from moves_{{ suffix }}
    ) as identity_moves
),

units_{{ suffix }} as (
    select
        unit_candidates_{{ suffix }}.*,
        unit.unit_sign,
        unit.sub_order,
        unit.identity,
        {{ cdc_key_bucket('unit_candidates_' ~ suffix ~ '.table_key', 'unit.identity') }} as key_bucket
    from unit_candidates_{{ suffix }}
        lateral view inline(filter(candidates, c -> c is not null)) unit as unit_sign, sub_order, identity
)
{%- endmacro %}

{% macro cdc_built_and_kept(built, kept, columns) -%}
    {#- The rows a key-level incremental model writes into the partitions it overwrites: those it
        built, stamped with this run's built_at, and, on an incremental run, the stored rows it
        keeps there, with the built_at of the run that built them. -#}
    select {{ columns | join(', ') }}, {{ cdc_built_at() }} as built_at
    from {{ built }}
    {%- if is_incremental() %}
        union all
        select {{ columns | join(', ') }}, built_at
        from {{ kept }}
    {%- endif %}
{%- endmacro %}

{% macro cdc_built_and_vacated(built, identities, columns, compacted) -%}
    {#- The builds of an appending key-level model's incremental run (int_row_changes,
        int_row_versions): each recomputed identity (`identities`: table_key, identity) with the
        rows it built (`built`, read once here: Spark would compute a CTE read twice twice), or one
        vacancy row for an identity without any, all stamped with this run's built_at. A vacancy
        row carries its identity and key_bucket, every other column null: the identity's newest
        build is empty (cdc_live_rows). Rows of the key_buckets `compacted` go to build_tier base
        (the run rewrites those), the others to delta (appended). -#}
    {%- set bucket = cdc_key_bucket(identities ~ '.table_key', identities ~ '.identity') -%}
    {%- set expressions = [] -%}
    {%- for column in columns -%}
        {%- if column == 'table_key' -%}
            {%- do expressions.append(identities ~ '.table_key') -%}
        {%- elif column == 'unit_identity' -%}
            {%- do expressions.append(identities ~ '.identity as unit_identity') -%}
        {%- elif column == 'key_bucket' -%}
            {%- do expressions.append(bucket ~ ' as key_bucket') -%}
        {%- else -%}
            {%- do expressions.append(built ~ '.' ~ column) -%}
        {%- endif -%}
    {%- endfor %}
    {%- set tier = "case when " ~ bucket ~ " in (" ~ compacted | join(', ') ~ ") then 'base' else 'delta' end"
        if compacted else "'delta'" %}
    select {{ expressions | join(', ') }}, {{ cdc_built_at() }} as built_at, {{ tier }} as build_tier
    from {{ identities }}
    left join {{ built }}
        on
            {{ identities }}.table_key = {{ built }}.table_key
            and {{ identities }}.identity = {{ built }}.unit_identity
{%- endmacro %}

{% macro cdc_appended_builds(built, identities, columns, compacted, live) -%}
    {#- The final select of an appending key-level model's incremental run: its builds
        (cdc_built_and_vacated) and, for each key_bucket it compacts, the live rows stored there of
        the identities it does not recompute (`identities`: table_key, identity), as stored
        (`live`: the model's config live_rows): together the bucket's new base, which replaces the
        bucket whole. -#}
    {{ cdc_built_and_vacated(built, identities, columns, compacted) }}
    {%- if compacted %}
        union all
        select {{ columns | join(', ') }}, built_at, 'base' as build_tier
        from (
            {{ cdc_live_rows(this, live, columns + ['built_at'],
                'key_bucket in (' ~ compacted | join(', ') ~ ')') }}
        ) as compacted_rows
        left anti join {{ identities }} as recomputed
            on
                compacted_rows.table_key = recomputed.table_key
                and compacted_rows.unit_identity = recomputed.identity
    {%- endif %}
{%- endmacro %}

{% macro cdc_appended_builds_config(live) -%}
    {#- The config of a model that appends builds of row identities (int_row_changes,
        int_row_versions, int_current_rows; `live`: its live_rows): incremental insert_overwrite into
        key_bucket/build_tier partitions, a run's builds appended to the delta tier
        (appended_partitions), a compacted bucket replaced whole with its delta
        (replaced_partition_depth 1), one file per bucket and write (write_distributed_by), the
        bucket count kept with the table (cdc_row_buckets_layout). -#}
    {{ return({
        'materialized': 'incremental',
        'incremental_strategy': 'insert_overwrite',
        'partition_by': ['key_bucket', 'build_tier'],
        'appended_partitions': ['key_bucket=*/build_tier=delta'],
        'replaced_partition_depth': 1,
        'write_distributed_by': ['key_bucket'],
        'on_schema_change': 'fail',
        'live_rows': live,
        'tblproperties': cdc_row_buckets_layout(),
    }) }}
{%- endmacro %}

{% macro cdc_row_version_builds() -%}
    {#- How int_row_versions stores its rows (its config live_rows): as int_row_changes
        (cdc_row_change_builds), vacancy rows without a version_id. -#}
    {{ return({'build_key': ['table_key', 'unit_identity'], 'present': 'version_id'}) }}
{%- endmacro %}

{% macro cdc_row_change_builds() -%}
    {#- How int_row_changes stores its rows (its config live_rows, read by cdc_live_rows): a run
        appends a build of every identity it recomputes (`build_key`), and rows where `present`
        is null are vacancy rows (an identity's empty build). -#}
    {{ return({'build_key': ['table_key', 'unit_identity'], 'present': 'action_id'}) }}
{%- endmacro %}

{% macro cdc_buckets_to_compact() -%}
    {#- The key_bucket partitions of an appending model (`this`: int_row_changes,
        int_row_versions) its incremental run compacts: those
        whose appended builds (build_tier delta) have grown to var cdc_compact_share (default 0.5)
        of their compacted rows (build_tier base), by bytes on disk, that share raised by up to
        half again bucket by bucket (bucket b: share x (1 + b / (2 x buckets))) so that buckets
        growing alike compact in different runs; var cdc_compact_buckets (a list of buckets, or
        `all`) compacts those as well. A listing of the table's folders decides, no file read. Each
        compacted bucket is rewritten once: so each appended byte is rewritten about
        (1 + share) / share times at most, and superseded builds stay below that share. While
        parsing, outside an incremental run and in a dbt unit test, the var's buckets alone. -#}
    {%- set buckets = cdc_row_buckets() | int -%}
    {%- set forced = var('cdc_compact_buckets', []) -%}
    {%- set chosen = range(buckets) | list if forced == 'all' else forced | map('int') | list -%}
    {%- if not (execute and is_incremental()) or model.resource_type == 'unit_test' -%}
        {{ return(chosen | sort) }}
    {%- endif -%}
    {%- set share = var('cdc_compact_share', 0.5) | float -%}
    {%- set sizes = adapter.partition_sizes(this, 2) -%}
    {%- for bucket in range(buckets) -%}
        {%- set base = sizes.get('key_bucket=' ~ bucket ~ '/build_tier=base', 0) -%}
        {%- set delta = sizes.get('key_bucket=' ~ bucket ~ '/build_tier=delta', 0) -%}
        {%- if delta > 0 and delta >= share * (1 + bucket / (2 * buckets)) * base and bucket not in chosen -%}
            {%- do chosen.append(bucket) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if chosen -%}
        {{ log(this.identifier ~ ': compacting key_bucket ' ~ (chosen | sort | join(', ')), info=true) }}
    {%- endif -%}
    {{ return(chosen | sort) }}
{%- endmacro %}

{% macro cdc_live_rows(relation, live, columns=['*'], where='true', sorted_by=[]) -%}
    {#- The live rows of `relation`, a model that appends builds (config live_rows, e.g.
        cdc_row_change_builds()): of each `live.build_key` the rows of its newest build
        (built_at), rows without `live.present` (vacancy rows) dropped. With `where`, of the rows
        it admits only (e.g. those built since a watermark: their newest build is the key's, as a
        later one would pass the same filter). One window partitioned by the build key: a reader
        whose windows partition by the build key first (and more columns after) needs no second
        shuffle. With `sorted_by`, the window also orders each build key's rows by those columns
        (its frame still the whole key): a reader whose windows partition by the build key and the
        first of them and order by the rest needs no second sort either. -#}
    {%- set order = ' order by ' ~ sorted_by | join(', ')
        ~ ' rows between unbounded preceding and unbounded following' %}
    select {{ columns | join(', ') }}
    from (
        select
            *,
            max(built_at) over (
                partition by {{ live.build_key | join(', ') }}{{ order if sorted_by else '' }}
            ) as build_built_at
        from {{ relation }}
        where {{ where }}
    ) as builds
    where built_at <=> build_built_at and {{ live.present }} is not null
{%- endmacro %}

{% macro cdc_rebuilt_identities(builds, built_since) -%}
    {#- The identities (table_key, identity) of the builds an appending model's input (`builds`,
        int_row_changes or int_row_versions) appended since this model last wrote (`built_since`,
        cdc_built_since's predicate), vacated ones included: each gets a new build here. -#}
    select distinct
        table_key,
        unit_identity as identity
    from {{ builds }}
    where {{ built_since }}
{%- endmacro %}

{% macro cdc_stored_live_rows(builds, live) -%}
    {#- The live rows of an appending model's table (`builds`: a CTE that reads it; `live`: its config
        live_rows), for a view of them (cdc_row_history, cdc_current_rows): the rows of a build
        key no appended build (build_tier delta, vacancy rows included) of a later built_at
        supersedes. A compaction leaves one build per key in base, older than any appended one,
        so this is each key's newest build. Written as an anti join on the build key and
        `built_at >` rather than against each key's newest built_at (an aggregate): a reader's
        filter on built_at then reaches both sides. A data test of the last run's rows
        (`built_at = <its start>`) reads no appended row (Spark infers `built_at > <its start>` for
        them, which every file's statistics rule out) instead of aggregating every appended build
        per test; an analyst's filter (a table_name) reaches the Parquet scan, as no window stands
        between it and the table. -#}
    {%- set matches = [] -%}
    {%- for column in live.build_key -%}
        {%- do matches.append('newer_builds.' ~ column ~ ' = ' ~ builds ~ '.' ~ column) -%}
    {%- endfor %}
    select {{ builds }}.*
    from {{ builds }}
    where
        {{ builds }}.{{ live.present }} is not null
        and not exists (
            select 1
            from {{ builds }} as newer_builds
            where
                newer_builds.build_tier = 'delta'
                and {{ matches | join(' and ') }}
                and newer_builds.built_at > {{ builds }}.built_at
        )
{%- endmacro %}

{% macro cdc_built_at() -%}
    {#- When this dbt invocation started (UTC), as a timestamp literal. Every model stamps the rows it
        writes with it (column built_at), so the data tests of an incremental run check what that
        run wrote (docs/testing.md) and a model finds what its inputs built since its own last run. -#}
    timestamp'{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}Z'
{%- endmacro %}

{% macro cdc_keep_newest(group, value) -%}
    {#- On a full build, asks the materialization to keep the newest `value` per `group` (none: of
        all rows) with the table it writes (adapter.keep_newest), so that the first incremental run
        reads its watermark without a scan (dbt/adapters/sparksession/newest_values.py). -#}
    {%- if execute and model.resource_type == 'model' -%}
        {%- do adapter.keep_newest(invocation_id, this, group, value) -%}
    {%- endif -%}
{%- endmacro %}

{% macro cdc_newest_built_at(relation) -%}
    {#- The built_at of the last run that wrote rows of `relation` (a model's `this`), read when the
        run starts and written as a constant (a filter `built_at > constant` reaches the Parquet
        scan, which skips row groups of older runs); before any such run, a time before every run.
        Rows of an input with a later built_at are what the input built since. Outside an
        incremental run (where `this` may not exist yet), in a dbt unit test (`this` is a fixture)
        and while parsing, a scalar subquery. -#}
    {%- set newest = "select coalesce(max(built_at), timestamp'1900-01-01 00:00:00Z') from " ~ relation -%}
    {%- if not execute or not is_incremental() or model.resource_type == 'unit_test' -%}
        {{ return('(' ~ newest ~ ')') }}
    {%- endif -%}
    {#- Kept with the table (adapter.newest_values), read without a scan of its history. -#}
    {%- set found = adapter.newest_values(relation, none, 'built_at') -%}
    {{ return('timestamp_micros(' ~ (found[0][1] | int) ~ ')' if found else "timestamp'1900-01-01 00:00:00Z'") }}
{%- endmacro %}
