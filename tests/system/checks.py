"""Invariants read from the nodes' state and event logs after a test run."""

from __future__ import annotations

import os
from typing import Any

from system.events import read_events
from system.launcher import Cluster

from .conftest import node_call


def dumps(c: Cluster, tablet: int) -> dict[str, dict[str, Any]]:
    """Each running, healthy node's dump of ``tablet``."""
    out = {}
    for n in c.node_addrs:
        if c.procs[n].pid is None:
            continue
        try:
            d = node_call(c, n, "dump", {"tablet": tablet})["tablets"][str(tablet)]
        except Exception:
            continue
        out[n] = d
    return out


def assert_committed_prefixes_agree(c: Cluster, tablet: int) -> None:
    """Every pair of replicas agrees on every entry both have committed."""
    ds = dumps(c, tablet)
    for a, da in ds.items():
        for b, db in ds.items():
            upto = min(da["commit"], db["commit"])
            ea = [(e["e"], e["o"], e["v"]) for e in da["entries"][: upto + 1]]
            eb = [(e["e"], e["o"], e["v"]) for e in db["entries"][: upto + 1]]
            assert ea == eb, f"{a} and {b} disagree on committed entries of tablet {tablet}"


def all_events(c: Cluster) -> list[dict[str, Any]]:
    """Every node's events."""
    out = []
    for n in c.node_addrs:
        path = os.path.join(c.procs[n].info["data"], "events.jsonl")
        if os.path.exists(path):
            out.extend(read_events(path))
    return out


def assert_one_leader_per_epoch(c: Cluster) -> None:
    """No two nodes became leader of the same tablet in the same epoch."""
    seen: dict[tuple[int, int], str] = {}
    for ev in all_events(c):
        if ev["event"] == "became_leader":
            k = (ev["tablet"], ev["epoch"])
            assert seen.setdefault(k, ev["node"]) == ev["node"], f"two leaders for tablet/epoch {k}"


def assert_leaders_commit_only_current_epoch(c: Cluster) -> None:
    """A leader's own commit events always name an entry of its current epoch (earlier epochs'
    entries commit only indirectly)."""
    leading: dict[tuple[str, int], bool] = {}
    for ev in all_events(c):
        k = (ev["node"], ev.get("tablet", -1))
        if ev["event"] == "became_leader":
            leading[k] = True
        elif ev["event"] in ("leader_stopped", "fenced", "tablet_loaded", "node_started"):
            leading[k] = False
        elif ev["event"] == "commit" and leading.get(k):
            assert ev["entry"][0] == ev["epoch"], f"leader committed an older epoch's entry directly: {ev}"
