"""Operation generators: independent keys, op mixes, and a shared rate limiter.

Independent keys (Jepsen's ``independent``) keep linearizability checks small: workers are grouped,
each group shares one key, and after a fixed number of operations the group moves on to a fresh key.
A group whose key stops answering (a shard without a leader, a node cut off) may also set the key aside
and come back to it later, so that one stuck shard does not hold the workload still.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.protocols import Invocation, Outcome

MakeOp = Callable[[random.Random, object, int], Invocation]
"""Builds an op for ``(rng, key, n)`` where ``n`` counts ops already issued on that key."""

Stuck = Callable[[Invocation, Outcome], bool]
"""Says whether an outcome shows the op's key stuck (no answer, no leader), as a failed cas never does."""


@dataclass
class _Group:
    key_serial: int
    issued: int
    fresh: int
    stuck: int = 0


@dataclass(frozen=True)
class _Parked:
    key: int
    issued: int
    at: int


class IndependentKeys:
    """Hand out ops on per-group keys, rotating to a fresh key every ``ops_per_key`` ops.

    Args:
        rng: the seeded random generator.
        concurrency: the number of workers.
        make_op: builds each op from (rng, key, ops issued on the key so far).
        workers_per_key: how many workers share a key at a time (its concurrency in the history).
        ops_per_key: how many ops a key receives before its group moves on.
        stuck: with ``stuck_after``, what counts as a sign of a stuck key (see :meth:`observe`).
        stuck_after: after this many outcomes in a row on its key that ``stuck`` flags (an ok in between
            starts the count again), the group sets the key aside and moves on; 0 never does.
        revisit_after: a key set aside is taken up again, by the next group to move on, once this many
            ops have been issued since, and carries on from its own count.
    """

    def __init__(
        self, rng: random.Random, concurrency: int, make_op: MakeOp, *, workers_per_key: int = 4,
        ops_per_key: int = 150, stuck: Stuck | None = None, stuck_after: int = 0, revisit_after: int = 200,
    ) -> None:
        self._rng = rng
        self._make_op = make_op
        self._per_key = max(1, workers_per_key)
        self._ops_per_key = max(1, ops_per_key)
        groups = max(1, -(-concurrency // self._per_key))
        self._groups = [_Group(g, 0, g) for g in range(groups)]
        self._stride = groups
        self._stuck = stuck
        self._stuck_after = stuck_after if stuck is not None else 0
        self._revisit_after = revisit_after
        self._parked: deque[_Parked] = deque()
        self._total = 0

    def issued(self) -> dict[int, int]:
        """``{key: ops issued on it}`` for the key each group is on now, and each key set aside: the next
        op's ``n``."""
        keys = {p.key: p.issued for p in self._parked}
        keys.update({g.key_serial: g.issued for g in self._groups})
        return keys

    def set_aside(self) -> list[int]:
        """The keys set aside now, oldest first."""
        return [p.key for p in self._parked]

    def key_for(self, group: int) -> int:
        """The key a group is on now; no two groups are ever on one key at once."""
        return self._groups[group].key_serial

    def next_op(self, worker: int) -> Invocation:
        """The next op for ``worker``."""
        group = self._group(worker)
        if group.issued >= self._ops_per_key:
            self._move_on(group)
        op = self._make_op(self._rng, group.key_serial, group.issued)
        group.issued += 1
        self._total += 1
        return op

    def observe(self, worker: int, op: Invocation, outcome: Outcome) -> None:
        """Hear how ``worker``'s op ended; ``stuck_after`` flagged outcomes in a row set its group's key aside.

        A completion for a key the group has already left counts for nothing."""
        if not self._stuck_after or self._stuck is None:
            return
        group = self._group(worker)
        if op.key != group.key_serial:
            return
        if outcome.type == "ok":
            group.stuck = 0
        elif self._stuck(op, outcome):
            group.stuck += 1
            if group.stuck >= self._stuck_after:
                self._parked.append(_Parked(group.key_serial, group.issued, self._total))
                self._move_on(group)

    def _group(self, worker: int) -> _Group:
        return self._groups[(worker // self._per_key) % len(self._groups)]

    def _move_on(self, group: _Group) -> None:
        """Take up the oldest key set aside long enough ago (never the one just left, nor one that has had all
        its ops: it stays aside for the final reads), else a fresh key."""
        group.stuck = 0
        left = group.key_serial
        for parked in self._parked:
            if (parked.key != left and parked.issued < self._ops_per_key
                    and self._total - parked.at >= self._revisit_after):
                self._parked.remove(parked)
                group.key_serial, group.issued = parked.key, parked.issued
                return
        group.fresh += self._stride
        group.key_serial, group.issued = group.fresh, 0


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
