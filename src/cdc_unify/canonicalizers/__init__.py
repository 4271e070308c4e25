"""Value canonicalizers: the per-value half of the SQL staging models, one module per dialect
whose values need reading as their declared type, pure Python, testable without Spark. The
staging model's message function parses and checks the message; only the image's values come here. (Whole messages decoded
in Python, for the Python staging models, are in `cdc_unify.message_decoders`.)

Each module `cdc_unify.canonicalizers.<dialect>` exposes

    canonicalize_image(values, source_types, source_tz) -> (canonical_values, logical_types)

where `values` maps column -> raw text as sent (JSON strings unquoted, JSON numbers as
their exact digits, nested JSON as text), `source_types` maps column -> the type the
message declares for it (may lack columns, may name columns absent from `values`), and
`source_tz` is the configured IANA zone for wall-clock values.  It raises
`cdc_unify.canonical.CanonicalError` for a value that cannot be read as its type.
These modules are the definition of the values the SQL staging models stage. The models' message
functions run their JVM twin (src/cdc_unify/java/cdcunify/CanonicalImage.java, also the SQL
function `cdc_jvm_canonical_image`), which tests/python/test_jvm_canonical.py checks against them:
same values, types, key order and refusal texts.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

ImageCanonicalizer = Callable[[dict[str, Any], dict[str, str], str], tuple[dict[str, Any], dict[str, str]]]


@functools.cache  # asked once per image by the oracle tests
def canonicalizer_for(dialect: str) -> ImageCanonicalizer:
    module = importlib.import_module(f"cdc_unify.canonicalizers.{dialect}")
    return module.canonicalize_image
