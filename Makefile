# cdc-unify: `make demo` builds everything on sample data, `make test` lints and tests.
# Both are idempotent: the install step reruns only when pyproject.toml changes.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

# dbt finds the project's profile without flags; Spark's Python workers use the venv's Python.
export DBT_PROFILES_DIR := $(CURDIR)/profiles
export PYSPARK_PYTHON := $(CURDIR)/$(BIN)/python
DBT := $(BIN)/dbt
TARGET_PATH := $(or $(DBT_TARGET_PATH),target)

# The demo's sample-data step: a command that fills the landing tables before `dbt build`
# (empty = nothing to load). The shipped sample (sample/README.md): every dialect's batch-1, then
# its batch-2, under feed sample_<dialect>; files already landed are skipped, so a rerun adds nothing.
DEMO_LOAD ?= $(BIN)/cdc-unify load --generated sample --feed sample --skip-loaded
# What the demo builds: a dbt selection (empty = everything), e.g. `make demo DEMO_SELECT=staging`.
DEMO_SELECT ?=

SQL_DIRS := $(wildcard models macros tests analyses)
PY_DIRS := $(wildcard src tests models sqlfluff_libs bench scripts)
DOCS_PORT ?= 8080

.PHONY: help install java-check demo demo-load lint test docs clean

help:
	@echo "make demo   install, load the sample data, dbt build + docs generate, show how to query"
	@echo "make test   install, lint (ruff, sqlfluff), pytest"
	@echo "make lint   lint only"
	@echo "make docs   dbt docs generate + serve on http://127.0.0.1:$(DOCS_PORT) (Ctrl-C stops it)"
	@echo "make sql-server   JDBC/ODBC endpoint (Spark Thrift server) on localhost:$(SQL_SERVER_PORT); stop: make sql-server-stop"

# The docs-site test (tests/python/test_docs_site.py) drives Debian's Chromium through playwright,
# never a browser download: install it when it is missing and apt-get can (root). Without it the
# test skips and says why; an install failure does not stop `make test`.
CHROMIUM := /usr/bin/chromium

.PHONY: chromium

chromium:
	@if [ -x $(CHROMIUM) ]; then \
		:; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "chromium: $(CHROMIUM) is missing and apt-get cannot install it here (needs root): the docs-site browser test will skip" >&2; \
	else \
		echo "Installing Debian's chromium for the docs-site browser test"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } \
			|| echo "chromium: apt-get install failed: the docs-site browser test will skip" >&2; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@

install: $(INSTALLED)

# Spark needs java; the project's JVM functions (src/cdc_unify/java) need javac once per machine
# and source version, to build the jar every session puts on its classpath (cdc_unify/jvm.py).
java-check: install
	@found=$$(java -version 2>&1 | grep -m 1 version || true); \
	major=$$(echo "$$found" | sed -n 's/.*version "\([0-9]*\).*/\1/p'); \
	if [ -z "$$major" ] || [ "$$major" -lt 17 ]; then \
		echo "Java 17 or newer is required to run Spark (found: $${found:-no java on the PATH})." >&2; \
		echo "Install a JDK, e.g. on Debian/Ubuntu: apt-get install openjdk-17-jdk-headless" >&2; \
		exit 1; \
	fi
	@$(BIN)/python -m cdc_unify.jvm >/dev/null

demo-load: install java-check
ifneq ($(strip $(DEMO_LOAD)),)
	$(DEMO_LOAD)
else
	@echo "demo: no sample-data loading step configured (DEMO_LOAD is empty)"
endif

demo: demo-load
	$(DBT) build $(if $(strip $(DEMO_SELECT)),--select $(DEMO_SELECT))
	@# --no-compile: reuse the build's manifest (and keep its run_results.json for the summary).
	$(DBT) docs generate --no-compile
	@$(BIN)/python -c 'import json, sys; \
	results = json.load(open(sys.argv[1]))["results"]; \
	built = sorted(r["relation_name"] for r in results if r["unique_id"].startswith(("model.", "seed.", "snapshot."))); \
	tests = sum(r["unique_id"].startswith("test.") for r in results); \
	print("\nBuilt %d tables (and ran %d data tests):" % (len(built), tests)); \
	[print("  " + name) for name in built]' $(TARGET_PATH)/run_results.json
	@echo
	@echo "Query them with Spark SQL (unqualified names resolve to the marts' schema):"
	@echo "  $(BIN)/cdc-unify sql \"show tables\""
	@echo "  $(BIN)/cdc-unify sql --format json \"select * from <table> limit 10\""
	@echo "Browse the documentation and lineage: make docs"

lint: install
	$(BIN)/ruff check $(PY_DIRS)
	$(BIN)/ruff format --check $(PY_DIRS)
	$(BIN)/sqlfluff lint --processes 0 $(SQL_DIRS)

# pytest exits 5 when it collected no test: that is a failure too.
# Two pytest-xdist workers: one runs every test that uses the process's SparkSession (one JVM),
# the other the tests that start Spark only in subprocesses, meanwhile (tests/python/conftest.py,
# pytest_xdist_make_scheduler). `make test PYTEST_PARALLEL=` runs them all in one process.
# Where the suite's time goes: docs/test-suite.md.
PYTEST_PARALLEL ?= -n 2
test: install java-check chromium lint
	@$(BIN)/pytest $(PYTEST_PARALLEL); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; fi; \
	exit $$status

# docs/docs-site.md. The server is cdc_unify.commands.docs, not `dbt docs serve` (which ends on Ctrl-C
# with a traceback and opens a browser).
docs: install java-check
	$(DBT) docs generate
	$(BIN)/python -m cdc_unify.commands.docs --target-path $(TARGET_PATH) --port $(DOCS_PORT)

clean:
	rm -rf target logs dbt_packages .warehouse

# Benchmarks (bench/run.py; docs/benchmarks.md): `make bench BENCH_ARGS=--quick` for a smoke run,
# BENCH_ARGS="--workloads mixed:100k" for chosen sizes. Niced: it runs for a long time.
BENCH_ARGS ?=
# The dbt command the cluster demo runs (default: build); docs/cluster.md.
CLUSTER_DEMO_ARGS ?=

.PHONY: bench cluster-demo

bench: install java-check
	nice -n 10 $(BIN)/python bench/run.py $(BENCH_ARGS)

cluster-demo: install java-check
	bash scripts/cluster-demo.sh $(CLUSTER_DEMO_ARGS)

# JDBC/ODBC endpoint (docs/sql-server.md): Spark's Thrift server on the warehouse dbt builds
# (env CDC_UNIFY_WAREHOUSE, default .warehouse). Derby admits one process per metastore: stop
# the server before running dbt or cdc-unify on the same warehouse.
SQL_SERVER_PORT ?= 10000
SQL_SERVER := $(BIN)/python -m cdc_unify.commands.sql_server

.PHONY: sql-server sql-server-stop

sql-server: install java-check
	$(SQL_SERVER) start --port $(SQL_SERVER_PORT)

sql-server-stop: install
	$(SQL_SERVER) stop
