"""Serve a run store over HTTP on 127.0.0.1: the index of runs, campaign pages, and each run's files.

Routes::

    /                       the index of runs (built fresh from the store on each request)
    /_campaign/<id>         one campaign's matrix of cases x verdicts
    /<test>/<run>/<file>    a file from a run folder: report.html, plots, history, logs

A run whose report.html has not been written yet gets one rendered on the fly (without drawing plots;
``fencepost report`` draws them). Only GET and HEAD are served, never outside the store, and
folders are not listed.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import shutil
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness.store import RunStore
from reports.index import render_campaign, render_index
from reports.render import render_report_html
from reports.run_view import load_run

HOST = "127.0.0.1"
CAMPAIGN_PREFIX = "/_campaign/"
TEXT_SUFFIXES = {".jsonl": "text/plain", ".log": "text/plain", ".edn": "text/plain", ".txt": "text/plain",
                 ".json": "application/json"}
log = logging.getLogger(__name__)


class StoreServer(ThreadingHTTPServer):
    """An HTTP server bound to 127.0.0.1 that serves one run store.

    Args:
        store_root: the store's folder.
        port: the port; 0 picks a free one (read it back from ``port``).
    """

    daemon_threads = True

    def __init__(self, store_root: str | Path, port: int = 0) -> None:
        self.store = RunStore(store_root)
        super().__init__((HOST, port), StoreHandler)

    @property
    def port(self) -> int:
        """The port actually bound."""
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The index's URL."""
        return f"http://{HOST}:{self.port}/"


class StoreHandler(BaseHTTPRequestHandler):
    """Answers requests for the index, campaign pages and run files."""

    server: StoreServer
    server_version = "fencepost"

    def log_message(self, format: str, *args: object) -> None:
        """Log requests at debug level instead of on stderr."""
        log.debug("%s " + format, self.address_string(), *args)

    def do_HEAD(self) -> None:
        """Like GET, without the body."""
        self._respond(head=True)

    def do_GET(self) -> None:
        """Serve the index, a campaign page or a run's file."""
        self._respond(head=False)

    def _send(self, status: HTTPStatus, body: bytes, content_type: str, head: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _html(self, html: str, head: bool, status: HTTPStatus = HTTPStatus.OK) -> None:
        self._send(status, html.encode("utf-8"), "text/html; charset=utf-8", head)

    def _not_found(self, head: bool, what: str) -> None:
        self._send(HTTPStatus.NOT_FOUND, f"not found: {what}\n".encode(), "text/plain; charset=utf-8", head)

    def _respond(self, head: bool) -> None:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        store = self.server.store
        try:
            if path in ("/", "/index.html"):
                self._html(render_index(store), head)
            elif path == "/favicon.ico":
                self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon", head)
            elif path.startswith(CAMPAIGN_PREFIX):
                page = render_campaign(store, path[len(CAMPAIGN_PREFIX):].strip("/"))
                if page is None:
                    self._not_found(head, "no such campaign")
                else:
                    self._html(page, head)
            else:
                self._file(path, head)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # a bad run folder must not take the server down
            log.exception("error serving %s", path)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, f"error: {type(e).__name__}: {e}\n".encode(),
                       "text/plain; charset=utf-8", head)

    def _file(self, path: str, head: bool) -> None:
        root = self.server.store.root.resolve()
        target = (root / path.lstrip("/")).resolve()
        if not target.is_relative_to(root):
            self._not_found(head, path)
            return
        if target.name == "report.html" and not target.exists() and (target.parent / "test.json").is_file():
            view = load_run(target.parent)
            view.notes.append("This report was rendered on the fly by `fencepost serve`; "
                              f"run `fencepost report {target.parent}` to write it with its plots.")
            self._html(render_report_html(view, draw=False), head)
            return
        if not target.is_file():
            self._not_found(head, path)
            return
        ctype = TEXT_SUFFIXES.get(target.suffix) or mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype == "application/json":
            ctype += "; charset=utf-8"
        with open(target, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            if not head:
                shutil.copyfileobj(fh, self.wfile)


def start_in_thread(store_root: str | Path, port: int = 0) -> tuple[StoreServer, threading.Thread]:
    """Start a server on a background thread; stop it with ``server.shutdown(); server.server_close()``."""
    server = StoreServer(store_root, port)
    thread = threading.Thread(target=server.serve_forever, name="fencepost-serve", daemon=True)
    thread.start()
    return server, thread
