{#-
    Source tables as they were at a past instant (grain: one row that existed then).
    A version of cdc_row_history holds over the half-open interval [valid_from, valid_to) of source
    commit time, so the rows at instant T are the versions with valid_from <= T < valid_to (or no
    valid_to yet) that are not tombstones.
    vars:
        analysis_as_of: the instant, e.g. '2024-01-01 00:01:00' (UTC) or '2024-01-01T08:01:00+08:00';
            default: now, which gives the current rows.
        analysis_feed, analysis_database, analysis_table: narrow to one feed / database / table
            (default: every table).
-#}
{% set as_of = var('analysis_as_of', none) %}
{% set as_of_instant = 'current_timestamp()' if as_of is none
    else 'cast(' ~ dbt.string_literal(dbt.escape_single_quotes(as_of)) ~ ' as timestamp)' %}
{% set filters = {
    'feed': var('analysis_feed', none),
    'database_name': var('analysis_database', none),
    'table_name': var('analysis_table', none),
} %}

with row_history as (
    select * from {{ ref('cdc_row_history') }}
),

instant as (
    select {{ as_of_instant }} as as_of
),

versions_at_instant as (
    select
        instant.as_of,
        row_history.*
    from row_history
    cross join instant
    where
        row_history.valid_from <= instant.as_of
        and (row_history.valid_to > instant.as_of or row_history.valid_to is null)
        and not row_history.is_deleted
        {% for column, value in filters.items() if value is not none %}
            and row_history.{{ column }} = {{ dbt.string_literal(dbt.escape_single_quotes(value)) }}
        {% endfor %}
)

select
    as_of,
    feed,
    dialect,
    tenant_name,
    database_name,
    schema_name,
    table_name,
    primary_key_columns,
    primary_key,
    row_identity,
    row_values,
    row_values_json,
    valid_from as row_version_since,
    version_number,
    op as last_op,
    event_id as last_event_id,
    version_id
from versions_at_instant
