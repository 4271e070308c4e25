{#- Canal-shaped dialects (spec 004 FlatMessage, spec 000 CloudCanal flavour, spec 003 OMS Canal,
    spec 002 CKafka Canal-shaped DDL): SQL shared by stg_canal_json__changes and
    stg_oms_canal_json__changes (their two steps, canal_checked_messages and canal_staged_rows; the
    models differ only in their value decoder) and stg_ckafka_json__changes; what every JSON
    dialect shares is in macros/staging.sql.
    docs/dialects/canal_json.md, oms_canal_json.md and ckafka_json.md explain the choices. -#}

{% macro canal_epoch_unit(text) -%}
    {#- The unit of an epoch number by its digit count: 10-digit seconds (CKafka DDL) and 13-digit
        milliseconds (Canal) both occur; null when the text is not a non-negative integer. -#}
    case
        when {{ text }} rlike '^[0-9]{1,11}$' then 's'
        when {{ text }} rlike '^[0-9]{12,14}$' then 'ms'
        when {{ text }} rlike '^[0-9]{15,17}$' then 'us'
        when {{ text }} rlike '^[0-9]{18,19}$' then 'ns'
    end
{%- endmacro %}

{% macro canal_epoch_timestamp(text, unit) -%}
    case {{ unit }}
        when 's' then timestamp_seconds(try_cast({{ text }} as bigint))
        when 'ms' then timestamp_millis(try_cast({{ text }} as bigint))
        when 'us' then timestamp_micros(try_cast({{ text }} as bigint))
        when 'ns' then timestamp_micros(try_cast({{ text }} as bigint) div 1000)
    end
{%- endmacro %}

{% macro canal_event_kind(canal_type, is_ddl_text) -%}
    {#- Canal EventType / EntryType names (spec 004) -> staged event kind; null = unknown type.
        QUERY is a DDL statement unless the message says isDdl false (a plain query event). -#}
    case
        when {{ canal_type }} in ('INSERT', 'UPDATE', 'DELETE') then 'ROW'
        when {{ canal_type }} = 'QUERY' and {{ is_ddl_text }} = 'false' then 'OTHER'
        when {{ canal_type }} in ('CREATE', 'ALTER', 'ERASE', 'QUERY', 'TRUNCATE', 'RENAME', 'CINDEX', 'DINDEX')
            then 'DDL'
        when {{ canal_type }} in ('GTID', 'XACOMMIT', 'XAROLLBACK', 'TRANSACTIONBEGIN', 'TRANSACTIONEND')
            then 'TRANSACTION'
        when {{ canal_type }} in ('MHEARTBEAT', 'HEARTBEAT') then 'HEARTBEAT'
    end
{%- endmacro %}

{% macro canal_op(canal_type) -%}
    {#- The staged op: DDL types in the contract's names, every other type as sent. -#}
    case {{ canal_type }}
        when 'ERASE' then 'DROP'
        when 'CINDEX' then 'CREATE_INDEX'
        when 'DINDEX' then 'DROP_INDEX'
        else {{ canal_type }}
    end
{%- endmacro %}

{% macro canal_table_change_types(columns) -%}
    {#- CloudCanal tableChanges columns (array<map<string,string>>) -> name -> typeExpression (else
        typeName, else jdbc:<jdbcType>), folded so a repeated name cannot fail the build. -#}
    aggregate(
        filter({{ columns }}, col -> col['name'] is not null),
        cast(map() as map<string, string>),
        (types, col) -> map_concat(
            map_filter(types, (name, declared) -> name != col['name']),
            map(
                col['name'],
                coalesce(col['typeExpression'], col['typeName'], concat('jdbc:', col['jdbcType']))
            )
        )
    )
{%- endmacro %}

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

{% macro canal_checked_messages() -%}
    {#- The first step of the Canal FlatMessage models (stg_canal_json__changes,
        stg_oms_canal_json__changes), over `landing` (cdc_landing_import). CTEs: `canal_values` (each
        value read once in the JVM by cdc_canal_value, src/cdc_unify/java: a value is one FlatMessage
        or a JSON array of them, read with the JSON rules of the other JSON models), `value_checked`
        (the value's own error), `messages` (one row per FlatMessage: message_index, message),
        `message_fields`, `classified`, `timed` (its fields, event kind, op and epoch times) and
        `message_checked` (its first error, message_error_code / _detail, which makes the whole
        value one quarantine row). -#}
canal_values as (
    select
        *,
        cdc_canal_value(value) as canal_value
    from landing
),

value_checked as (
    select
        *,
        canal_value.array_size is not null as value_is_array,
        case
            when value is null then null
            when not canal_value.is_utf8 then 'invalid_utf8'
            when not canal_value.is_json then 'invalid_json'
            when canal_value.array_size is null and not canal_value.is_object then 'wrong_shape'
            when canal_value.array_size = 0 then 'wrong_shape'
        end as value_error_code,
        case
            when value is null then null
            when not canal_value.is_utf8 then 'the value is not valid UTF-8'
            when not canal_value.is_json then 'the value is not valid JSON (RFC 8259; duplicate keys are rejected too)'
            when canal_value.array_size is null and not canal_value.is_object
                then 'the JSON value is neither a FlatMessage object nor an array of them'
            when canal_value.array_size = 0 then 'the JSON array holds no FlatMessage'
        end as value_error_detail
    from canal_values
),

messages as (
    -- an element of the array that is not an object is a null message
    select
        value_checked.*,
        exploded.message_index,
        exploded.message
    from value_checked
    lateral view posexplode_outer(
        case when value_error_code is null then canal_value.messages end
    ) exploded as message_index, message
),

message_fields as (
    select
        *,
        message.type.text as canal_type,
        lower(message.is_ddl.text) as is_ddl_text,
        message.database.text as database_text,
        message.table.text as table_text,
        -- a name sent as a JSON object or array (its text `["t"]` would name a table `["t"]`)
        case
            when message.database.nested then 'database'
            when message.table.nested then 'table'
        end as nested_name,
        message.sql.text as sql_text,
        message.gtid.text as gtid_text,
        message.es.text as es_text,
        message.ts.text as ts_text,
        message.data_rows,
        message.old_rows,
        message.pk_names,
        message.mysql_types,
        message.sql_types,
        message.table_change_columns,
        message.table_change_keys
    from messages
),

classified as (
    select
        *,
        {{ canal_event_kind('canal_type', 'is_ddl_text') }} as event_kind,
        {{ canal_op('canal_type') }} as op,
        {{ canal_epoch_unit('es_text') }} as es_unit,
        {{ canal_epoch_unit('ts_text') }} as ts_unit,
        -- the columns of row images whose value is a JSON object or array
        coalesce(message.data_nested, '') as data_nested,
        coalesce(message.old_nested, '') as old_nested
    from message_fields
),

timed as (
    select
        *,
        {{ canal_epoch_timestamp('es_text', 'es_unit') }} as es_timestamp,
        {{ canal_epoch_timestamp('ts_text', 'ts_unit') }} as ts_timestamp
    from classified
),

message_checked as (
    {#- The first reason, in this order, makes the message (and so its whole value) a quarantine row. -#}
    select
        *,
        case
            when value_error_code is not null or value is null then null
            when message is null then 'wrong_shape'
            when not message.type.present then 'missing_field'
            when event_kind is null then 'unknown_op'
            when nested_name is not null then 'wrong_shape'
            when event_kind = 'ROW' and coalesce(database_text, '') = '' then 'missing_field'
            when event_kind = 'ROW' and coalesce(table_text, '') = '' then 'missing_field'
            when event_kind = 'ROW' and not message.has_data then 'missing_field'
            when event_kind = 'ROW' and (data_rows is null or exists(data_rows, data_row -> data_row is null))
                then 'wrong_shape'
            when event_kind = 'ROW' and size(data_rows) = 0 then 'missing_field'
            when
                canal_type = 'UPDATE' and message.has_old
                and (old_rows is null or exists(old_rows, old_row -> old_row is null))
                then 'wrong_shape'
            when canal_type = 'UPDATE' and size(old_rows) > size(data_rows) then 'wrong_shape'
            when message.has_pk_names and pk_names is null then 'wrong_shape'
            when message.has_mysql_type and mysql_types is null then 'wrong_shape'
            when message.has_sql_type and sql_types is null then 'wrong_shape'
            when message.has_table_changes and table_change_columns is null then 'wrong_shape'
            when event_kind = 'DDL' and sql_text is null then 'missing_field'
            when event_kind in ('ROW', 'DDL') and es_text is null then 'missing_field'
            when es_text is not null and es_timestamp is null then 'invalid_timestamp'
            when ts_text is not null and ts_timestamp is null then 'invalid_timestamp'
            when event_kind = 'ROW' and data_nested != '' then 'invalid_value'
            when canal_type = 'UPDATE' and old_nested != '' then 'invalid_value'
        end as message_error_code,
        case
            when value_error_code is not null or value is null then null
            when message is null then 'the element is not a JSON object'
            when not message.type.present then 'type is missing'
            when event_kind is null then concat('type ', canal_type, ' is not a Canal EventType')
            when nested_name is not null then concat(nested_name, ' is a JSON object/array, not a name')
            when event_kind = 'ROW' and coalesce(database_text, '') = '' then 'database is missing'
            when event_kind = 'ROW' and coalesce(table_text, '') = '' then 'table is missing'
            when event_kind = 'ROW' and not message.has_data then concat('data is missing for ', canal_type)
            when event_kind = 'ROW' and (data_rows is null or exists(data_rows, data_row -> data_row is null))
                then 'data is not an array of row objects'
            when event_kind = 'ROW' and size(data_rows) = 0 then concat('data holds no row for ', canal_type)
            when
                canal_type = 'UPDATE' and message.has_old
                and (old_rows is null or exists(old_rows, old_row -> old_row is null))
                then 'old is not an array of row objects'
            when canal_type = 'UPDATE' and size(old_rows) > size(data_rows)
                then concat('old holds ', size(old_rows), ' rows but data only ', size(data_rows))
            when message.has_pk_names and pk_names is null then 'pkNames is not an array of names'
            when message.has_mysql_type and mysql_types is null then 'mysqlType is not an object'
            when message.has_sql_type and sql_types is null then 'sqlType is not an object'
            when message.has_table_changes and table_change_columns is null
                then 'tableChanges.table.columns is not an array of column objects'
            when event_kind = 'DDL' and sql_text is null then concat('sql is missing for DDL type ', canal_type)
            when event_kind in ('ROW', 'DDL') and es_text is null then 'es (execution time) is missing'
            when es_text is not null and es_timestamp is null
                then concat('es ', es_text, ' is not epoch seconds/milliseconds')
            when ts_text is not null and ts_timestamp is null
                then concat('ts ', ts_text, ' is not epoch seconds/milliseconds')
            when event_kind = 'ROW' and data_nested != ''
                then concat('data values are JSON objects/arrays, not column values: ', data_nested)
            when canal_type = 'UPDATE' and old_nested != ''
                then concat('old values are JSON objects/arrays, not column values: ', old_nested)
        end as message_error_detail
    from timed
)
{%- endmacro %}

{% macro canal_staged_rows(dialect) -%}
    {#- The second step, over `message_checked`. CTEs: `row_images`, `exploded_rows` and `numbered`
        (one row per `data[i]` with its `old[i]`, row_index counting rows across the whole value, the
        value's first error in row order), `images`, `row_values`, `canonical` (before / after images
        and their declared types through cdc_canonical_image, the dialect's value decoder), `checked`
        and `one_row_per_failed_value` (the value's first error including the decoder's; one row,
        row_index 0, for a failed value), `decoded` and `keyed` (the staged columns and primary_key). -#}
row_images as (
    -- data[i] with its old[i] (UPDATE only; a shorter old list means no changed column recorded).
    select
        *,
        case
            when message_error_code is null and event_kind = 'ROW'
                then transform(
                    data_rows,
                    (data_row, i) -> named_struct(
                        'data', data_row,
                        'old', case when canal_type = 'UPDATE' then get(old_rows, i) end
                    )
                )
            else array(
                named_struct('data', cast(null as map<string, string>), 'old', cast(null as map<string, string>))
            )
        end as row_list
    from message_checked
),

exploded_rows as (
    {#- row_list is never empty, so _outer changes no result; it keeps Spark from inferring a
        size(row_list) > 0 filter, which with the later filter sends constraint propagation over
        these wide projections into exponential time (an optimizer hang / OOM) where the session
        does not turn constraint propagation off as cdc_unify.spark does. -#}
    select
        row_images.*,
        exploded.row_in_message,
        exploded.row_image
    from row_images
    lateral view posexplode_outer(row_list) exploded as row_in_message, row_image
),

numbered as (
    {#- row_index counts rows across the whole value; the value's first error (in row order) wins. -#}
    select
        *,
        row_number() over (
            partition by record_id order by message_index, row_in_message
        ) - 1 as row_index,
        coalesce(
            value_error_code,
            first_value(message_error_code, true) over (
                partition by record_id
                order by message_index, row_in_message
                rows between unbounded preceding and unbounded following
            )
        ) as pre_error_code,
        coalesce(
            value_error_detail,
            first_value(
                case
                    when message_error_code is not null and value_is_array
                        then concat('message ', message_index, ': ', message_error_detail)
                    else message_error_detail
                end,
                true
            ) over (
                partition by record_id
                order by message_index, row_in_message
                rows between unbounded preceding and unbounded following
            )
        ) as pre_error_detail
    from exploded_rows
),

images as (
    select
        *,
        row_image.data as data_values,
        row_image.old as old_values,
        {# mysqlType is preferred; a column only sqlType names keeps its java.sql.Types code #}
        {{ cdc_map_union(
            "transform_values(sql_types, (col, code) -> concat('jdbc:', code))",
            'map_filter(mysql_types, (col, declared) -> declared is not null)'
        ) }} as row_source_types,
        case
            when event_kind = 'DDL' and table_change_columns is not null
                then {{ canal_table_change_types('table_change_columns') }}
        end as ddl_source_types
    from numbered
),

row_values as (
    select
        *,
        case canal_type
            when 'UPDATE' then {{ cdc_map_union('data_values', 'old_values') }}
            when 'DELETE' then data_values
        end as before_values,
        case when canal_type in ('INSERT', 'UPDATE') then data_values end as after_values
    from images
),

canonical as (
    select
        *,
        {{ cdc_canonical_image(
            dialect,
            "case when pre_error_code is null and event_kind = 'ROW' then before_values end",
            'row_source_types'
        ) }} as before_image,
        {# a DDL's tableChanges types go through the same mapping (no values) #}
        {{ cdc_canonical_image(
            dialect,
            "case when pre_error_code is null and event_kind = 'ROW' then after_values
                when pre_error_code is null and ddl_source_types is not null then cast(map() as map<string, string>)
            end",
            'coalesce(ddl_source_types, row_source_types)'
        ) }} as after_image
    from row_values
),

checked as (
    select
        *,
        coalesce(
            pre_error_code,
            first_value(
                case when before_image.error is not null or after_image.error is not null then 'invalid_value' end,
                true
            ) over (
                partition by record_id
                order by row_index
                rows between unbounded preceding and unbounded following
            )
        ) as error_code,
        coalesce(
            pre_error_detail,
            first_value(
                case
                    when before_image.error is not null or after_image.error is not null
                        then concat_ws(
                            '; ',
                            case when value_is_array then concat('message ', message_index) end,
                            concat('row ', row_in_message),
                            concat('before: ', before_image.error),
                            concat('after: ', after_image.error)
                        )
                end,
                true
            ) over (
                partition by record_id
                order by row_index
                rows between unbounded preceding and unbounded following
            )
        ) as error_detail
    from canonical
),

one_row_per_failed_value as (
    select *
    from checked
    where error_code is null or row_index = 0
),

decoded as (
    select
        *,
        cast(null as string) as source_db_type,
        cast(null as string) as tenant_name,
        nullif(database_text, '') as database_name,
        cast(null as string) as schema_name,
        nullif(table_text, '') as table_name,
        case
            when event_kind = 'ROW'
                then coalesce(array_distinct(filter(pk_names, name -> coalesce(name, '') != '')), array())
            when event_kind = 'DDL' and table_change_keys is not null
                then array_distinct(filter(table_change_keys, name -> coalesce(name, '') != ''))
            else cast(array() as array<string>)
        end as primary_key_columns,
        case when event_kind = 'ROW' then before_image.values end as before,
        case when event_kind = 'ROW' then after_image.values end as after,
        case when event_kind = 'ROW' and before_image.values is not null then false end as before_is_partial,
        case when event_kind = 'ROW' and after_image.values is not null then false end as after_is_partial,
        case
            when event_kind = 'ROW' then row_source_types
            when event_kind = 'DDL' then ddl_source_types
        end as column_source_types,
        case
            when event_kind = 'ROW' then {{ cdc_map_union('before_image.types', 'after_image.types') }}
            when event_kind = 'DDL' and ddl_source_types is not null then after_image.types
        end as column_types,
        es_timestamp as event_ts,
        es_unit as event_ts_precision,
        ts_timestamp as emitted_ts,
        cast(null as string) as source_position,
        nullif(gtid_text, '') as transaction_id,
        cast(null as decimal(30, 0)) as position_number,
        case when event_kind = 'DDL' then sql_text end as ddl_statement,
        sha2(value, 256) as natural_id
    from one_row_per_failed_value
),

keyed as (
    select
        *,
        {# a DDL's key is the table's key after it (CloudCanal tableChanges), as other dialects' DDL #}
        case
            when size(primary_key_columns) = 0 then 'none'
            when event_kind = 'DDL' then 'ddl'
            else 'message'
        end as primary_key_source,
        case
            when event_kind = 'ROW' then {{ cdc_primary_key('primary_key_columns', 'before', 'after') }}
        end as primary_key
    from decoded
)
{%- endmacro %}
