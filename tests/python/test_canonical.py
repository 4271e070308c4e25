"""Canonical text rules (docs/canonical-text.md), checked against hand-written values, and the bounds
that keep every decoder total on untrusted text."""

import contextlib
import datetime as dt
import signal
import struct
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from cdc_unify import canonical as c
from cdc_unify.canonicalizers import (
    canonicalizer_for,
    dataworks_json,
    oms_dataworks_json,
    oms_default_ext_json,
)
from cdc_unify.message_decoders import dts_avro


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


# Each text reader that returns a canonical text as sent, and the parse-and-format it skips.
READ_AND_WRITTEN = {
    "canonical_integer_text": lambda text: c.fmt_integer(c.parse_integer_text(text)),
    "canonical_decimal_text": lambda text: c.fmt_decimal(c.parse_decimal_text(text)),
    "canonical_date_text": lambda text: c.fmt_date(c.parse_date_text(text)),
    "canonical_datetime_text": lambda text: c.fmt_datetime(*c.parse_datetime_text(text)),
}


def _texts_near_canonical() -> Iterator[str]:
    """Texts on both sides of every rule of the canonical forms: signs, zeros, fractions, blanks,
    digit counts, non-ASCII digits, calendar edges."""
    yield from ["0", "-0", "+0", "00", "7", "-7", "+7", "07", " 7", "7 ", "1.", ".5", "1e3", "1E+3", "١٢"]
    for sign in ("", "-", "+"):
        for whole in ("0", "00", "1", "10", "9" * 18, "9" * 19, "1" + "0" * 99, "1" + "0" * 100):
            for fraction in ("", ".", ".0", ".5", ".50", ".05", "." + "0" * 98 + "1", "." + "0" * 99 + "1"):
                yield f"{sign}{whole}{fraction}"
    for date in ("2024-02-29", "2023-02-29", "0000-01-01", "0001-01-01", "9999-12-31", "12024-01-01", "2024-1-01"):
        yield from (date, f" {date}", f"{date} ")
        for time in (" 00:00:00", "T00:00:00", " 23:59:59", " 24:00:00", " 12:60:00", " 12:00:00.0", " 12:00:00.5"):
            yield f"{date}{time}"
            yield f" {date}{time}"


@pytest.mark.parametrize("reader", sorted(READ_AND_WRITTEN))
def test_a_text_reader_returns_what_reading_and_writing_the_value_would(reader):
    fast, general = getattr(c, reader), READ_AND_WRITTEN[reader]
    as_sent, rewritten = 0, 0
    for text in _texts_near_canonical():
        try:
            expected = general(text)
        except c.CanonicalError:
            with pytest.raises(c.CanonicalError):
                fast(text)
            continue
        assert fast(text) == expected, text
        as_sent, rewritten = as_sent + (expected == text), rewritten + (expected != text)
    # The corpus reaches both sides: texts already canonical and texts the reader must rewrite.
    assert as_sent >= 3 and rewritten >= 3, (as_sent, rewritten)


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


# ---------------------------------------------------------------- bounds: untrusted text never hangs nor crashes
def test_float32_extremes_round_trip_or_are_refused():
    largest = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
    assert c.fmt_float32(largest) == "3.4028235e+38" and c.fmt_float32(-largest) == "-3.4028235e+38"
    with pytest.raises(c.CanonicalError):
        c.fmt_float32(3.5e38)  # no 32-bit float holds it


def test_numbers_beyond_the_bounds_are_refused_quickly():
    with alarm(5):
        for text in ("1e999999999", "-1E-999999999", "9" * (c.MAX_DECIMAL_DIGITS + 1), "1" * 20_000):
            with pytest.raises(c.CanonicalError):
                c.parse_decimal_text(text)
        with pytest.raises(c.CanonicalError):
            c.parse_integer_text("9" * 4400)  # Python cannot even print it
        with pytest.raises(c.CanonicalError):
            c.fmt_decimal(Decimal("1e999999999"))  # a gigabyte of plain text
        with pytest.raises(c.CanonicalError):
            c.fmt_integer(10**5000)
    assert c.parse_integer_text("9" * c.MAX_INTEGER_DIGITS) == 10**c.MAX_INTEGER_DIGITS - 1
    assert c.fmt_decimal(c.parse_decimal_text("1E-4000")) == "0." + "0" * 3999 + "1"


def test_an_instant_outside_the_calendar_in_utc_is_refused():
    with pytest.raises(c.CanonicalError):
        c.fmt_instant(dt.datetime(1, 1, 1, tzinfo=ZoneInfo("Asia/Shanghai")))


