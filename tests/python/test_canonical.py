"""Canonical text rules (docs/canonical-text.md), checked against hand-written values."""

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from cdc_unify import canonical as c


@pytest.mark.parametrize(
    ("logical_type", "value", "text"),
    [
        ("bigint", 9223372036854775806, "9223372036854775806"),
        ("ubigint", 10223372036854775806, "10223372036854775806"),
        ("tinyint", -7, "-7"),
        ("decimal(10,2)", Decimal("12.50"), "12.5"),
        ("decimal(10,0)", Decimal("1E+3"), "1000"),
        ("decimal(38,10)", Decimal("-0.000"), "0"),
        (
            "decimal(65,30)",
            Decimal("12345678901234567890123456789.000000000000000000000000000001"),
            "12345678901234567890123456789.000000000000000000000000000001",
        ),
        ("float", 1.2222000360488892, "1.2222"),
        ("double", 0.1, "0.1"),
        ("double", 1e-05, "1e-05"),
        ("double", float("nan"), "NaN"),
        ("float", float("-inf"), "-Infinity"),
        ("boolean", True, "true"),
        ("string", "héllo 世界 🎉", "héllo 世界 🎉"),
        ("binary", b"hello world", "aGVsbG8gd29ybGQ="),
        ("date", dt.date(2020, 11, 25), "2020-11-25"),
        ("time", dt.time(0, 1, 2, 12000), "00:01:02.012"),
        ("time", dt.timedelta(hours=-838, minutes=-59, seconds=-59), "-838:59:59"),
        ("datetime", dt.datetime(2020, 11, 25, 0, 1, 2), "2020-11-25 00:01:02"),
        (
            "timestamp",
            dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.timezone.utc),
            "2020-11-24T16:01:02.012345Z",
        ),
        ("timestamp", dt.datetime(2020, 11, 25, 0, 1, 2, tzinfo=ZoneInfo("Asia/Shanghai")), "2020-11-24T16:01:02Z"),
        (
            "zoned_datetime",
            dt.datetime(2020, 11, 25, 0, 1, 2, 12345, tzinfo=ZoneInfo("Asia/Shanghai")),
            "2020-11-24T16:01:02.012345Z[Asia/Shanghai]",
        ),
        ("interval_ym", c.IntervalYM(50), "P4Y2M"),
        ("interval_ym", c.IntervalYM(-3), "-P3M"),
        ("interval_ym", c.IntervalYM(0), "P0M"),
        ("interval_ds", dt.timedelta(days=3), "P3D"),
        ("interval_ds", dt.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=500000), "P1DT2H3M4.5S"),
        ("interval_ds", -dt.timedelta(seconds=1), "-PT1S"),
        ("interval_ds", dt.timedelta(0), "PT0S"),
        ("int", None, None),
    ],
)
def test_to_canonical(logical_type, value, text):
    assert c.to_canonical(logical_type, value) == text


def test_unknown_logical_type_is_an_error():
    with pytest.raises(c.CanonicalError):
        c.to_canonical("geometry", b"x")


def test_parsers_keep_exact_digits():
    assert c.parse_integer_text("10223372036854775806") == 10223372036854775806
    assert c.parse_integer_text("3.0") == 3
    assert c.fmt_decimal(c.parse_decimal_text("9.99E-308")) == "0." + "0" * 307 + "999"
    with pytest.raises(c.CanonicalError):
        c.parse_integer_text("3.5")
    with pytest.raises(c.CanonicalError):
        c.parse_decimal_text("abc")


def test_epoch_text_with_fraction_is_an_instant():
    value, nanos = c.instant_from_epoch_text("1606233662.012345", "s")
    assert c.fmt_instant(value, nanos) == "2020-11-24T16:01:02.012345Z"
    value, nanos = c.instant_from_epoch_text("1590315269000", "ms")
    assert c.fmt_instant(value, nanos) == "2020-05-24T10:14:29Z"


def test_time_and_datetime_text():
    assert c.canonical_time_text("00:01:02.500000") == "00:01:02.5"
    assert c.canonical_time_text("-838:59:59") == "-838:59:59"
    value, nanos = c.parse_datetime_text("2020-11-25T00:01:02.012345")
    assert c.fmt_datetime(value, nanos) == "2020-11-25 00:01:02.012345"
    with pytest.raises(c.CanonicalError):
        c.parse_datetime_text("2020-13-25 00:01:02")
    with pytest.raises(c.CanonicalError):
        c.parse_date_text("25/11/2020")


def test_bool_and_base64_parsing():
    assert c.parse_bool_text("1") is True and c.parse_bool_text("false") is False
    assert c.parse_base64("aGVsbG8gd29ybGQ=") == b"hello world"
    with pytest.raises(c.CanonicalError):
        c.parse_base64("not base64!")
    with pytest.raises(c.CanonicalError):
        c.parse_bool_text("maybe")
