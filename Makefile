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
# (empty = nothing to load).
DEMO_LOAD ?=

SQL_DIRS := $(wildcard models macros tests analyses)
PY_DIRS := $(wildcard src tests models sqlfluff_libs)
DOCS_PORT ?= 8080

.PHONY: help install java-check demo demo-load lint test docs clean

help:
	@echo "make demo   install, load the sample data, dbt build + docs generate, show how to query"
	@echo "make test   install, lint (ruff, sqlfluff), pytest"
	@echo "make lint   lint only"
	@echo "make docs   dbt docs generate + serve on http://localhost:$(DOCS_PORT)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@

install: $(INSTALLED)

java-check:
	@found=$$(java -version 2>&1 | grep -m 1 version || true); \
	major=$$(echo "$$found" | sed -n 's/.*version "\([0-9]*\).*/\1/p'); \
	if [ -z "$$major" ] || [ "$$major" -lt 17 ]; then \
		echo "Java 17 or newer is required to run Spark (found: $${found:-no java on the PATH})." >&2; \
		echo "Install it, e.g. on Debian/Ubuntu: apt-get install openjdk-17-jre-headless" >&2; \
		exit 1; \
	fi

demo-load: install java-check
ifneq ($(strip $(DEMO_LOAD)),)
	$(DEMO_LOAD)
else
	@echo "demo: no sample-data loading step configured (DEMO_LOAD is empty)"
endif

demo: demo-load
	$(DBT) build
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
	$(BIN)/sqlfluff lint $(SQL_DIRS)

# pytest exits 5 when it collected no test: that is a failure too.
test: install java-check lint
	@$(BIN)/pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; fi; \
	exit $$status

docs: install java-check
	$(DBT) docs generate
	$(DBT) docs serve --host 127.0.0.1 --port $(DOCS_PORT)

clean:
	rm -rf target logs dbt_packages .warehouse
