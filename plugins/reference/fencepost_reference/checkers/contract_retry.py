"""The contract-retry checker (white box): the control plane waits for a laggard before it gives a contract up.

A contract is safe only once the remaining members confirm every committed entry
(:func:`system.rules.safe_to_contract`). Until then the leader refuses it (``contract_not_safe``) and the
operator asks again, for :data:`system.operator.reconfig.COMMIT_RETRY_S`: a follower a little behind, the
common case under faults, catches up in that time. An operator that gives up at the first refusal fails
the reconfiguration, and its failure runs an election: every contract that meets a laggard becomes an
election, and the membership change the admin or the migration asked for does not happen. No write is
lost, so no black-box checker sees it.

Evidence: the operators' ``reconfig_started`` and ``reconfig_failed`` events (same operator, tablet and
epoch). A failure whose error is ``contract_not_safe`` must come at least ``COMMIT_RETRY_S`` after its
start. Operators run on the real clock (the clock fault skews nodes only). Unknown without event logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict
from system.operator.reconfig import COMMIT_RETRY_S


class ContractRetryChecker:
    """No operator gives a contract up as unsafe before it has retried it for ``COMMIT_RETRY_S``."""

    name = "contract-retry"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any contract abandoned as unsafe too early; unknown without event logs."""
        ev = load_evidence(ctx.run_dir, history)
        started: dict[tuple[Any, Any, Any], float] = {}
        violations: list[dict[str, Any]] = []
        unsafe = 0
        for e in ev.events:
            key = (e.get("operator"), e.get("tablet"), e.get("epoch"))
            if e.get("event") == "reconfig_started":
                started[key] = float(e.get("ts", 0))
            elif e.get("event") == "reconfig_failed" and "contract_not_safe" in str(e.get("error")):
                unsafe += 1
                begun = started.get(key)
                after = float(e.get("ts", 0)) - begun if begun is not None else COMMIT_RETRY_S
                if after >= COMMIT_RETRY_S:
                    continue
                violations.append({
                    "rule": "a contract was given up as unsafe before its retries", "operator": e.get("operator"),
                    "tablet": e.get("tablet"), "epoch": e.get("epoch"), "after_s": round(after, 3),
                    "at_ns": ev.history_ns(float(e.get("ts", 0))),
                    "explanation": f"Operator {e.get('operator')} gave up the contract of tablet {e.get('tablet')} "
                    f"at epoch {e.get('epoch')} as unsafe {after:.2f} s after it started: it retries a contract "
                    f"the leader refuses for {COMMIT_RETRY_S:g} s, so that a lagging member can catch up, and "
                    f"each failure costs an election."})
        return trace_verdict({"contracts_refused_unsafe": unsafe}, violations, bool(ev.events), "contracts",
                             f"Each of the {unsafe} contracts given up as unsafe was retried for "
                             f"{COMMIT_RETRY_S:g} s first.")
