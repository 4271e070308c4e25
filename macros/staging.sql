{#- Shared expressions of the staged contract (docs/staged-contract.md). -#}

{% macro cdc_event_id(source_name, dialect, natural_id, row_index) -%}
    {#- Same message content -> same id on every run and at any offset. -#}
    sha2(concat_ws('|', {{ source_name }}, {{ dialect }}, {{ natural_id }}, cast({{ row_index }} as string)), 256)
{%- endmacro %}

{% macro cdc_sequence(position_number, event_ts, landing_offset, row_index) -%}
    {#- Fixed-width text, so string order = (position, event time, landing offset, row) order. -#}
    concat_ws(
        '.',
        lpad(coalesce(cast({{ position_number }} as string), '0'), 30, '0'),
        lpad(coalesce(cast(unix_micros({{ event_ts }}) as string), '0'), 20, '0'),
        lpad(cast({{ landing_offset }} as string), 20, '0'),
        lpad(cast({{ row_index }} as string), 6, '0')
    )
{%- endmacro %}

{% macro cdc_primary_key(pk_columns, before, after) -%}
    {#- JSON array of the key's canonical texts in key order; null for a table without a key. -#}
    case
        when coalesce(size({{ pk_columns }}), 0) > 0
            then to_json(transform({{ pk_columns }}, c -> coalesce({{ after }}[c], {{ before }}[c])))
    end
{%- endmacro %}

{% macro cdc_canonical_image(dialect, values, source_types) -%}
    {#- Python decoder of the dialect over Arrow batches: struct<values, types, error>. -#}
    cdc_canonical_image('{{ dialect }}', {{ values }}, {{ source_types }}, '{{ var("source_time_zone") }}')
{%- endmacro %}
