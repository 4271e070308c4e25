"""`cdc-unify docs`: serve the dbt docs site (after `dbt docs generate`) on localhost until Ctrl-C.

`make docs` runs `dbt docs generate` and then this. `dbt docs serve` is not used: it ends on
Ctrl-C with a traceback and exit code 2, cannot pick a free port, and opens a browser (on a
machine with Chromium installed it would launch one). The site is the static folder dbt writes
(index.html, manifest.json, catalog.json); the server serves exactly that folder. Also runnable
as `python -m cdc_unify.commands.docs`. docs/docs-site.md says how to browse it.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
SITE_FILES = ("index.html", "manifest.json", "catalog.json")
# The overview page with the whole project's lineage graph open (dbt docs' `g_v` URL state).
LINEAGE_FRAGMENT = "#!/overview?g_v=1"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "docs",
        help="serve the generated dbt docs site on localhost",
        description=(
            "Serve the dbt docs site that `dbt docs generate` wrote (index.html, manifest.json, catalog.json) "
            "until Ctrl-C. Run `dbt docs generate` (or `make docs`, which does both) first."
        ),
    )
    parser.add_argument(
        "--target-path",
        type=Path,
        default=Path(os.environ.get("DBT_TARGET_PATH") or "target"),
        help="the folder dbt docs generate wrote (default: env DBT_TARGET_PATH or target)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port to listen on, 0 = any free port (default: {DEFAULT_PORT})"
    )
    parser.set_defaults(func=run)


class _SiteHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """One line per request would bury the URL the user needs; the site is static files."""


class _SiteServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: tuple) -> None:
        # A browser that navigates away mid-download resets the connection: not an error of the site.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def missing_site_files(directory: Path) -> list[str]:
    """The files of a generated docs site that `directory` lacks."""
    return [name for name in SITE_FILES if not (directory / name).is_file()]


def make_server(directory: Path, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server of the site in `directory`, bound (port 0: a free port) but not yet serving."""
    handler = functools.partial(_SiteHandler, directory=str(directory))
    return _SiteServer((host, port), handler)


def server_url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/"


@contextlib.contextmanager
def serving(directory: Path, host: str = DEFAULT_HOST, port: int = 0) -> Iterator[str]:
    """Serve the site in a background thread for the duration of the block; yields its URL."""
    server = make_server(directory, host, port)
    thread = threading.Thread(target=server.serve_forever, name="docs-site", daemon=True)
    thread.start()
    try:
        yield server_url(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def run(args: argparse.Namespace) -> int:
    directory = args.target_path.resolve()
    missing = missing_site_files(directory)
    if missing:
        return fail(f"{directory} has no {', '.join(missing)}: run `dbt docs generate` first (or `make docs`)")
    try:
        server = make_server(directory, args.host, args.port)
    except OSError as exc:
        return fail(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror} (choose another port: --port, DOCS_PORT)"
        )
    # A shell that starts this in the background ignores SIGINT for it: Ctrl-C must still stop it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    url = server_url(server)
    print(f"Serving the dbt docs site of {directory}", flush=True)
    print(f"  documentation:  {url}", flush=True)
    print(f"  lineage graph:  {url}{LINEAGE_FRAGMENT}", flush=True)
    print("Press Ctrl-C to stop.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nStopped serving the docs site.", flush=True)
    finally:
        server.server_close()
    return 0


def fail(message: str) -> int:
    print(f"cdc-unify docs: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cdc_unify.commands.docs")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(["docs", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
