"""What the message functions' tests (test_jvm_canal_rows, test_jvm_cloudcanal_rows,
test_jvm_dataworks_rows, test_jvm_oms_default_rows, test_jvm_ogg_rows) share: a function's staged rows
(the cdcunify.*Rows classes) against its Python oracle, every case, field by field
in the function's order, maps compared with their key order; and the generator's messages of a
dialect and the corpus parts every module reads (`message_corpus`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

MAP_FIELDS = ("before", "after", "column_source_types", "column_types")


def pairs(row: dict[str, Any]) -> dict[str, Any]:
    """An oracle row with its maps as (key, value) pairs, so that key order counts."""
    return {k: list(v.items()) if k in MAP_FIELDS and v is not None else v for k, v in row.items()}


def spark_pairs(row: Any) -> dict[str, Any]:
    """A collected struct (maps as map_entries) as `pairs` has it."""
    fields = row.asDict()
    return {k: [tuple(e) for e in v] if k in MAP_FIELDS and v is not None else v for k, v in fields.items()}


def first_difference(expected: list[dict], actual: list[dict], fields: Sequence[str]) -> str:
    if len(expected) != len(actual):
        return f"{len(actual)} rows, expected {len(expected)}: {actual!r:.600} vs {expected!r:.600}"
    for want, got in zip(expected, actual, strict=True):
        for name in fields:
            if want[name] != got[name]:
                return f"row {want['row_index']} field {name}: {got[name]!r:.400}, expected {want[name]!r:.400}"
    return ""


def assert_oracle_rows(
    spark: Any, call: str, cases: list[tuple], case_type: str, fields: Sequence[str], oracle: Callable[..., list[dict]]
) -> None:
    """`call` (SQL over the struct `c` of a case, e.g. `cdc_canal_rows(c.d, c.v, c.tz)`) gives
    `oracle(*case)` for every case: its fields named and ordered as `fields`, then each value."""
    spark.createDataFrame(list(enumerate(cases)), f"i int, c {case_type}").createOrReplaceTempView("oracle_cases")
    returned = spark.sql(f"select {call} as raw from oracle_cases").schema["raw"]
    assert [f.name for f in returned.dataType.elementType.fields] == list(fields)
    selected = ", ".join(f"'{f}', " + (f"map_entries(r.{f})" if f in MAP_FIELDS else f"r.{f}") for f in fields)
    frame = spark.sql(
        f"select i, transform(raw, r -> named_struct({selected})) as rows"
        f" from (select i, {call} as raw from oracle_cases)"
    )
    failures = []
    for row in frame.collect():
        case = cases[row.i]
        expected = [pairs(r) for r in oracle(*case)]
        # the models explode the rows with explode_outer (cdc_message_rows): no value may give none
        difference = first_difference(expected, [spark_pairs(r) for r in row.rows or []], fields) or (
            "" if expected else "no rows"
        )
        if difference:
            shown = [c[:200] if isinstance(c, bytes) else c for c in case]
            failures.append(f"{shown!r}: {difference}")
    assert not failures, f"{len(failures)} of {len(cases)} values differ:\n" + "\n".join(failures[:30])


def generated_values(
    dialect: str, events: int, seed: int, encoding: random.Random, first: int | None = None
) -> list[bytes]:
    """A dialect test module's workload (`events`, `seed`) as the generator encodes it with
    `encoding` (its first `first` values), then each malformation kind of the first 8 row messages."""
    from cdc_unify.generator.encoders import encoder_for
    from cdc_unify.generator.encoders.base import COMMON_MALFORMED_KINDS
    from cdc_unify.generator.workload import WorkloadOptions, build_workload

    encoder = encoder_for(dialect)
    encoded = list(encoder.encode(build_workload(WorkloadOptions(events=events), seed=seed), encoding))
    values = [m.value for m in encoded if m.value is not None][:first]
    rng = random.Random(3)
    for kind in COMMON_MALFORMED_KINDS + encoder.extra_malformed_kinds:
        values += [encoder.malform(m, kind, rng) for m in [m for m in encoded if m.is_row_message][:8]]
    return values


def message_corpus(
    dialect: str, built: Iterable[bytes], workloads: Sequence[tuple[int, int, random.Random]]
) -> list[bytes | None]:
    """A message function's corpus for `dialect`, each value once, a tombstone first: the JSON-reading
    cases of test_jvm_canal_rows, the module's `built` values, the dialect's spec examples, its
    bad-input corpus and the generator's messages of each (events, seed, encoding) workload."""
    from test_bad_inputs import corpus as bad_input_corpus
    from test_jvm_canal_rows import value_cases

    spec = Path(__file__).resolve().parents[1] / "fixtures" / "spec_examples" / dialect
    values = [None, *value_cases(), *built]
    values += [p.read_bytes() for p in sorted(spec.glob("[0-9][0-9]_*.json")) if "expected" not in p.name]
    values += [m.value for m in bad_input_corpus(dialect) if m.value is not None]
    for events, seed, encoding in workloads:
        values += generated_values(dialect, events, seed, encoding)
    return list(dict.fromkeys(values))


def assert_reaches(values: Sequence[Any], rows: list[dict[str, Any]], at_least: int, expected: Iterable[str]) -> None:
    """The corpus holds `at_least` values, one staged row each, and its rows reach each error code
    and event kind `expected` names."""
    assert len(values) >= at_least, len(values)
    assert len(rows) == len(values)
    reached = {r["error_code"] for r in rows} | {r["event_kind"] for r in rows}
    assert reached >= set(expected), set(expected) - reached
