{#- Canal-shaped dialects (spec 004 FlatMessage, spec 000 CloudCanal flavour, spec 003 OMS Canal,
    spec 002 CKafka Canal-shaped DDL): SQL shared by stg_canal_json__changes and
    stg_oms_canal_json__changes (canal_staged_rows over the JVM function cdc_canal_rows; the models
    differ only in their value decoder) and stg_ckafka_json__changes; what every JSON
    dialect shares is in macros/staging.sql.
    docs/dialects/canal_json.md, oms_canal_json.md and ckafka_json.md explain the choices. -#}

{% macro canal_create_table_primary_key(statement) -%}
    {#- Key columns of a CREATE TABLE statement, in key order: the `PRIMARY KEY (...)` constraint, else a
        column defined `... PRIMARY KEY`; an empty array when the table has none; null when the statement
        is not a CREATE TABLE with a column list (CREATE TABLE ... LIKE, CREATE DATABASE, ...).
        Backquoted names are unquoted (`` -> `); prefix lengths and ASC/DESC are dropped. -#}
    case
        when not {{ statement }} rlike '^(?is)\\s*create\\s+(temporary\\s+)?table\\b' then null
        when {{ statement }} rlike '^(?is)\\s*create\\s+(temporary\\s+)?table\\s+(if\\s+not\\s+exists\\s+)?\\S+\\s+like\\b'
            then null
        when {{ statement }} rlike '(?is)\\bprimary\\s+key\\s*(using\\s+\\w+\\s*)?[(]'
            then transform(
                regexp_extract_all(
                    regexp_extract(
                        {{ statement }},
                        '(?is)\\bprimary\\s+key\\s*(?:using\\s+\\w+\\s*)?[(]((?:[^()]|[(][^()]*[)])*)[)]',
                        1
                    ),
                    '(?:^|,)\\s*(`(?:[^`]|``)+`|[^\\s,`()]+)',
                    1
                ),
                name -> replace(regexp_replace(name, '^`(.*)`$', '$1'), '``', '`')
            )
        when {{ statement }} rlike '(?is)\\bprimary\\s+key\\b'
            then transform(
                array(
                    regexp_extract(
                        {{ statement }},
                        '(?is)[(,]\\s*(`(?:[^`]|``)+`|[^\\s,`()]+)\\s+[^,]*?\\bprimary\\s+key\\b',
                        1
                    )
                ),
                name -> replace(regexp_replace(name, '^`(.*)`$', '$1'), '``', '`')
            )
        else cast(array() as array<string>)
    end
{%- endmacro %}

{% macro canal_staged_rows(dialect) -%}
    {#- The steps of the Canal FlatMessage models (stg_canal_json__changes, stg_oms_canal_json__changes)
        after `landing` (cdc_landing_import): `flat_messages` (each value read, checked and decoded
        once in the JVM by cdc_canal_rows, src/cdc_unify/java/cdcunify/CanalRows.java, into its staged
        rows: a value is one FlatMessage or a JSON array of them; a value with any unreadable part is
        one quarantine row), `staged_rows` (one row per staged row) and `keyed` (its times, key and
        the columns Canal does not send). Every value is decided on its own: no window, no shuffle. -#}
flat_messages as (
    select
        *,
        sha2(value, 256) as natural_id,
        cdc_canal_rows('{{ dialect }}', value, {{ cdc_string_literal(var('source_time_zone')) }}) as canal_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('flat_messages', 'canal_rows', ['natural_id']) }}
),

keyed as (
    select
        *,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        cast(null as string) as schema_name,
        cast(null as string) as source_position,
        cast(null as decimal(30, 0)) as position_number,
        timestamp_micros(event_ts_micros) as event_ts,
        timestamp_micros(emitted_ts_micros) as emitted_ts,
        {# a DDL's key is the table's key after it (CloudCanal tableChanges), as other dialects' DDL #}
        case
            when size(primary_key_columns) = 0 then 'none'
            when event_kind = 'DDL' then 'ddl'
            else 'message'
        end as primary_key_source,
        case
            when event_kind = 'ROW' then {{ cdc_primary_key('primary_key_columns', 'before', 'after') }}
        end as primary_key
    from staged_rows
)
{%- endmacro %}
