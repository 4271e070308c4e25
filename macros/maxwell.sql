{#- Maxwell's daemon JSON: the parts of stg_maxwell_json__changes that need a name of their own;
    what every JSON dialect shares is in macros/staging.sql. docs/dialects/maxwell_json.md. -#}

{% macro maxwell_image_values(columns, sent_image, sent_overlay) -%}
    {#- An image (map<string,variant> of the exact document) as column -> text as sent. A scalar is its
        exact text (cdc_image_values); an embedded JSON value (JSON column, SET) is its JSON text, read
        from the value as sent: `sent_overlay` (a variant object, e.g. `old`) where it names the column,
        else `sent_image` (`data`). -#}
    transform_values(
        {{ columns }},
        (col, val) -> case
            when {{ cdc_json_is_nested('val') }}
                then to_json(
                    coalesce(
                        {{ cdc_json_object(sent_overlay) }}[col],
                        {{ cdc_json_object(sent_image) }}[col]
                    )
                )
            else try_variant_get(val, '$', 'string')
        end
    )
{%- endmacro %}
