"""The stale-refusals checker (white box): a replica refuses a request as stale only when it is older.

Epochs order every leader's and control plane's requests (Oxia's, as Raft's terms). A replica at epoch ``B``
refuses, as ``stale_epoch``, a request from an epoch ``A`` below ``B``: a deposed leader's, a late operator's.
It accepts a newer one. Three requests state both epochs in their refusal, and have an exact rule:

- a tablet delete at ``A`` is refused only if ``A < B`` (``delete at epoch A, replica is at B``);
- a fence at ``A`` is refused only if ``A < B``, or ``A == B`` and the replica follows or leads ``B``
  rather than was fenced by it: a repeat of the fence that fenced it is accepted, so that an election
  that lost its reply can fence again (``fence for epoch A, replica is at B (status)``);
- a reconfiguration's prepare at ``A`` is refused only if ``A <= B`` (``reconfig epoch A is not above B``).

A replica that refuses a newer request keeps a tablet from its election, its reconfiguration or its
clean-up: nothing is lost at once, and the control plane retries, so no black-box checker sees it; but the
tablet stays as it was while the faults go on (a tombstone never made, an election one fence short).

Evidence: every error text in the event logs (the operators log each refusal they get, e.g.
``fence_failed``, ``tombstone_failed``, ``reconfig_failed``). Unknown without event logs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.admin_api import strings_in
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict
from fencepost_reference.checkers.fencing import REFUSAL as FENCE_REFUSAL

RULES: dict[str, tuple[re.Pattern[str], Callable[[int, int, str], bool]]] = {
    "delete": (re.compile(r"delete at epoch (-?\d+), replica is at (-?\d+)()"),
               lambda a, b, _status: a < b),
    "fence": (FENCE_REFUSAL, lambda a, b, status: a < b or (a == b and status != "fenced")),
    "prepare_reconfig": (re.compile(r"reconfig epoch (-?\d+) is not above (-?\d+)()"),
                         lambda a, b, _status: a <= b),
}
"""Per request: the replica's refusal text (request epoch, replica epoch, status) and when it is right."""


class StaleRefusalsChecker:
    """No replica refuses a delete, fence or reconfiguration as stale unless it is older than the replica."""

    name = "stale-refusals"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any stale_epoch refusal of a request that is not older; unknown without event logs."""
        ev = load_evidence(ctx.run_dir, history)
        violations: list[dict[str, Any]] = []
        judged = 0
        for e in ev.events:
            for text in strings_in(e.get("error")):
                if "stale_epoch" not in text:
                    continue
                for request, (pattern, right) in RULES.items():
                    m = pattern.search(text)
                    if m is None:
                        continue
                    judged += 1
                    asked, held, status = int(m[1]), int(m[2]), m[3]
                    if right(asked, held, status):
                        continue
                    violations.append({
                        "rule": f"a replica refused a {request} that was not stale", "request": request,
                        "node": e.get("node"), "tablet": e.get("tablet"), "epoch": asked, "replica_epoch": held,
                        "status": status or None, "source": e.get("source"),
                        "at_ns": ev.history_ns(float(e.get("ts", 0))),
                        "explanation": f"{e.get('node')} refused a {request} of tablet {e.get('tablet')} at epoch "
                        f"{asked} as stale while it was at epoch {held}{f' ({status})' if status else ''} "
                        f"({e.get('event')} from {e.get('source')}: {text[:160]!r}): only a request older than "
                        f"the replica's epoch is stale."})
        return trace_verdict({"stale_refusals": judged}, violations, bool(ev.events), "refusals",
                             f"All {judged} stale_epoch refusals of deletes, fences and reconfigurations were of "
                             f"older requests.")
