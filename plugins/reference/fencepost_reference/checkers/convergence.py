"""The convergence checker (white box): after the heal, the cluster becomes whole and its replicas agree.

A replicated store's general promise beyond safety: once the faults stop, it repairs itself. Every
tablet gets a steady leader again, a full ensemble of live members, no reconfiguration or migration left
half-done, and every member catches up with its leader. The plugin waits for that after the final
reads (``nodes/settled.json``, written by :mod:`fencepost_reference.settle`) and then dumps each
node's state; this checker reads both.

It reports a cluster that never settled, with what was still wrong (a member stuck behind, a
reconfiguration never finished, an election never won), and, in the dumps taken right after, a member
whose head or commit index differs from its leader's, or a leader replicating to another ensemble than
the one the control plane recorded. Safety checkers miss these: a replica that
silently stopped replicating, or a copy that never completes, loses no acknowledged write until one
more failure strikes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fencepost import UNKNOWN, CheckContext, Op
from fencepost_reference.checkers.dumps import node_dumps, tablets
from fencepost_reference.info import process_of
from fencepost_reference.settle import SETTLED_FILE

EXAMPLES = 10


def disagreements(dumps: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Members of each leader's ensemble whose dumped head or commit index differs from the leader's."""
    found: list[str] = []
    for node, dump in sorted(dumps.items()):
        for t, mine in sorted(tablets(dump).items(), key=lambda kv: int(kv[0])):
            if not isinstance(mine, dict) or mine.get("status") != "leader":
                continue
            for member in mine.get("ensemble") or []:
                if process_of(member) == node:
                    continue
                theirs = tablets(dumps.get(process_of(member), {})).get(t)
                if not isinstance(theirs, dict):
                    found.append(f"tablet {t}: member {member} has no state for it (its leader {node} does)")
                    continue
                for field in ("head", "commit"):
                    if theirs.get(field) != mine.get(field):
                        found.append(f"tablet {t}: member {member} has {field} {theirs.get(field)}, its leader "
                                     f"{node} {mine.get(field)}")
    return found


def ensembles_differ(dumps: Mapping[str, Mapping[str, Any]], status: Mapping[str, Any] | None) -> list[str]:
    """Leaders whose dumped ensemble differs from the one the control plane recorded for their tablet (in the
    operator's ``status`` taken when the cluster settled, with no reconfiguration in flight): a leader must
    replicate to exactly the ensemble the record names, or its commit quorum is not the one elections fence."""
    recorded = (status or {}).get("tablets") or {}
    found: list[str] = []
    for node, dump in sorted(dumps.items()):
        for t, mine in sorted(tablets(dump).items(), key=lambda kv: int(kv[0])):
            record = recorded.get(t)
            if not isinstance(mine, dict) or mine.get("status") != "leader" or not isinstance(record, dict):
                continue
            if record.get("leader") is not None and process_of(str(record["leader"])) != node:
                continue  # a deposed leader's leftover role; the recorded leader's dump is the one to judge
            if sorted(mine.get("ensemble") or []) != sorted(record.get("ensemble") or []):
                found.append(f"tablet {t}: leader {node} replicates to {sorted(mine.get('ensemble') or [])}, the "
                             f"control plane recorded {sorted(record.get('ensemble') or [])}")
    return found


class ConvergenceChecker:
    """Invalid when the cluster did not become whole after the heal, or its replicas disagree."""

    name = "convergence"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Judge ``nodes/settled.json`` and the nodes' dumps; unknown without them."""
        if ctx.run_dir is None or not (ctx.run_dir / "nodes" / SETTLED_FILE).is_file():
            return {"valid": UNKNOWN, "explanation": "The run recorded no settling after the heal (it ended "
                                                     "before collecting), so convergence could not be judged."}
        settled = json.loads((ctx.run_dir / "nodes" / SETTLED_FILE).read_text())
        dumps = node_dumps(ctx.run_dir / "nodes")
        apart = disagreements(dumps)
        if settled.get("settled"):
            apart += ensembles_differ(dumps, settled.get("status"))
        reasons = list(settled.get("reasons") or [])
        base = {"settled": bool(settled.get("settled")), "seconds": settled.get("seconds"),
                "patience_s": settled.get("patience_s")}
        if settled.get("settled") and not apart:
            return {**base, "valid": True,
                    "explanation": f"The cluster was whole and its replicas agreed {settled.get('seconds')} s after "
                                   f"the final reads: every tablet steady, with a full ensemble of live members "
                                   f"at their leader's head and commit index."}
        lines = [*reasons[:EXAMPLES], *apart[:EXAMPLES]]
        what = (f"after waiting {settled.get('patience_s')} s the cluster was still not whole"
                if not settled.get("settled") else "the cluster settled, but the dumps taken then disagree")
        return {**base, "valid": False, "reasons": reasons[:100], "disagreements": apart[:100],
                "explanation": f"The system did not converge after the heal: {what}.\n" + "\n".join(lines)}
