"""Waiting, after the heal, until the reference system is whole again, and recording what it came to.

A replicated store that has recovered is not only answering: every tablet has a steady leader, a full
ensemble of live members and no reconfiguration or migration half-done, and every member has caught up
with its leader. After the final reads, the plugin polls the operator's status for up to
:data:`SETTLE_S` seconds until that has held for :data:`STABLE_S`, and writes ``nodes/settled.json``
(whether it settled, how long it took, what was still wrong, and the last status) for the convergence
checker (:mod:`fencepost_reference.checkers.convergence`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from system.admin import call

SETTLE_S = 30.0
POLL_S = 0.5
STABLE_S = 1.5
"""How long the status must show a whole, converged cluster before it counts as settled. The operator's
view of each member's commit index comes from reports a heartbeat (0.25 s) old, and a follower learns its
leader's latest commit with the next batch or cursor heartbeat (0.5 s): one agreeing poll right after the
final write can predate that write's commit reaching the followers, which the dumps taken next then show."""
SETTLED_FILE = "settled.json"


def unsettled(status: Mapping[str, Any], replication: int, *, commits_agree: bool = True) -> list[str]:
    """What keeps an operator's ``status`` from showing a whole, converged cluster (empty when it is).
    With ``commits_agree`` False, members that lag their leader's commit index are whole enough."""
    reasons: list[str] = []
    alive: Mapping[str, bool] = status.get("alive") or {}
    commits: Mapping[str, Mapping[str, Any]] = status.get("commits") or {}
    for t, meta in sorted(status.get("tablets", {}).items(), key=lambda kv: int(kv[0])):
        leader = meta.get("leader")
        if meta.get("status") != "steady" or not leader:
            reasons.append(f"tablet {t} is {meta.get('status')} with leader {leader}")
            continue
        if meta.get("reconfig"):
            reasons.append(f"tablet {t} has a reconfiguration in progress: {json.dumps(meta['reconfig'])}")
        if meta.get("migration"):
            reasons.append(f"tablet {t} has a migration in progress: {json.dumps(meta['migration'])}")
        ensemble: Sequence[str] = meta.get("ensemble") or []
        if len(ensemble) < replication:
            reasons.append(f"tablet {t} has {len(ensemble)} member(s) {list(ensemble)}, fewer than {replication}")
        top = (commits.get(leader) or {}).get(t)
        for member in ensemble:
            if not alive.get(member):
                reasons.append(f"tablet {t}: member {member} is not alive")
                continue
            if not commits_agree:
                continue
            at = (commits.get(member) or {}).get(t)
            if at != top:
                reasons.append(f"tablet {t}: member {member} has commit index {at}, its leader {leader} {top}")
    return reasons


async def operator_status(operators: Sequence[tuple[str, int]], timeout: float = 2.0) -> dict[str, Any] | None:
    """The status from the first operator that answers within ``timeout`` seconds, or None."""
    for host, port in operators:
        with contextlib.suppress(Exception):
            return dict(await call(host, port, "status", {}, timeout=timeout))
    return None


async def settle(operators: Sequence[tuple[str, int]], replication: int, out: Path,
                 patience: float = SETTLE_S, stable: float = STABLE_S) -> dict[str, Any]:
    """Poll until the cluster has been whole and converged for ``stable`` seconds (every poll in between
    agreeing), or ``patience`` seconds pass; write and return the record. At the end of the patience, a
    last poll that agrees is settled too."""
    started = time.monotonic()
    status: dict[str, Any] | None = None
    reasons = ["no operator answered"]
    agreed_since: float | None = None
    while True:
        status = await operator_status(operators)
        reasons = unsettled(status, replication) if status is not None else ["no operator answered"]
        now = time.monotonic()
        agreed_since = (agreed_since or now) if not reasons else None
        if (agreed_since is not None and now - agreed_since >= stable) or now - started >= patience:
            break
        await asyncio.sleep(POLL_S)
    record = {"settled": not reasons, "seconds": round(time.monotonic() - started, 2), "patience_s": patience,
              "replication": replication, "reasons": reasons, "status": status}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, default=str, indent=1) + "\n")
    return record
