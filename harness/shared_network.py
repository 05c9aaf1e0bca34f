"""Network faults of overlapping fault windows, composed instead of replacing each other.

A backend's :class:`~harness.capabilities.Network` keeps one partition: ``partition`` replaces the one in
force and ``heal`` removes every cut. The default campaign runs two lanes of windows side by side, so
without composition one window's heal (a stalled swap ending) ends another window's cut (a catch-up
partition holding until a new leader is elected) early, and one window's partition silently replaces
the other's.

:class:`SharedNetwork` keeps each window's cut under its owner, the window the calling task acts for
(:func:`acting_for`, which the nemesis runner sets around a window's start and stop), and applies the
union of the cuts in force: a window's ``partition`` replaces only its own cut, its ``heal`` removes
only its own. A call made for no window (the final heal, a tool's or a test's own partition) acts on
the whole network, as the backend's does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar

from harness import capabilities as caps

_OWNER: ContextVar[str | None] = ContextVar("fencepost_network_owner", default=None)


@contextlib.contextmanager
def acting_for(owner: str) -> Iterator[None]:
    """Within the ``with`` block (and the tasks started in it), network faults belong to ``owner``."""
    token = _OWNER.set(owner)
    try:
        yield
    finally:
        _OWNER.reset(token)


def union(grudges: Iterable[Mapping[str, Sequence[str]]]) -> dict[str, list[str]]:
    """The grudge that cuts every link any of ``grudges`` cuts (both ways)."""
    cut: dict[str, set[str]] = {}
    for grudge in grudges:
        for a, others in grudge.items():
            for b in others:
                cut.setdefault(a, set()).add(b)
                cut.setdefault(b, set()).add(a)
    return {a: sorted(bs) for a, bs in sorted(cut.items())}


class SharedNetwork:
    """A backend's network, shared by concurrent fault windows: each owns its cut, the union applies.

    Args:
        network: the backend's network capability.
    """

    def __init__(self, network: caps.Network) -> None:
        self.backend = network
        self._cuts: dict[str | None, dict[str, list[str]]] = {}
        self._lock = asyncio.Lock()

    def cuts(self) -> dict[str | None, dict[str, list[str]]]:
        """The cuts in force, by owner (None: a cut made for no window)."""
        return {owner: dict(grudge) for owner, grudge in self._cuts.items()}

    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Cut ``grudge``'s links for the calling window, in place of its earlier cut and beside the other
        windows'; called for no window, replace every cut."""
        owner = _OWNER.get()
        async with self._lock:
            cuts = {} if owner is None else dict(self._cuts)
            cuts[owner] = {a: list(bs) for a, bs in grudge.items()}
            await self.backend.partition(union(cuts.values()))
            self._cuts = cuts

    async def heal(self) -> None:
        """Remove the calling window's cut (the others stay); called for no window, remove every cut."""
        owner = _OWNER.get()
        async with self._lock:
            cuts = {} if owner is None else {o: g for o, g in self._cuts.items() if o != owner}
            rest = union(cuts.values())
            self._cuts = cuts  # a heal that fails still drops the cut: the final heal tries again
            if rest:  # union names only nodes with a cut link
                await self.backend.partition(rest)
            else:
                await self.backend.heal()
