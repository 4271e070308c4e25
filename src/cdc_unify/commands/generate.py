"""`cdc-unify generate`: a simulated workload as every dialect's messages, with truth (docs/generator.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cdc_unify.contract import DIALECTS


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "generate",
        help="generate CDC messages of a simulated workload, with the truth to test against",
        description=(
            "Simulate a source database (snapshot, inserts, updates, deletes, key changes, TRUNCATE, ADD COLUMN, "
            "heartbeats), encode it in each dialect and deliver it with Kafka faults (partitions, duplicates, "
            "out-of-order and late messages, tombstones, malformed messages). Writes OUT/<dialect>/batch-1.parquet "
            "and batch-2.parquet, OUT/<dialect>/expected-events.jsonl and faults.jsonl, OUT/truth/ and "
            "OUT/manifest.json. The same seed always gives byte-identical files."
        ),
    )
    parser.add_argument("--events", type=_positive, default=1000, help="row changes to simulate (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--dialects",
        nargs="+",
        choices=DIALECTS,
        metavar="DIALECT",
        help="dialects to write (default: every dialect whose encoder exists)",
    )
    parser.add_argument("--partitions", type=_positive, default=3, help="Kafka partitions per topic (default 3)")
    parser.add_argument(
        "--malformed-share", type=_share, default=0.01, help="malformed messages added per row message (default 0.01)"
    )
    parser.add_argument(
        "--duplicate-share",
        type=_share,
        default=0.02,
        help="share of messages redelivered at a later offset (default 0.02)",
    )
    parser.add_argument(
        "--late-share",
        type=_share,
        default=0.03,
        help="share of older row messages held back into batch 2 (default 0.03)",
    )
    parser.add_argument(
        "--jobs",
        type=_positive,
        help="processes writing the truth and the dialects in parallel (default: the CPU cores available)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so `cdc-unify --help` does not pay for pyarrow.
    from cdc_unify.generator.faults import FaultOptions
    from cdc_unify.generator.run import default_jobs, generate

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    faults = FaultOptions(
        partitions=args.partitions,
        duplicate_share=args.duplicate_share,
        malformed_share=args.malformed_share,
        late_share=args.late_share,
    )
    try:
        manifest = generate(
            args.events, args.seed, args.out, args.dialects, faults, log=log, jobs=args.jobs or default_jobs()
        )
    except ValueError as exc:
        print(f"cdc-unify generate: error: {exc}", file=sys.stderr)
        return 1
    for dialect, info in manifest["per_dialect"].items():
        totals = info["totals"]
        print(
            f"{dialect}: {totals['messages']} messages ({totals['source_messages']} source, "
            f"{totals['duplicates']} duplicates, {totals['tombstones']} tombstones, "
            f"{totals['malformed']} malformed) in {args.out / dialect}"
        )
    print(f"truth and manifest in {args.out}")
    return 0
