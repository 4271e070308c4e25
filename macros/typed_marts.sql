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
    {#- The key and lineage columns of a typed model, taken as they are from its parent mart. built_at
        too: a typed row is its parent's row retyped, so the run that wrote the parent row wrote it
        (the rows an incremental run's data tests check, docs/testing.md). -#}
    {%- set shared = ['feed', 'dialect', 'tenant_name', 'database_name', 'schema_name', 'table_name', 'primary_key'] -%}
    {%- if kind == 'current' -%}
        {{ return(shared + ['last_changed_at', 'last_op', 'last_event_id', 'version_id', 'built_at']) }}
    {%- endif -%}
    {{ return(shared + [
        'valid_from', 'valid_to', 'is_current', 'is_deleted', 'version_number', 'op', 'event_id', 'version_id',
        'built_at',
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

{% macro cdc_typed_dialect_encodings() -%}
    {#-
        The dialects whose values of a type arrive in another form than the canonical text,
        per form (docs/typed-marts.md, "Encodings per dialect"; the generator's encoders write
        them). A form is read only from the dialects named here: elsewhere such a text is a
        failed cast.
    -#}
    {{ return({
        'epoch_seconds': ['oms_default_json', 'oms_shareplex_json'],
        'zone_id_wall_clock': ['oms_default_json', 'oms_shareplex_json'],
        'source_wall_clock': ['ckafka_json', 'ogg_json'],
        'utc_wall_clock': ['maxwell_json'],
        'instant_for_wall_clock': ['dataworks_json'],
        'connect_schemaless': ['debezium_json'],
    }) }}
{%- endmacro %}

{% macro cdc_typed_sends(form, dialect) -%}
    {#- SQL: the row's dialect (the SQL expression `dialect`) sends values in this form. -#}
    ({{ dialect }} in ('{{ cdc_typed_dialect_encodings()[form] | join("', '") }}'))
{%- endmacro %}

{% macro cdc_typed_let(value, name, body) -%}
    {#- `body` with `name` bound to `value`, computed once: Spark SQL has no LET, a one-element
        transform is one. Keeps the generated SQL short (a view's text must fit the metastore). -#}
    transform(array({{ value }}), {{ name }} -> {{ body }})[0]
{%- endmacro %}

{% macro cdc_typed_cast(text, spark_type, logical_type, dialect='null', epoch_unit=none) -%}
    {#-
        The text of a column of logical_type, sent by `dialect` (SQL expression, the row's
        dialect) -> spark_type; null when the text does not hold a value of that type (the caller
        counts those). Canonical text casts for every dialect; the other forms a dialect sends
        without type information (cdc_typed_dialect_encodings) only for that dialect. Where
        Spark would change a value instead of failing, the cast fails: a decimal with more
        significant fraction digits than the scale (Spark rounds), a finite float/double text
        beyond the type's range (Spark gives Infinity).
    -#}
    {%- set decimal = modules.re.match('^decimal[(]([0-9]+),([0-9]+)[)]$', spark_type) -%}
    {%- set logical = (logical_type or '') | lower | replace(' ', '') -%}
    {%- set source = modules.re.match('^(?:decimal[(][0-9]+,([0-9]+)[)]|(ubigint))$', logical) -%}
    {%- set t = '__t' -%}
    {%- if spark_type == 'string' and (logical_type or '') | lower != 'time' -%}
        {{ return(text) }}
    {%- elif spark_type == 'binary' -%}
        {{ return('try_to_binary(' ~ text ~ ", 'base64')") }}
    {%- elif spark_type == 'string' -%}
        {%- set body = cdc_typed_time_text(t, dialect) -%}
    {%- elif decimal and source -%}
        {%- set body -%}
            case
                when {{ cdc_typed_sends('connect_schemaless', dialect) }} and not {{ t }} rlike '^-?[0-9]+([.][0-9]+)?$'
                    then {{ cdc_typed_let(cdc_typed_unscaled_base64(t, (source.group(1) or 0) | int), '__b',
                        cdc_typed_exact_decimal('__b', spark_type, decimal.group(2) | int)) }}
                else {{ cdc_typed_exact_decimal(t, spark_type, decimal.group(2) | int) }}
            end
        {%- endset -%}
    {%- elif decimal -%}
        {%- set body = cdc_typed_exact_decimal(t, spark_type, decimal.group(2) | int) -%}
    {%- elif spark_type in ('float', 'double') -%}
        {%- set body -%}
            case
                when abs(try_cast({{ t }} as {{ spark_type }})) = cast('Infinity' as {{ spark_type }})
                    and not lower({{ t }}) rlike '^[+-]?inf(inity)?$'
                    then null
                else try_cast({{ t }} as {{ spark_type }})
            end
        {%- endset -%}
    {%- elif spark_type in ('date', 'timestamp_ntz') -%}
        {%- set body = cdc_typed_wall_clock(t, spark_type, dialect, epoch_unit) -%}
    {%- elif spark_type == 'timestamp' -%}
        {%- set body = cdc_typed_instant(t, dialect) -%}
    {%- elif spark_type == 'interval year to month' -%}
        {%- set body = cdc_typed_year_month(t) -%}
    {%- elif spark_type == 'interval day to second' -%}
        {%- set body = cdc_typed_day_second(t) -%}
    {%- else -%}
        {{ return('try_cast(' ~ text ~ ' as ' ~ spark_type ~ ')') }}
    {%- endif -%}
    {{ cdc_typed_let('trim(' ~ text ~ ')', t, body) }}
{%- endmacro %}

{% macro cdc_typed_exact_decimal(text, spark_type, scale) -%}
    {#-
        Plain (`-12.50`) or scientific (`1.2E-8`, BigDecimal.toString) decimal text -> spark_type,
        null when it has more significant fraction digits than `scale` (Spark would round).
    -#}
    {%- set pattern = "'^[+-]?([0-9]*)(?:[.]([0-9]*))?(?:[eE]([+-]?[0-9]{1,6}))?$'" -%}
    {%- set group = 'regexp_extract(' ~ text ~ ', ' ~ pattern ~ ', ' -%}
    {%- set parts = "named_struct('digits', concat(" ~ group ~ '1), ' ~ group ~ "2)), 'fraction', length("
        ~ group ~ "2)) - cast(coalesce(nullif(" ~ group ~ "3), ''), '0') as int))" -%}
    {%- set significant = "trim(trailing '0' from __p.digits)" -%}
    case
        when {{ text }} rlike {{ pattern }} and {{ cdc_typed_let(parts, '__p',
            significant ~ " != '' and __p.fraction - length(__p.digits) + length(" ~ significant ~ ') > ' ~ scale) }}
            then null
        else try_cast({{ text }} as {{ spark_type }})
    end
{%- endmacro %}

{% macro cdc_typed_unscaled_base64(text, scale) -%}
    {#-
        Kafka Connect Decimal without its schema: base64 of the unscaled value (big-endian two's
        complement) -> its plain decimal text at `scale` (the registry's). Up to 16 bytes (every
        decimal Spark holds); a negative value is read through its complement (-u = ~u + 1).
        Integer arithmetic on two 64-bit halves, never float.
    -#}
    {%- set magnitude = "if(__h rlike '^[89A-F]', translate(__h, '0123456789ABCDEF', 'FEDCBA9876543210'), __h)" -%}
    {%- set high = "cast(coalesce(conv(nullif(left(__m, length(__m) - 16), ''), 16, 10), '0') as decimal(38, 0))" -%}
    {%- set low = "cast(conv(right(__m, 16), 16, 10) as decimal(38, 0))" -%}
    {%- set unsigned = 'cast(try_add(try_add(try_multiply(' ~ high ~ ', 18446744073709551616BD), ' ~ low
        ~ "), if(__h rlike '^[89A-F]', 1, 0)) as string)" -%}
    {%- set digits = "lpad(__u, greatest(length(__u), " ~ (scale + 1) ~ "), '0')" -%}
    {%- set plain -%}
        concat(if(__h rlike '^[89A-F]', '-', ''), {{ "left(__d, length(__d) - " ~ scale ~ "), '.', right(__d, " ~ scale ~ ")"
            if scale > 0 else '__d' }})
    {%- endset -%}
    {{ cdc_typed_let("hex(try_to_binary(" ~ text ~ ", 'base64'))", '__h',
        'case when length(__h) between 2 and 32 then ' ~ cdc_typed_let(magnitude, '__m',
            cdc_typed_let(unsigned, '__u', cdc_typed_let(digits, '__d', plain))) ~ ' end') }}
{%- endmacro %}

{% macro cdc_typed_wall_clock(text, spark_type, dialect, epoch_unit) -%}
    {#-
        A date or zone-less datetime (the source wall clock) -> date / timestamp_ntz. Canonical
        text starts with a 4-digit year 0001..9999 (Spark also casts `-9257` or `+25425-01-01`,
        years most clients cannot read). DataWorks sends every temporal value as an instant
        (`...Z`): its wall clock in the var source_time_zone. Schema-less Debezium sends epoch
        days (date) and epoch milliseconds or microseconds (datetime, by the column's precision:
        `epoch_unit`, from the registry; unknown -> failed cast).
    -#}
    {%- set zone = cdc_string_literal(var('source_time_zone')) -%}
    {%- set epoch = "timestamp_ntz '1970-01-01 00:00:00'" -%}
    {%- set limits = {'ms': (-62135596800000, 253402300799999), 'us': (-62135596800000000, 253402300799999999)} -%}
    {%- set numeric = 'try_cast(' ~ text ~ (' as int)' if spark_type == 'date' else ' as bigint)') -%}
    {%- if spark_type == 'date' -%}
        {%- set from_epoch = 'date_from_unix_date(' ~ numeric ~ ')' -%}
        {%- set low, high = (-719162, 2932896) -%}
    {%- elif epoch_unit in limits -%}
        {%- set from_epoch = 'timestampadd(' ~ ('MILLISECOND' if epoch_unit == 'ms' else 'MICROSECOND') ~ ', '
            ~ numeric ~ ', ' ~ epoch ~ ')' -%}
        {%- set low, high = limits[epoch_unit] -%}
    {%- else -%}
        {%- set from_epoch, low, high = ('null', 0, -1) -%}
    {%- endif -%}
    case
        when {{ cdc_typed_sends('instant_for_wall_clock', dialect) }} and {{ text }} rlike '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}T.*Z$'
            then cast(convert_timezone('UTC', {{ zone }}, try_cast(left({{ text }}, length({{ text }}) - 1) as timestamp_ntz))
                as {{ spark_type }})
        when {{ text }} rlike '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9:.]*)?$'
            then try_cast({{ text }} as {{ spark_type }})
        when {{ cdc_typed_sends('connect_schemaless', dialect) }} and {{ numeric }} between {{ low }} and {{ high }}
            then {{ from_epoch }}
    end
{%- endmacro %}

{% macro cdc_typed_instant(text, dialect) -%}
    {#-
        An instant -> timestamp. Canonical `...Z` (also `...Z[zone]`, and ISO text with an offset,
        Debezium's ZonedTimestamp); OMS Default / SharePlex epoch seconds `1550578552.528641` and
        zoned values as `wall clock zone` (`2020-11-25 00:01:02.5 Asia/Shanghai`); CKafka's
        zone-less source wall clock, read in the var source_time_zone (in a DST overlap the
        earlier instant: the text cannot say which); Maxwell's zone-less UTC wall clock.
    -#}
    {%- set iso = "'^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})$'" -%}
    {%- set wall = "'^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?'" -%}
    case
        when substring_index({{ text }}, '[', 1) rlike {{ iso }} then try_cast(substring_index({{ text }}, '[', 1) as timestamp)
        when {{ cdc_typed_sends('epoch_seconds', dialect) }} and {{ text }} rlike '^-?[0-9]{1,12}([.][0-9]{1,9})?$'
            then {{ cdc_typed_within_years(
                'timestamp_micros(cast(floor(cast(' ~ text ~ ' as decimal(21, 9)) * 1000000) as bigint))') }}
        when {{ cdc_typed_sends('zone_id_wall_clock', dialect) }} and {{ text }} rlike concat({{ wall }}, ' [A-Za-z0-9_/+-]+$')
            then try_cast({{ text }} as timestamp)
        when {{ cdc_typed_sends('source_wall_clock', dialect) }} and {{ text }} rlike concat({{ wall }}, '$')
            then try_cast(concat({{ text }}, ' ', {{ cdc_string_literal(var('source_time_zone')) }}) as timestamp)
        when {{ cdc_typed_sends('utc_wall_clock', dialect) }} and {{ text }} rlike concat({{ wall }}, '$')
            then try_cast(concat({{ text }}, ' UTC') as timestamp)
    end
{%- endmacro %}

{% macro cdc_typed_within_years(instant) -%}
    {#- The instant when its UTC year is 1..9999 (what a timestamp holds everywhere), else null. -#}
    case when year({{ instant }}) between 1 and 9999 then {{ instant }} end
{%- endmacro %}

{% macro cdc_typed_zone(text) -%}
    {#- The zone id of a zoned datetime: in brackets (`...Z[Asia/Shanghai]`) or after the wall clock (OMS). -#}
    case
        when {{ text }} like '%[%]' then substring_index(substring_index({{ text }}, '[', -1), ']', 1)
        when trim({{ text }}) rlike '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+ [A-Za-z][A-Za-z0-9_/+-]*$'
            then substring_index(trim({{ text }}), ' ', -1)
    end
{%- endmacro %}

{% macro cdc_typed_time_text(text, dialect) -%}
    {#-
        A time of day (MySQL TIME: signed, beyond 24 h) as canonical text `[-]HH:MM:SS[.f]`:
        fraction digits without trailing zeros (Canal and CKafka pad to the column's precision);
        schema-less Debezium's microseconds formatted.
    -#}
    {%- set formatted = "regexp_replace(format_string('%s%02d:%02d:%02d.%06d', if(__us < 0, '-', ''), "
        ~ "abs(__us) div 3600000000, abs(__us) div 60000000 % 60, abs(__us) div 1000000 % 60, abs(__us) % 1000000), "
        ~ "'([.][0-9]*[1-9])0+$|[.]0+$', '$1')" -%}
    case
        when {{ cdc_typed_sends('connect_schemaless', dialect) }} and {{ text }} rlike '^-?[0-9]{1,13}$'
            then {{ cdc_typed_let('try_cast(' ~ text ~ ' as bigint)', '__us', formatted) }}
        when {{ text }} rlike '^-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}[.][0-9]+$'
            then regexp_replace({{ text }}, '([.][0-9]*[1-9])0+$|[.]0+$', '$1')
        else {{ text }}
    end
{%- endmacro %}

{% macro cdc_typed_year_month(text) -%}
    {#-
        A year-month interval -> interval year to month: ISO-8601 `[-]P[nY][nM]` (Debezium also
        signs each part and adds zero day-time parts: `P-1Y-2M0DT0H0M0S`), or SQL / Oracle text
        `INTERVAL '-1-2' YEAR TO MONTH`, `INTERVAL '5' YEAR`, `+01-02` (OMS, DataWorks). At most 8
        digits per part keeps make_ym_interval inside Spark's range (ANSI would abort the query).
    -#}
    {%- set iso = "'^(-?)P(?:(-?[0-9]{1,8})Y)?(?:(-?[0-9]{1,8})M)?"
        ~ "(?:-?0+D)?(?:T(?:-?0+H)?(?:-?0+M)?(?:-?0+(?:[.]0+)?S)?)?$'" -%}
    {%- set sql = "'^(?:INTERVAL .)?([+-]?)([0-9]{1,8})(?:-([0-9]{1,2}))?(?:. YEAR(?: TO MONTH)?)?$'" -%}
    {%- set core = "'^(INTERVAL .[+-]?[0-9]+(-[0-9]+)?. YEAR( TO MONTH)?|[+-][0-9]+-[0-9]+)$'" -%}
    case
        when {{ text }} rlike {{ iso }} and {{ text }} rlike '[0-9]' and not {{ text }} rlike 'T$'
            then make_ym_interval(
                cast(coalesce(nullif(regexp_extract({{ text }}, {{ iso }}, 2), ''), '0') as int),
                cast(coalesce(nullif(regexp_extract({{ text }}, {{ iso }}, 3), ''), '0') as int)
            ) * if(regexp_extract({{ text }}, {{ iso }}, 1) = '-', -1, 1)
        when {{ text }} rlike {{ core }}
            then make_ym_interval(
                cast(regexp_extract({{ text }}, {{ sql }}, 2) as int),
                cast(coalesce(nullif(regexp_extract({{ text }}, {{ sql }}, 3), ''), '0') as int)
            ) * if(regexp_extract({{ text }}, {{ sql }}, 1) = '-', -1, 1)
    end
{%- endmacro %}

{% macro cdc_typed_day_second(text) -%}
    {#-
        A day-time interval -> interval day to second: ISO-8601 `[-]P[nD][T[nH][nM][n[.f]S]]`
        (Debezium: each part signed, zero year-month parts `P0Y0M-1DT-2H0M-0.5S`), or SQL / Oracle
        text `INTERVAL '-1 02:03:04.5' DAY TO SECOND`, `INTERVAL '5' DAY`, `+03 04:05:06.500000`.
        Digits beyond the microsecond are dropped (Spark's precision, as for timestamps); at most 8
        digits per part keeps make_dt_interval inside its range.
    -#}
    {%- set iso = "'^(-?)P(?:-?0+Y)?(?:-?0+M)?(?:(-?[0-9]{1,8})D)?"
        ~ "(?:T(?:(-?[0-9]{1,8})H)?(?:(-?[0-9]{1,8})M)?(?:(-?[0-9]{1,8})(?:[.]([0-9]{1,9}))?S)?)?$'" -%}
    {%- set sql = "'^(?:INTERVAL .)?([+-]?)([0-9]{1,8})"
        ~ "(?: ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.]([0-9]{1,9}))?)?(?:. DAY(?: TO SECOND)?)?$'" -%}
    {%- set core = "'^(INTERVAL .[+-]?[0-9]+( [0-9:.]+)?. DAY( TO SECOND)?|[+-][0-9]+ [0-9:.]+)$'" -%}
    case
        when {{ text }} rlike {{ iso }} and {{ text }} rlike '[0-9]' and not {{ text }} rlike 'T$'
            then {{ cdc_typed_make_dt(text, iso, [2, 3, 4, 5, 6]) }} * if(regexp_extract({{ text }}, {{ iso }}, 1) = '-', -1, 1)
        when {{ text }} rlike {{ core }} and {{ text }} rlike {{ sql }}
            then {{ cdc_typed_make_dt(text, sql, [2, 3, 4, 5, 6]) }} * if(regexp_extract({{ text }}, {{ sql }}, 1) = '-', -1, 1)
    end
{%- endmacro %}

{% macro cdc_typed_make_dt(text, pattern, groups) -%}
    {#- make_dt_interval of the pattern's groups: days, hours, minutes, (signed) seconds, fraction digits. -#}
    {%- set part = [] -%}
    {%- for group in groups -%}
        {%- do part.append(
            "coalesce(nullif(regexp_extract(" ~ text ~ ", " ~ pattern ~ ", " ~ group ~ "), ''), '0')"
        ) -%}
    {%- endfor -%}
    make_dt_interval(
        cast({{ part[0] }} as int),
        cast({{ part[1] }} as int),
        cast({{ part[2] }} as int),
        cast(concat({{ part[3] }}, '.', left({{ part[4] }}, 6), '0') as decimal(18, 6))
    )
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
                min(first_seen_ts) as first_seen_ts,
                max_by(column_source_type, struct(last_seen_ts, last_seen_sequence, column_source_type)) filter (
                    where {{ cdc_typed_sends('connect_schemaless', 'dialect') }}
                    and column_source_type rlike '(?i)^(io[.]debezium[.]time[.](micro)?timestamp$|datetime)'
                ) as datetime_source_type
            from entity_registry
            group by column_name
        )

        select
            seen_columns.column_name,
            coalesce(declared_types.column_type, seen_columns.column_type) as logical_type,
            seen_columns.datetime_source_type
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
            'epoch_unit': cdc_typed_epoch_unit(row[2] if row | length > 2 else none),
        }) -%}
    {%- endfor -%}
    {{ return(columns) }}
{%- endmacro %}

{% macro cdc_typed_epoch_unit(source_type) -%}
    {#-
        Unit of the epoch numbers schema-less Debezium sends for a datetime column, from a source
        type the feed declared elsewhere: `ms` for io.debezium.time.Timestamp or a MySQL
        DATETIME of precision 0..3, `us` for MicroTimestamp or DATETIME(4..6); none when unknown.
    -#}
    {%- set text = (source_type or '') | lower | replace(' ', '') -%}
    {%- set fsp = modules.re.match('^datetime(?:[(]([0-9])[)])?$', text) -%}
    {%- if text.endswith('microtimestamp') or fsp and (fsp.group(1) or 0) | int > 3 -%}
        {{ return('us') }}
    {%- elif text == 'io.debezium.time.timestamp' or fsp -%}
        {{ return('ms') }}
    {%- endif -%}
    {{ return(none) }}
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
            cdc_typed_cast(text, column.spark_type, column.logical_type, 'dialect', column.get('epoch_unit'))
            ~ ' as ' ~ cdc_quote_identifier(column.output)
        ) -%}
        {%- if column.zone_output -%}
            {%- do expressions.append(cdc_typed_zone(text) ~ ' as ' ~ cdc_quote_identifier(column.zone_output)) -%}
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
    {#- `<entity>_current`: a view over cdc_current_rows, one row per live source row. A view, as
        `<entity>_history`: a table would be rebuilt whole by every run that changed a row, and the
        casts are cheap next to reading the rows. -#}
    {{ config(materialized='view', shows_live_builds=true) }}
    {{ cdc_typed_model(entity_name, 'current', ref('cdc_current_rows')) }}
{%- endmacro %}

{% macro cdc_typed_history(entity_name) -%}
    {#-
        `<entity>_history`: a view over cdc_row_history, one row per version. A view stores
        nothing twice and always shows the history as it is now (it is incremental, its partitions
        rewritten in place); the casts are cheap next to the history's windows.
    -#}
    {{ config(materialized='view', shows_live_builds=true) }}
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
