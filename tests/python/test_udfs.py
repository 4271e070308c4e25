"""cdc_canonical_image's Arrow body (cdc_unify.udfs) without Spark: the batch result equals the
dialect's canonicalizer applied image by image, nulls and errors included, on sliced batches too.
The SQL models reach it through Spark in every end-to-end test."""

from __future__ import annotations

import pyarrow as pa
import pytest

from cdc_unify.canonical import CanonicalError
from cdc_unify.canonicalizers import canonicalizer_for
from cdc_unify.udfs import CANONICAL_IMAGE_ARROW, TEXT_MAP, canonical_images, map_rows

TZ = "Asia/Shanghai"
TYPES = {"id": "int(11)", "price": "decimal(12,2)", "created": "datetime(3)", "seen": "timestamp", "raw": "blob"}
IMAGES = [
    {"id": "007", "price": "12.50", "created": "2024-01-02 03:04:05.120", "seen": "2024-01-02 03:04:05", "raw": "\xff"},
    None,
    {"id": "8", "price": None, "only_in_values": "kept"},
    {"id": "not a number", "price": "1"},
    {},
    {"id": "-0", "price": "99999999999999999999.99"},
]


def arrays(images):
    n = len(images)
    return (
        pa.array(["canal_json"] * n),
        pa.array(images, TEXT_MAP),
        pa.array([TYPES if image is not None else None for image in images], TEXT_MAP),
        pa.array([TZ] * n),
    )


def expected(image):
    if image is None:
        return {"values": None, "types": None, "error": None}
    try:
        values, types = canonicalizer_for("canal_json")(dict(image), dict(TYPES), TZ)
    except CanonicalError as exc:
        return {"values": None, "types": None, "error": str(exc)}
    return {"values": values, "types": types, "error": None}


def as_dicts(result: pa.Array) -> list[dict]:
    return result.to_pylist(maps_as_pydicts="strict")


def test_a_batch_equals_the_canonicalizer_image_by_image():
    result = canonical_images(*arrays(IMAGES))
    assert result.type == CANONICAL_IMAGE_ARROW
    assert as_dicts(result) == [expected(image) for image in IMAGES]
    # the batch holds every kind of outcome, so the comparison above covers them all
    outcomes = {("error" if r["error"] else "null" if r["values"] is None else "values") for r in as_dicts(result)}
    assert outcomes == {"values", "null", "error"}


def test_sliced_batches_read_their_own_maps():
    dialect, values, types, tz = arrays(IMAGES)
    for start in range(1, len(IMAGES)):
        sliced = canonical_images(dialect[start:], values[start:], types[start:], tz[start:])
        assert as_dicts(sliced) == [expected(image) for image in IMAGES[start:]]


def test_map_rows_equals_arrows_own_conversion():
    maps = pa.array([{"a": "1", "b": None}, None, {}, {"c": "x"}], TEXT_MAP)
    for part in (maps, maps[1:], maps[2:3]):
        assert map_rows(part) == part.to_pylist(maps_as_pydicts="strict")


def test_an_empty_batch_gives_an_empty_result():
    assert len(canonical_images(*arrays([]))) == 0


@pytest.mark.parametrize("argument", ["dialect", "source_tz"])
def test_dialect_and_zone_must_be_one_literal(argument):
    dialect, values, types, tz = arrays([{"id": "1"}, {"id": "2"}])
    mixed = pa.array(["canal_json", "cloudcanal_json"] if argument == "dialect" else [TZ, "UTC"])
    args = (mixed, values, types, tz) if argument == "dialect" else (dialect, values, types, mixed)
    with pytest.raises(ValueError, match=f"{argument} must be one literal"):
        canonical_images(*args)
