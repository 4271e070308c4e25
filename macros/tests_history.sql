{#- Generic data tests of SCD2 history and feed reconciliation. Each returns the failing rows. -#}

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
{#- Nothing vanishes: the total (e.g. landed messages) equals the sum of its classes, on every row. -#}
select *
from {{ model }}
where
    {{ total_column }} is null
    or {{ total_column }} <> ({% for part in part_columns %}coalesce({{ part }}, 0){{ ' + ' if not loop.last }}{% endfor %})
{% endtest %}
