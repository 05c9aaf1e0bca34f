"""The admin API (Kudu seed's master operations): every tablet config change names the committed
config id and is applied by compare-and-set; a change already in effect succeeds again (idempotent).

- ``add_replica(tablet, node)``, ``remove_replica(tablet, node)``, ``move_replica(tablet, from, to)``,
  ``change_replica_count(tablet, count)``, ``cancel_migration(tablet)``: change the placement (up set);
  the operator then migrates the acting set toward it;
- ``retire_node(node)``: decommission a node; the policy loop drains it, then it is ``left``.

``node`` is a member id or a process name (the live member of that name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from system import rules
from system.master.catalog import Catalog, placement_key

Placement = dict[str, Any]


class AdminError(Exception):
    """A definite refusal; ``code`` is the RPC error code, ``data`` goes with it."""

    def __init__(self, code: str, message: str, **data: Any) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


def resolve(catalog: Catalog, node: str, live_only: bool = True) -> str:
    """The member id named by ``node`` (a member id, or a process name: its live member)."""
    members = {m: rec for m, (rec, _) in catalog.members().items()}
    if node in members and (not live_only or members[node]["state"] not in ("left", "decommissioning")):
        return node
    live = [m for m, rec in members.items() if rec["name"] == node and rec["state"] not in ("left", "decommissioning")]
    if live:
        return live[0]
    if node in members:
        raise AdminError("bad_node", f"member {node} is {members[node]['state']}")
    raise AdminError("unknown_node", f"no live member named {node!r}")


def change_placement(catalog: Catalog, tablet: int, config_id: Any, change: Callable[[Placement], Placement | None],
                     what: str) -> dict[str, Any]:
    """Apply ``change`` to the tablet's placement by compare-and-set; ``change`` returns None when the
    requested state already holds (the call then succeeds without a new config)."""
    for _ in range(20):
        rec = catalog.store.get(placement_key(tablet))
        if rec is None:
            raise AdminError("unknown_tablet", f"tablet {tablet} has no placement yet")
        cur, version = rec.value, rec.version
        new = change(dict(cur))
        if new is None:
            return {"tablet": tablet, "up": cur["up"], "rf": cur["rf"], "config_id": cur["config_id"],
                    "already": True}
        if not rules.config_change_allowed(cur["config_id"], config_id):
            raise AdminError("stale_config", f"{what}: config id {config_id} is not the committed config "
                             f"{cur['config_id']} of tablet {tablet}", config_id=cur["config_id"])
        new["config_id"] = int(cur["config_id"]) + 1
        if catalog.store.cas(placement_key(tablet), new, version) is not None:
            return {"tablet": tablet, "up": new["up"], "rf": new["rf"], "config_id": new["config_id"],
                    "already": False}
    raise AdminError("busy", "the placement kept changing; retry")


def add_replica(catalog: Catalog, tablet: int, node: str, config_id: Any) -> dict[str, Any]:
    """Add ``node`` to the up set (raising the replica count with it)."""
    m = resolve(catalog, node)

    def change(p: Placement) -> Placement | None:
        if m in p["up"]:
            return None
        up = [*p["up"], m]
        return {**p, "up": up, "rf": max(int(p["rf"]), len(up))}
    return change_placement(catalog, tablet, config_id, change, "add-replica")


def remove_replica(catalog: Catalog, tablet: int, node: str, config_id: Any) -> dict[str, Any]:
    """Remove ``node`` from the up set (lowering the replica count with it)."""
    m = node if any(node in p[0]["up"] for p in catalog.placements().values()) else resolve(catalog, node, False)

    def change(p: Placement) -> Placement | None:
        if m not in p["up"]:
            return None
        up = [n for n in p["up"] if n != m]
        if not up:
            raise AdminError("refused", "cannot remove the last replica")
        return {**p, "up": up, "rf": min(int(p["rf"]), len(up))}
    return change_placement(catalog, tablet, config_id, change, "remove-replica")


def move_replica(catalog: Catalog, tablet: int, src: str, dst: str, config_id: Any) -> dict[str, Any]:
    """Replace ``src`` by ``dst`` in the up set (a migration: add, backfill, promote, contract)."""
    d = resolve(catalog, dst)

    def change(p: Placement) -> Placement | None:
        s = src if src in p["up"] else next((n for n in p["up"] if n.split("~")[0] == src), src)
        if s not in p["up"] and d in p["up"]:
            return None
        if s not in p["up"]:
            raise AdminError("refused", f"{src} is not in the up set {p['up']}")
        if d in p["up"]:
            raise AdminError("refused", f"{dst} is already in the up set {p['up']}")
        return {**p, "up": [d if n == s else n for n in p["up"]]}
    return change_placement(catalog, tablet, config_id, change, "move-replica")


def change_replica_count(catalog: Catalog, tablet: int, count: int, config_id: Any) -> dict[str, Any]:
    """Set the desired replica count; extra members leave the up set now (a non-leader first), missing
    ones are added by the policy loop."""
    if count < 1:
        raise AdminError("bad_request", "the replica count must be at least 1")
    leader = (catalog.shards().get(tablet) or {}).get("leader")

    def change(p: Placement) -> Placement | None:
        if int(p["rf"]) == count and len(p["up"]) <= count:
            return None
        up = list(p["up"])
        while len(up) > count:
            up.remove(next((n for n in reversed(up) if n != leader), up[-1]))
        return {**p, "up": up, "rf": count}
    return change_placement(catalog, tablet, config_id, change, "change-replica-count")


def cancel_migration(catalog: Catalog, tablet: int, config_id: Any) -> dict[str, Any]:
    """Copyset seed: cancelling a migration sets the up set back to the acting set."""
    shard = catalog.shards().get(tablet)
    if shard is None:
        raise AdminError("unknown_tablet", f"no tablet {tablet}")
    acting = list(shard["ensemble"])

    def change(p: Placement) -> Placement | None:
        if sorted(p["up"]) == sorted(acting):
            return None
        return {**p, "up": acting}
    return change_placement(catalog, tablet, config_id, change, "cancel-migration")


def retire_node(catalog: Catalog, node: str) -> dict[str, Any]:
    """Decommission a node: it leaves every up set, then (drained) becomes ``left``."""
    members = {m: rec for m, (rec, _) in catalog.members().items()}
    m = node if node in members else next((x for x, r in members.items() if r["name"] == node
                                           and r["state"] != "left"), None)
    if m is None:
        raise AdminError("unknown_node", f"no member {node!r}")
    state = members[m]["state"]
    if state in ("decommissioning", "left"):
        return {"member": m, "state": state, "already": True}
    if not catalog.set_state(m, "decommissioning", "retired by admin"):
        raise AdminError("refused", f"member {m} is {state}: cannot decommission")
    return {"member": m, "state": "decommissioning", "already": False}
