"""Operation generators: independent keys, op mixes, and a shared rate limiter.

Independent keys (Jepsen's ``independent``) keep linearizability checks small: workers are grouped,
each group shares one key, and after a fixed number of operations the group moves on to a fresh key.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.protocols import Invocation

MakeOp = Callable[[random.Random, object, int], Invocation]
"""Builds an op for ``(rng, key, n)`` where ``n`` counts ops already issued on that key."""


@dataclass
class _Group:
    key_serial: int
    issued: int


class IndependentKeys:
    """Hand out ops on per-group keys, rotating to a fresh key every ``ops_per_key`` ops.

    Args:
        rng: the seeded random generator.
        concurrency: the number of workers.
        make_op: builds each op from (rng, key, ops issued on the key so far).
        workers_per_key: how many workers share a key at a time (its concurrency in the history).
        ops_per_key: how many ops a key receives before its group moves on.
    """

    def __init__(
        self, rng: random.Random, concurrency: int, make_op: MakeOp, *, workers_per_key: int = 4,
        ops_per_key: int = 150,
    ) -> None:
        self._rng = rng
        self._make_op = make_op
        self._per_key = max(1, workers_per_key)
        self._ops_per_key = max(1, ops_per_key)
        groups = max(1, -(-concurrency // self._per_key))
        self._groups = [_Group(g, 0) for g in range(groups)]
        self._stride = groups

    def issued(self) -> dict[int, int]:
        """``{key: ops issued on it}`` for the key each group is on now: the next op's ``n``."""
        return {g.key_serial: g.issued for g in self._groups}

    def key_for(self, group: int) -> int:
        """The key a group is on now; keys never repeat across groups."""
        return self._groups[group].key_serial

    def next_op(self, worker: int) -> Invocation:
        """The next op for ``worker``."""
        group = self._groups[(worker // self._per_key) % len(self._groups)]
        if group.issued >= self._ops_per_key:
            group.key_serial += self._stride
            group.issued = 0
        op = self._make_op(self._rng, group.key_serial, group.issued)
        group.issued += 1
        return op


def weighted_choice(rng: random.Random, mix: Sequence[tuple[str, float]]) -> str:
    """Pick one name from ``[(name, weight), ...]``."""
    names = [name for name, _ in mix]
    weights = [weight for _, weight in mix]
    return rng.choices(names, weights=weights, k=1)[0]


class RateLimiter:
    """Space operations evenly so that all workers together issue about ``rate`` per second.

    A rate of 0 or less means no limit.
    """

    def __init__(self, rate: float) -> None:
        self._interval = 1.0 / rate if rate > 0 else 0.0
        self._next = time.monotonic()

    async def acquire(self) -> None:
        """Wait for this caller's slot."""
        if self._interval == 0.0:
            return
        now = time.monotonic()
        slot = max(self._next, now)
        self._next = slot + self._interval
        delay = slot - now
        if delay > 0:
            await asyncio.sleep(delay)
