"""OceanBase OMS, Canal serialisation (spec 003, "Canal JSON 消息格式").

The Canal FlatMessage shape with OMS's own habits:
- one Kafka value = one FlatMessage object with one row ("目前只会存在一条消息"), no `id`,
  fields in the order of the spec's samples; `pkNames` lists the key once;
- `es` and `ts` are epoch milliseconds; UPDATE `old` holds only the changed columns;
- values follow the spec's "database to text protocol" table: integers, decimals and
  floating-point numbers are JSON numbers (exact digits, beyond int64 too; decimals in
  BigDecimal.toString form, scientific notation included; FLOAT with 7 and DOUBLE with 16
  significant digits), booleans 1/0, bytes base64, TIME with the fraction's non-zero digits,
  DATETIME `YYYY-MM-DD HH:mm:ss[.n]` sometimes followed by the zone id, TIMESTAMP epoch seconds
  with a fraction (`1606233662.012345`), zoned values `YYYY-MM-DD HH:mm:ss[.n] zoneId`,
  intervals as Oracle literals (`INTERVAL '3' DAY`, `INTERVAL '1-2' YEAR TO MONTH`);
- DDL is a Canal-shaped message with `isDdl` true and the statement in `sql` (the spec shows
  no DDL sample for this format; this is the Canal convention it follows);
- no heartbeat and no transaction messages (the format defines none).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

from cdc_unify.canonical import (
    IntervalYM,
    base_type,
    fmt_binary,
    fmt_date,
    fmt_datetime,
    fmt_time,
    to_canonical,
)
from cdc_unify.generator.encoders.base import EncodedMessage
from cdc_unify.generator.encoders.canal_json import EPOCH, CanalJsonEncoder
from cdc_unify.generator.jsontext import RawJson, dump_json
from cdc_unify.generator.model import Column, Workload

# Field order of the spec's OMS Canal samples.
OMS_FIELD_ORDER = (
    "database",
    "sqlType",
    "data",
    "pkNames",
    "old",
    "mysqlType",
    "type",
    "table",
    "es",
    "isDdl",
    "ts",
    "sql",
)
DATETIME_ZONE_SHARE = 0.3  # DATETIME values followed by OMS's zone annotation
DATETIME_ZONE = "Asia/Shanghai"


def epoch_seconds_text(value: dt.datetime) -> str:
    """`1606233662.012345`: epoch seconds, the fraction's non-zero digits only."""
    total_us = (value - EPOCH) // dt.timedelta(microseconds=1)
    seconds, micros = divmod(total_us, 1_000_000)
    return f"{seconds}.{micros:06d}".rstrip("0").rstrip(".") if micros else str(seconds)


def oracle_interval_ym(value: IntervalYM) -> str:
    sign = "-" if value.months < 0 else ""
    years, months = divmod(abs(value.months), 12)
    if not months:
        return f"INTERVAL '{sign}{years}' YEAR"
    if not years:
        return f"INTERVAL '{sign}{months}' MONTH"
    return f"INTERVAL '{sign}{years}-{months}' YEAR TO MONTH"


def oracle_interval_ds(value: dt.timedelta) -> str:
    sign = "-" if value < dt.timedelta(0) else ""
    total_us = abs(value) // dt.timedelta(microseconds=1)
    seconds, micros = divmod(total_us, 1_000_000)
    days, rest = divmod(seconds, 86400)
    if not rest and not micros:
        return f"INTERVAL '{sign}{days}' DAY"
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    frac = f".{micros:06d}" if micros else ""
    return f"INTERVAL '{sign}{days} {hours:02d}:{minutes:02d}:{secs:02d}{frac}' DAY TO SECOND"


def oms_value(column: Column, value: Any, rng: random.Random) -> Any:
    """A true value as OMS writes it: RawJson for JSON numbers, str for JSON strings, None for NULL."""
    if value is None:
        return None
    kind = base_type(column.logical_type)
    if kind == "boolean":
        return RawJson("1" if value else "0")
    if kind in ("tinyint", "smallint", "int", "bigint", "ubigint"):
        return RawJson(str(value))
    if kind == "decimal":
        return RawJson(str(value))  # BigDecimal.toString: scientific notation for small exponents
    if kind == "float":
        return RawJson(format(value, ".7g"))
    if kind == "double":
        return RawJson(format(value, ".16g"))
    if kind == "binary":
        return fmt_binary(value)
    if kind == "date":
        return fmt_date(value)
    if kind == "time":
        return fmt_time(value)
    if kind == "datetime":
        zone = f" {DATETIME_ZONE}" if rng.random() < DATETIME_ZONE_SHARE else ""
        return fmt_datetime(value) + zone
    if kind == "timestamp":
        return epoch_seconds_text(value)
    if kind == "zoned_datetime":
        return f"{fmt_datetime(value.replace(tzinfo=None))} {value.tzinfo.key}"
    if kind == "interval_ym":
        return oracle_interval_ym(value)
    if kind == "interval_ds":
        return oracle_interval_ds(value)
    return str(value)  # string, json


def oms_expected_text(column: Column, value: Any) -> str | None:
    """Exact, except zoned values: wall clock + zone id cannot say which of two repeated DST
    hours was meant, and reads back as the first (fold 0)."""
    if value is not None and base_type(column.logical_type) == "zoned_datetime":
        return to_canonical("zoned_datetime", value.replace(fold=0))
    return to_canonical(column.logical_type, value)


class OmsCanalJsonEncoder(CanalJsonEncoder):
    dialect = "oms_canal_json"
    extra_malformed_kinds = ("wrong_shape",)
    gtid_share = 0.0
    table_changes_share = 0.0
    whole_tx_array_share = 0.0
    array_share = 0.0
    duplicated_pk_names_share = 0.0
    max_rows_per_message = 1
    dump_value = staticmethod(dump_json)  # its numbers are RawJson

    def encode(self, workload: Workload, rng: random.Random) -> Iterator[EncodedMessage]:
        self._rng = rng  # value_text draws the DATETIME zone annotation from the same stream
        return super().encode(workload, rng)

    def value_text(self, column: Column, value: Any) -> Any:
        return oms_value(column, value, self._rng)

    def expected_text(self, column: Column, value: Any) -> str | None:
        return oms_expected_text(column, value)

    def heartbeat(self, at: dt.datetime, rng: random.Random) -> Iterator[EncodedMessage]:
        return iter(())

    def shape(self, message: dict[str, Any]) -> dict[str, Any]:
        return {name: message[name] for name in OMS_FIELD_ORDER}


ENCODER = OmsCanalJsonEncoder()
