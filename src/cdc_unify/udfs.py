"""Spark SQL functions the project's SQL models call, registered on every session.

`cdc_canonical_image(dialect, values, source_types, source_tz)` returns
`struct<values map<string,string>, types map<string,string>, error string>`: the image
in canonical text, the logical type of each column, and (instead of crashing the
build) the reason the image could not be read, which the staging model turns into a
quarantine row with error code `invalid_value`.  It runs the dialect's pure-Python
decoder over Arrow batches (a pandas UDF), never row by row through the driver.
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_unify.canonical import CanonicalError
from cdc_unify.canonicalizers import canonicalizer_for

CANONICAL_IMAGE_TYPE = T.StructType(
    [
        T.StructField("values", T.MapType(T.StringType(), T.StringType())),
        T.StructField("types", T.MapType(T.StringType(), T.StringType())),
        T.StructField("error", T.StringType()),
    ]
)


def canonical_image_row(dialect: str, values, source_types, source_tz: str) -> tuple:
    """One image -> (canonical values, logical types, error); None image -> all None."""
    if values is None:
        return None, None, None
    try:
        canon, types = canonicalizer_for(dialect)(dict(values), dict(source_types or {}), source_tz)
    except CanonicalError as exc:
        return None, None, str(exc)
    return canon, types, None


@F.pandas_udf(CANONICAL_IMAGE_TYPE)
def cdc_canonical_image(
    dialect: pd.Series, values: pd.Series, source_types: pd.Series, source_tz: pd.Series
) -> pd.DataFrame:
    rows = [
        canonical_image_row(d, v, t, z) for d, v, t, z in zip(dialect, values, source_types, source_tz, strict=True)
    ]
    return pd.DataFrame(rows, columns=["values", "types", "error"])


def register(spark: SparkSession) -> None:
    """Make the project's functions callable from SQL in this session."""
    spark.udf.register("cdc_canonical_image", cdc_canonical_image)
