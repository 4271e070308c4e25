"""ckafka_json keys learned from Canal-shaped CREATE TABLE statements (docs/dialects/ckafka_json.md,
"Primary keys"): a row stamped before its table's first CREATE (a snapshot read with the placeholder
TIME 19700101080000, epoch 0 at UTC+8) takes that CREATE's key, so its later UPDATE and DELETE
reach the same identity and the deleted row leaves cdc_current_rows; a later CREATE with another key
governs the rows from its second on.  Built through the marts into a schema of its own."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from harness import land_messages, run_dbt, table_rows

pytestmark = pytest.mark.spark

DIALECT = "ckafka_json"
FEED = "ckafka_keys"
SCHEMA = "cdc_ckafka_keys"
LANDED_AT = dt.datetime(2024, 7, 1, 1, tzinfo=dt.UTC)
MODELS = ("stg_ckafka_json__changes", "int_staged_events", "int_change_events", "int_row_changes", "int_row_versions",
          "int_current_rows", "cdc_row_history", "cdc_current_rows")  # fmt: skip


def row(type_code: str, time: str, pos: int, new: dict | None, old: dict | None) -> bytes:
    return json.dumps({"BINLOG_NAME": "mysql-bin.000001", "BINLOG_POS": pos, "DATABASE": "shop", "TABLE": "items",
                       "TIME": time, "TYPE": type_code, "NEW_VALUES": new, "OLD_VALUES": old}).encode()  # fmt: skip


def create(es: int, key_clause: str) -> bytes:
    sql = f"CREATE TABLE `items` (`id` int NOT NULL, `name` varchar(8), {key_clause})"
    return json.dumps({"data": None, "database": "shop", "es": es, "id": 0, "isDdl": True, "sql": sql,
                       "table": "items", "ts": es, "type": "CREATE"}).encode()  # fmt: skip


# TIME is the Asia/Shanghai wall clock; the first CREATE is at 2022-06-21 19:52:06 there, the
# re-creation keyed on name at 19:55:00.
MESSAGES = [
    row("I", "19700101080000", 4, {"id": "1", "name": "a"}, None),  # snapshot reads
    row("I", "19700101080000", 4, {"id": "2", "name": "b"}, None),
    create(1655812326, "PRIMARY KEY (`id`)"),
    row("U", "20220621195206", 500, {"id": "1", "name": "c"}, {"id": "1", "name": "a"}),
    row("D", "20220621195300", 600, None, {"id": "1", "name": "c"}),
    create(1655812500, "PRIMARY KEY (`name`)"),
    row("I", "20220621195500", 700, {"id": "3", "name": "d"}, None),
]


@pytest.fixture(scope="module")
def built() -> dict[str, list[dict[str, Any]]]:
    land_messages(DIALECT, MESSAGES, FEED, LANDED_AT, replace=True)
    run_dbt("run", "--full-refresh", "--select", *MODELS, dbt_vars={"cdc_dialects": [DIALECT]}, schema=SCHEMA)
    staged = sorted(table_rows(f"{SCHEMA}_staging.stg_{DIALECT}__changes"), key=lambda r: r["landing_offset"])
    current = [r for r in table_rows(f"{SCHEMA}.cdc_current_rows") if r["feed"] == FEED]
    return {"staged": [r for r in staged if r["source_name"] == FEED], "current": current}


def test_rows_before_the_first_create_take_its_key_and_a_later_create_governs_from_its_second(built):
    keys = [(r["op"], r["primary_key_columns"], r["primary_key_source"], r["primary_key"]) for r in built["staged"]]
    assert keys == [
        ("INSERT", ["id"], "ddl", '["1"]'),
        ("INSERT", ["id"], "ddl", '["2"]'),
        ("CREATE", ["id"], "ddl", None),
        ("UPDATE", ["id"], "ddl", '["1"]'),  # in the CREATE's own second: the CREATE counts as earlier
        ("DELETE", ["id"], "ddl", '["1"]'),
        ("CREATE", ["name"], "ddl", None),
        ("INSERT", ["name"], "ddl", '["d"]'),
    ]


def test_a_snapshot_row_deleted_after_the_create_is_not_current(built):
    live = sorted((r["primary_key"], r["row_values"]["id"], r["row_identity"]) for r in built["current"])
    assert live == [('["2"]', "2", "primary_key"), ('["d"]', "3", "primary_key")]
