"""Membership fault: members added and removed while the test runs, as Jepsen's membership nemesis does.

The system brings its membership State (:class:`harness.capabilities.Membership`): the kinds of change
it can make (this package's targets), how to make one, how to start putting things back at a window's
end, and how to settle back to the configured membership at the heal. The State is the system's, so
this file serves any system that offers the membership capability.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.capabilities import MEMBERSHIP
from harness.cluster_view import ClusterView
from harness.plugin_api import HasMembership
from harness.protocols import FaultSpec


class MembershipNemesis:
    """One membership change per window, through the system's State."""

    name = "membership"
    color = "#7d5ba6"
    needs = frozenset({MEMBERSHIP})
    generic = True
    """A fault of any system, not aimed at one protocol window: the default campaign weighs it 1."""

    def __init__(self, changes: Sequence[str] = ()) -> None:
        self._changes = tuple(changes)

    def targets(self) -> Sequence[str]:
        """The system's kinds of change (known once :meth:`for_system` has been told the system)."""
        return self._changes

    def for_system(self, system: object) -> None:
        """Take the target choices from the system's membership State (the registry calls this at load)."""
        if isinstance(system, HasMembership):
            self._changes = tuple(system.membership().changes())

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Make the change the target names."""
        return {"target": spec.target, **await cluster.membership.change(cluster, spec.target, rng)}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Start putting the membership back."""
        return dict(await cluster.membership.restore(cluster))

    async def heal(self, cluster: ClusterView) -> None:
        """Settle back to the configured membership (bounded)."""
        await cluster.membership.settle(cluster)


def package() -> MembershipNemesis:
    """The membership fault package."""
    return MembershipNemesis()
