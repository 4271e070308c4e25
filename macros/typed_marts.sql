{#-
    Typed marts (docs/typed-marts.md): for each source table named in the var `typed_entities`,
    `<entity>_current` and `<entity>_history` hold one real Spark-typed column per source column,
    cast from the canonical text of cdc_current_rows / cdc_row_history. The columns and their types
    come from int_schema_registry when the model compiles (dbt compiles a model just before it runs,
    after its parents were built), so a column added by DDL appears on the next build. Column names
    come from message content: every one is backtick-quoted and every literal escaped here.
    Documented in macros/typed_marts.yml.
-#}

{% macro cdc_quote_identifier(name) -%}
    {#- A Spark identifier for any text: backtick-quoted, a backtick inside doubled. -#}
    {{- '`' ~ (name | replace('`', '``')) ~ '`' -}}
{%- endmacro %}

{% macro cdc_string_literal(text) -%}
    {#- A Spark string literal for any text: Spark reads backslash escapes in literals, so escape them too. -#}
    {{- "'" ~ (text | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'" -}}
{%- endmacro %}

{% macro cdc_typed_lineage_columns(kind) -%}
    {#- The key and lineage columns of a typed model, taken as they are from its parent mart. -#}
    {%- set shared = ['feed', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name', 'primary_key'] -%}
    {%- if kind == 'current' -%}
        {{ return(shared + ['last_changed_at', 'last_op', 'last_event_id', 'version_id']) }}
    {%- endif -%}
    {{ return(shared + [
        'valid_from', 'valid_to', 'is_current', 'is_deleted', 'version_number', 'op', 'event_id', 'version_id',
    ]) }}
{%- endmacro %}

{% macro cdc_typed_entity(entity_name) -%}
    {#-
        The `typed_entities` entry of this entity (entity defaults to the table name), checked when
        the model compiles. Without `execute` (dbt parse, sqlfluff) nothing is checked and an entry
        with just the table stands in, so the model still renders its shape.
    -#}
    {%- set entries = var('typed_entities', []) -%}
    {%- set matches = [] -%}
    {%- for entry in entries if entry is mapping and entry.get('entity', entry.get('table')) == entity_name -%}
        {%- do matches.append(entry) -%}
    {%- endfor -%}
    {%- if not execute -%}
        {{ return(matches[0] if matches else {'table': entity_name}) }}
    {%- endif -%}
    {%- set keys = ['feed', 'database', 'schema', 'table', 'entity', 'type_overrides'] -%}
    {%- set problems = [] -%}
    {%- if entries is string or entries is mapping or entries | reject('mapping') | list -%}
        {%- do problems.append('var typed_entities must be a list of mappings') -%}
    {%- elif matches | length != 1 -%}
        {%- do problems.append('expected one typed_entities entry with this entity (or table) name, found '
            ~ matches | length) -%}
    {%- else -%}
        {%- set entry = matches[0] -%}
        {%- for key in entry if key not in keys -%}
            {%- do problems.append('unknown key ' ~ key ~ ' (known: ' ~ keys | join(', ') ~ ')') -%}
        {%- endfor -%}
        {%- for key in keys if key != 'type_overrides' -%}
            {%- if (key in ['database', 'table'] or entry.get(key) is not none) and entry.get(key) is not string -%}
                {%- do problems.append(key ~ ' must be a string') -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if entry.get('type_overrides') is not none and entry.get('type_overrides') is not mapping -%}
            {%- do problems.append('type_overrides must map column -> Spark type') -%}
        {%- endif -%}
    {%- endif -%}
    {%- if problems -%}
        {{ exceptions.raise_compiler_error('typed entity ' ~ entity_name ~ ': ' ~ problems | join('; ')) }}
    {%- endif -%}
    {%- for column, spark_type in (matches[0].get('type_overrides') or {}).items() -%}
        {%- do cdc_typed_override_type(entity_name, column, spark_type) -%}
    {%- endfor -%}
    {{ return(matches[0]) }}
{%- endmacro %}

{% macro cdc_typed_override_type(entity_name, column, spark_type) -%}
    {#-
        An override's Spark type, normalised (lower case, single spaces, `decimal(p,s)`), or a
        compile error: only types a canonical text casts to exactly are accepted.
    -#}
    {%- set words = (spark_type | string | lower).split() | join(' ') -%}
    {%- set normal = words | replace(' ', '') if words.startswith('decimal') else words -%}
    {%- set simple = [
        'boolean', 'tinyint', 'smallint', 'int', 'bigint', 'float', 'double', 'string', 'binary', 'date',
        'timestamp', 'timestamp_ntz', 'interval year to month', 'interval day to second',
    ] -%}
    {%- set decimal = modules.re.match('^decimal[(]([0-9]+),([0-9]+)[)]$', normal) -%}
    {%- set precision, scale = (decimal.group(1) | int, decimal.group(2) | int) if decimal else (0, 0) -%}
    {%- if column is not string or spark_type is not string
        or not (normal in simple or 1 <= precision <= 38 and scale <= precision) -%}
        {{ exceptions.raise_compiler_error(
            'typed entity ' ~ entity_name ~ ': type override ' ~ column ~ ': ' ~ spark_type ~ ' is not one of '
            ~ simple | join(', ') ~ ', decimal(p,s) with 1 <= p <= 38, s <= p'
        ) }}
    {%- endif -%}
    {{ return(normal) }}
{%- endmacro %}

{% macro cdc_typed_spark_type(logical_type) -%}
    {#-
        The Spark type of a canonical logical type (docs/canonical-text.md). Text that Spark cannot
        hold exactly stays string: time (MySQL TIME reaches -838:59:59), decimals wider than 38
        digits or of unknown scale, and types the messages did not declare.
    -#}
    {%- set logical = (logical_type or 'string') | lower | replace(' ', '') -%}
    {%- set decimal = modules.re.match('^decimal[(]([0-9]+),([0-9]+)[)]$', logical) -%}
    {%- if decimal -%}
        {{ return(logical if decimal.group(1) | int <= 38 else 'string') }}
    {%- endif -%}
    {{ return({
        'boolean': 'boolean',
        'tinyint': 'tinyint',
        'smallint': 'smallint',
        'int': 'int',
        'bigint': 'bigint',
        'ubigint': 'decimal(20,0)',
        'float': 'float',
        'double': 'double',
        'binary': 'binary',
        'date': 'date',
        'datetime': 'timestamp_ntz',
        'timestamp': 'timestamp',
        'zoned_datetime': 'timestamp',
        'interval_ym': 'interval year to month',
        'interval_ds': 'interval day to second',
    }.get(logical, 'string')) }}
{%- endmacro %}

{% macro cdc_typed_cast(text, spark_type, logical_type) -%}
    {#-
        Canonical text -> spark_type, null when the text does not hold a value of that type (the
        caller counts those). Where Spark would change a value instead of failing, the cast fails:
        a decimal with more significant fraction digits than the scale (Spark rounds), a finite
        float/double text beyond the type's range (Spark gives Infinity).
    -#}
    {%- set decimal = modules.re.match('^decimal[(]([0-9]+),([0-9]+)[)]$', spark_type) -%}
    {%- if spark_type == 'string' -%}
        {{ text }}
    {%- elif spark_type == 'binary' -%}
        try_to_binary({{ text }}, 'base64')
    {%- elif decimal -%}
        {%- set within_scale = '[0-9]{' ~ decimal.group(2) ~ '}' -%}
        case
            when trim({{ text }}) rlike '^[+-]?[0-9]*[.]{{ within_scale }}[0-9]*[1-9][0-9]*$' then null
            else try_cast({{ text }} as {{ spark_type }})
        end
    {%- elif spark_type in ('float', 'double') -%}
        case
            when
                abs(try_cast({{ text }} as {{ spark_type }})) = cast('Infinity' as {{ spark_type }})
                and not lower(trim({{ text }})) rlike '^[+-]?inf(inity)?$'
                then null
            else try_cast({{ text }} as {{ spark_type }})
        end
    {%- elif spark_type in ('date', 'timestamp', 'timestamp_ntz') -%}
        {#- Spark also casts `-9257` or `+25425-01-01` to a date (years beyond 1..9999 that most
            clients cannot read): schema-less Debezium sends epoch days as bare numbers. Only text
            that starts with a 4-digit year 0001..9999 and a month and day is cast. -#}
        case
            when trim({{ text }}) rlike '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}'
                then try_cast({{ "substring_index(" ~ text ~ ", '[', 1)" if logical_type == 'zoned_datetime' else text }}
                    as {{ spark_type }})
        end
    {%- elif spark_type == 'interval year to month' -%}
        {{ cdc_typed_iso_year_month(text) }}
    {%- elif spark_type == 'interval day to second' -%}
        {{ cdc_typed_iso_day_second(text) }}
    {%- else -%}
        try_cast({{ text }} as {{ spark_type }})
    {%- endif -%}
{%- endmacro %}

{% macro cdc_typed_iso_year_month(text) -%}
    {#-
        ISO-8601 `[-]P[nY][nM]` -> interval year to month. At most 8 digits per part keeps every
        match inside Spark's range, so make_ym_interval cannot overflow (ANSI would abort the query).
    -#}
    {%- set pattern = "'^(-?)P(?:([0-9]{1,8})Y)?(?:([0-9]{1,8})M)?$'" -%}
    case
        when trim({{ text }}) rlike {{ pattern }} and {{ text }} rlike '[0-9]'
            then make_ym_interval(
                cast(coalesce(nullif(regexp_extract(trim({{ text }}), {{ pattern }}, 2), ''), '0') as int),
                cast(coalesce(nullif(regexp_extract(trim({{ text }}), {{ pattern }}, 3), ''), '0') as int)
            ) * if(regexp_extract(trim({{ text }}), {{ pattern }}, 1) = '-', -1, 1)
    end
{%- endmacro %}

{% macro cdc_typed_iso_day_second(text) -%}
    {#-
        ISO-8601 `[-]P[nD][T[nH][nM][n[.f]S]]` -> interval day to second. Digits beyond the
        microsecond are dropped (Spark's precision, as for timestamps); at most 8 digits per part
        keeps make_dt_interval inside its range.
    -#}
    {%- set pattern = "'^(-?)P(?:([0-9]{1,8})D)?"
        ~ "(?:T(?:([0-9]{1,8})H)?(?:([0-9]{1,8})M)?(?:([0-9]{1,8})(?:[.]([0-9]{1,9}))?S)?)?$'" -%}
    {%- set part = "regexp_extract(trim(" ~ text ~ "), " ~ pattern ~ ", " -%}
    case
        when trim({{ text }}) rlike {{ pattern }} and {{ text }} rlike '[0-9]' and not trim({{ text }}) rlike 'T$'
            then make_dt_interval(
                cast(coalesce(nullif({{ part }}2), ''), '0') as int),
                cast(coalesce(nullif({{ part }}3), ''), '0') as int),
                cast(coalesce(nullif({{ part }}4), ''), '0') as int),
                cast(concat(coalesce(nullif({{ part }}5), ''), '0'), '.', left({{ part }}6), 6)) as decimal(18, 6))
            ) * if({{ part }}1) = '-', -1, 1)
    end
{%- endmacro %}

{% macro cdc_typed_columns(entity) -%}
    {#-
        The entity's source columns from int_schema_registry, in the order key columns (key order),
        then first sighting, then name; each with its logical type, Spark type (override first) and
        output names. The type is the one messages declared (a source type was sent): per source
        table (feed) its latest declared type, then across the entity's tables the type most of
        them declare (ties: the latest seen), so one feed with another idea (DTS `tinyint` for a
        MySQL `tinyint(1)`) does not retype the column for all. Only when no message declared one,
        the registry's latest canonical type (`string` for dialects without types). Output names
        are the source names, except where one would clash (Spark names are case-insensitive) with
        a lineage column or an earlier column: then `<name>__src`, `<name>__src2`, ... A
        zoned_datetime column also gets `<name>__zone`. Empty without `execute` or before
        int_schema_registry exists (e.g. `dbt compile` on a new warehouse).
    -#}
    {%- set registry = ref('int_schema_registry') -%}
    {%- if not execute or load_relation(registry) is none -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set query -%}
        with entity_registry as (
            select *
            from {{ registry }}
            where {{ cdc_typed_filter(entity, 'source_name') }}
        ),

        table_types as (
            select
                table_key,
                column_name,
                max_by(column_type, struct(last_seen_sequence, column_type)) as column_type,
                max(last_seen_ts) as last_seen_ts
            from entity_registry
            where column_type is not null and column_source_type is not null
            group by table_key, column_name
        ),

        declared_types as (
            select
                column_name,
                max_by(column_type, struct(tables, last_seen_ts, column_type)) as column_type
            from (
                select
                    column_name,
                    column_type,
                    count(*) as tables,
                    max(last_seen_ts) as last_seen_ts
                from table_types
                group by column_name, column_type
            )
            group by column_name
        ),

        seen_columns as (
            select
                column_name,
                max_by(column_type, struct(last_seen_ts, last_seen_sequence, column_type))
                    filter (where column_type is not null) as column_type,
                min(primary_key_ordinal) as key_ordinal,
                min(first_seen_ts) as first_seen_ts
            from entity_registry
            group by column_name
        )

        select
            seen_columns.column_name,
            coalesce(declared_types.column_type, seen_columns.column_type) as logical_type
        from seen_columns
        left join declared_types on seen_columns.column_name = declared_types.column_name
        order by seen_columns.key_ordinal asc nulls last, seen_columns.first_seen_ts asc nulls last, seen_columns.column_name asc
    {%- endset -%}
    {%- set overrides = entity.get('type_overrides') or {} -%}
    {%- set reserved = cdc_typed_lineage_columns('current') + cdc_typed_lineage_columns('history') -%}
    {%- set taken = (reserved + ['row_values', 'cast_failures']) | map('lower') | list -%}
    {%- set columns = [] -%}
    {%- for row in run_query(query).rows -%}
        {%- set logical = row[1] or 'string' -%}
        {%- set spark_type = cdc_typed_override_type(entity.get('entity', entity['table']), row[0], overrides[row[0]])
            if row[0] in overrides else cdc_typed_spark_type(logical) -%}
        {%- set output = cdc_typed_free_name(row[0], taken) -%}
        {%- set zone = cdc_typed_free_name(row[0] ~ '__zone', taken) if logical == 'zoned_datetime' else none -%}
        {%- do columns.append({
            'source': row[0], 'logical_type': logical, 'spark_type': spark_type, 'output': output, 'zone_output': zone,
        }) -%}
    {%- endfor -%}
    {{ return(columns) }}
{%- endmacro %}

{% macro cdc_typed_free_name(name, taken) -%}
    {#- `name`, else `name__src`, `name__src2`, ...: the first not in `taken` (lower case), then added to it. -#}
    {%- set candidates = [name, name ~ '__src'] -%}
    {%- for n in range(2, taken | length + 3) -%}
        {%- do candidates.append(name ~ '__src' ~ n) -%}
    {%- endfor -%}
    {%- for candidate in candidates if candidate | lower not in taken -%}
        {%- do taken.append(candidate | lower) -%}
        {{ return(candidate) }}
    {%- endfor -%}
{%- endmacro %}

{% macro cdc_typed_filter(entity, feed_column) -%}
    {#- Rows of the entity's source table: database, table, and feed / schema when configured. -#}
    {%- set conditions = [] -%}
    {%- set columns = {
        'feed': feed_column, 'database': 'database_name', 'schema': 'schema_name', 'table': 'table_name',
    } -%}
    {%- for key, column in columns.items() -%}
        {%- if entity.get(key) is not none -%}
            {%- do conditions.append(column ~ ' = ' ~ cdc_string_literal(entity[key])) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- conditions | join(' and ') -}}
{%- endmacro %}

{% macro cdc_typed_model(entity_name, kind, parent) -%}
    {#- The body of `<entity>_<kind>`: the parent mart's rows of the entity, typed columns, cast_failures. -#}
    {%- set entity = cdc_typed_entity(entity_name) %}
    {%- set columns = cdc_typed_columns(entity) %}
    {%- set lineage = cdc_typed_lineage_columns(kind) %}
with entity_rows as (
    select *
    from {{ parent }}
    where {{ cdc_typed_filter(entity, 'feed') }}
),

typed as (
    select
        {{ (lineage + cdc_typed_expressions(columns)) | join(',\n        ') }},
        row_values
    from entity_rows
)

select
    {{ (lineage + cdc_typed_outputs(columns)) | join(',\n    ') }},
    {{ cdc_typed_failures(columns) }} as cast_failures
from typed
{%- endmacro %}

{% macro cdc_typed_expressions(columns) -%}
    {#- `<cast> as <output>` per column, plus `<zone> as <name>__zone` after a zoned_datetime column. -#}
    {%- set expressions = [] -%}
    {%- for column in columns -%}
        {%- set text = 'row_values[' ~ cdc_string_literal(column.source) ~ ']' -%}
        {%- do expressions.append(
            cdc_typed_cast(text, column.spark_type, column.logical_type) ~ ' as ' ~ cdc_quote_identifier(column.output)
        ) -%}
        {%- if column.zone_output -%}
            {%- do expressions.append(
                'case when ' ~ text ~ " like '%[%]' then substring_index(substring_index(" ~ text
                ~ ", '[', -1), ']', 1) end as " ~ cdc_quote_identifier(column.zone_output)
            ) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(expressions) }}
{%- endmacro %}

{% macro cdc_typed_outputs(columns) -%}
    {#- The quoted output names of the typed columns, zone companions included, in order. -#}
    {%- set outputs = [] -%}
    {%- for column in columns -%}
        {%- do outputs.append(cdc_quote_identifier(column.output)) -%}
        {%- if column.zone_output -%}
            {%- do outputs.append(cdc_quote_identifier(column.zone_output)) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(outputs) }}
{%- endmacro %}

{% macro cdc_typed_failures(columns) -%}
    {#- The source names of the columns whose text is not null but whose typed value is (did not cast). -#}
    filter(
        array(
            cast(null as string)
            {% for column in columns %},
                case
                    when
                        row_values[{{ cdc_string_literal(column.source) }}] is not null
                        and {{ cdc_quote_identifier(column.output) }} is null
                        then {{ cdc_string_literal(column.source) }}
                end
            {% endfor %}
        ),
        failed_column -> failed_column is not null
    )
{%- endmacro %}

{% macro cdc_typed_current(entity_name) -%}
    {#- `<entity>_current`: a table (rebuilt each run from cdc_current_rows), one row per live source row. -#}
    {{ config(materialized='table') }}
    {{ cdc_typed_model(entity_name, 'current', ref('cdc_current_rows')) }}
{%- endmacro %}

{% macro cdc_typed_history(entity_name) -%}
    {#-
        `<entity>_history`: a view over cdc_row_history, one row per version. A view stores
        nothing twice and always shows the history as it is now (it is incremental, its partitions
        rewritten in place); the casts are cheap next to the history's windows.
    -#}
    {{ config(materialized='view') }}
    {{ cdc_typed_model(entity_name, 'history', ref('cdc_row_history')) }}
{%- endmacro %}

{% test no_cast_failures(model, column_name, key_column='version_id') %}
{#-
    One failing row per value that did not cast: the typed row's key and one source column named
    in its `cast_failures`. dbt counts the rows, so the test reports how many values failed. Only
    these two columns: a typed mart's own columns may have any name.
-#}
select
    typed_rows.{{ key_column }},
    failures.failed_column
from {{ model }} as typed_rows
    lateral view explode(typed_rows.{{ column_name }}) failures as failed_column
{% endtest %}
