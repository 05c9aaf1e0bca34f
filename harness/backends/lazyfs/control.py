"""The lazy filesystem's control channel: one JSON request and one JSON reply per connection.

The channel is a Linux abstract Unix socket (``\\0NAME``: no file to clean up, no path-length limit
from deep run folders). Requests: ``{"cmd": "drop", "tear": bool, "seed": int}`` (power loss),
``{"cmd": "sync"}`` (make everything durable), ``{"cmd": "stats"}`` (counters and what is pending),
``{"cmd": "ping"}``. Errors come back as ``{"error": "..."}``.
"""

from __future__ import annotations

import json
import socketserver
import threading
from typing import Any

from harness.backends.lazyfs.cache import Volatile
from harness.backends.lazyfs.mount import request

__all__ = ["dispatch", "request", "serve"]


def _address(name: str) -> str:
    return "\0" + name


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        vol: Volatile = self.server.volatile  # type: ignore[attr-defined]
        try:
            req = json.loads(self.rfile.readline() or b"{}")
            reply = dispatch(vol, req)
        except Exception as e:  # a bad request must not kill the filesystem
            reply = {"error": f"{type(e).__name__}: {e}"}
        self.wfile.write(json.dumps(reply).encode() + b"\n")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def dispatch(vol: Volatile, req: dict[str, Any]) -> dict[str, Any]:
    """Carry out one control request against ``vol``."""
    cmd = req.get("cmd")
    with vol.lock:
        if cmd == "drop":
            return vol.drop(bool(req.get("tear")), req.get("seed"))
        if cmd == "sync":
            vol.sync_all()
            return {"synced": True}
        if cmd == "stats":
            return {**vol.stats, **vol.pending()}
        if cmd == "ping":
            return {"pong": True}
    return {"error": f"unknown command {cmd!r}"}


def serve(vol: Volatile, name: str) -> socketserver.BaseServer:
    """Serve the control channel ``name`` in a daemon thread; the server (``shutdown()`` to stop)."""
    server = _Server(_address(name), _Handler)
    server.volatile = vol  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, name="lazyfs-control", daemon=True).start()
    return server
