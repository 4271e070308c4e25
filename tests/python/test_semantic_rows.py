"""The e2e oracle's value reading (semantic_rows.py): equal meanings match, different ones do not."""

from __future__ import annotations

import pytest

from semantic_rows import same_row, same_value, unmatched


@pytest.mark.parametrize(
    ("logical_type", "got", "want", "dialect"),
    [
        ("boolean", "1", "true", "ckafka_json"),
        ("decimal(12,2)", "80299.60", "80299.6", "oms_shareplex_json"),
        ("decimal(38,10)", "7.90E-8", "0.000000079", "oms_shareplex_json"),
        ("double", "7.16493228315167E12", "7164932283151.67", "ckafka_json"),
        ("float", "-8.64523e+08", "-864523000.0", "oms_shareplex_json"),
        ("time", "15:35:28.000000", "15:35:28", "ckafka_json"),
        ("timestamp", "1668779393.27564", "2022-11-18T13:49:53.27564Z", "oms_shareplex_json"),
        (
            "zoned_datetime",
            "2008-10-16T01:45:45.202082-04:00[America/New_York]",
            "2008-10-16T05:45:45.202082Z[America/New_York]",
            "ckafka_json",
        ),  # fmt: skip
        (
            "zoned_datetime",
            "2005-01-11 14:43:17.494368 America/New_York",
            "2005-01-11T19:43:17.494368Z[America/New_York]",
            "oms_default_json",
        ),  # fmt: skip
        ("interval_ym", "INTERVAL '-29-5' YEAR TO MONTH", "-P29Y5M", "oms_shareplex_json"),
        ("interval_ds", "INTERVAL '30 13:42:29.838236' DAY TO SECOND", "P30DT13H42M29.838236S", "oms_default_json"),
        ("interval_ds", "P0Y0M-99DT-23H-59M-59.999999S", "-P99DT23H59M59.999999S", "debezium_json"),
        ("datetime", "1999-10-16T18:32:15.102Z", "1999-10-17 02:32:15.102183", "dataworks_json"),
        ("date", "2039-09-07T16:00:00Z", "2039-09-08", "dataworks_json"),
        # Debezium without `schema`: a base64 decimal nobody can read is the dialect's text as sent.
        ("decimal(12,2)", "UefX", "9415.27", "debezium_json"),
        # Maxwell: TIMESTAMP as the UTC wall clock, embedded JSON re-serialised (keys sorted).
        ("timestamp", "2022-11-18 13:49:53.275640", "2022-11-18T13:49:53.27564Z", "maxwell_json"),
        ("json", '{"a":1,"b":[2.5,"x"]}', '{"b": [2.50, "x"], "a": 1}', "maxwell_json"),
        ("decimal(38,10)", "0E-10", "0.0000000000", "maxwell_json"),
    ],
)
def test_same_meaning_in_another_spelling_matches(logical_type: str, got: str, want: str, dialect: str) -> None:
    assert same_value(logical_type, got, want, dialect)


@pytest.mark.parametrize(
    ("logical_type", "got", "want", "dialect"),
    [
        ("boolean", "0", "true", "ckafka_json"),
        ("bigint", "-1265087247512521770", "3913696749549803892", "oms_dataworks_json"),
        ("decimal(12,2)", "80299.61", "80299.6", "ckafka_json"),
        ("double", "0.0876614643869954", "0.0876614643869953", "ckafka_json"),
        ("timestamp", "1668779394.27564", "2022-11-18T13:49:53.27564Z", "oms_shareplex_json"),
        ("datetime", "1999-10-16T18:32:15.103Z", "1999-10-17 02:32:15.102183", "dataworks_json"),
        ("string", "a", "b", "ckafka_json"),
        ("string", None, "b", "ckafka_json"),
        # A typed dialect must send canonical text: unreadable text is a mismatch there.
        ("decimal(12,2)", "UefX", "9415.27", "canal_json"),
        ("date", "-9257", "1944-08-26", "oms_canal_json"),
        # The Shanghai wall clock of that instant is not Maxwell's UTC wall clock.
        ("timestamp", "2022-11-18 21:49:53.275640", "2022-11-18T13:49:53.27564Z", "maxwell_json"),
        ("json", '{"a":1,"b":[2.5]}', '{"a": 1, "b": [2.6]}', "maxwell_json"),
        ("json", '{"a":"1"}', '{"a": 1}', "maxwell_json"),
    ],
)
def test_different_values_do_not_match(logical_type: str, got: str | None, want: str, dialect: str) -> None:
    assert not same_value(logical_type, got, want, dialect)


def test_rows_pair_up_by_value_and_leftovers_are_reported() -> None:
    types = {"id": "bigint", "ok": "boolean"}
    got = [{"id": "1", "ok": "1"}, {"id": "2", "ok": "0"}, {"id": "2", "ok": "0", "#alibaba_rds_row_id#": "7"}]
    want = [{"id": "2", "ok": "false"}, {"id": "1", "ok": "true"}, {"id": "3", "ok": None}]
    # got[2] is got[1] again (DataWorks' added row id aside): one copy pairs, the other is extra.
    assert unmatched(types, got, want, "dataworks_json") == ([got[2]], [want[2]])
    assert same_row(types, got[2], want[0], "dataworks_json")
    assert not same_row(types, got[2], want[0], "ckafka_json")
