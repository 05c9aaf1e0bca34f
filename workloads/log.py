"""Log workload: appends of unique elements and reads on a few logs; final reads after healing.

Checked by :class:`checkers.log_order.LogOrderChecker`: every acknowledged append appears exactly
once, at the position its acknowledgement named, and every read is a prefix of the final log.
"""

from __future__ import annotations

import itertools
import random

from checkers.log_order import LogOrderChecker
from harness.checker_protocol import Checker
from harness.config import TestConfig
from harness.generator import weighted_choice
from harness.protocols import Invocation, OpSource

MIX = [("append", 4.0), ("read-log", 1.0)]


KEYS = 4
"""How many logs a run grows: enough that a sharded system spreads them over several shards."""


class LogSource:
    """Appends of globally unique elements to random logs, mixed with reads."""

    def __init__(self, rng: random.Random, logs: list[str]) -> None:
        self._rng = rng
        self._logs = logs
        self._elements = itertools.count()

    def next_op(self, worker: int) -> Invocation:
        """The next append or read."""
        key = self._rng.choice(self._logs)
        if weighted_choice(self._rng, MIX) == "append":
            return Invocation("append", key, next(self._elements))
        return Invocation("read-log", key, None)


class LogWorkload:
    """Append-only logs (one per shard, by name), on any system whose client appends and reads a log."""

    name = "log"
    functions = frozenset({"append", "read-log"})

    def __init__(self, config: TestConfig) -> None:
        self.logs = [f"log-{i}" for i in range(KEYS)]

    def generator(self, rng: random.Random, concurrency: int) -> OpSource:
        """Random appends and reads."""
        return LogSource(rng, self.logs)

    def final_ops(self) -> list[Invocation]:
        """A read of every log."""
        return [Invocation("read-log", key) for key in self.logs]

    def checkers(self) -> list[Checker]:
        """The log checker."""
        return [LogOrderChecker(append_f="append", read_f="read-log")]


def workload(config: TestConfig) -> LogWorkload:
    """The log workload."""
    return LogWorkload(config)
