{#- Tencent CKafka connector "official format one" (spec 002) -> the staged contract
    (docs/dialects/ckafka_json.md).  DML is format one (TYPE I/U/D, NEW_VALUES/OLD_VALUES, binlog
    position, TIME as a wall clock in var source_time_zone); DDL arrives in Canal shape on the same topic.
    Each value is read, checked and decoded once, on its own, in the JVM (cdc_ckafka_rows,
    src/cdc_unify/java/cdcunify/CkafkaRows.java); CKafka sends no column types, so every value is
    kept as sent. Format one names no key: var ckafka_primary_keys ('db.table' -> [columns]) wins,
    else the CREATE TABLE of the table on the feed that governs the event's second, else none.
    Reads the new landing rows and, on an incremental run, the CREATE TABLE rows this model staged
    before (a few per table): the keys come from a small table of the DDL joined to the rows by
    broadcast, no window and no shuffle of the rows. -#}
{%- set primary_keys_json = tojson(var('ckafka_primary_keys')) -%}

with
{{ cdc_landing_import(source('landing', 'ckafka_json')) }},

messages as (
    select
        *,
        cdc_ckafka_rows(value, {{ cdc_string_literal(var('source_time_zone')) }}) as ckafka_rows
    from landing
),

staged_rows as (
    {{ cdc_message_rows('messages', 'ckafka_rows') }}
),

decoded as (
    select
        *,
        'mysql' as source_db_type,
        cast(null as string) as tenant_name,
        cast(null as string) as schema_name,
        cast(null as map<string, string>) as column_source_types,
        timestamp_micros(event_ts_micros) as event_ts,
        timestamp_micros(emitted_ts_micros) as emitted_ts,
        {#- The event's second, then its binlog position (file index * 2^32 + offset) within that
            second: DDL arrives in Canal shape without a binlog position, and a TRUNCATE must still
            sort between the DML before and after it. Within one second a DDL sorts after the DML. -#}
        cast(unix_seconds(timestamp_micros(event_ts_micros)) as decimal(38, 0)) * 10000000000000000
        + coalesce(binlog_number, 9999999999999999) as position_number,
        case when op = 'CREATE' then {{ canal_create_table_primary_key('ddl_statement') }} end as created_key,
        sha2(value, 256) as natural_id
    from staged_rows
),

new_creates as (
    {#- This run's CREATE TABLE statements, a few per table. The text test is exact, not a guess: a
        CREATE's `type` is the bytes CREATE or a JSON escape. The optimizer moves it below the JSON
        parse, so this branch parses only the few messages that pass it, not every message twice. -#}
    select
        feed,
        database_name,
        table_name,
        unix_seconds(event_ts) as create_second,
        `partition` as landing_partition,
        `offset` as landing_offset,
        ddl_statement,
        created_key
    from decoded
    where
        (contains(cast(value as string), 'CREATE') or contains(cast(value as string), '\\u'))
        and error_code is null
        and created_key is not null
),

{% if is_incremental() %}
    staged_creates as (
        {#- On an incremental run, the CREATE TABLE statements staged earlier. -#}
        select
            source_name as feed,
            database_name,
            table_name,
            unix_seconds(event_ts) as create_second,
            landing_partition,
            landing_offset,
            ddl_statement,
            {{ canal_create_table_primary_key('ddl_statement') }} as created_key
        from {{ this }}
        where op = 'CREATE' and error_code is null
    ),
{% endif %}

table_creates as (
    {#- Each table's CREATEs in time order: its second (format one's TIME has no more), then its place
        in the topic. -#}
    select
        feed,
        database_name,
        table_name,
        array_sort(
            collect_list(struct(create_second, landing_partition, landing_offset, ddl_statement, created_key))
        ) as creates
    from (
        select * from new_creates
        {%- if is_incremental() %}
            union all
            select * from staged_creates
            where created_key is not null
        {%- endif %}
    ) as creates
    group by feed, database_name, table_name
),

key_sources as (
    {#- A broadcast join: the wide rows stay where they are, no shuffle or sort of them. -#}
    select /*+ broadcast(table_creates) */
        decoded.*,
        element_at(
            from_json(
                '{{ primary_keys_json | replace("\\", "\\\\") | replace("'", "\\'") }}',
                'map<string, array<string>>'
            ),
            concat(decoded.database_name, '.', decoded.table_name)
        ) as configured_key,
        {#- A CREATE keys itself; any other event takes the latest CREATE of its table at or before its
            second (a CREATE in the same second counts as earlier), else the table's first CREATE: a
            row stamped before it (a snapshot read's placeholder TIME) is still a row of that table. -#}
        coalesce(
            decoded.created_key,
            aggregate(
                table_creates.creates,
                table_creates.creates[0],
                (governing, c) -> case when c.create_second <= unix_seconds(decoded.event_ts) then c else governing end
            ).created_key
        ) as ddl_key
    from decoded
    left join table_creates
        on
            decoded.feed = table_creates.feed
            and decoded.database_name = table_creates.database_name
            and decoded.table_name = table_creates.table_name
),

keyed as (
    select
        *,
        coalesce(configured_key, ddl_key, cast(array() as array<string>)) as primary_key_columns,
        case
            when size(coalesce(configured_key, ddl_key)) > 0 and configured_key is not null then 'config'
            when size(coalesce(configured_key, ddl_key)) > 0 then 'ddl'
            else 'none'
        end as primary_key_source,
        case
            when event_kind = 'ROW'
                then {{ cdc_primary_key('coalesce(configured_key, ddl_key)', 'before', 'after') }}
        end as primary_key
    from key_sources
),

{{ cdc_staged_select('ckafka_json', 'keyed') }}
