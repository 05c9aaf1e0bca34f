"""The config compare-and-set checker: a placement change applies only over the config its caller named.

The master's admin API promises that every tablet config change names the committed config id and is
applied by compare-and-set (Kudu's CAS on the committed config, KUDU-1129). The config-race fault
(:mod:`fencepost_reference.faults.config_race`) sends two changes naming the same id at once and
records both answers. This checker reads those records (and any other nemesis record with a ``calls``
list of admin calls) and
finds every change the master applied although the config it replaced was not the one its caller named:
a change naming id ``k`` must produce id ``k + 1``; a result of ``k + 2`` overwrote a config the caller
never saw (and two applied changes named the same ``k``). The other half of the promise: a change is refused
as ``stale_config`` only when the config it named is not the committed one, so a refusal that gives the
committed id as the one its caller named refused a change it had to apply.

A run without such records has nothing to judge and is valid with ``checked: 0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import NEMESIS, CheckContext, Op, OpType

CHANGES = ("add_replica", "remove_replica", "move_replica", "change_replica_count", "cancel_migration")


def _describe(rec: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={rec[k]}" for k in ("node", "from", "to", "count") if k in rec)
    return f"{rec['method']}({args})"


class ConfigCasChecker:
    """Every applied admin change replaced exactly the config id its caller named, and none naming the committed
    config was refused as stale."""

    name = "config-cas"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Check each recorded admin call; see the module docstring."""
        violations: list[dict[str, Any]] = []
        checked = 0
        for op in history:
            if op.process != NEMESIS or op.type is OpType.INVOKE or not isinstance(op.value, dict):
                continue
            calls = op.value.get("calls")
            if not isinstance(calls, list):
                continue
            applied_from: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
            for rec in calls:
                if not isinstance(rec, dict) or rec.get("method") not in CHANGES or rec.get("config_id") is None:
                    continue
                checked += 1
                named = int(rec["config_id"])
                if rec.get("error") == "stale_config" and rec.get("committed") is not None \
                        and int(rec["committed"]) == named:
                    violations.append({
                        "rule": "change refused over the config it named", "tablet": rec.get("tablet"),
                        "named_config_id": named, "index": op.index, "at_ns": op.time,
                        "explanation": f"{_describe(rec)} on tablet {rec.get('tablet')} named committed config "
                        f"{named} and the master refused it as stale, giving {named} as its committed config: "
                        "compare-and-set must apply a change that names the committed config."})
                res = rec.get("result")
                if not isinstance(res, dict) or res.get("already"):
                    continue
                applied_from.setdefault((rec.get("tablet"), named), []).append(rec)
                got = res.get("config_id")
                if got is not None and int(got) != named + 1:
                    violations.append({
                        "rule": "change applied over an unseen config", "tablet": rec.get("tablet"),
                        "named_config_id": named, "new_config_id": int(got), "index": op.index, "at_ns": op.time,
                        "explanation": f"{_describe(rec)} on tablet {rec.get('tablet')} named committed config "
                        f"{named} but the master applied it as config {got}: it overwrote config(s) "
                        f"{', '.join(str(i) for i in range(named + 1, int(got)))} that its caller never saw, "
                        f"leaving up set {res.get('up')}."})
            for (tablet, named), recs in applied_from.items():
                if len(recs) > 1:
                    violations.append({
                        "rule": "two changes applied from one config", "tablet": tablet, "named_config_id": named,
                        "index": op.index, "at_ns": op.time,
                        "explanation": f"{' and '.join(_describe(r) for r in recs)} on tablet {tablet} both named "
                        f"config {named} and both applied; compare-and-set admits one."})
        return {"valid": not violations, "checked": checked, "violations": violations}
