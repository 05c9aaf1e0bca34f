"""Register workload: read, write and cas on independent keys, checked for linearizability.

Written values are unique per key (the n-th op on a key writes n), which also lets the checker take
its polynomial fast path. Each key is shared by a few workers and retired after a fixed number of ops,
so every key's history stays small. A group whose key is refused (three reads or writes in a row that
fail: its shard has no leader) sets the key aside for a while and takes another, so that one shard
without a leader does not hold a group still; the key is taken up again later, and read at the end like
every key in use. A key whose ops time out is kept: its leader may be paused or cut off, the windows
where a stale read or a lost write shows, and the clients reopened after those timeouts, starting from a
home node that may be that leader, are the ones that see it.
"""

from __future__ import annotations

import random

from harness.checker_protocol import Checker
from harness.config import TestConfig
from harness.generator import IndependentKeys, weighted_choice
from harness.protocols import Invocation, OpSource, Outcome

MIX = [("read", 2.0), ("write", 1.0), ("cas", 1.0)]
STUCK_AFTER = 3
"""Reads or writes in a row on a key that fail before its group sets the key aside."""
REVISIT_AFTER = 300
"""Ops issued, over all keys, before a key set aside is taken up again."""


def stuck(op: Invocation, outcome: Outcome) -> bool:
    """An outcome that shows the key's shard refusing: a read or write that definitely failed (no leader
    took it). A cas fails when its expected value is not there, which says nothing about the shard; an
    info (a timeout) may come from a leader paused or cut off, whose window the group stays for."""
    return outcome.type == "fail" and op.f != "cas"


def make_op(rng: random.Random, key: object, n: int) -> Invocation:
    """One register op on ``key``; ``n`` (ops already on the key) makes written values unique."""
    f = weighted_choice(rng, MIX)
    if f == "read":
        return Invocation("read", key, None)
    if f == "write":
        return Invocation("write", key, n)
    expected = rng.randrange(max(0, n - 4), n) if n > 0 else None
    return Invocation("cas", key, [expected, n])


class RegisterWorkload:
    """Independent cas-registers, on any system whose client reads, writes and compares-and-sets."""

    name = "register"
    functions = frozenset({"read", "write", "cas"})

    def __init__(self, config: TestConfig) -> None:
        self.config = config
        self._source: IndependentKeys | None = None

    def generator(self, rng: random.Random, concurrency: int) -> OpSource:
        """Groups of up to 4 workers per key, 120 ops per key; a stuck key is set aside (:func:`stuck`)."""
        self._source = IndependentKeys(rng, concurrency, make_op, workers_per_key=min(4, concurrency),
                                       ops_per_key=120, stuck=stuck, stuck_after=STUCK_AFTER,
                                       revisit_after=REVISIT_AFTER)
        return self._source

    def final_ops(self) -> list[Invocation]:
        """For each key in use when the workload stopped, or set aside: a read, a write of the key's next
        unique value, and a read again. All are checked for linearizability like every op, and, since they
        come after the heal, for recovery (:mod:`checkers.recovery`).

        The first read shows what the cluster kept: an acknowledged write lost by a crash shows there and
        nowhere else, since the write after it would hide it. The write and the read after it show that the
        cluster commits again: one that serves reads but no longer commits a write has not recovered, and
        only a write after the heal shows it, since an operation that never completes is indeterminate,
        never invalid."""
        if self._source is None:
            return []
        return [op for key, n in self._source.issued().items()
                for op in (Invocation("read", key, None), Invocation("write", key, n), Invocation("read", key, None))]

    def checkers(self) -> list[Checker]:
        """Linearizability against a cas-register per key."""
        from checkers.linearizable import LinearizableChecker

        return [LinearizableChecker("cas-register")]


def workload(config: TestConfig) -> RegisterWorkload:
    """The register workload."""
    return RegisterWorkload(config)
