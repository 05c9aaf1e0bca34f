"""The master's policy loop (Kudu seed: the master constantly evaluates its policies and makes
idempotent adjustments): it heartbeats every member, moves members through the node states, creates
placements, and repairs up sets.

- none → bootstrapping at once; bootstrapping → normal when every up set that names the member has
  it in its acting set too (its replicas are copied); decommissioning → left once no up set, acting set
  or migration names it.
- A member dead longer than ``dead_after`` (or decommissioning, or left) leaves every up set; an up
  set short of its replica count gains the least-loaded live member (:func:`plan_up_set`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

LIVE_STATES = ("bootstrapping", "normal")


def plan_up_set(up: Sequence[str], rf: int, states: Mapping[str, str], alive: Callable[[str], bool],
                dead_long: Callable[[str], bool], load: Mapping[str, int]) -> list[str]:
    """The up set the policy wants: members that are leaving or long dead are dropped, and the set is
    refilled to ``rf`` from live members in the bootstrapping or normal state, least loaded first.

    Nothing changes when no member of the up set is reachable (the master may be the one cut off)."""
    if not any(alive(m) for m in up) and up:
        return list(up)
    keep = [m for m in up if states.get(m) in (*LIVE_STATES, "none") and not dead_long(m)]
    candidates = sorted((m for m, s in states.items() if s in LIVE_STATES and alive(m) and m not in keep),
                        key=lambda m: (load.get(m, 0), m))
    while len(keep) < rf and candidates:
        keep.append(candidates.pop(0))
    return keep


def wanted_somewhere(member: str, placements: Mapping[int, Mapping[str, Any]],
                     shards: Mapping[int, Mapping[str, Any]]) -> bool:
    """Does any up set, acting set or migration still name ``member``?"""
    for t, p in placements.items():
        if member in p["up"]:
            return True
        s = shards.get(t) or {}
        if member in s.get("ensemble", []) or (s.get("migration") or {}).get("new") == member:
            return True
    return any(member in s.get("ensemble", []) for t, s in shards.items() if t not in placements)


def bootstrapped(member: str, placements: Mapping[int, Mapping[str, Any]],
                 shards: Mapping[int, Mapping[str, Any]]) -> bool:
    """Is every replica the up sets give ``member`` in its acting set already?"""
    return all(member in (shards.get(t) or {}).get("ensemble", []) for t, p in placements.items()
               if member in p["up"])
