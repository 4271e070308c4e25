{#- Building blocks of the summary models maintained from per-load increments (docs/semantics.md,
    "Summary models"). -#}

{% macro cdc_held_watermarks(
    held_feed_column='source_name', held_until='landed_at', new_rows_of=none, feed_column='source_name',
    new_rows_where='true', union_of=none
) -%}
    {#- On an incremental run, the newest landing this model already holds per feed (`held_until` of
        `this`, per `held_feed_column`), read once when the run starts; none on a full build. Pass
        it to cdc_held_until and cdc_landed_after_held, which write it into the SQL as constants:
        a constant filter reaches the Parquet scan, which then skips the files and row groups of
        older loads (each holds one load's landed_at range), while a subquery is a join the scan
        cannot use, so every stored row was read and then dropped. In a dbt unit test (`this` is a
        fixture no query can read) and while parsing, the same watermarks as a subquery.
        With `new_rows_of` (the relation the model reads new rows from, its feed in `feed_column`),
        also how many rows it holds past them per feed, of those the model keeps (`new_rows_where`:
        a model that keeps some rows holds no watermark for a feed without them, so every row of
        that feed is past it): `new_rows` (their sum) and `new_feeds` (the feeds that have any).
        cdc_landed_after_held then names only those feeds, each as one equality (and one
        comparison when held), which the Parquet scan evaluates on row-group statistics: a filter
        that also admits "any feed not held" (`not in` a list) cannot be, and Spark hands no
        `not in` of more than 10 values to the scan at all, so every stored row was read.
        The count itself names only the feeds that may have such rows: those whose newest landing
        in `new_rows_of`, as kept with that table (adapter.kept_newest_values: a table property, no
        scan), is past this model's watermark or that this model does not hold (every row of such a
        table names a feed: cdc_staged_select stages a landing row without one under cdc_no_feed());
        so a run with nothing new runs no count, and one with new rows reads the row groups of their
        feeds' new loads. Where
        `new_rows_of` keeps no such value (a union of tables, a small table, one changed by another
        writer), the count admits every feed not held, and reads two narrow columns of every row.
        The count comes from the footers of the tables' Parquet files where they tell it exactly
        (adapter.rows_past_from_footers: each load is its own files, so a row group lies wholly
        before or past a watermark; no Spark job), else from the query: with `new_rows_where`
        'true' and `new_rows_of` a table, or a union of the tables `union_of` (each with the
        columns `feed_column` and landed_at).
        With no new row, the filters of cdc_landed_after_held are `false`, so Spark plans an empty
        input and reads nothing, and the model writes nothing (cdc_skip_write_when_nothing_new). -#}
    {%- set reads_table = new_rows_of is not none and new_rows_of is not string -%}
    {%- set reads_some = reads_table and new_rows_where != 'true' -%}
    {#- Where new_rows_of keeps its newest landing per feed (adapter.kept_newest_values: no scan),
        what the model reads of it; asked on a full build only by a model that keeps some rows. -#}
    {%- set asks_newest = execute and model.resource_type == 'model' and reads_table
        and (reads_some or is_incremental()) -%}
    {%- set newest = adapter.kept_newest_values(new_rows_of, feed_column, 'landed_at') if asks_newest else none -%}
    {#- A model that keeps some rows of new_rows_of also remembers how far it read
        (adapter.store_read_until, after its write): its own rows' landings alone would leave every
        later row it did not keep to be read again by every run. -#}
    {%- if reads_some and newest is not none -%}
        {%- do adapter.will_have_read(invocation_id, this, new_rows_of, newest) -%}
    {%- endif -%}
    {%- if not is_incremental() -%}
        {%- do cdc_keep_newest(held_feed_column, held_until) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set held_feeds -%}
        select held.{{ held_feed_column }} as feed, max(held.{{ held_until }}) as held_until
        from {{ this }} as held
        where held.{{ held_feed_column }} is not null
        group by held.{{ held_feed_column }}
    {%- endset -%}
    {%- if not execute or model.resource_type == 'unit_test' -%}
        {{ return({
            'subquery': '(select map_from_entries(collect_list(struct(feed, held_until))) from ('
                ~ held_feeds ~ ') as held_feeds)'
        }) }}
    {%- endif -%}
    {#- Kept with the table (adapter.newest_values): no scan of every stored row while the table's
        files are those the last write left. -#}
    {%- set rows = adapter.newest_values(this, held_feed_column, held_until) -%}
    {%- if reads_some -%}
        {%- set rows = adapter.raised_to_read_until(this, new_rows_of, rows) -%}
    {%- endif -%}
    {%- set feeds = [] -%}
    {%- for row in rows -%}
        {%- do feeds.append({
            'literal': cdc_string_literal(row[0]),
            'until': 'timestamp_micros(' ~ (row[1] | int) ~ ')',
        }) -%}
    {%- endfor -%}
    {%- set held = {'feeds': feeds} -%}
    {%- if new_rows_of is not none -%}
        {%- set maybe_new_names = cdc_feeds_newer_than_held(newest, rows) -%}
        {#- Every table with kept values is one this project writes, whose rows all name a feed
            (cdc_no_feed() for a landing row without one: cdc_staged_select), so the count names
            only maybe_new. -#}
        {%- set maybe_new = [] -%}
        {%- for name in maybe_new_names or [] -%}
            {%- do maybe_new.append(cdc_string_literal(name)) -%}
        {%- endfor -%}
        {%- set counted = held if maybe_new_names is none else {'feeds': feeds, 'new_feeds': maybe_new} -%}
        {%- set tables = union_of if union_of is not none else ([new_rows_of] if reads_table else []) -%}
        {%- set counts = none -%}
        {%- if counted.get('new_feeds') == [] -%}
            {#- No feed may have new rows: nothing to count, no query. -#}
            {%- set counts = [] -%}
        {%- elif tables and new_rows_where == 'true' -%}
            {%- set counts = adapter.rows_past_from_footers(
                tables, feed_column, 'landed_at', rows, maybe_new_names, cdc_no_feed()
            ) -%}
        {%- endif -%}
        {%- if counts is none -%}
            {%- set counts = run_query(
                'select ' ~ feed_column ~ ', count(*) from ' ~ new_rows_of ~ ' where (' ~ new_rows_where ~ ') and '
                ~ cdc_landed_after_held(counted, feed_column) ~ ' group by ' ~ feed_column
            ).rows -%}
        {%- endif -%}
        {%- set new_feeds = [] -%}
        {%- for row in counts -%}
            {#- A landing row without a feed belongs to the feed cdc_no_feed() (cdc_feed_is). -#}
            {%- set literal = cdc_string_literal(row[0] if row[0] else cdc_no_feed()) -%}
            {%- if literal not in new_feeds -%}
                {%- do new_feeds.append(literal) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set new_rows = counts | map(attribute=1) | map('int') | sum -%}
        {{ log(this.identifier ~ ': ' ~ new_rows ~ ' new rows of ' ~ new_feeds | length ~ ' feeds') }}
        {%- do held.update({'new_rows': new_rows, 'new_feeds': new_feeds}) -%}
    {%- endif -%}
    {{ return(held) }}
{%- endmacro %}

{% macro cdc_held_staged_rows(where) -%}
    {#- For a model appending the staged rows of int_staged_events that pass `where` (a predicate):
        cdc_held_watermarks over them, and no write when none landed since (incremental runs). -#}
    {%- set held = cdc_held_watermarks(new_rows_of=ref('int_staged_events'), new_rows_where=where) -%}
    {%- do cdc_skip_write_when_nothing_new(held.new_rows if held is not none else none) -%}
    {{ return(held) }}
{%- endmacro %}

{% macro cdc_feeds_newer_than_held(newest, held_rows) -%}
    {#- The feeds (their names) whose newest landing in the table a model reads new rows from
        (`newest`: as kept with it, adapter.kept_newest_values) is past the watermark of `held_rows`
        ([feed, micros] pairs, as adapter.newest_values returns them) or that have none there;
        none when that table keeps no such value (`newest` none: a small table, a union of tables). -#}
    {%- if newest is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set held_until = {} -%}
    {%- for row in held_rows -%}
        {%- do held_until.update({row[0]: row[1] | int}) -%}
    {%- endfor -%}
    {%- set newer = [] -%}
    {%- for row in newest -%}
        {%- if row[0] not in held_until or (row[1] | int) > held_until[row[0]] -%}
            {%- do newer.append(row[0]) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(newer) }}
{%- endmacro %}

{% macro cdc_held_until(held, feed_column='source_name') -%}
    {#- The newest landing this model holds for the row's feed (`held`: cdc_held_watermarks; 1900
        for a feed it does not hold); null on a full build. -#}
    {%- set never = "timestamp'1900-01-01 00:00:00Z'" -%}
    {%- if held is none -%}
        {{ return('cast(null as timestamp)') }}
    {%- elif 'subquery' in held -%}
        {{ return('coalesce(' ~ held.subquery ~ '[' ~ feed_column ~ '], ' ~ never ~ ')') }}
    {%- elif not held.feeds -%}
        {{ return(never) }}
    {%- endif -%}
    {%- set entries = [] -%}
    {%- for feed in held.feeds -%}
        {%- do entries.append(feed.literal ~ ', ' ~ feed.until) -%}
    {%- endfor -%}
    {{ return('coalesce(map(' ~ entries | join(', ') ~ ')[' ~ feed_column ~ '], ' ~ never ~ ')') }}
{%- endmacro %}

{% macro cdc_feeds_with_new_rows(helds, feed_column) -%}
    {#- A predicate: `feed_column` is one of the feeds with new rows in any of `helds`
        (cdc_held_watermarks with new_rows_of); none when one of them does not know its feeds
        (a full build, a dbt unit test, while parsing). -#}
    {%- set literals = [] -%}
    {%- for held in helds -%}
        {%- if held is none or 'new_feeds' not in held -%}
            {{ return(none) }}
        {%- endif -%}
        {%- do literals.extend(held.new_feeds) -%}
    {%- endfor -%}
    {%- set named = literals | unique | list -%}
    {{ return('(' ~ (feed_column ~ ' in (' ~ named | join(', ') ~ ')' if named else 'false') ~ ')') }}
{%- endmacro %}

{% macro cdc_landed_after_held(held, feed_column='source_name') -%}
    {#- A predicate (after `where` or `and`): the rows of each feed landed after the newest landing
        this model holds for it (`held`: cdc_held_watermarks); every row on a full build. Loads of a
        feed land in time order (docs/landing.md), so nothing is skipped or read twice. Written as
        one comparison of constants per held feed, which Spark hands to the Parquet scan. -#}
    {%- if held is none -%}
        {{ return('true') }}
    {%- elif held.get('new_rows') == 0 -%}
        {{ return('false') }}
    {%- elif 'subquery' in held -%}
        {{ return('coalesce(landed_at > ' ~ cdc_held_until(held, feed_column) ~ ', true)') }}
    {%- elif not held.feeds -%}
        {{ return('true') }}
    {%- endif -%}
    {%- set until = {} -%}
    {%- for feed in held.feeds -%}
        {%- do until.update({feed.literal: feed.until}) -%}
    {%- endfor -%}
    {%- if 'new_feeds' in held -%}
        {#- Only the feeds with new rows: a feed held is read past its watermark, one not held whole. -#}
        {%- set after_held = [] -%}
        {%- for literal in held.new_feeds -%}
            {%- if literal in until -%}
                {%- do after_held.append(
                    '(' ~ cdc_feed_is(feed_column, literal) ~ ' and landed_at > ' ~ until[literal] ~ ')'
                ) -%}
            {%- else -%}
                {%- do after_held.append(cdc_feed_is(feed_column, literal)) -%}
            {%- endif -%}
        {%- endfor -%}
        {{ return('(' ~ (after_held | join(' or ') if after_held else 'false') ~ ')') }}
    {%- endif -%}
    {#- Any feed not held; a null or empty feed is cdc_no_feed() (cdc_feed_is), and `not in` is
        null for a null feed. -#}
    {%- set no_feed = cdc_string_literal(cdc_no_feed()) -%}
    {%- set not_held = until.keys() | list + (["''"] if no_feed in until else []) -%}
    {%- set after_held = [feed_column ~ ' not in (' ~ not_held | join(', ') ~ ')'] -%}
    {%- if no_feed not in until -%}
        {%- do after_held.append(feed_column ~ ' is null') -%}
    {%- endif -%}
    {%- for literal, feed_until in until.items() -%}
        {%- do after_held.append(
            '(' ~ cdc_feed_is(feed_column, literal) ~ ' and landed_at > ' ~ feed_until ~ ')'
        ) -%}
    {%- endfor -%}
    {{ return('(' ~ after_held | join(' or ') ~ ')') }}
{%- endmacro %}

{% macro cdc_feed_is(feed_column, literal) -%}
    {#- A predicate: `feed_column` is the feed `literal` (a SQL string literal). The feed
        cdc_no_feed() also holds the landing rows whose feed is null or empty, as staging stages
        them (cdc_staged_select); both forms are ones the Parquet scan applies. -#}
    {%- set no_feed = cdc_string_literal(cdc_no_feed()) -%}
    {%- if literal == no_feed -%}
        {{ return('(' ~ feed_column ~ ' is null or ' ~ feed_column ~ " in ('', " ~ no_feed ~ '))') }}
    {%- endif -%}
    {{ return(feed_column ~ ' = ' ~ literal) }}
{%- endmacro %}

{% macro cdc_merge_part(relation, columns, merged_columns) -%}
    {#- One part of a merge of per-feed aggregates (cdc_feed_health): `relation`'s feed, dialect and
        `columns`, every other of `merged_columns` null, so the parts line up for `union all`. -#}
    select
        feed,
        dialect,
    {%- for column in merged_columns %}
        {{ column if column in columns else 'null' }} as {{ column }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ relation }}
{%- endmacro %}

{% macro cdc_merged_histogram(column) -%}
    {#- An aggregate: the histograms (map<int, bigint>, bucket -> count) in `column` of a group merged
        bucket by bucket, the counts of a bucket added, its entries sorted by bucket; null when no row
        of the group holds one. -#}
    map_from_entries(array_sort(map_entries(aggregate(
        collect_list({{ column }}),
        cast(null as map<int, bigint>),
        (total, histogram) -> coalesce(
            map_zip_with(total, histogram, (bucket, held, added) -> coalesce(held, 0) + coalesce(added, 0)),
            histogram
        )
    ))))
{%- endmacro %}
