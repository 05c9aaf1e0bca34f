"""Lock workload (Jepsen's lock-set): each add takes the system's lock and, inside it, adds an element to one
shared set by an unguarded read-modify-write; a final read reads the set.

The system's client does the locking (``add`` means "under the lock"). If the lock ever lets two clients in
at once, one's write overwrites the other's and an acknowledged add is lost, which the set checker
(:class:`checkers.set_full.SetFullChecker`) reports: a lost update proves two holders at once. A client
that records which version of the set each holder read (``read_revision`` on the add's completion) lets
:class:`checkers.mutual_exclusion.MutualExclusionChecker` name the holders that overlapped.
"""

from __future__ import annotations

import itertools
import random

from checkers.mutual_exclusion import MutualExclusionChecker
from checkers.set_full import SetFullChecker
from harness.checker_protocol import Checker
from harness.config import TestConfig
from harness.protocols import Invocation, OpSource

KEY = "lock-set"


class LockSource:
    """Adds of unique elements to the one shared set."""

    def __init__(self) -> None:
        self._elements = itertools.count()

    def next_op(self, worker: int) -> Invocation:
        """The next add."""
        return Invocation("add", KEY, next(self._elements))


class LockWorkload:
    """Mutual exclusion, observed through lost updates to a set guarded by the lock."""

    name = "lock"
    functions = frozenset({"add", "read"})

    def __init__(self, config: TestConfig) -> None:
        self.config = config

    def generator(self, rng: random.Random, concurrency: int) -> OpSource:
        """Unique adds."""
        return LockSource()

    def final_ops(self) -> list[Invocation]:
        """One read of the set."""
        return [Invocation("read", KEY)]

    def checkers(self) -> list[Checker]:
        """The set checker (a lost add is two lock holders at once) and the mutual-exclusion checker (two
        holders that read the same revision)."""
        return [SetFullChecker(add_f="add", read_f="read"), MutualExclusionChecker(add_f="add")]


def workload(config: TestConfig) -> LockWorkload:
    """The lock workload."""
    return LockWorkload(config)
