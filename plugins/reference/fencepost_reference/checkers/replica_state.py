"""The replica-state checker (white box): every replica's commit index lies within its own log.

A replica may commit only what it holds: its commit index is at most the offset of its last entry, and -1
(nothing committed) when it holds none, as a tombstoned or wiped replica, or one that is still copying.
A replica that claims more would serve, checkpoint or hand over in a copy entries it does not have, and a
later election that counts on its commit index could keep a log shorter than what was acknowledged.

The checker reads the state every node dumped at the end of the run (``nodes/<node>/dump.json``, written
after the heal): each tablet's ``head`` (``[epoch, offset]``, or none) and ``commit``. It is unknown
without dumps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.dumps import NO_DUMPS, run_dumps, tablets

EXAMPLES = 10


def outside_the_log(dumps: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each replica whose commit index is not an offset of its own log (nor -1)."""
    found: list[dict[str, Any]] = []
    for node, dump in sorted(dumps.items()):
        for t, mine in sorted(tablets(dump).items(), key=lambda kv: int(kv[0])):
            if not isinstance(mine, dict) or "commit" not in mine:
                continue
            head, commit = mine.get("head"), mine.get("commit")
            last = int(head[1]) if isinstance(head, list) and len(head) == 2 else -1
            if type(commit) is not int or not -1 <= commit <= last:  # a bool is no commit index either
                found.append({"node": node, "tablet": t, "status": mine.get("status"), "head": head,
                              "commit": commit,
                              "explanation": f"{node}'s replica of tablet {t} ({mine.get('status')}) has commit "
                                             f"index {commit!r}, but its log ends at offset {last}"})
    return found


class ReplicaStateChecker:
    """Invalid when a replica's dumped commit index lies beyond its own log."""

    name = "replica-state"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Judge each node's final dump; unknown without any."""
        dumps = run_dumps(ctx.run_dir)
        if not dumps:
            return dict(NO_DUMPS)
        replicas = sum(len(tablets(d)) for d in dumps.values())
        bad = outside_the_log(dumps)
        if not bad:
            return {"valid": True, "replicas": replicas,
                    "explanation": f"Each of the {replicas} replicas in {len(dumps)} dumps commits within its log."}
        return {"valid": False, "replicas": replicas, "violations": bad[:100],
                "explanation": f"{len(bad)} replica(s) claim a commit index beyond their own log:\n"
                               + "\n".join(b["explanation"] for b in bad[:EXAMPLES])}
