{#-
    The project's generic data tests (dbt hub packages such as dbt_utils are not reachable here).
    Each returns the failing rows: dbt counts them and fails the test (severity error) when any
    exist. Documented in macros/generic_tests.yml; tests/python/test_generic_tests.py proves each
    one fails on a crafted bad table and passes on a good one.
-#}

{% test one_current_version_per_key(model, key_columns, current_column='is_current') %}
{#- Every key has exactly one current version (a tombstone counts: a deleted row's last version is current). -#}
select
    {{ key_columns | join(', ') }},
    count_if({{ current_column }}) as current_versions
from {{ model }}
group by {{ key_columns | join(', ') }}
having count_if({{ current_column }}) <> 1
{% endtest %}

{% test no_overlapping_versions(model, key_columns, from_column='valid_from', to_column='valid_to') %}
{#-
    Per key, versions in valid_from order tile time: each valid_to is exactly the next version's
    valid_from (no overlap, no gap) and only the last version is open-ended.
-#}
with ordered as (
    select
        {{ key_columns | join(', ') }},
        {{ from_column }} as version_from,
        {{ to_column }} as version_to,
        lead({{ from_column }}) over (
            partition by {{ key_columns | join(', ') }} order by {{ from_column }}
        ) as next_from,
        count(*) over (partition by {{ key_columns | join(', ') }}, {{ from_column }}) as versions_at_same_from
    from {{ model }}
)

select *
from ordered
where
    versions_at_same_from > 1
    or not (version_to <=> next_from)
{% endtest %}

{% test valid_interval(model, column_name, to_column='valid_to') %}
{#- A version starts at a known instant and, when closed, ends strictly after it starts. -#}
select *
from {{ model }}
where
    {{ column_name }} is null
    or ({{ to_column }} is not null and {{ column_name }} >= {{ to_column }})
{% endtest %}

{% test messages_reconciled(model, total_column, part_columns) %}
{#-
    Nothing vanishes: on every row the total (e.g. landed messages) equals the sum of its classes.
    A null total or class fails too: an unknown count proves nothing.
-#}
select *
from {{ model }}
where not coalesce({{ total_column }} = ({{ part_columns | join(' + ') }}), false)
{% endtest %}

{% test expression_is_true(model, expression, column_name=None) %}
{#-
    Every row satisfies a boolean SQL expression (dbt_utils' signature); on a column the expression
    is appended to the column name (`expression: ">= 0"`). Unlike dbt_utils, a row where the
    expression is null fails: an invariant that cannot be evaluated does not hold.
-#}
select *
from {{ model }}
where not coalesce(({{ column_name ~ ' ' if column_name else '' }}{{ expression }}), false)
{% endtest %}

{% test unique_combination_of_columns(model, combination_of_columns, quote_columns=false) %}
{#-
    No two rows share the values of these columns (dbt_utils' signature). Nulls compare equal here,
    as in `group by`: two rows that differ only by being null in the same column are duplicates.
    quote_columns quotes each name in backticks, doubling any backtick inside it (Spark's quoting).
-#}
    {% set columns = (
        '`' ~ combination_of_columns | map('replace', '`', '``') | join('`, `') ~ '`'
    ) if quote_columns else combination_of_columns | join(', ') %}
select
    {{ columns }},
    count(*) as rows_with_these_values
from {{ model }}
group by {{ columns }}
having count(*) > 1
{% endtest %}

{% test found_in(model, column_name, to, field, to_where=none, recent_parent_first=false) %}
{#-
    Every non-null value of the column is the `field` of a row of `to` that meets `to_where` (dbt's
    relationships, with a condition on the parent). The parent is read only where it holds the
    child's values: a semi join with them, broadcast when they come from the rows the tested
    model's last run wrote and those are few (cdc_test_broadcasts_scope), so the parent's rows are
    filtered where they are read instead of shuffled whole to meet a few values.
    recent_parent_first, for a parent whose rows for the child's new values are written by the same
    run or a later one (e.g. the current rows a run rebuilds and the versions it rebuilt them from):
    when the test checks what the last run wrote, the values are looked up first among the parent's
    rows stamped since that run (a built_at filter the Parquet scan applies), and the rest of the
    parent is read only for the values not found there. Where every value is found and the values
    are broadcast, nothing else of the parent is read (Spark empties a semi join whose broadcast
    holds nothing before its scan runs), so the test does not grow with the parent's history; the
    failing rows are those of a lookup in the whole parent either way.
-#}
    {% set parent_where = to_where if to_where else 'true' %}
    {% set recent = cdc_test_scoped_newest() if recent_parent_first else none %}
    {% set broadcast = cdc_test_broadcasts_scope() %}
with child as (
    select {{ column_name }} as from_field
    from {{ model }}
    where {{ column_name }} is not null
),

child_values as (
    select distinct from_field
    from child
),

{% if recent is none %}
    parent as (
        {{ cdc_parent_rows_holding(to, field, parent_where, 'child_values', broadcast) }}
    )

    select child.from_field
    from child
    left anti join parent on child.from_field = parent.to_field
{% else %}
    recent_parent as (
        select {{ field }} as to_field
        from {{ to }}
        where ({{ parent_where }}) and built_at >= {{ recent }}
    ),

    not_recent_values as (
        select child_values.from_field
        from child_values
        left anti join recent_parent on child_values.from_field = recent_parent.to_field
    ),

    parent as (
        {{ cdc_parent_rows_holding(to, field, parent_where, 'not_recent_values', broadcast) }}
    ),

    missing_values as (
        select not_recent_values.from_field
        from not_recent_values
        left anti join parent on not_recent_values.from_field = parent.to_field
    )

    select child.from_field
    from child
    left semi join missing_values on child.from_field = missing_values.from_field
{% endif %}
{% endtest %}

{% macro cdc_parent_rows_holding(parent, field, where, values, broadcast) -%}
    {#- found_in's read of its parent: the `field` (as to_field) of the rows of `parent` that meet
        `where` and hold a value of the CTE `values` (column from_field), found by a semi join with
        them, broadcast if `broadcast`. -#}
    select {% if broadcast %}/*+ broadcast({{ values }}) */{% endif %} parent_rows.to_field
    from (
        select {{ field }} as to_field
        from {{ parent }}
        where {{ where }}
    ) as parent_rows
    left semi join {{ values }} on parent_rows.to_field = {{ values }}.from_field
{%- endmacro %}
