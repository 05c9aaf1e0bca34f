"""Helpers for the master, migration and tablet-copy tests."""

from __future__ import annotations

import threading
from typing import Any

from system import admin
from system.client import SyncClient
from system.launcher import Cluster

from .conftest import wait_for


def master_status(c: Cluster) -> dict[str, Any]:
    """The master's view: members, and per tablet up/acting/stray sets and migration."""
    assert c.master_addr is not None
    return dict(admin.call_sync(*c.master_addr, "status", {}, timeout=5.0))


def tablet_view(c: Cluster, t: int = 0) -> dict[str, Any]:
    """The master's view of one tablet."""
    return dict(master_status(c)["tablets"][str(t)])


def master_call(c: Cluster, method: str, params: dict[str, Any], token: str | None = None) -> Any:
    """An admin call with the cluster's token (or the one given)."""
    assert c.master_addr is not None
    return admin.call_sync(*c.master_addr, method, {**params, "token": token or c.secret()["token"]}, timeout=10.0)


def settled(c: Cluster, t: int = 0, size: int | None = None) -> bool:
    """No migration in flight and the acting set equals the up set (of ``size`` if given)."""
    v = tablet_view(c, t)
    ok = v["migration"] is None and v["up"] is not None and sorted(v["up"]) == sorted(v["acting"])
    return ok and v["status"] == "steady" and (size is None or len(v["up"]) == size)


def wait_settled(c: Cluster, t: int = 0, size: int | None = None, timeout: float = 60.0) -> dict[str, Any]:
    """Wait until :func:`settled`; return the tablet's view."""
    wait_for(lambda: settled(c, t, size), timeout=timeout, interval=0.3, what=f"tablet {t} settled")
    return tablet_view(c, t)


def node_tablet(c: Cluster, node: str, t: int = 0) -> dict[str, Any] | None:
    """A node's heartbeat summary of a tablet (None if it has no replica or is down)."""
    host, port = c.node_addrs[node]
    try:
        hello = admin.call_sync(host, port, "hello", {}, timeout=2.0)
    except Exception:
        return None
    got = hello["tablets"].get(str(t))
    return dict(got) if got is not None else None


class Writer(threading.Thread):
    """Writes unique keys in the background and remembers which writes were acknowledged."""

    def __init__(self, c: Cluster, prefix: str) -> None:
        super().__init__(daemon=True)
        self.c, self.prefix = c, prefix
        self.acked: dict[str, int] = {}
        self.stop_flag = threading.Event()
        self.tried = 0

    def run(self) -> None:
        cl = SyncClient(self.c.operators(), timeout=5.0)
        try:
            i = 0
            while not self.stop_flag.is_set():
                key = f"{self.prefix}{i}"
                res = cl.put(key, i)
                self.tried += 1
                if res.type == "ok":
                    self.acked[key] = i
                i += 1
        finally:
            cl.close()

    def finish(self) -> dict[str, int]:
        """Stop writing; the acknowledged writes."""
        self.stop_flag.set()
        self.join(30)
        return self.acked


def read_all(c: Cluster, keys: dict[str, int]) -> dict[str, Any]:
    """Read every key back through a fresh client; the values that differ from ``keys``."""
    cl = SyncClient(c.operators(), timeout=10.0)
    try:
        wrong = {}
        for k, v in keys.items():
            r = cl.get(k)
            if r.type != "ok" or r.value != v:
                wrong[k] = (r.type, r.value, r.error)
        return wrong
    finally:
        cl.close()
