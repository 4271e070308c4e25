{#- Oracle GoldenGate for Big Data JSON (docs/dialects/ogg_json.md): the `<column>_isMissing` flags
    some configurations add next to every column of an image. -#}

{% macro ogg_is_missing_flag(image, name, val) -%}
    {#- `name` is the flag of another column of the image: `<column>_isMissing`, a JSON boolean, and
        `<column>` is in the image too (a source column that merely ends in _isMissing stays a column). -#}
    (
        endswith({{ name }}, '_isMissing')
        and map_contains_key({{ image }}, substr({{ name }}, 1, length({{ name }}) - 10))
        and coalesce(schema_of_variant({{ val }}) = 'BOOLEAN', false)
    )
{%- endmacro %}

{% macro ogg_missing_flags(image) -%}
    {#- The flags `<column>_isMissing: true` of the image: those columns were not captured. -#}
    map_keys(map_filter(
        {{ image }},
        (col, val) -> {{ ogg_is_missing_flag(image, 'col', 'val') }} and variant_get(val, '$', 'boolean')
    ))
{%- endmacro %}

{% macro ogg_image_columns(image, missing_flags) -%}
    {#- The image without its flags and without the columns they flag missing (`missing_flags`, the
        image's ogg_missing_flags, computed beforehand: Spark lambdas do not nest over one map). -#}
    map_filter(
        {{ image }},
        (col, val) -> not {{ ogg_is_missing_flag(image, 'col', 'val') }}
        and not array_contains({{ missing_flags }}, concat(col, '_isMissing'))
    )
{%- endmacro %}

{% macro ogg_wall_clock_utc(text) -%}
    {#- op_ts / current_ts, zone-less `YYYY-MM-DD HH:MM:SS[.ffffff]` (current_ts with `T`), as wall
        clock in the dbt var source_time_zone -> a UTC timestamp; null for another form. Digits beyond
        the microsecond are dropped (a timestamp holds microseconds). -#}
    case
        when {{ text }} rlike '{{ ogg_wall_clock_pattern() }}'
            then to_utc_timestamp(
                try_to_timestamp(substr(translate({{ text }}, 'T', ' '), 1, 26)), '{{ var("source_time_zone") }}'
            )
    end
{%- endmacro %}

{% macro ogg_wall_clock_pattern() -%}
    ^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,9})?$
{%- endmacro %}

{% macro ogg_precision(text) -%}
    {#- The unit of the wall clock's last digit: s, ms, us or ns. -#}
    case
        when {{ text }} not like '%.%' then 's'
        when length(substring_index({{ text }}, '.', -1)) <= 3 then 'ms'
        when length(substring_index({{ text }}, '.', -1)) <= 6 then 'us'
        else 'ns'
    end
{%- endmacro %}
