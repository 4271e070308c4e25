"""Spark SQL functions the project's SQL models call, registered on every session.

`cdc_canonical_image(dialect, values, source_types, source_tz)` returns
`struct<values map<string,string>, types map<string,string>, error string>`: the image
in canonical text, the logical type of each column, and (instead of crashing the
build) the reason the image could not be read, which the staging model turns into a
quarantine row with error code `invalid_value`.  It runs the dialect's pure-Python
canonicalizer over Arrow batches (an Arrow UDF: `pyarrow` arrays in and out, no pandas
conversion), never row by row through the driver.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_unify.canonical import CanonicalError
from cdc_unify.canonicalizers import ImageCanonicalizer, canonicalizer_for

CANONICAL_IMAGE_TYPE = T.StructType(
    [
        T.StructField("values", T.MapType(T.StringType(), T.StringType())),
        T.StructField("types", T.MapType(T.StringType(), T.StringType())),
        T.StructField("error", T.StringType()),
    ]
)
TEXT_MAP = pa.map_(pa.string(), pa.string())
CANONICAL_IMAGE_ARROW = pa.struct([("values", TEXT_MAP), ("types", TEXT_MAP), ("error", pa.string())])


def map_rows(maps: pa.Array) -> list[dict[str, Any] | None]:
    """Each map of an Arrow map array as a dict, None for a null map. Reads the flat key and item
    arrays once: `to_pylist(maps_as_pydicts=...)` builds each map on its own, about 6x slower
    (100,000 ten-column images: 2.2 s against 0.37 s, 2026-11-29). `offsets` index the unsliced
    children, so slices work."""
    offsets = maps.offsets.to_pylist()
    keys, items = maps.keys.to_pylist(), maps.items.to_pylist()
    valid = maps.is_valid().to_pylist()
    return [
        dict(zip(keys[start:end], items[start:end], strict=True)) if present else None
        for present, start, end in zip(valid, offsets, offsets[1:], strict=False)
    ]


def the_constant(column: pa.Array, name: str) -> str:
    """The one value of an argument every call site passes as a literal (the dialect, the zone)."""
    distinct = pc.unique(column).to_pylist()
    if len(distinct) != 1 or distinct[0] is None:
        raise ValueError(f"cdc_canonical_image: {name} must be one literal per call, got {distinct[:3]}")
    return distinct[0]


def canonical_image_row(
    canonicalize: ImageCanonicalizer, values: dict[str, Any] | None, source_types: dict[str, str] | None, tz: str
) -> tuple[dict[str, Any] | None, dict[str, str] | None, str | None]:
    """One image -> (canonical values, logical types, error); a null image -> all None."""
    if values is None:
        return None, None, None
    try:
        canon, types = canonicalize(values, source_types or {}, tz)
    except CanonicalError as exc:
        return None, None, str(exc)
    return canon, types, None


def canonical_images(dialect: pa.Array, values: pa.Array, source_types: pa.Array, source_tz: pa.Array) -> pa.Array:
    """The Arrow UDF's body, testable without Spark: a batch of images -> CANONICAL_IMAGE_ARROW."""
    if len(values) == 0:
        return pa.array([], CANONICAL_IMAGE_ARROW)
    canonicalize = canonicalizer_for(the_constant(dialect, "dialect"))
    tz = the_constant(source_tz, "source_tz")
    images = zip(map_rows(values), map_rows(source_types), strict=True)
    rows = [canonical_image_row(canonicalize, v, t, tz) for v, t in images]
    canonical, types, errors = zip(*rows, strict=True)
    return pa.StructArray.from_arrays(
        [pa.array(canonical, TEXT_MAP), pa.array(types, TEXT_MAP), pa.array(errors, pa.string())],
        fields=list(CANONICAL_IMAGE_ARROW),
    )


@F.arrow_udf(CANONICAL_IMAGE_TYPE)
def cdc_canonical_image(dialect: pa.Array, values: pa.Array, source_types: pa.Array, source_tz: pa.Array) -> pa.Array:
    return canonical_images(dialect, values, source_types, source_tz)


def register(spark: SparkSession) -> None:
    """Make the project's functions callable from SQL in this session."""
    spark.udf.register("cdc_canonical_image", cdc_canonical_image)
