"""CloudCanal JSON (spec 000): column types and values to canonical text.

The SQL staging model (models/staging/cloudcanal_json/) explodes the message; this module
canonicalises one row image (the model runs this module's JVM twin: canonicalizers/__init__.py).

CloudCanal declares each column's type twice: `dbValType` (the source database's type text,
e.g. `varchar(22)`, `bigint(20) unsigned`) and `jdbcType` (a java.sql.Types code, table in the
spec appendix).  The staging model passes `dbValType`, and for a column that only has a
`jdbcType` the text `jdbc:<code>`, as the column's source type.  Values arrive as JSON strings
(or JSON numbers) in the MySQL text forms Canal-style tools use; `TIMESTAMP` values are wall
clock in the source time zone, bytes are base64.  The type mapping is the MySQL family's
(canonicalizers/_mysql_types.py) and the text forms are the shared ones (canonicalizers/_value_text.py).
"""

from __future__ import annotations

from typing import Any

from cdc_unify.canonicalizers._mysql_types import source_logical_type
from cdc_unify.canonicalizers._value_text import TEXT_READERS, canonicalize_with


def canonicalize_image(
    values: dict[str, Any], source_types: dict[str, str], source_tz: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """One row image (column -> text as sent) -> (canonical texts, logical types).

    Every column of `values` and of `source_types` gets a logical type; a column without a
    declared type is `string` and keeps its text.  A value its type cannot read raises
    CanonicalError naming the column.
    """
    return canonicalize_with(values, source_types, source_tz, source_logical_type, TEXT_READERS)
