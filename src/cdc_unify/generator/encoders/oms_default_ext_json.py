"""OceanBase OMS DefaultExtendColumnType JSON (spec 003): Default JSON plus `__light_type` in each image.

Every image (`prevStruct` / `postStruct`) ends with `"__light_type": {column: {"schemaType": T}}`
exactly as the spec's samples show it.  The `schemaType` names are the samples' (TINYINT,
SMALLINT, INT, INT64, BIGINT, FLOAT, DOUBLE, VARCHAR, BLOB, DECIMAL, DATE, TIME, DATETIME,
TIMESTAMP) plus those OMS's DataWorks 2.0 sample uses for the other types (BOOLEAN,
ZONED_DATETIME, INTERVAL_YEAR_TO_MONTH, INTERVAL_DAY_TO_SECOND) and JSON.  `BIGINT` is the
beyond-int64 integer of the sample (next to `INT64`), so signed 64-bit columns are `INT64` and
unsigned ones `BIGINT`.  Values are written as in Default JSON; since the message types them, the
expected canonical text is `canonical.to_canonical` of the true value.
"""

from __future__ import annotations

import random
from typing import Any

from cdc_unify.canonical import to_canonical
from cdc_unify.generator.encoders.base import PerSchema
from cdc_unify.generator.encoders.oms_default_json import OmsDefaultEncoder, dumps
from cdc_unify.generator.model import TableSchema

LIGHT_TYPE_KEY = "__light_type"

# logical type -> schemaType
SCHEMA_TYPES: dict[str, str] = {
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INT",
    "bigint": "INT64",
    "ubigint": "BIGINT",
    "decimal": "DECIMAL",
    "float": "FLOAT",
    "double": "DOUBLE",
    "boolean": "BOOLEAN",
    "string": "VARCHAR",
    "json": "JSON",
    "binary": "BLOB",
    "date": "DATE",
    "time": "TIME",
    "datetime": "DATETIME",
    "timestamp": "TIMESTAMP",
    "zoned_datetime": "ZONED_DATETIME",
    "interval_ym": "INTERVAL_YEAR_TO_MONTH",
    "interval_ds": "INTERVAL_DAY_TO_SECOND",
}
# Text no reader of these types accepts (wrong_value_type malformation).
_UNREADABLE = "not-a-value"


def schema_type(logical_type: str) -> str:
    return SCHEMA_TYPES[logical_type.split("(")[0]]


# Per table schema, shared by its messages (which nothing modifies).
light_types = PerSchema(lambda schema: {c.name: {"schemaType": schema_type(c.logical_type)} for c in schema.columns})


class OmsDefaultExtEncoder(OmsDefaultEncoder):
    dialect = "oms_default_ext_json"

    def image(self, schema: TableSchema, row: dict[str, Any]) -> dict[str, Any]:
        image = super().image(schema, row)
        image[LIGHT_TYPE_KEY] = light_types(schema)
        return image

    def expected_image(self, schema: TableSchema, row: dict[str, Any], sent: dict[str, Any]) -> dict[str, str | None]:
        return {c.name: to_canonical(c.logical_type, row.get(c.name)) for c in schema.columns}

    def _spoil_value(self, doc: dict[str, Any], rng: random.Random) -> None:
        """Text in a typed, non-text column (else, as in Default, an object as a value)."""
        image = doc[rng.choice(self._required_images(doc))]
        typed = [
            column
            for column, declared in image[LIGHT_TYPE_KEY].items()
            if declared["schemaType"] not in ("VARCHAR", "JSON") and column in image
        ]
        if not typed:
            super()._spoil_value(doc, rng)
            return
        image[rng.choice(typed)] = _UNREADABLE

    def _wrong_shape(self, doc: dict[str, Any], rng: random.Random) -> bytes:
        """Sometimes `__light_type` as {column: type} instead of {column: {"schemaType": type}}."""
        if rng.random() >= 0.3:
            return super()._wrong_shape(doc, rng)
        image = doc[rng.choice(self._required_images(doc))]
        image[LIGHT_TYPE_KEY] = {column: declared["schemaType"] for column, declared in image[LIGHT_TYPE_KEY].items()}
        return dumps(doc).encode("utf-8")


ENCODER = OmsDefaultExtEncoder()
