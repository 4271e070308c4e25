{#-
    DataWorks "sync whole database to Kafka" JSON, versions 0.0.1 / 1.0.0 (spec 001) -> the
    staged contract.  One message = one event.  docs/dialects/dataworks_json.md.
    The steps OMS Dataworks 2.0 (stg_oms_dataworks_json__changes) shares are macros/dataworks.sql;
    this model holds what spec 001 does its own way: field names, op names, split updates, and
    sequenceId / scn as the position.
-#}
{%- set dialect = 'dataworks_json' -%}
{#- The message as spec 001 shapes it (numbers are strings of their exact digits: cdc_exact_json). -#}
{%- set message_schema -%}
struct<
    schema: struct<
        dataColumn: array<struct<name: string, type: string>>,
        primaryKey: array<string>,
        source: struct<dbType: string, dbVersion: string, dbName: string, schemaName: string,
            tableName: string>
    >,
    payload: struct<
        before: struct<dataColumn: map<string, string>>,
        after: struct<dataColumn: map<string, string>>,
        sequenceId: string,
        scn: string,
        op: string,
        timestamp: struct<eventTime: string, systemTime: string, checkpointTime: string>,
        ddl: struct<text: string, ddlMeta: string>
    >,
    version: string
>
{%- endset -%}
{%- set names = {
    'columns': 'dataColumn', 'image': 'dataColumn', 'schema': 'schemaName', 'table': 'tableName',
    'key': 'primaryKey', 'sequence': 'sequenceId', 'ops': 'DataWorks'
} -%}

with

{{ cdc_json_documents(source('landing', 'dataworks_json')) }},

-- The op names of spec 001 (case-sensitive), what each is in the staged contract and which images
-- it needs: the update halves and the heartbeat are spec 001's own, the rest the family's.
op_names as (
    {{ dataworks_op_names([
        ('UPDATE_BEFOR', 'ROW', 'UPDATE_BEFORE', true, false), ('UPDATE_AFTER', 'ROW', 'UPDATE_AFTER', false, true),
        ('MHEARTBEAT', 'HEARTBEAT', 'HEARTBEAT', false, false)
    ]) }}
),

{#- parsed (msg), fields (the family's names for msg's fields, the op table's columns), checked
    (message_error) and images (before_image, after_image). -#}
{{ dataworks_checked_images(dialect, names, message_schema) }},

decoded as (
    select
        *,
        -- UPDATE_AFTER carrying both images is a whole update ("update 变更对应一条 Kafka 记录").
        case
            when raw_op = 'UPDATE_AFTER' and before_values is not null then 'UPDATE'
            else staged_op
        end as op,
        case
            when sequence_id rlike '^[0-9]{1,38}$' then cast(sequence_id as decimal(38, 0))
            when scn rlike '^[0-9]{1,38}$' then cast(scn as decimal(38, 0))
        end as position_number,
        coalesce(sequence_id, scn) as source_position,
        {{ dataworks_natural_id('sequence_id') }} as natural_id,
        {{ dataworks_staged_columns() }}
    from images
),

{{ cdc_staged_select(dialect, 'decoded') }}
