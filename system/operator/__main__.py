"""Entry point: ``python -m system.operator`` (flags in :mod:`system.operator`)."""

from __future__ import annotations

import argparse
import asyncio
import os

from system import bugs
from system.events import EventLog
from system.metadata import open_store
from system.operator.control import CRASH_POINTS, Operator, serve


def parse_nodes(spec: str) -> dict[str, tuple[str, int]]:
    """``n1=127.0.0.2:7001,n2=...`` -> ``{"n1": ("127.0.0.2", 7001), ...}``."""
    out = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, _, addr = item.partition("=")
        host, _, port = addr.rpartition(":")
        out[name] = (host, int(port))
    return out


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the operator until SIGTERM."""
    p = argparse.ArgumentParser(prog="python -m system.operator")
    p.add_argument("--id", default="op1")
    p.add_argument("--metadata", required=True, help="sqlite:///PATH or etcd://HOST:PORT")
    p.add_argument("--nodes", required=True, help="id=host:port,...")
    p.add_argument("--tablets", type=int, default=4)
    p.add_argument("--replication", type=int, default=3)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--data", default=".")
    p.add_argument("--stall-timeout", type=float, default=3.0)
    p.add_argument("--bug", action="append", default=[], choices=sorted(bugs.BUGS))
    p.add_argument("--crash-at", action="append", default=[], choices=CRASH_POINTS)
    a = p.parse_args(argv)
    bugs.configure(a.bug)
    os.makedirs(a.data, exist_ok=True)
    events = EventLog(os.path.join(a.data, f"operator-{a.id}.jsonl"), a.id)
    events.emit("operator_started", pid=os.getpid(), bugs=bugs.active())
    store = open_store(a.metadata)
    op = Operator(a.id, store, parse_nodes(a.nodes), a.tablets, a.replication, events,
                  stall_timeout=a.stall_timeout, crash_at=tuple(a.crash_at),
                  source=a.host if a.host.startswith("127.") else None)
    try:
        asyncio.run(serve(op, a.host, a.port))
    finally:
        store.close()
        events.emit("operator_stopped")
        events.close()


if __name__ == "__main__":
    main()
