"""A client wrapper for tests of a system that stops answering: it refuses, definitely ("no leader"), each
operation its predicate picks and passes the others to the client it wraps."""

from __future__ import annotations

from collections.abc import Callable

from harness.cluster_view import ClusterView
from harness.protocols import Client, Invocation, Outcome


class RefusingClient:
    """Wraps ``inner``; an operation for which ``refuse(op)`` is true fails as a member with no leader fails."""

    def __init__(self, inner: Client, refuse: Callable[[Invocation], bool]) -> None:
        self.inner, self.refuse = inner, refuse

    async def open(self, cluster: ClusterView) -> None:
        """Open the wrapped client."""
        await self.inner.open(cluster)

    async def invoke(self, op: Invocation) -> Outcome:
        """Refuse ``op`` if the predicate says so, else pass it on."""
        if self.refuse(op):
            return Outcome("fail", None, "no leader")
        return await self.inner.invoke(op)

    async def close(self) -> None:
        """Close the wrapped client."""
        await self.inner.close()
