{#-
    OceanBase OMS "Dataworks" JSON, version 2.0 (spec 003) -> the staged contract.  One message =
    one event.  docs/dialects/oms_dataworks_json.md.
    The steps DataWorks JSON (stg_dataworks_json__changes) shares are macros/dataworks.sql; this
    model holds what Dataworks 2.0 does its own way: field names, op names, whole updates, and
    event time + scn as the position.
-#}
{%- set dialect = 'oms_dataworks_json' -%}
{#- The message as spec 003 shapes it (numbers are strings of their exact digits: cdc_exact_json). -#}
{%- set message_schema -%}
struct<
    version: string,
    schema: struct<
        source: struct<dbType: string, dbVersion: string, dbName: string, schema: string, table: string>,
        column: array<struct<name: string, type: string>>,
        pk: array<string>
    >,
    payload: struct<
        before: struct<data: map<string, string>>,
        after: struct<data: map<string, string>>,
        op: string,
        timestamp: struct<eventTime: string, systemTime: string, checkpointTime: string>,
        ddl: struct<text: string>,
        scn: string
    >
>
{%- endset -%}
{%- set names = {
    'columns': 'column', 'image': 'data', 'schema': 'schema', 'table': 'table', 'key': 'pk', 'sequence': none,
    'ops': 'Dataworks 2.0'
} -%}

with

{{ cdc_json_documents(source('landing', 'oms_dataworks_json')) }},

-- The op names of spec 003's Dataworks 2.0 format (case-sensitive), what each is in the staged
-- contract and which images it needs: UPDATE and HEARTBEAT are Dataworks 2.0's own, the rest the family's.
op_names as (
    {{ dataworks_op_names(
        [('UPDATE', 'ROW', 'UPDATE', false, true), ('HEARTBEAT', 'HEARTBEAT', 'HEARTBEAT', false, false)]
    ) }}
),

{#- parsed (msg), fields (the family's names for msg's fields, the op table's columns), checked
    (message_error) and images (before_image, after_image). -#}
{{ dataworks_checked_images(dialect, names, message_schema) }},

decoded as (
    select
        *,
        staged_op as op,
        {#- The event's millisecond, then the scn within it: OMS sends scn "null" on some messages,
            and a message without a position must not sort before every message with one. An scn
            of more than 16 digits orders only by time. -#}
        cast(event_ms as decimal(38, 0)) * 10000000000000000
        + coalesce(case when scn rlike '^[0-9]{1,16}$' then cast(scn as decimal(38, 0)) end, 9999999999999999)
            as position_number,
        scn as source_position,
        {{ dataworks_natural_id('scn') }} as natural_id,
        {{ dataworks_staged_columns() }}
    from images
),

{{ cdc_staged_select(dialect, 'decoded') }}
