"""Entry point: ``python -m system.master`` (flags in :mod:`system.master`)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from system import bugs, statefile
from system.events import EventLog
from system.master.server import Master, serve
from system.metadata import open_store


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the master until SIGTERM."""
    p = argparse.ArgumentParser(prog="python -m system.master")
    p.add_argument("--metadata", required=True, help="sqlite:///PATH or etcd://HOST:PORT")
    p.add_argument("--cluster-file", required=True, help="JSON file with the cluster id and secret token")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--data", default=".")
    p.add_argument("--replication", type=int, default=3)
    p.add_argument("--dead-after", type=float, default=10.0, help="seconds without heartbeat before re-replication")
    p.add_argument("--bug", action="append", default=[], choices=sorted(bugs.BUGS))
    a = p.parse_args(argv)
    bugs.configure(a.bug)
    os.makedirs(a.data, exist_ok=True)
    secret = statefile.read_json(a.cluster_file) or {}
    if not secret.get("cluster_id") or not secret.get("token"):
        sys.exit(f"{a.cluster_file}: no cluster id and token")
    store = open_store(a.metadata)
    rec = store.get("identity")
    if rec is None:
        store.cas("identity", {"cluster_id": secret["cluster_id"]}, 0)
        rec = store.get("identity")
    if rec is None or rec.value.get("cluster_id") != secret["cluster_id"]:
        sys.exit(f"the metadata store belongs to another cluster ({rec.value if rec else None})")
    events = EventLog(os.path.join(a.data, "master.jsonl"), "master")
    events.emit("master_started", pid=os.getpid(), bugs=bugs.active(), cluster_id=secret["cluster_id"])
    master = Master(store, str(secret["cluster_id"]), str(secret["token"]), a.replication, events, a.dead_after)
    try:
        asyncio.run(serve(master, a.host, a.port))
    finally:
        store.close()
        events.emit("master_stopped")
        events.close()


if __name__ == "__main__":
    main()
