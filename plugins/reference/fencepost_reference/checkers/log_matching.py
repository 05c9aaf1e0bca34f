"""The log-matching checker (white box): replicas of a tablet never hold different histories under one entry.

Two properties every replicated log keeps (Raft's Log Matching and State Machine Safety, which Oxia's
epochs keep in the same way), judged on the logs each node dumped after the heal:

- **Log matching.** An epoch's leader writes each offset once, so two replicas that hold an entry of the
  same epoch at the same offset hold the same entry there and the same entries before it. A follower that
  truncated too little on joining a new leader keeps an old entry under the new leader's later ones: its
  log then matches the leader's at its head but not below it, and its state machine applied another
  history.
- **Committed agreement.** Two replicas agree at every offset both have committed.

A replica that is not serving its log (deleted, damaged, or still copying) is left out: it holds no log
or one that it does not vouch for. The checker is unknown without dumps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.dumps import NO_DUMPS, run_dumps, tablets

EXAMPLES = 10
NOT_SERVING = ("deleted", "damaged")


def _log(state: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The entries of a replica that vouches for its log, else None."""
    if state.get("status") in NOT_SERVING or state.get("state", "READY") != "READY":
        return None
    entries = state.get("entries")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else None


def _describe(entry: Mapping[str, Any] | None) -> str:
    return "nothing" if entry is None else f"epoch {entry.get('e')} {entry.get('v')}"


def mismatch(a: Sequence[Mapping[str, Any]], commit_a: int, b: Sequence[Mapping[str, Any]],
             commit_b: int) -> tuple[int, int, str] | None:
    """Where two logs break log matching or committed agreement: ``(first differing offset, the offset that
    proves it, which rule)``, or None when they keep both."""
    first = next((o for o in range(min(len(a), len(b))) if a[o] != b[o]), None)
    if first is None:
        return None
    if first <= min(commit_a, commit_b):
        return first, first, "committed agreement"
    proof = next((o for o in range(min(len(a), len(b)) - 1, first - 1, -1)
                  if a[o].get("e") == b[o].get("e")), None)
    return None if proof is None else (first, proof, "log matching")


def violations(dumps: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each pair of replicas of one tablet whose dumped logs break log matching or committed agreement."""
    by_tablet: dict[str, list[tuple[str, list[Mapping[str, Any]], int]]] = {}
    for node, dump in sorted(dumps.items()):
        for t, state in tablets(dump).items():
            log = _log(state) if isinstance(state, dict) else None
            if log:
                commit = state.get("commit")
                by_tablet.setdefault(t, []).append((node, log, commit if type(commit) is int else -1))
    found: list[dict[str, Any]] = []
    for t in sorted(by_tablet, key=int):
        for (n1, log1, c1), (n2, log2, c2) in combinations(by_tablet[t], 2):
            bad = mismatch(log1, c1, log2, c2)
            if bad is None:
                continue
            first, proof, rule = bad
            at = (f"both hold epoch {log1[proof].get('e')} at offset {proof} above it" if rule == "log matching"
                  else f"{n1} committed through {c1}, {n2} through {c2}")
            found.append({"tablet": t, "nodes": [n1, n2], "offset": first, "proof": proof, "rule": rule,
                          "explanation": f"tablet {t}: {n1} and {n2} differ at offset {first} ({n1}: "
                                         f"{_describe(log1[first] if first < len(log1) else None)}; {n2}: "
                                         f"{_describe(log2[first] if first < len(log2) else None)}), yet {at} "
                                         f"({rule})"})
    return found


class LogMatchingChecker:
    """Invalid when two replicas of a tablet hold different entries below a shared entry or a shared commit."""

    name = "log-matching"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Judge each node's final dump; unknown without any."""
        dumps = run_dumps(ctx.run_dir)
        if not dumps:
            return dict(NO_DUMPS)
        bad = violations(dumps)
        if not bad:
            return {"valid": True, "explanation": f"The logs in {len(dumps)} dumps match wherever two replicas "
                                                  f"share an entry or a commit."}
        return {"valid": False, "violations": bad[:100],
                "explanation": f"{len(bad)} pair(s) of replicas hold different histories under a shared entry "
                               f"or commit:\n" + "\n".join(b["explanation"] for b in bad[:EXAMPLES])}
