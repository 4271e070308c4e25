"""`make bench`: how fast the whole dbt build is, how it grows, and where the time goes.

For each workload (bench/workloads.py; generated once, reused from --work-dir afterwards):
1. land generator batch 1 (~99% of the messages) in a fresh warehouse;
2. full `dbt build` (models + data tests) as its own process: wall time, build time without
   start-up (first node start to last node end, from run_results.json), messages/s, time per
   layer and per model, peak resident memory of the driver (dbt's Python + its JVM) and of the
   whole process tree (+ PySpark's Python workers);
3. the parse floor on the same landing tables (bench/spark_steps.py parse-floor) and, for the
   dialects staged by Python models, their decoder floor (spark_steps.py decoder-floor); each
   staging model against its dialect's floor; with --staging-steps, each SQL staging model of the
   full build taken apart in one warm session (spark_steps.py staging-steps: its floor, its message
   function, its select, the select written), three rounds;
4. land batch 2 (~1%; with --delta N exactly N messages of the same mix, cut from a batch 2
   generated larger) and run `dbt build` again (incremental): wall and build time and their
   ratio to the full build and to the empty build;
   With --runs K, those messages land in K parts of successive offsets, each built by an
   incremental `dbt build` of its own (a deployment building every few minutes), with the data
   files of every table counted after each: the last run stands for the incremental run;
5. `dbt build` once more with nothing new landed (rerun): what every incremental run pays
   whatever it has to do (per-node planning, reading to find what changed, data tests).
With --repeats N, the empty build, the incremental run and the rerun each run N times, each
incremental run after the first from a copy of the warehouse taken before it: a build of a
minute or two on two cores varies by 5-10% from one run to the next, as much as most changes
move it. Their figures are then the median run's, with every run's build seconds listed.
With --empty-build, first the same build on empty landing tables (a warehouse of its own): the
part of a build's cost that does not grow with the data.  With --backfill (implies --empty-build),
after the rerun the backfill: everything the main warehouse holds landed at once in the empty
build's warehouse and built without --full-refresh (every incremental model over about the whole
workload in one run: its time and peak memory), then both warehouses' tables compared by digest
(bench/spark_steps.py digest): any table that differs fails the bench.  With --write-floor, last
the write floor (bench/spark_steps.py write-floor): every table the build materialized, read and
written again as Parquet: what writing the build's output costs with its results already known.
With --against DIR, every dbt build runs for the project in DIR and for this one in turn (DIR first
in odd rounds, second in even ones; with --repeats N, N rounds), from the same warehouse state: a
change measured against the project before it minutes apart, on a machine whose speed drifts. A
DIR with a package of its own (a git worktree) builds with it (PYTHONPATH: its decoders, JVM
functions and adapter); the landing, the floors and the digests are this checkout's.
Every step is a process of its own (fresh JVM, separate memory).  Writes a JSON report and
prints a table.

    nice .venv/bin/python bench/run.py --quick
    nice .venv/bin/python bench/run.py --workloads mixed:100k canal_json:1M
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyspark
from procmem import Peaks, PeakSampler
from spark_steps import python_staged_dialects
from workloads import (
    WorkloadSpec,
    batch_messages,
    cut_delta,
    delta_file,
    ensure_generated,
    log,
    parse_size,
    parse_spec,
    split_runs,
    with_delta,
)

from cdc_unify.spark import env_conf

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEFAULT_WORKLOADS = ("mixed:100k", "mixed:1M", "mixed:5M", "canal_json:1M", "debezium_json:1M", "dts_avro:1M")
QUICK_WORKLOADS = ("mixed:5k",)
LAYERS = {"stg_": "staging", "int_": "intermediate"}
TOP_MODELS = 12
# The label suffix of the --against project's builds (their dbt target and log).
AGAINST_SUFFIX = "-against"


def layer_of(unique_id: str) -> str:
    kind, _, name = unique_id.split(".", 2)
    if kind == "model":
        return next((layer for prefix, layer in LAYERS.items() if name.startswith(prefix)), "marts")
    return {"test": "data tests", "unit_test": "unit tests"}.get(kind, kind)


def parse_time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def node_span(result: dict[str, Any]) -> tuple[float, float] | None:
    """(start, end) epoch seconds of one node: its compile start to its execute end."""
    starts = [parse_time(t["started_at"]).timestamp() for t in result["timing"] if t.get("started_at")]
    ends = [parse_time(t["completed_at"]).timestamp() for t in result["timing"] if t.get("completed_at")]
    return (min(starts), max(ends)) if starts and ends else None


def summarize_run_results(path: Path, peaks: Peaks | None = None) -> dict[str, Any]:
    """Per node, per layer and the whole build of a dbt run; with the run's CPU samples (`peaks`)
    also CPU seconds: of the build from the first node's start to the last node's end and, when
    nodes ran one at a time (--threads 1), of each node."""
    results = json.loads(path.read_text())["results"]
    nodes = [(r, node_span(r)) for r in results if not r["unique_id"].startswith("operation.")]
    spans = [span for _, span in nodes if span]
    start, end = (min(s for s, _ in spans), max(e for _, e in spans)) if spans else (None, None)
    one_at_a_time = all(a[1] <= b[0] for a, b in zip(sorted(spans), sorted(spans)[1:], strict=False))

    def cpu(span: tuple[float, float] | None) -> float | None:
        return round(peaks.cpu_at(span[1]) - peaks.cpu_at(span[0]), 1) if peaks and span else None

    per_layer: dict[str, dict[str, float]] = {}
    models = []
    for result, span in nodes:
        kind_layer = layer_of(result["unique_id"])
        node_cpu = cpu(span) if one_at_a_time else None
        layer = per_layer.setdefault(kind_layer, {"seconds": 0.0, "cpu_seconds": 0.0})
        layer["seconds"] += result["execution_time"]
        layer["cpu_seconds"] += node_cpu or 0.0
        if span and start is not None:
            # Node seconds overlap when dbt runs nodes side by side: the layer's first start and
            # last end (from the build's start) say when it held the machine.
            layer["first_start"] = min(layer.get("first_start", span[0] - start), span[0] - start)
            layer["last_end"] = max(layer.get("last_end", 0.0), span[1] - start)
        if result["unique_id"].startswith("model."):
            name = result["unique_id"].split(".", 2)[2]
            models.append(
                {"model": name, "layer": kind_layer, "seconds": result["execution_time"], "cpu_seconds": node_cpu}
            )
    problems = [
        {"node": r["unique_id"], "status": r["status"], "message": (r.get("message") or "")[:500]}
        for r, _ in nodes
        if r["status"] not in ("success", "pass", "no-op")
    ]
    return {
        "build_seconds": end - start if spans else None,
        "build_cpu_seconds": cpu((start, end)) if spans else None,
        "nodes": len(nodes),
        "nodes_one_at_a_time": one_at_a_time,
        "per_layer": dict(sorted(per_layer.items(), key=lambda kv: -kv[1]["seconds"])),
        "models": sorted(models, key=lambda m: -(m["cpu_seconds"] or m["seconds"])),
        "problems": problems,
    }


def load_average() -> float:
    return os.getloadavg()[0]


def run_process(command: list[str], env: dict[str, str], log_path: Path, prefix: str) -> tuple[dict[str, Any], Peaks]:
    """Run `command`, echo its output with `prefix`, sample its memory and CPU; its figures and samples."""
    started = time.perf_counter()
    load_before = load_average()
    with log_path.open("w") as log_file:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
        sampler = PeakSampler(process.pid).start()
        assert process.stdout is not None
        for line in process.stdout:
            log_file.write(line)
            print(f"{prefix} {line.rstrip()}", file=sys.stderr, flush=True)
        returncode = process.wait()
        peaks = sampler.stop()
    figures = {
        "returncode": returncode,
        "wall_seconds": time.perf_counter() - started,
        "cpu_seconds": round(peaks.cpu_seconds, 1),
        "peak_driver_rss_mib": round(peaks.driver_mib),
        "peak_tree_rss_mib": round(peaks.tree_mib),
        "peak_jvm_rss_mib": round(peaks.jvm_mib),
        "load_average": [round(load_before, 1), round(load_average(), 1)],
        "log": str(log_path),
    }
    return figures, peaks


class Runner:
    """The steps of one workload in one fresh warehouse."""

    def __init__(self, args: argparse.Namespace, spec: WorkloadSpec) -> None:
        self.args, self.spec = args, spec
        self.dir = args.work_dir / "runs" / spec.name
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.warehouse = self.dir / "warehouse"
        self.empty_warehouse = self.dir / "warehouse-empty"

    def env(self, target_path: Path, warehouse: Path | None = None, project: Path | None = None) -> dict[str, str]:
        """The environment of a step; for a dbt build of a project with a package of its own (a
        worktree: `--against`), that package first on the path, so that the build runs its
        decoders, JVM functions and adapter, not this checkout's."""
        package = {}
        if project is not None and (project / "src" / "cdc_unify").is_dir():
            path = [str(project / "src"), os.environ.get("PYTHONPATH", "")]
            package = {"PYTHONPATH": os.pathsep.join(p for p in path if p)}
        return {
            **os.environ,
            **package,
            "PYSPARK_PYTHON": sys.executable,
            "DBT_PROFILES_DIR": str(self.args.project_dir.resolve() / "profiles"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "DBT_USE_COLORS": "false",
            "DBT_TARGET_PATH": str(target_path),
            "DBT_LOG_PATH": str(self.dir / "logs"),
            "CDC_UNIFY_TARGET": "local",
            "CDC_UNIFY_WAREHOUSE": str(warehouse or self.warehouse),
            "CDC_UNIFY_SPARK_MASTER": self.args.master,
            "CDC_UNIFY_DRIVER_MEMORY": self.args.driver_memory,
            # --conf after the caller's own settings: later entries win.
            "CDC_UNIFY_SPARK_CONF": " ".join([os.environ.get("CDC_UNIFY_SPARK_CONF", ""), *self.args.conf]).strip(),
        }

    def spark_step(self, step: str, *extra: str, warehouse: Path | None = None, label: str = "") -> dict[str, Any]:
        name = f"{step}-{label}" if label else step
        result = self.dir / f"{name}.json"
        command = [
            sys.executable, str(ROOT / "bench" / "spark_steps.py"), step, "--warehouse", str(warehouse or self.warehouse),
            "--master", self.args.master, "--driver-memory", self.args.driver_memory, "--result", str(result), *extra,
        ]  # fmt: skip
        process, _ = run_process(command, self.env(self.dir / "target"), self.dir / f"{name}.log", "  |")
        if process["returncode"] != 0:
            raise RuntimeError(f"{name} failed (exit {process['returncode']}); see {process['log']}")
        return {**json.loads(result.read_text()), "process": process}

    def dbt_build(
        self, label: str, warehouse: Path | None = None, threads: int | None = None, project: Path | None = None
    ) -> dict[str, Any]:
        target = self.dir / f"target-{label}"
        project = (project or self.args.project_dir).resolve()
        threads = threads or self.args.threads
        command = [str(BIN / "dbt"), "build", "--project-dir", str(project), *self.selection(threads)]
        env = self.env(target, warehouse, project)
        process, peaks = run_process(command, env, self.dir / f"dbt-{label}.log", f"[dbt {label}]")
        run_results = target / "run_results.json"
        if not run_results.is_file():
            # dbt stopped before it ran a node (e.g. the warehouse still locked): a problem of the
            # build, shown and failing the bench at its end, without losing the workload's figures.
            log(
                f"[bench] {self.spec.label}: dbt {label} ran no node (exit {process['returncode']}); see {process['log']}"
            )
            problem = {"node": f"dbt {label}", "status": NOT_RUN, "message": last_error(Path(process["log"]))}
            return {
                "process": process, "threads": threads, "build_seconds": None, "build_cpu_seconds": None,
                "problems": [problem],
            }  # fmt: skip
        return {"process": process, "threads": threads, **summarize_run_results(run_results, peaks)}

    def projects(self, run: int = 1) -> list[tuple[Path, str]]:
        """(project, label suffix) of each build of round `run`: with --against, the other project
        first in odd rounds and second in even ones (a drift within a round, or an advantage of
        going first or second, then favours neither over the rounds), so that the last round of
        an odd count, a single one included, ends with this project's."""
        against = getattr(self.args, "against", None)
        order = [(against, AGAINST_SUFFIX)] * bool(against) + [(self.args.project_dir, "")]
        return order if run % 2 else order[::-1]

    def alternated(
        self, label: str, repeats: int, restore: Callable[[], None] | None = None, **build: Any
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """`repeats` rounds of one build, each round one build of each project (projects()), with
        `restore` before every build but the first: (this project's runs, the other's), in run
        order. Alternating puts the two projects' runs of a round minutes apart, so that a machine
        whose speed drifts (by a third within half an hour on some) moves both alike."""
        ours: list[dict[str, Any]] = []
        theirs: list[dict[str, Any]] = []
        for run in range(1, repeats + 1):
            for project, suffix in self.projects(run):
                if restore is not None and (ours or theirs):
                    restore()
                built = self.dbt_build(repeat_label(label, run) + suffix, project=project, **build)
                (theirs if suffix else ours).append(built)
        return ours, theirs

    def empty_builds(self, repeats: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The build on empty landing tables, in a warehouse of its own made anew for each run."""

        def fresh() -> None:
            shutil.rmtree(self.empty_warehouse, ignore_errors=True)

        fresh()
        return self.alternated("empty", repeats, fresh, warehouse=self.empty_warehouse)

    def replayed_builds(
        self, label: str, repeats: int, threads: int | None = None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """`repeats` rounds of a build of the warehouse as it stands (alternated), each build after
        the first from a copy of it taken before the first, restored at the same path (the
        metastore names each table's folder by its absolute path), so that every run does the same
        work. The warehouse is left as the last run left it (projects())."""
        if repeats * len(self.projects()) == 1:
            return [self.dbt_build(label, threads=threads)], []
        before = self.dir / f"warehouse-before-{label}"
        shutil.rmtree(before, ignore_errors=True)

        def restore() -> None:
            shutil.rmtree(self.warehouse)
            shutil.copytree(before, self.warehouse, symlinks=True)

        try:
            shutil.copytree(self.warehouse, before, symlinks=True)
            return self.alternated(label, repeats, restore, threads=threads)
        finally:
            # A copy of the whole warehouse (about 9 GB at mixed:5M) is not left behind.
            shutil.rmtree(before, ignore_errors=True)

    def selection(self, threads: int | None) -> list[str]:
        flags = ["--exclude-resource-type", "unit_test"]
        if threads:
            flags += ["--threads", str(threads)]
        if self.args.select:
            flags += ["--select", *self.args.select]
        elif len(self.spec.dialects) == 1:
            # Only this dialect's staging model and everything downstream of it.
            flags += ["--select", f"stg_{self.spec.dialects[0]}__changes+"]
        if len(self.spec.dialects) == 1:
            flags += ["--vars", json.dumps({"cdc_dialects": list(self.spec.dialects)})]
        return flags


NOT_RUN = "not run"


def repeat_label(label: str, run: int) -> str:
    """The label of a build's `run`-th run (--repeats): its own dbt target and log."""
    return label if run == 1 else f"{label}-{run}"


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Of the runs of one build (--repeats), the run of median build seconds (the lower of the two
    middle ones for an even count), with every run's build seconds in run order (`repeats`) and
    every run's problems, and the highest peak memory of any run: a run that failed or grew is not
    hidden behind the median's figures. A run that ran no node sorts last."""
    if len(runs) == 1:
        return runs[0]
    ordered = sorted(runs, key=lambda run: (run.get("build_seconds") is None, run.get("build_seconds") or 0.0))
    median = ordered[(len(ordered) - 1) // 2]
    peaks = [run.get("process", {}).get("peak_driver_rss_mib") or 0 for run in runs]
    return {
        **median,
        "process": {**median.get("process", {}), "peak_driver_rss_mib": max(peaks)},
        "repeats": [run.get("build_seconds") for run in runs],
        "problems": [problem for run in runs for problem in run.get("problems", [])],
    }


def last_error(log_path: Path) -> str:
    """The end of a failed dbt's output, where it says why (its log holds only its output)."""
    lines = [line.strip() for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
    return " | ".join(lines[-4:])[:500]


def builds_not_run(report: dict[str, Any]) -> list[str]:
    """'workload: build' of every dbt build of the report that ran no node, the --against
    project's included ('workload against: build')."""
    workloads = [(w["workload"], w) for w in report["workloads"]]
    workloads += [(f"{w['workload']} against", w["against"]) for w in report["workloads"] if w.get("against")]
    builds = [
        (name, build)
        for name, w in workloads
        for value in w.values()
        for build in (value if isinstance(value, list) else [value])  # --runs: a list of builds
        if isinstance(build, dict)
    ]
    return [
        f"{name}: {p['node']}" for name, build in builds for p in build.get("problems", []) if p["status"] == NOT_RUN
    ]


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    return round(numerator / denominator, 3) if numerator and denominator else None


def bench_workload(args: argparse.Namespace, spec: WorkloadSpec) -> dict[str, Any]:
    data_dir, manifest, generate_seconds = ensure_generated(spec, args.seed, args.work_dir / "data")
    runner = Runner(args, spec)
    batch1, batch2 = batch_messages(manifest, 1), batch_messages(manifest, 2)
    report: dict[str, Any] = {
        "workload": spec.label,
        "dialects": list(spec.dialects),
        "events": manifest["events"],
        "messages": {"batch1": batch1, "batch2": batch2, "batch2_share": round(batch2 / (batch1 + batch2), 4)},
        "generate_seconds": generate_seconds,
        "data_dir": str(data_dir),
    }
    incremental_land = ["--data-dir", str(data_dir), "--batch", "2"]
    if spec.delta:
        log(f"[bench] {spec.label}: cutting a delta of {spec.delta:,} messages from batch 2 ({batch2:,})")
        report["delta"] = cut_delta(data_dir, manifest, spec.delta)
        incremental_land += ["--file", delta_file(spec.delta)]
    if args.against:
        report["against"] = {"project_dir": str(args.against.resolve())}

    def keep(label: str, runs: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
        """A build's figures: its median run's, and with --against the other project's."""
        ours, theirs = runs
        report[label] = median_run(ours)
        if theirs:
            report["against"][label] = median_run(theirs)

    if args.empty_build or args.backfill:
        log(f"[bench] {spec.label}: dbt build on empty landing tables (the build's fixed cost)")
        keep("empty", runner.empty_builds(args.repeats))
    log(f"[bench] {spec.label}: landing batch 1 ({batch1:,} messages)")
    report["land_batch1"] = runner.spark_step("land", "--data-dir", str(data_dir), "--batch", "1")
    log(f"[bench] {spec.label}: full dbt build")
    keep("full", runner.replayed_builds("full", 1, threads=args.full_build_threads))
    if not args.no_floor:
        log(f"[bench] {spec.label}: parse floor")
        floor = report["parse_floor"] = runner.spark_step("parse-floor")
        floor["seconds"] = sum(d["seconds"] for d in floor["dialects"].values())
        floor["cpu_seconds"] = sum(d["cpu_seconds"] for d in floor["dialects"].values())
        if set(spec.dialects) & set(python_staged_dialects()):
            log(f"[bench] {spec.label}: decoder floor of the Python staging models")
            report["decoder_floor"] = runner.spark_step("decoder-floor")
    if args.staging_steps:
        log(f"[bench] {spec.label}: each SQL staging model taken apart, warm (staging steps)")
        report["staging_steps"] = runner.spark_step("staging-steps", "--target", str(runner.dir / "target-full"))
    if not args.no_incremental and batch2 and args.runs > 1:
        successive_runs(
            runner, report, data_dir, delta_file(spec.delta) if spec.delta else "batch-2.parquet", args.runs
        )
    elif not args.no_incremental and batch2:
        landed = spec.delta or batch2
        log(f"[bench] {spec.label}: landing {landed:,} messages of batch 2 and incremental dbt build")
        report["land_batch2"] = runner.spark_step("land", *incremental_land)
        keep("incremental", runner.replayed_builds("incremental", args.repeats))
    if "incremental" in report and not args.no_rerun:
        log(f"[bench] {spec.label}: dbt build again with nothing new landed (rerun)")
        # A rerun writes nothing: each repeat finds the warehouse as the one before it did.
        keep("rerun", runner.alternated("rerun", args.repeats))
    if args.backfill:
        batch1_land = ["--data-dir", str(data_dir), "--batch", "1"]
        backfill(runner, report, [batch1_land, *([incremental_land] if "incremental" in report else [])])
    if args.write_floor:
        log(f"[bench] {spec.label}: write floor")
        written = report["write_floor"] = runner.spark_step("write-floor")
        written["seconds"] = sum(t["read_write_seconds"] for t in written["tables"].values())
        written["cpu_seconds"] = sum(t["read_write_cpu_seconds"] for t in written["tables"].values())
    report["figures"] = figures(report)
    return report


def successive_runs(runner: Runner, report: dict[str, Any], data_dir: Path, whole: str, runs: int) -> None:
    """--runs: what the incremental run lands (`whole`: each dialect's delta or batch 2 file)
    landed in `runs` parts of successive offsets, a minute apart, each built by an incremental
    `dbt build` of its own, as a deployment building every few minutes sees it; after each, the
    data files of every table the build writes (data_files). The last run stands for the
    incremental run in the figures: what a run costs once runs before it have left their files."""
    report["runs"] = []
    for run, name in enumerate(split_runs(data_dir, report["dialects"], whole, runs), 1):
        log(f"[bench] {report['workload']}: run {run} of {runs}: landing {name} and incremental dbt build")
        landing = ["--data-dir", str(data_dir), "--batch", "2", "--file", name, "--minutes-after", str(run - 1)]
        landed = runner.spark_step("land", *landing, label=f"run{run}")
        built = runner.dbt_build(f"run-{run}")
        report["runs"].append({**built, "messages": sum(landed["rows"].values()), "data_files": data_files(runner)})
    report["incremental"] = report["runs"][-1]


def data_files(runner: Runner) -> dict[str, int]:
    """Visible data files of each table of the main warehouse but the landing tables (schema.table)."""
    counts = {}
    for schema in sorted(runner.warehouse.glob("*.db")):
        if schema.name == "landing.db":
            continue
        for table in sorted(p for p in schema.iterdir() if p.is_dir()):
            counts[f"{schema.stem}.{table.name}"] = sum(
                1
                for folder, _, names in os.walk(table)
                for name in names
                if not name.startswith(("_", "."))
                and not any(part.startswith(("_", ".")) for part in Path(folder).relative_to(table).parts)
            )
    return counts


def backfill(runner: Runner, report: dict[str, Any], landings: list[list[str]]) -> None:
    """The backfill: every message the main warehouse holds (`landings`: batch 1, and what the
    incremental run landed) landed at once in the empty build's warehouse, whose tables exist, and
    built by one `dbt build` without --full-refresh, so every incremental model takes its
    incremental path over about the whole workload (in the default 2g driver: no key set may go
    through the driver's memory unbounded). Then both warehouses' digests (spark_steps.py
    digest): the backfill must leave every table as the full build and the incremental run did."""
    label = report["workload"]
    log(f"[bench] {label}: backfill: landing what the full and incremental builds read in the empty build's warehouse")
    report["land_backfill"] = [
        runner.spark_step("land", *landing, warehouse=runner.empty_warehouse, label=f"backfill-{i}")
        for i, landing in enumerate(landings, 1)
    ]
    log(f"[bench] {label}: backfill: dbt build without --full-refresh over every message at once")
    report["backfill"] = runner.dbt_build("backfill", warehouse=runner.empty_warehouse)
    log(f"[bench] {label}: backfill: comparing its tables with the full and incremental builds'")
    ours = runner.spark_step("digest", warehouse=runner.empty_warehouse, label="backfill")["tables"]
    theirs = runner.spark_step("digest", label="main")["tables"]
    differing = sorted(name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name))
    report["backfill_check"] = {"tables": len(ours.keys() | theirs.keys()), "differing": differing}
    for name in differing:
        log(f"[bench] {label}: ! backfill differs in {name}: {ours.get(name)} against {theirs.get(name)}")


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of one workload (None where a step did not run or failed).

    Build figures exclude start-up (JVM, dbt parse): first node start to last node end.  CPU
    seconds (the dbt process, its JVM and Python workers) measure the work; wall seconds also
    measure everybody else's load on a shared machine.
    """
    full, incremental, rerun = report["full"], report.get("incremental", {}), report.get("rerun", {})
    empty, written, backfilled = report.get("empty", {}), report.get("write_floor", {}), report.get("backfill", {})
    checked = report.get("backfill_check", {})
    floor = report.get("parse_floor", {})
    runs = report.get("runs", [])
    messages = report["messages"]["batch1"]
    delta = report.get("delta", {}).get("messages")
    build, build_cpu = full.get("build_seconds"), full.get("build_cpu_seconds")
    wall = full["process"]["wall_seconds"]
    peaks = [run.get("process", {}).get("peak_driver_rss_mib", 0) for run in (full, incremental, rerun)]
    return {
        "messages": messages,
        "full_wall_seconds": round(wall, 1),
        "full_build_seconds": rounded(build),
        "full_build_cpu_seconds": build_cpu,
        "messages_per_second_wall": round(messages / wall),
        "messages_per_second_build": round(messages / build) if build else None,
        "messages_per_cpu_second": round(messages / build_cpu) if build_cpu else None,
        "parse_floor_seconds": rounded(floor.get("seconds")),
        "parse_floor_cpu_seconds": rounded(floor.get("cpu_seconds")),
        "full_build_over_parse_floor": ratio(build, floor.get("seconds")),
        "full_build_over_parse_floor_cpu": ratio(build_cpu, floor.get("cpu_seconds")),
        "incremental_wall_seconds": rounded(incremental.get("process", {}).get("wall_seconds")),
        "incremental_build_seconds": rounded(incremental.get("build_seconds")),
        "incremental_build_cpu_seconds": incremental.get("build_cpu_seconds"),
        "incremental_over_full_wall": ratio(incremental.get("process", {}).get("wall_seconds"), wall),
        "incremental_over_full_build": ratio(incremental.get("build_seconds"), build),
        "incremental_over_full_build_cpu": ratio(incremental.get("build_cpu_seconds"), build_cpu),
        # The delta (--delta) or, without one, the whole batch 2; with --runs, the last run's part.
        "delta": delta,
        "incremental_messages": (
            runs[-1]["messages"] if runs else (delta or report["messages"]["batch2"]) if incremental else None
        ),
        "runs": len(runs) or None,
        "first_run_build_seconds": rounded(runs[0].get("build_seconds")) if runs else None,
        "last_over_first_run": ratio(runs[-1].get("build_seconds"), runs[0].get("build_seconds")) if runs else None,
        "data_files_after_first_run": sum(runs[0]["data_files"].values()) if runs else None,
        "data_files_after_last_run": sum(runs[-1]["data_files"].values()) if runs else None,
        "incremental_over_empty_build": ratio(incremental.get("build_seconds"), empty.get("build_seconds")),
        "rerun_over_empty_build": ratio(rerun.get("build_seconds"), empty.get("build_seconds")),
        "empty_build_seconds": rounded(empty.get("build_seconds")),
        # --repeats: every run's build seconds, in run order (the figures above are the median's).
        "empty_build_runs": repeats_of(empty),
        "incremental_build_runs": repeats_of(incremental),
        "rerun_build_runs": repeats_of(rerun),
        "empty_over_parse_floor": ratio(empty.get("build_seconds"), floor.get("seconds")),
        "write_floor_seconds": rounded(written.get("seconds")),
        "rerun_build_seconds": rounded(rerun.get("build_seconds")),
        "rerun_over_full_build": ratio(rerun.get("build_seconds"), build),
        "peak_driver_rss_mib": max(peaks),
        "build_problems": sum(len(run.get("problems", [])) for run in (full, incremental, rerun, empty, backfilled)),
        "backfill_messages": sum(sum(landed["rows"].values()) for landed in report["land_backfill"])
        if backfilled
        else None,
        "backfill_build_seconds": rounded(backfilled.get("build_seconds")),
        "backfill_build_cpu_seconds": backfilled.get("build_cpu_seconds"),
        "backfill_over_full_build": ratio(backfilled.get("build_seconds"), build),
        "backfill_peak_driver_rss_mib": backfilled.get("process", {}).get("peak_driver_rss_mib"),
        "backfill_returncode": backfilled.get("process", {}).get("returncode"),
        # Tables whose rows differ from the main warehouse's (0: the backfill built the same).
        "backfill_tables_differing": len(checked["differing"]) if checked else None,
    }


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def repeats_of(build: dict[str, Any]) -> list[float | None] | None:
    """The build seconds of each run of a repeated build (--repeats); None for a build run once."""
    return [rounded(seconds) for seconds in build["repeats"]] if "repeats" in build else None


COLUMNS = (
    ("workload", "workload", "{}"),
    ("messages", "messages", "{:,}"),
    ("wall s", "full_wall_seconds", "{:.0f}"),
    ("build s", "full_build_seconds", "{:.0f}"),
    ("build CPU s", "full_build_cpu_seconds", "{:.0f}"),
    ("msg/s", "messages_per_second_build", "{:,}"),
    ("msg/CPU s", "messages_per_cpu_second", "{:,}"),
    ("floor s", "parse_floor_seconds", "{:.1f}"),
    ("floor CPU s", "parse_floor_cpu_seconds", "{:.1f}"),
    ("build/floor", "full_build_over_parse_floor", "{:.1f}"),
    ("(CPU)", "full_build_over_parse_floor_cpu", "{:.1f}"),
    ("empty s", "empty_build_seconds", "{:.0f}"),
    ("write floor s", "write_floor_seconds", "{:.0f}"),
    ("incr build s", "incremental_build_seconds", "{:.0f}"),
    ("incr/full", "incremental_over_full_build", "{:.2f}"),
    ("(CPU)", "incremental_over_full_build_cpu", "{:.2f}"),
    ("rerun s", "rerun_build_seconds", "{:.0f}"),
    ("rerun/full", "rerun_over_full_build", "{:.2f}"),
    ("peak MiB", "peak_driver_rss_mib", "{:,}"),
    ("problems", "build_problems", "{}"),
)
BACKFILL_COLUMNS = (
    ("workload", "workload", "{}"),
    ("messages", "backfill_messages", "{:,}"),
    ("build s", "backfill_build_seconds", "{:.0f}"),
    ("build CPU s", "backfill_build_cpu_seconds", "{:.0f}"),
    ("/full build", "backfill_over_full_build", "{:.2f}"),
    ("peak MiB", "backfill_peak_driver_rss_mib", "{:,}"),
    ("exit", "backfill_returncode", "{}"),
    ("tables differing", "backfill_tables_differing", "{}"),
)

REPEAT_COLUMNS = (
    ("workload", "workload", "{}"),
    ("build", "build", "{}"),
    ("runs s", "runs", "{}"),
    ("median s", "median", "{:.1f}"),
    ("max/min", "spread", "{:.2f}"),
)
# The builds --repeats runs several times: the figures of each run's seconds and of the median run's.
REPEATED = {
    "empty": ("empty_build_runs", "empty_build_seconds"),
    "incr": ("incremental_build_runs", "incremental_build_seconds"),
    "rerun": ("rerun_build_runs", "rerun_build_seconds"),
}


GROWTH_COLUMNS = (
    ("workload", "workload", "{}"),
    ("messages", "messages", "{:,}"),
    ("delta", "incremental_messages", "{:,}"),
    ("empty s", "empty_build_seconds", "{:.0f}"),
    ("full s", "full_build_seconds", "{:.0f}"),
    ("incr s", "incremental_build_seconds", "{:.0f}"),
    ("rerun s", "rerun_build_seconds", "{:.0f}"),
    ("rerun/empty", "rerun_over_empty_build", "{:.2f}"),
    ("incr/empty", "incremental_over_empty_build", "{:.2f}"),
    ("ref", "reference", "{}"),
    ("incr/ref incr", "incremental_over_reference", "{:.2f}"),
)
# --against: each build's rounds, the other project's and this one's (paired_rows).
PAIRED_COLUMNS = (
    ("workload", "workload", "{}"),
    ("build", "build", "{}"),
    ("against s", "against", "{}"),
    ("this s", "this", "{}"),
    ("this/against", "ratios", "{}"),
    ("median", "median", "{:.2f}"),
)
# The builds whose node times are put side by side, model by model, and their short names.
BUILDS = {"empty": "empty", "full": "full", "incremental": "incr", "rerun": "rerun", "backfill": "backfill"}
SIDE_BY_SIDE = ("empty", "incremental", "rerun")


# What each staging model may cost at most: a SQL model against its dialect's parse floor, a
# Python model against its decoder floor, the staging layer of several dialects against the
# whole parse floor (docs/benchmarks.md, "What the figures mean").
STAGING_TARGETS = {"SQL": 3.0, "Python": 2.0, "layer": 4.0}
STAGING_COLUMNS = (
    ("workload", "workload", "{}"),
    ("staging model", "model", "{}"),
    ("kind", "kind", "{}"),
    ("node s", "seconds", "{:.1f}"),
    ("CPU s", "cpu_seconds", "{:.1f}"),
    ("parse floor s", "parse_floor_seconds", "{:.1f}"),
    ("/parse", "over_parse_floor", "{:.1f}"),
    ("decoder floor s", "decoder_floor_seconds", "{:.1f}"),
    ("/decoder", "over_decoder_floor", "{:.2f}"),
    ("target", "target", "{}"),
    ("met", "met", "{}"),
)


# What a SQL staging model pays beyond its floor, warm (spark_steps.py staging-steps).
STAGING_STEP_COLUMNS = (
    ("workload", "workload", "{}"),
    ("staging model", "model", "{}"),
    ("parse floor s", "parse_floor_seconds", "{:.2f}"),
    ("function s", "function_seconds", "{:.2f}"),
    ("select s", "select_seconds", "{:.2f}"),
    ("written s", "written_seconds", "{:.2f}"),
    ("written/floor", "written_over_parse_floor", "{:.1f}"),
    ("rounds", "rounds", "{}"),
)


def staging_step_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each SQL staging model of --staging-steps: its warm medians and how many rounds ran."""
    models = report.get("staging_steps", {}).get("dialects", {}).values()
    return [{"workload": report["workload"], **steps, "rounds": len(steps["rounds"])} for steps in models]


def staging_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each staging model of the full build against its dialect's floors and target and, for a
    workload of several dialects, the staging layer (its first start to its last end) against
    the sum of their parse floors."""
    parse = report.get("parse_floor", {}).get("dialects", {})
    decoder = report.get("decoder_floor", {}).get("dialects", {})
    python = set(decoder) | set(python_staged_dialects())
    # With more than one dbt thread (the profile's 4 when --threads is not given) models ran side by
    # side on the same cores: a model's node seconds include its neighbours' work, so it is shown
    # and not judged. Reports from before the builds' threads were kept are judged as they were.
    overlapped = "threads" in report["full"] and report["full"]["threads"] != 1
    rows = []
    for model in report["full"].get("models", []):
        dialect = model["model"].removeprefix("stg_").removesuffix("__changes")
        # A single-dialect workload built with --select staging also builds the others on empty tables.
        if model["layer"] != "staging" or dialect not in report.get("dialects", [dialect]):
            continue
        kind = "Python" if dialect in python else "SQL"
        floors = {"parse": parse.get(dialect, {}).get("seconds"), "decoder": decoder.get(dialect, {}).get("seconds")}
        rows.append(
            staging_row(report, model["model"], kind, model["seconds"], model.get("cpu_seconds"), floors, overlapped)
        )
    layer = layers(report["full"]).get("staging", {})
    if len(report.get("dialects", [])) > 1 and "last_end" in layer:
        floors = {"parse": report["parse_floor"].get("seconds") if parse else None, "decoder": None}
        span = layer["last_end"] - layer["first_start"]
        rows.append(staging_row(report, "(staging layer)", "layer", span, None, floors))
    return rows


def staging_row(
    report: dict[str, Any],
    model: str,
    kind: str,
    seconds: float,
    cpu_seconds: float | None,
    floors: dict[str, float | None],
    overlapped: bool = False,
) -> dict[str, Any]:
    """`overlapped`: the node ran beside others (staging_rows), so it gets its ratios, not a verdict."""
    judged_by = "decoder" if kind == "Python" else "parse"
    limit, over = STAGING_TARGETS[kind], ratio(seconds, floors[judged_by])
    return {
        "workload": report["workload"],
        "model": model,
        "kind": kind,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "parse_floor_seconds": floors["parse"],
        "over_parse_floor": ratio(seconds, floors["parse"]),
        "decoder_floor_seconds": floors["decoder"],
        "over_decoder_floor": ratio(seconds, floors["decoder"]),
        "target": f"<= {limit:g}x {judged_by}" + (" (nodes overlapped)" if overlapped else ""),
        "met": None if over is None or overlapped else ("yes" if over <= limit else "no"),
    }


def cell(value: Any, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def render(columns: tuple[tuple[str, str, str], ...], rows: list[dict[str, Any]]) -> list[str]:
    """An aligned text table: one line of headers, one per row of values."""
    texts = [[name for name, _, _ in columns], *([cell(row.get(key), fmt) for _, key, fmt in columns] for row in rows)]
    widths = [max(len(text[i]) for text in texts) for i in range(len(columns))]
    return ["  ".join(text.rjust(width) for text, width in zip(row, widths, strict=True)) for row in texts]


def figure_row(report: dict[str, Any]) -> dict[str, Any]:
    return {"workload": report["workload"], **report["figures"]}


def growth_rows(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each workload's figures and, when its incremental run landed a delta (--delta), its
    incremental build relative to the reference: the workload of the fewest messages in
    `reports` with the same dialects and the same delta (incr(mixed:5M) / incr(mixed:1M))."""
    rows = []
    for report in reports:
        row = figure_row(report)
        peers = [
            other
            for other in reports
            if row.get("delta") is not None
            and other["figures"].get("delta") == row["delta"]
            and other.get("dialects") == report.get("dialects")
        ]
        if peers:
            reference = min(peers, key=lambda other: other["figures"]["messages"])
            row["reference"] = reference["workload"]
            row["incremental_over_reference"] = ratio(
                row["incremental_build_seconds"], reference["figures"]["incremental_build_seconds"]
            )
        rows.append(row)
    return rows


RUN_COLUMNS = (
    ("workload", "workload", "{}"),
    ("run", "run", "{}"),
    ("messages", "messages", "{:,}"),
    ("build s", "build_seconds", "{:.1f}"),
    ("build CPU s", "build_cpu_seconds", "{:.1f}"),
    ("/first run", "over_first", "{:.2f}"),
    ("data files", "files", "{:,}"),
    ("most files", "most", "{}"),
)


def repeat_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each build that ran several times (--repeats): every run's build seconds in run order, the
    median (the run median_run chose, whose figures the report shows) and the largest over the
    smallest."""
    rows = []
    for build, (runs_key, median_key) in REPEATED.items():
        runs = report["figures"].get(runs_key)
        if not runs:
            continue
        done = [seconds for seconds in runs if seconds is not None]
        rows.append(
            {
                "workload": report["workload"],
                "build": build,
                "runs": " ".join("-" if seconds is None else f"{seconds:.1f}" for seconds in runs),
                "median": report["figures"][median_key],
                "spread": ratio(max(done), min(done)) if done else None,
            }
        )
    return rows


def run_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each of the successive runs (--runs): its build and the data files the tables hold after it,
    with the three tables holding most."""
    rows = []
    first = report["runs"][0].get("build_seconds")
    for number, run in enumerate(report["runs"], 1):
        files = run["data_files"]
        most = sorted(files, key=lambda name: (-files[name], name))[:3]
        rows.append(
            {
                "workload": report["workload"],
                "run": number,
                "messages": run["messages"],
                "build_seconds": run.get("build_seconds"),
                "build_cpu_seconds": run.get("build_cpu_seconds"),
                "over_first": ratio(run.get("build_seconds"), first),
                "files": sum(files.values()),
                "most": ", ".join(f"{name.split('.')[-1]} {files[name]}" for name in most),
            }
        )
    return rows


def table(reports: list[dict[str, Any]]) -> str:
    lines = render(COLUMNS, [figure_row(report) for report in reports])
    lines += ["", "Incremental cost against the empty build and, with a delta, against the smallest history:"]
    lines += render(GROWTH_COLUMNS, growth_rows(reports))
    repeated = [row for report in reports for row in repeat_rows(report)]
    if repeated:
        lines += ["", "Builds run several times (--repeats): the median run's figures stand above:"]
        lines += render(REPEAT_COLUMNS, repeated)
    staged = [row for report in reports for row in staging_rows(report)]
    if staged:
        lines += ["", "Staging models of the full build against their dialect's floors:"]
        lines += render(STAGING_COLUMNS, staged)
    steps = [row for report in reports for row in staging_step_rows(report)]
    if steps:
        lines += ["", "SQL staging models taken apart, warm (--staging-steps; medians after the first round):"]
        lines += render(STAGING_STEP_COLUMNS, steps)
    ran = [row for report in reports if report.get("runs") for row in run_rows(report)]
    if ran:
        lines += ["", "Successive incremental runs (--runs), each landing its part of the new messages:"]
        lines += render(RUN_COLUMNS, ran)
    backfilled = [figure_row(report) for report in reports if built(report, "backfill")]
    if backfilled:
        lines += ["", "Backfill: every message at once into built tables, without --full-refresh:"]
        lines += render(BACKFILL_COLUMNS, backfilled)
    for report in reports:
        for label in BUILDS:
            if built(report, label):
                lines += where_time_goes(report["workload"], label, report[label])
    columns = [(r["workload"], BUILDS[label], r[label]) for r in reports for label in SIDE_BY_SIDE if built(r, label)]
    lines += side_by_side("Node s of the builds, model by model", columns)
    for report in reports:
        if report.get("against"):
            lines += against_lines(report)
    return "\n".join(lines)


def against_workload(report: dict[str, Any]) -> dict[str, Any]:
    """The workload as the --against project built it: the same landings and floors, its builds."""
    shared = {key: value for key, value in report.items() if key not in BUILDS and key not in ("against", "figures")}
    return shared | {label: build for label, build in report["against"].items() if label in BUILDS}


def paired_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each build both projects ran (--against): every round's build seconds of each, in run order,
    and this project's over the other's round by round, with the median of those ratios, which a
    drift of the machine between rounds moves less than a ratio of the two medians."""
    rows = []
    for label in BUILDS:
        ours, theirs = report.get(label, {}), report["against"].get(label, {})
        if not (built(report, label) and theirs.get("build_seconds") is not None):
            continue
        ours_runs, theirs_runs = (build.get("repeats") or [build.get("build_seconds")] for build in (ours, theirs))
        ratios = [ratio(a, b) for a, b in zip(ours_runs, theirs_runs, strict=False)]
        done = sorted(r for r in ratios if r is not None)
        rows.append(
            {
                "workload": report["workload"],
                "build": BUILDS[label],
                "against": " ".join(cell(s, "{:.1f}") for s in theirs_runs),
                "this": " ".join(cell(s, "{:.1f}") for s in ours_runs),
                "ratios": " ".join(cell(r, "{:.2f}") for r in ratios),
                "median": done[(len(done) - 1) // 2] if done else None,
            }
        )
    return rows


def against_lines(report: dict[str, Any]) -> list[str]:
    """Both projects' builds of one workload (--against): round by round, then model by model."""
    other = against_workload(report)
    lines = ["", f"{report['workload']}: this project against {report['against']['project_dir']}, round by round:"]
    lines += render(PAIRED_COLUMNS, paired_rows(report))
    lines += [
        f"  ! against {BUILDS[label]}: {p['node']}: {p['status']}: {(p.get('message') or '')[:200]}"
        for label in BUILDS
        for p in report["against"].get(label, {}).get("problems", [])
    ]
    columns = [
        (report["workload"], f"{tag} {BUILDS[label]}", workload[label])
        for label in BUILDS
        if built(report, label) and built(other, label)
        for tag, workload in (("against", other), ("this", report))
    ]
    title = f"{report['workload']}: node s of both projects, model by model"
    return lines + side_by_side(title, columns, pairs=True, ratio_label="this/against")


def built(report: dict[str, Any], label: str) -> bool:
    return report.get(label, {}).get("build_seconds") is not None


def node_rows(builds: list[dict[str, Any]]) -> list[tuple[str, list[float | None]]]:
    """Rows of node seconds of several builds: the build's span, each layer, each model (the
    costliest in any of the builds first); None where a build has no such node."""
    model_seconds = [{m["model"]: m["seconds"] for m in build.get("models", [])} for build in builds]

    def costliest_first(name: str) -> tuple[float, str]:
        return -max(seconds.get(name, 0.0) for seconds in model_seconds), name

    layer_names = dict.fromkeys(name for build in builds for name in layers(build))
    rows = [("build s (first start to last end)", [build.get("build_seconds") for build in builds])]
    rows += [
        (f"{name} (node s)", [layers(build).get(name, {}).get("seconds") for build in builds]) for name in layer_names
    ]
    models = sorted({name for seconds in model_seconds for name in seconds}, key=costliest_first)
    return rows + [(f"  {name}", [seconds.get(name) for seconds in model_seconds]) for name in models]


def side_by_side(
    title: str, columns: list[tuple[str, str, dict[str, Any]]], pairs: bool = False, ratio_label: str = "after/before"
) -> list[str]:
    """Node seconds of several builds model by model, one column each, headed by workload and
    build.  With `pairs` the columns go by two (before, after), each pair followed by after/before
    (headed `ratio_label`)."""
    headers = [[workload for workload, _, _ in columns], [label for _, label, _ in columns]]
    if pairs:
        half = len(columns) // 2
        headers = [by_pairs(headers[0], [""] * half), by_pairs(headers[1], [ratio_label] * half)]
    lines = ["", title, *(f"  {'':<44}" + "".join(f"{text:>14}" for text in header) for header in headers)]
    for name, values in node_rows([build for _, _, build in columns]):
        texts = [cell(value, "{:.1f}") for value in values]
        if pairs:
            ratios = [
                cell(ratio(after, before), "{:.2f}") for before, after in zip(values[::2], values[1::2], strict=True)
            ]
            texts = by_pairs(texts, ratios)
        lines.append(f"  {name:<44}" + "".join(f"{text:>14}" for text in texts))
    return lines


def by_pairs(texts: list[str], thirds: list[str]) -> list[str]:
    """`texts` by twos, each two followed by the next of `thirds`."""
    return [text for i, third in enumerate(thirds) for text in (*texts[2 * i : 2 * i + 2], third)]


def compare(paths: list[Path]) -> str:
    """Two reports (before, after) side by side: their figures, and for every workload both ran
    (same workload and delta) each build's node seconds model by model with after/before."""
    before, after = ([w | {"figures": figures(w)} for w in json.loads(p.read_text())["workloads"]] for p in paths)
    tagged = [
        row | {"workload": f"{tag} {row['workload']}"}
        for tag, reports in (("before", before), ("after", after))
        for row in growth_rows(reports)
    ]
    lines = [f"before: {paths[0]}", f"after:  {paths[1]}", "", *render(COLUMNS, tagged)]
    lines += ["", *render(GROWTH_COLUMNS, tagged)]
    matched = {(w["workload"], w["figures"]["delta"]): w for w in after}
    for old in before:
        new = matched.get((old["workload"], old["figures"]["delta"]))
        if new is None:
            continue
        columns = [
            (old["workload"], f"{tag} {BUILDS[label]}", report[label])
            for label in BUILDS
            if built(old, label) and built(new, label)
            for tag, report in (("before", old), ("after", new))
        ]
        lines += side_by_side(f"{old['workload']}: node s before and after, model by model", columns, pairs=True)
    return "\n".join(lines)


def where_time_goes(workload: str, label: str, build: dict[str, Any]) -> list[str]:
    lines = [f"\n{workload}: where the {label} build's time goes"]
    lines.append(f"  {'layer / model':<42} {'node s':>8} {'CPU s':>8} {'from s':>8} {'to s':>8}")
    lines += [
        f"  {name:<42} {layer['seconds']:8.1f} {cell(layer['cpu_seconds'] or None, '{:8.1f}'):>8}"
        f" {cell(layer.get('first_start'), '{:8.0f}'):>8} {cell(layer.get('last_end'), '{:8.0f}'):>8}"
        for name, layer in layers(build).items()
    ]
    lines += [
        f"    {m['model']:<40} {m['seconds']:8.1f} {cell(m.get('cpu_seconds'), '{:8.1f}'):>8}"
        for m in build.get("models", [])[:TOP_MODELS]
    ]
    lines += [f"  ! {p['node']}: {p['status']}: {(p.get('message') or '')[:200]}" for p in build.get("problems", [])]
    return lines


def layers(build: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per layer node seconds and CPU seconds (reports before CPU accounting: seconds only)."""
    if "per_layer" in build:
        return build["per_layer"]
    return {name: {"seconds": s, "cpu_seconds": 0.0} for name, s in build.get("per_layer_seconds", {}).items()}


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workloads",
        nargs="+",
        default=list(DEFAULT_WORKLOADS),
        metavar="SPEC",
        help=f"DIALECTS:SIZE, e.g. mixed:100k, canal_json:1M (default: {' '.join(DEFAULT_WORKLOADS)})",
    )
    parser.add_argument("--quick", action="store_true", help=f"smoke run: {' '.join(QUICK_WORKLOADS)}")
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path("/tmp/cdc-unify-bench"),
        help="generated workloads (kept and reused) and run folders (default /tmp/cdc-unify-bench)",
    )
    parser.add_argument("--report", type=Path, help="JSON report (default WORK_DIR/report-<time>.json)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--master", default="local[2]", help="Spark master of every step (default local[2])")
    parser.add_argument("--driver-memory", default="2g", help="Spark driver memory (default 2g, the profile's)")
    parser.add_argument(
        "--conf",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="Spark settings of every step (CDC_UNIFY_SPARK_CONF), e.g. spark.sql.codegen.wholeStage=false",
    )
    parser.add_argument("--select", nargs="+", help="dbt selection instead of the whole project (e.g. staging)")
    parser.add_argument(
        "--threads",
        type=int,
        help="dbt threads (default: the profile's 4); with 1, nodes run one at a time and get their own CPU seconds",
    )
    parser.add_argument(
        "--full-build-threads",
        type=int,
        metavar="N",
        help="dbt threads of the full build alone (default: --threads); e.g. --threads 1 --full-build-threads 4"
        " times the incremental runs node by node without a one-thread full build of mixed:5M (an hour more)",
    )
    parser.add_argument(
        "--empty-build",
        action="store_true",
        help="first build the project on empty landing tables (own warehouse): its cost grows with no data",
    )
    parser.add_argument(
        "--write-floor",
        action="store_true",
        help="last, read and write again every table the build made (what writing its output costs)",
    )
    parser.add_argument(
        "--staging-steps",
        action="store_true",
        help="after the full build, each SQL staging model's floor, message function, select and write, warm",
    )
    parser.add_argument("--no-floor", action="store_true", help="skip the parse floor")
    parser.add_argument(
        "--backfill",
        action="store_true",
        help="last, land everything the full and incremental builds read in the empty build's warehouse at once,"
        " build without --full-refresh and check that every table equals the main warehouse's (implies --empty-build)",
    )
    parser.add_argument(
        "--delta",
        type=parse_size,
        metavar="N",
        help="the incremental run lands N messages (e.g. 10000, 10k) of batch 2's mix instead of the ~1%% batch 2;"
        " batch 1 then holds about the workload's size",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        metavar="K",
        help="land the incremental run's messages (the delta, or batch 2) in K parts, one incremental build"
        " each (a deployment building every few minutes); the last stands for the incremental run",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="N",
        help="run the empty build, the incremental run (each from a copy of the warehouse before it) and the"
        " rerun N times each and take the median run's figures, every run's build seconds listed",
    )
    parser.add_argument("--no-incremental", action="store_true", help="skip the incremental run")
    parser.add_argument(
        "--no-rerun", action="store_true", help="skip the build with nothing new after the incremental run"
    )
    parser.add_argument(
        "--project-dir",
        type=Path,
        default=ROOT,
        help="dbt project to build (default: this checkout); e.g. a copy with a proposed model change",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="PROJECT_DIR",
        help="a second dbt project (e.g. a worktree of the commit before a change): every build runs for it and"
        " for --project-dir in turn, from the same warehouse state, and the report sets them side by side;"
        " both must store the same tables (the builds after each continue from --project-dir's)",
    )
    parser.add_argument("--show", nargs="+", type=Path, metavar="REPORT", help="print the table of earlier reports")
    parser.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("BEFORE", "AFTER"),
        help="print two earlier reports side by side, each build model by model",
    )
    args = parser.parse_args(argv)
    if args.compare:
        print(compare(args.compare))
        return 0
    if args.show:
        print(
            table(
                [w | {"figures": figures(w)} for path in args.show for w in json.loads(path.read_text())["workloads"]]
            )
        )
        return 0
    try:
        specs = [
            with_delta(parse_spec(text), args.delta) for text in (QUICK_WORKLOADS if args.quick else args.workloads)
        ]
        env_conf(" ".join(args.conf))
        if args.runs < 1 or (args.runs > 1 and args.backfill):
            raise ValueError("--runs takes a count of at least 1, and no --backfill (which lands the messages at once)")
        if args.repeats < 1 or (args.repeats > 1 and args.runs > 1):
            raise ValueError(
                "--repeats takes a count of at least 1, and no --runs (each of whose runs lands new messages)"
            )
        if args.against and (args.runs > 1 or args.backfill):
            raise ValueError("--against takes no --runs or --backfill (builds that land messages between them)")
        if args.against and not (args.against / "dbt_project.yml").is_file():
            raise ValueError(f"--against {args.against}: no dbt_project.yml there")
    except ValueError as exc:
        parser.error(str(exc))
    args.work_dir = args.work_dir.resolve()
    started = dt.datetime.now(dt.UTC)
    report_path = args.report or args.work_dir / f"report-{started:%Y%m%dT%H%M%SZ}.json"
    report: dict[str, Any] = {
        "started_at": started.isoformat(),
        "machine": machine(),
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "workloads": [],
    }
    for spec in specs:
        try:
            report["workloads"].append(bench_workload(args, spec))
        except RuntimeError as exc:
            log(f"[bench] {spec.label}: {exc}")
            report.setdefault("failed", []).append({"workload": spec.label, "error": str(exc)})
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report["workloads"]))
    print(f"\nreport: {report_path}")
    differing = any(w["figures"]["backfill_tables_differing"] for w in report["workloads"])
    not_run = builds_not_run(report)
    if not_run:
        print(f"\nbuilds that ran no node: {', '.join(not_run)}")
    return 1 if report.get("failed") or differing or not_run else 0


if __name__ == "__main__":
    raise SystemExit(main())
