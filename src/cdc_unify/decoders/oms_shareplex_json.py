"""OceanBase OMS SharePlex JSON (spec 003, "SharePlex JSON 消息格式"): images to canonical text.

SharePlex messages (`data`, `key`, `meta`) declare no column types either: values are kept as
sent and typed `string`, exactly as for OMS Default JSON (docs/staged-contract.md, "Columns whose
type the message does not carry").  The staging model handles everything else: op codes, the
`meta.rowid` row identity, wall-clock `meta.time`, partial update images.
"""

from __future__ import annotations

from cdc_unify.decoders.oms_default_json import canonicalize_image

__all__ = ["canonicalize_image"]
