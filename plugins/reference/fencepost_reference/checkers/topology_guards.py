"""The topology-guards checker (white box): no replica becomes READY under a closed migration session.

Scylla's topology guards, as the system implements them: each migration stage runs under a session id,
and a barrier on a node (``sessions_closed`` with ``below``) closes every earlier session of the tablet
there. A tablet copy that lands after its session was closed must have no effect. Each node logs both
events, so this checker replays every node's log in order and finds each ``copy_done`` whose session was
already closed on that node (the copy was applied although a cancel or a newer stage had fenced it off).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict


class TopologyGuardsChecker:
    """Every applied copy ran under a session still open on its node."""

    name = "topology-guards"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any copy applied under a closed session; unknown when there are no node logs."""
        ev = load_evidence(ctx.run_dir, history)
        closed: dict[tuple[str, Any], tuple[int, dict[str, Any]]] = {}
        violations: list[dict[str, Any]] = []
        uuid_of: dict[str, Any] = {}
        copies = 0
        for e in ev.events:
            node, kind = str(e.get("source")), e.get("event")
            if e.get("node") != node:
                continue  # an operator's event about a node
            if kind == "node_started":  # barriers are durable across restarts, not across a wiped disk
                if e.get("uuid") != uuid_of.get(node):
                    closed = {k: v for k, v in closed.items() if k[0] != node}
                    uuid_of[node] = e.get("uuid")
                continue
            if kind == "sessions_closed" and isinstance(e.get("below"), int):
                k = (node, e.get("tablet"))
                if k not in closed or e["below"] > closed[k][0]:
                    closed[k] = (int(e["below"]), e)
            elif kind == "copy_done" and isinstance(e.get("session"), int):
                copies += 1
                below, barrier = closed.get((node, e.get("tablet")), (0, {}))
                if e["session"] < below:
                    at = ev.history_ns(float(e.get("ts", 0)))
                    violations.append({
                        "rule": "copy applied under a closed session", "node": node, "tablet": e.get("tablet"),
                        "session": e["session"], "closed_below": below, "at_ns": at,
                        "explanation": f"Node {node} made tablet {e.get('tablet')} READY from a copy of session "
                        f"{e['session']} at {(at or 0) / 1e9:.3f} s, although a barrier at "
                        f"{(ev.history_ns(float(barrier.get('ts', 0))) or 0) / 1e9:.3f} s had closed every session "
                        f"below {below} there: a cancelled or superseded migration step took effect."})
        return trace_verdict({"copies": copies}, violations, bool(ev.events), "copies",
                             f"All {copies} copies were applied under open sessions.")
