{#- Building blocks of the summary models maintained from per-load increments (docs/semantics.md,
    "Summary models"). -#}

{% macro cdc_held_until(feed_column='source_name', held_feed_column='source_name', held_until='landed_at') -%}
    {#- On an incremental run, the newest landing this model already holds for the row's feed
        (`held_until` of `this`, per `held_feed_column`; 1900 for a feed it does not hold); null on
        a full build. The watermarks are one uncorrelated subquery, applied as a constant map
        (cdc_new_landing_rows explains why). -#}
    {%- if is_incremental() %}
    coalesce(
        (
            select map_from_entries(collect_list(struct(held_feeds.feed, held_feeds.held_until)))
            from (
                select
                    held.{{ held_feed_column }} as feed,
                    max(held.{{ held_until }}) as held_until
                from {{ this }} as held
                group by held.{{ held_feed_column }}
            ) as held_feeds
        )[{{ feed_column }}],
        timestamp'1900-01-01 00:00:00Z'
    )
    {%- else %}
    cast(null as timestamp)
    {%- endif %}
{%- endmacro %}

{% macro cdc_landed_after_held(feed_column='source_name', held_feed_column='source_name', held_until='landed_at') -%}
    {#- A predicate (after `where` or `and`): the rows of each feed landed after the newest landing
        this model holds for it (cdc_held_until); every row on a full build. Loads of a feed land in
        time order (docs/landing.md), so nothing is skipped or read twice. -#}
    coalesce(landed_at > {{ cdc_held_until(feed_column, held_feed_column, held_until) }}, true)
{%- endmacro %}

{% macro cdc_built_after_held() -%}
    {#- A predicate: on an incremental run, the input rows built after this model's last run
        (built_at newer than the newest built_at of `this`); always true on a full build. -#}
    {%- if is_incremental() %}
    built_at > {{ cdc_newest_built_at(this) }}
    {%- else %}
    true
    {%- endif %}
{%- endmacro %}

{% macro cdc_first_landings(new_rows, staged, held_until) -%}
    {#- The first delivery of every message event of `new_rows` (staged rows landed since a model's
        last run, with column `held_until`: the newest landing that model held for the row's feed)
        that no staged row of `staged` delivered before: the events new to the model, each once,
        however often it landed. A redelivery of an event the model already counted is not here. -#}
    select *
    from (
        select
            *,
            row_number() over (
                partition by event_id
                order by landed_at, landing_timestamp, landing_topic, landing_partition, landing_offset, row_index
            ) as delivery_rank
        from {{ new_rows }}
    ) as ranked
    where
        delivery_rank = 1
    {%- if is_incremental() %}
        and not exists (
            select 1
            from {{ staged }} as earlier
            where
                earlier.event_id = ranked.event_id
                and earlier.landed_at <= ranked.{{ held_until }}
        )
    {%- endif %}
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
