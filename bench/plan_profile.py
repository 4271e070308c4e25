"""Where a SQL model's time goes: Spark query planning against execution.

After a `dbt build` (e.g. a bench run's folder), every compiled SQL model is run again on the
same warehouse, in one fresh session, each three ways in order:
- analysis: `spark.sql(model)` (parse, resolve names and types);
- planning: optimizing and physical planning of the analysed query (`executedPlan`);
- total: the whole query again into Spark's `noop` sink (plans again, computes every row,
  stores nothing); execution = total - analysis - planning.
A model whose planning dominates gains nothing from more cores or less data; it needs a
smaller plan (fewer inlined CTE copies, fewer wide projections).

    nice .venv/bin/python bench/plan_profile.py --run-dir /tmp/cdc-unify-bench/runs/mixed-100k --label full
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_unify.spark import get_spark


def compiled_models(target: Path, names: list[str] | None) -> dict[str, str]:
    """Model name -> compiled SQL of the SQL models of a dbt target folder."""
    models = {}
    for path in sorted((target / "compiled").glob("*/models/**/*.sql")):
        # Generic data tests compile to folders named after their .yml file.
        is_test = any(part.endswith(".yml") for part in path.parts)
        if not is_test and (names is None or path.stem in names):
            models[path.stem] = path.read_text()
    return models


def profile(spark: SparkSession, sql: str) -> dict[str, float]:
    started = time.perf_counter()
    frame = spark.sql(sql)
    analysed = time.perf_counter()
    frame._jdf.queryExecution().executedPlan()
    planned = time.perf_counter()
    spark.sql(sql).write.format("noop").mode("overwrite").save()
    finished = time.perf_counter()
    analysis, planning = analysed - started, planned - analysed
    total = finished - planned
    return {
        "analysis_seconds": round(analysis, 2),
        "planning_seconds": round(planning, 2),
        "execution_seconds": round(max(total - analysis - planning, 0.0), 2),
        "total_seconds": round(total, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", type=Path, required=True, help="a bench run folder (warehouse/, target-*/)")
    parser.add_argument("--label", default="full", help="which build's compiled SQL: target-LABEL (default full)")
    parser.add_argument("--models", nargs="+", help="only these models")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--result", type=Path, help="JSON file for the figures (default RUN_DIR/plan-profile.json)")
    args = parser.parse_args(argv)

    models = compiled_models(args.run_dir / f"target-{args.label}", args.models)
    spark = get_spark(master=args.master, warehouse=str(args.run_dir / "warehouse"))
    figures = {}
    print(f"{'model':<40} {'analysis s':>10} {'planning s':>10} {'execution s':>11}")
    for name, sql in models.items():
        figures[name] = profile(spark, sql)
        f = figures[name]
        print(
            f"{name:<40} {f['analysis_seconds']:>10.1f} {f['planning_seconds']:>10.1f} {f['execution_seconds']:>11.1f}"
        )
    (args.result or args.run_dir / "plan-profile.json").write_text(json.dumps(figures, indent=2) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
