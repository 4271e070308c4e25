"""The dbt docs site: everything documented, served on localhost, lineage graph in headless Chromium.

The tests read one generated site: `dbt parse` + `dbt docs generate --no-compile --empty-catalog` into a
sandbox target. Neither starts Spark: the lineage and every description come from the parse,
and the catalog of an unbuilt warehouse would be empty anyway (`make docs` compiles and reads
the real catalog). The browser is Debian's /usr/bin/chromium driven by playwright (`make test`
installs it with apt-get where it can); the test skips, saying why, only where it is missing.
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from cdc_unify.commands import docs
from cdc_unify.contract import DIALECTS, STAGED_COLUMNS

REPO_ROOT = Path(__file__).resolve().parents[2]
# Packages whose resources the project writes: the dbt project and its adapter plugin's macros.
PROJECT_PACKAGES = ("cdc_unify", "dbt_sparksession")
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The build output the screenshot lands in, as the run was started (the Spark harness later sets
# DBT_TARGET_PATH to its own temporary folder in this process).
BUILD_OUTPUT = REPO_ROOT / os.environ.get("DBT_TARGET_PATH", "target")
SCREENSHOT = "docs-site-lineage.png"
# One message's way through the layers, as the lineage graph must draw it (left to right).
LINEAGE_PATH = (
    "source.cdc_unify.landing.canal_json",
    "model.cdc_unify.stg_canal_json__changes",
    "model.cdc_unify.int_staged_events",
    "model.cdc_unify.int_change_events",
    "model.cdc_unify.int_row_changes",
    "model.cdc_unify.int_row_versions",
    "model.cdc_unify.cdc_row_history",
)
# Folders that hold the project's property (.yml) files, and a `{{ doc("name") }}` call in them.
PROPERTY_FOLDERS = ("models", "macros", "analyses", "seeds", "snapshots", "tests", "src/dbt/include/sparksession")
DOC_CALL = re.compile(r"""\bdoc\(\s*["'](\w+)["']\s*\)""")
BROWSER_TIMEOUT_MS = 30_000

# The graph the page draws, read from the cytoscape instance dbt docs keeps in `window.graph`.
READ_GRAPH_JS = """() => ({
    nodes: Object.fromEntries(window.graph.nodes(':visible').map(n => [n.id(), n.position('x')])),
    edges: window.graph.edges(':visible').map(e => [e.source().id(), e.target().id()]),
})"""
PATH_DRAWN_JS = """ids => window.graph !== undefined && ids.every(
    (id, i) => window.graph.getElementById(id).visible()
        && (i === 0 || window.graph.getElementById(id).position('x')
                       > window.graph.getElementById(ids[i - 1]).position('x')))"""


@pytest.fixture(scope="module")
def site(sandbox_factory) -> Path:
    """A generated docs site (index.html, manifest.json, catalog.json) in a sandbox target."""
    sandbox = sandbox_factory("docs-site")
    # `docs generate --no-compile` writes no manifest.json: `dbt parse` does, and generate reuses that parse.
    for args in (("parse",), ("docs", "generate", "--no-compile", "--empty-catalog")):
        result = sandbox.dbt(*args)
        assert result.returncode == 0, result.output
    assert docs.missing_site_files(sandbox.target) == []
    return sandbox.target


@pytest.fixture(scope="module")
def manifest(site: Path) -> dict[str, Any]:
    return json.loads((site / "manifest.json").read_text())


def own(resources: dict[str, dict]) -> list[dict]:
    return [r for r in resources.values() if r["package_name"] in PROJECT_PACKAGES]


def blank(text: str | None) -> bool:
    return not (text or "").strip()


def undocumented_columns(resource: dict) -> list[str]:
    return [
        f"{resource['unique_id']}.{name}"
        for name, column in resource["columns"].items()
        if blank(column["description"])
    ]


def signature_arguments(macro: dict) -> list[str]:
    """Parameter names of a `{% macro name(...) %}` or `{% test name(...) %}` definition; a
    `{% materialization name, adapter=... %}` takes none (dbt calls it with its context)."""
    if re.match(r"\{%-?\s*materialization\s", macro["macro_sql"]):
        return []
    match = re.match(r"\{%-?\s*(?:macro|test)\s+\w+\s*\((.*?)\)\s*-?%\}", macro["macro_sql"], re.DOTALL)
    assert match, f"no signature found in {macro['unique_id']}"
    # Jinja parameter lists (names, literal defaults) parse as Python ones.
    function = ast.parse(f"def f({match.group(1)}): pass").body[0]
    return [argument.arg for argument in function.args.args]


def macro_documentation_gaps(macro: dict) -> list[str]:
    gaps = ["description"] if blank(macro["description"]) else []
    documented = [argument["name"] for argument in macro["arguments"]]
    if documented != signature_arguments(macro):
        gaps.append(f"arguments {documented} documented, {signature_arguments(macro)} in the signature")
    gaps += [f"argument {a['name']}: no description" for a in macro["arguments"] if blank(a["description"])]
    return gaps


def layer(manifest: dict[str, Any], unique_id: str) -> str:
    """landing for a source, the models/ folder for a model (staging, intermediate, marts)."""
    if unique_id in manifest["sources"]:
        return "landing"
    return Path(manifest["nodes"][unique_id]["original_file_path"]).parts[1]


# ----------------------------------------------------------------------------------- documentation


def test_macro_check_reads_signatures_and_finds_gaps() -> None:
    macro = {
        "unique_id": "macro.demo.m",
        "macro_sql": "{%- macro m(a, b='x, y', c=[1, 2]) -%} select 1 {%- endmacro %}",
        "description": "A demo.",
        "arguments": [{"name": "a", "description": "first"}, {"name": "c", "description": " "}],
    }
    assert signature_arguments(macro) == ["a", "b", "c"]
    assert macro_documentation_gaps(macro) == [
        "arguments ['a', 'c'] documented, ['a', 'b', 'c'] in the signature",
        "argument c: no description",
    ]
    generic_test = {"unique_id": "macro.demo.test_t", "macro_sql": "{% test t(model, column_name) %}{% endtest %}"}
    assert signature_arguments(generic_test) == ["model", "column_name"]


@pytest.mark.slow
def test_every_model_and_model_column_is_documented(manifest: dict[str, Any]) -> None:
    models = [n for n in own(manifest["nodes"]) if n["resource_type"] == "model"]
    assert models
    gaps = [m["unique_id"] for m in models if blank(m["description"])]
    gaps += [column for model in models for column in undocumented_columns(model)]
    assert not gaps, f"models / columns without a description: {gaps}"


# How a model's doc comment says what a run (or, for a view, a query) reads (docs/semantics.md).
SAYS_WHAT_IT_READS = re.compile(r"What (it|a query) reads|\bReads\b|\ba run reads\b")
LEADING_JINJA_COMMENT = re.compile(r"\A\s*\{#-?(.*?)-?#\}", re.DOTALL)


def leading_doc_comment(model: dict) -> str:
    """A model file's doc comment: its leading Jinja comment (SQL) or its module docstring (Python)."""
    if model["language"] == "python":
        return ast.get_docstring(ast.parse(model["raw_code"])) or ""
    found = LEADING_JINJA_COMMENT.match(model["raw_code"])
    return found.group(1) if found else ""


def test_a_doc_comment_says_what_it_reads_or_not() -> None:
    sql = {"language": "sql", "raw_code": "{#- Views.\n    What it reads: the rows. -#}\nselect 1"}
    assert SAYS_WHAT_IT_READS.search(leading_doc_comment(sql))
    not_leading = {"language": "sql", "raw_code": "select 1 {#- What it reads: the rows. -#}"}
    assert leading_doc_comment(not_leading) == ""
    python = {"language": "python", "raw_code": '"""A model.\n\nReads the new landing rows."""\ndef model(dbt, s): ...'}
    assert SAYS_WHAT_IT_READS.search(leading_doc_comment(python))
    silent = {"language": "python", "raw_code": '"""A model that reads nothing said."""'}
    assert not SAYS_WHAT_IT_READS.search(leading_doc_comment(silent))


@pytest.mark.slow
def test_every_model_says_in_its_doc_comment_what_it_reads(manifest: dict[str, Any]) -> None:
    """What one run reads is the cost a model adds to every run: each model's file says it."""
    models = [n for n in own(manifest["nodes"]) if n["resource_type"] == "model"]
    assert models
    silent = [m["unique_id"] for m in models if not SAYS_WHAT_IT_READS.search(leading_doc_comment(m))]
    assert not silent, f"models whose leading doc comment does not say what they read: {silent}"


@pytest.mark.slow
def test_staging_models_document_every_staged_column(manifest: dict[str, Any]) -> None:
    contract = [name for name, _ in STAGED_COLUMNS] + ["built_at"]
    for dialect in DIALECTS:
        model = manifest["nodes"][f"model.cdc_unify.stg_{dialect}__changes"]
        assert sorted(model["columns"]) == sorted(contract), f"{dialect}: documented columns differ from the contract"


@pytest.mark.slow
def test_every_source_table_and_column_is_documented(manifest: dict[str, Any]) -> None:
    sources = own(manifest["sources"])
    assert {s["name"] for s in sources if s["source_name"] == "landing"} == set(DIALECTS)
    gaps = [s["unique_id"] for s in sources if blank(s["description"])]
    gaps += [f"source {s['source_name']}" for s in sources if blank(s["source_description"])]
    gaps += [column for source in sources for column in undocumented_columns(source)]
    assert not gaps, f"sources / columns without a description: {gaps}"


@pytest.mark.slow
def test_every_macro_and_argument_is_documented(manifest: dict[str, Any]) -> None:
    macros = own(manifest["macros"])
    assert {m["package_name"] for m in macros} == set(PROJECT_PACKAGES)
    gaps = {m["unique_id"]: macro_documentation_gaps(m) for m in macros}
    gaps = {uid: gap for uid, gap in gaps.items() if gap}
    assert not gaps, f"macros with documentation gaps: {gaps}"


@pytest.mark.slow
def test_every_test_is_documented(manifest: dict[str, Any]) -> None:
    """Unit tests and singular data tests carry their own description. A generic data test is
    documented by its definition: the project's (macros test_*) by the macro test above, dbt's
    built-in ones (not_null, unique, accepted_values, relationships) by dbt."""
    unit_tests = own(manifest["unit_tests"])
    assert unit_tests
    singular = [n for n in own(manifest["nodes"]) if n["resource_type"] == "test" and not n.get("test_metadata")]
    gaps = [t["unique_id"] for t in [*unit_tests, *singular] if blank(t["description"])]
    assert not gaps, f"tests without a description: {gaps}"


@pytest.mark.slow
def test_every_exposure_and_analysis_is_documented(manifest: dict[str, Any]) -> None:
    analyses = [n for n in own(manifest["nodes"]) if n["resource_type"] == "analysis"]
    gaps = [r["unique_id"] for r in [*own(manifest["exposures"]), *analyses] if blank(r["description"])]
    assert not gaps, f"exposures / analyses without a description: {gaps}"


@pytest.mark.slow
def test_overview_and_docs_blocks_are_used(manifest: dict[str, Any]) -> None:
    """The site's front page is the project's, and every docs block shows somewhere: a block no
    description references is on no page. (The manifest records doc() uses of models and sources
    only, not of macros or exposures: the property files say it.)"""
    blocks = {d["name"] for d in own(manifest["docs"])}
    assert "__overview__" in blocks
    referenced = {
        name
        for folder in PROPERTY_FOLDERS
        for path in (REPO_ROOT / folder).rglob("*.yml")
        for name in DOC_CALL.findall(path.read_text())
    }
    unused = sorted(b for b in blocks - referenced if not b.startswith("__"))
    assert not unused, f"docs blocks nothing references: {unused}"


# ------------------------------------------------------------------------------------------ server


def test_docs_command_refuses_a_folder_without_a_site(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert docs.main(["--target-path", str(tmp_path), "--port", "0"]) == 1
    assert "run `dbt docs generate` first" in capsys.readouterr().err


@pytest.mark.slow
def test_docs_server_serves_the_site_and_stops_on_ctrl_c(site: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "cdc_unify.commands.docs", "--target-path", str(site), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        banner = [server.stdout.readline().split() for _ in range(4)]
        assert [line[:1] for line in banner] == [["Serving"], ["documentation:"], ["lineage"], ["Press"]], banner
        url = banner[1][-1]
        assert banner[2][-1] == url + docs.LINEAGE_FRAGMENT
        for name in docs.SITE_FILES:
            with urllib.request.urlopen(url + name, timeout=10) as response:
                assert response.read() == (site / name).read_bytes()
        # Ctrl-C in a terminal signals the whole foreground process group.
        os.killpg(server.pid, signal.SIGINT)
        out, err = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == 0, err
    assert "Stopped serving" in out
    assert err == ""


# ----------------------------------------------------------------------------------------- browser


@pytest.mark.slow
def test_lineage_graph_in_headless_chromium(site: Path, manifest: dict[str, Any]) -> None:
    if not CHROMIUM.exists():
        pytest.skip(
            f"no Chromium at {CHROMIUM}: `make test` installs Debian's chromium with apt-get as root, "
            "which was not possible on this machine"
        )
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    screenshot = BUILD_OUTPUT / SCREENSHOT
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    overview_heading = manifest["docs"]["doc.cdc_unify.__overview__"]["block_contents"].splitlines()[0].lstrip("# ")
    with docs.serving(site) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(BROWSER_TIMEOUT_MS)
            page_errors: list[str] = []
            page.on("pageerror", lambda error: page_errors.append(str(error)))
            page.goto(url)
            page.get_by_role("heading", name=overview_heading).wait_for()
            # As a reader would: open the source's page, its lineage, then the full-screen graph.
            page.goto(f"{url}#!/source/{LINEAGE_PATH[0]}")
            page.click(".launcher-btn a")
            page.click("a[ng-click='showExpanded()']")
            try:
                page.wait_for_function(PATH_DRAWN_JS, arg=list(LINEAGE_PATH))
            except PlaywrightTimeout:
                pass  # the assertions below say what is not drawn
            graph = page.evaluate(READ_GRAPH_JS)
            page.mouse.move(0, page.viewport_size["height"] // 2)  # no tooltip over the graph
            page.screenshot(path=str(screenshot))
        finally:
            browser.close()

    assert page_errors == []
    assert [layer(manifest, uid) for uid in LINEAGE_PATH] == ["landing", "staging", *["intermediate"] * 4, "marts"]
    assert [uid for uid in LINEAGE_PATH if uid not in graph["nodes"]] == [], f"not drawn; screenshot: {screenshot}"
    edges = {tuple(edge) for edge in graph["edges"]}
    assert [edge for edge in pairwise(LINEAGE_PATH) if edge not in edges] == [], "edges not drawn"
    # Drawn left to right in lineage order: landing, staging, intermediate, marts.
    xs = [graph["nodes"][uid] for uid in LINEAGE_PATH]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), f"not left to right; screenshot: {screenshot}"
    assert screenshot.stat().st_size > 0
