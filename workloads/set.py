"""Set workload: add unique elements to a few sets, then read every set after healing (Jepsen's set-full).

``add`` adds an element to the set at a key, ``read`` returns the set's elements (the system's client
decides how: the reference system appends to a list under the key). Checked by
:class:`checkers.set_full.SetFullChecker`: lost, unexpected and recovered elements.
"""

from __future__ import annotations

import itertools
import random

from checkers.set_full import SetFullChecker
from harness.checker_protocol import Checker
from harness.config import TestConfig
from harness.protocols import Invocation, OpSource

KEYS = 4
"""How many sets a run grows: enough that a sharded system spreads them over several shards."""


class SetSource:
    """Adds of globally unique elements to random sets."""

    def __init__(self, rng: random.Random, sets: list[str]) -> None:
        self._rng = rng
        self._sets = sets
        self._elements = itertools.count()

    def next_op(self, worker: int) -> Invocation:
        """The next add."""
        return Invocation("add", self._rng.choice(self._sets), next(self._elements))


class SetWorkload:
    """Grow-only sets, on any system whose client adds to a set and reads it."""

    name = "set"
    functions = frozenset({"add", "read"})

    def __init__(self, config: TestConfig) -> None:
        self.sets = [f"set-{i}" for i in range(KEYS)]

    def generator(self, rng: random.Random, concurrency: int) -> OpSource:
        """Random adds."""
        return SetSource(rng, self.sets)

    def final_ops(self) -> list[Invocation]:
        """A read of every set."""
        return [Invocation("read", key) for key in self.sets]

    def checkers(self) -> list[Checker]:
        """The set-full checker."""
        return [SetFullChecker(add_f="add", read_f="read")]


def workload(config: TestConfig) -> SetWorkload:
    """The set workload."""
    return SetWorkload(config)