@contextlib.contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: a decoder must refuse absurd input at once."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


HOSTILE_TEXTS = (
    "", " ", "\x00", "ÿ", "-", ".", "1e999999999", "-1e-999999999", "9" * 5000, "1" * 20_000, "NaN", "-Infinity",
    "3.5e38", "1e309", "0001-01-01 00:00:00", "9999-12-31 23:59:59.999999999", "0001-01-01 00:00:00 +14:00",
    "9999-12-31 23:59:59 -12:00", "0001-01-01T00:00:00Z[Asia/Shanghai]", "2020-01-01 00:00:00 Mars/Olympus",
    "2020-01-01 00:00:00 +99:00", "-838:59:59", "99:99:99", "2020-02-30", "INTERVAL '99999999999999999999' DAY",
    "INTERVAL '" + "9" * 5000 + "' YEAR", "P" + "9" * 5000 + "D", "P99999999999999999D", "PT-99999999999999999S",
    "+999999999 23:59:59.999999999", "1606233662." + "1" * 30, "-99999999999999999999.5", "1590315269000.123456789",
    "aGVsbG8", "true", "{}",
)  # fmt: skip
MYSQL_TYPES = (
    "tinyint(4)", "bigint(20) unsigned", "decimal(65,30)", "decimal", "number", "float", "double", "tinyint(1)",
    "bit(8)", "date", "time(6)", "datetime(6)", "timestamp(6)", "timestamp(6) with time zone", "year", "json", "blob",
    "interval year(2) to month", "interval day(2) to second(6)", "jdbc:93", "jdbc:2014", "jdbc:-7", "jdbc:6",
)  # fmt: skip
DECLARED_TYPES = {
    "canal_json": MYSQL_TYPES,
    "oms_canal_json": MYSQL_TYPES,
    "cloudcanal_json": MYSQL_TYPES,
    "oms_default_ext_json": tuple(oms_default_ext_json.SCHEMA_TYPE_LOGICAL),
    "oms_dataworks_json": tuple(oms_dataworks_json.LOGICAL_BY_TYPE),
    "dataworks_json": tuple(dataworks_json.LOGICAL_TYPES),
}


@pytest.mark.parametrize("dialect", sorted(DECLARED_TYPES))
def test_every_text_decoder_reads_or_refuses_hostile_values(dialect):
    """A value is canonical text or CanonicalError (quarantine 'invalid_value'): never another
    exception, which would fail the whole Spark job, and never a hang."""
    decode = canonicalizer_for(dialect)
    with alarm(60):
        for declared in DECLARED_TYPES[dialect]:
            for text in HOSTILE_TEXTS:
                try:
                    values, _ = decode({"c": text}, {"c": declared}, "Asia/Shanghai")
                except c.CanonicalError:
                    continue
                assert values["c"] is None or isinstance(values["c"], str)


def _dts_items() -> Iterator[tuple[tuple[str, Any], int]]:
    ns = dts_avro.NAMESPACE
    for text in HOSTILE_TEXTS:
        yield (ns + "Integer", {"precision": 8, "value": text}), 8
        yield (ns + "Decimal", {"value": text, "precision": 65, "scale": 30}), 246
        yield (ns + "Character", {"charset": "utf8mb4", "value": text.encode()}), 182
        yield (ns + "Character", {"charset": "utf8mb4", "value": text.encode()}), 183
        yield (ns + "TextObject", {"type": "BOOL", "value": text}), 16
        zoned = {"year": 1, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "millis": 0}
        yield (ns + "TimestampWithTimeZone", {"value": zoned, "timezone": text}), 181
    for year, hour, millis in ((1, 0, 0), (9999, 23, 999_999), (0, 0, 0), (10_000, 25, 10**9), (-1, -1, -1)):
        parts = {"year": year, "month": 12, "day": 31, "hour": hour, "minute": 59, "second": 59, "millis": millis}
        yield (ns + "DateTime", parts), 12
        yield (ns + "TimestampWithTimeZone", {"value": parts, "timezone": "+14:00"}), 181
    for seconds in (-(2**62), 2**62, 253402300800):
        yield (ns + "Timestamp", {"timestamp": seconds, "millis": 0}), 7


def test_the_dts_decoder_reads_or_refuses_hostile_values():
    with alarm(60):
        for item, type_number in _dts_items():
            try:
                values, _, _ = dts_avro.canonical_image([("c", type_number)], [item], dts_avro.ValueContext())
            except c.CanonicalError:
                continue
            assert values["c"] is None or isinstance(values["c"], str)
