"""Lose-unsynced fault for the reference system: the generic power loss, with torn writes kept within what
the reference WAL survives.

The reference WAL refuses a torn record, wherever it is (:mod:`system.wal`): it cannot tell an unsynced
batch cut by the power loss from acknowledged entries a bad disk lost, and trimming the second would
silently drop them. A torn tail is therefore damage to one replica of its tablet, which the control plane
repairs by tablet copy. Tearing the last write of several nodes at once, as the generic package does for
``majority`` and ``all``, can tear the same tablet's WAL on a majority of its replicas, and the tablet can
then never elect a leader again: no correct system of this design survives that. So here:

- a power loss of several nodes drops their unsynced writes without tearing any (``untorn`` says why);
- a power loss of one node tears its last write only in the cluster's damage guard's turn
  (:mod:`fencepost_reference.faults.guard`), like a wipe or a corrupt file; out of turn it loses
  power untorn.

The random draws are the generic package's, so a seed picks the same nodes either way.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from fencepost import ClusterView, FaultSpec, choose_nodes, load_nemesis
from fencepost_reference.faults.guard import guard_of

POWER_LOSS_WEIGHT = 3.0
"""How often the default campaign picks a power loss, against 1 for a blunt package: at 1 it drew about one
window in 120 s (sometimes none), too few for bugs that lose what a power loss takes (ack-before-fsync went
uncaught)."""

MANY = ("a torn write is damage to the reference WAL, and tearing several nodes' last writes at once can "
        "tear a majority of one tablet's replicas")


class LoseUnsyncedNemesis:
    """Power loss of one node or several; at most one node's last write torn, in the damage guard's turn.
    Everything but the tearing is the generic package's (found through the registry, as any run finds it)."""

    mix_weight = POWER_LOSS_WEIGHT
    generic = True
    """The generic power loss with the reference store's tearing: a fault of any system."""

    def __init__(self) -> None:
        self._generic = load_nemesis("lose-unsynced")
        self.name: str = self._generic.name
        self.color: str = getattr(self._generic, "color", "#bc6c25")
        self.needs: frozenset[str] = frozenset(getattr(self._generic, "needs", ()))

    def targets(self) -> Sequence[str]:
        """The generic package's: one, leader, majority or all."""
        return self._generic.targets()

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Cut the power of the chosen nodes, tearing the last write only where the reference WAL survives it."""
        nodes = await choose_nodes(cluster, spec.target, rng)
        if rng.random() >= 0.5:  # the generic package's draw (a tear half of the time): none asked for
            return await _lose(cluster, spec, nodes, rng)
        if len(nodes) > 1:
            return await _lose(cluster, spec, nodes, rng, untorn=MANY)
        guard = guard_of(cluster)
        async with guard.turn(cluster) as why:
            if why is None:
                guard.damaged(nodes)
                return await _lose(cluster, spec, nodes, rng, tear=True)
        return await _lose(cluster, spec, nodes, rng, untorn=why)

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Nothing to undo: the nodes restarted as part of the fault."""
        return await self._generic.stop(cluster)

    async def heal(self, cluster: ClusterView) -> None:
        """Nothing to undo."""
        await self._generic.heal(cluster)


async def _lose(cluster: ClusterView, spec: FaultSpec, nodes: Sequence[str], rng: random.Random, tear: bool = False,
                untorn: str | None = None) -> dict[str, Any]:
    """Cut the power of ``nodes``, tearing each one's last write if ``tear``; what was done, with why no write
    was torn when one was asked for (``untorn``)."""
    done: dict[str, Any] = {"target": spec.target, "tear": tear}
    if untorn is not None:
        done["untorn"] = untorn
    return {**done, **await cluster.disk.lose_unsynced(nodes, tear, rng)}


def package() -> LoseUnsyncedNemesis:
    """The reference system's lose-unsynced fault package."""
    return LoseUnsyncedNemesis()
