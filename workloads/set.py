"""Set workload: add unique elements to a few sets, then read every set after healing (Jepsen's set-full).

A set is stored as an append-only list under its key; ``add`` appends, ``read`` returns the elements.
Checked by :class:`checkers.set_full.SetFullChecker`: lost, unexpected and recovered elements.
"""

from __future__ import annotations

import itertools
import random

from checkers.set_full import SetFullChecker
from harness.checker import Checker
from harness.config import TestConfig
from harness.protocols import Client, Invocation, OpSource, Outcome
from workloads.reference_client import ReferenceClient


class SetClient(ReferenceClient):
    """``add`` is an append; ``read`` reads the list as a set."""

    async def invoke(self, op: Invocation) -> Outcome:
        """Translate set ops to the log ops the system offers."""
        if op.f == "add":
            out = await super().invoke(Invocation("append", op.key, op.value))
            return Outcome(out.type, op.value if out.type == "ok" else None, out.error)
        if op.f == "read":
            out = await super().invoke(Invocation("read-log", op.key))
            return Outcome(out.type, sorted(out.value or [], key=repr) if out.type == "ok" else None, out.error)
        raise ValueError(f"unknown function {op.f!r}")


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
    """Grow-only sets on the reference system."""

    name = "set"

    def __init__(self, config: TestConfig) -> None:
        self.sets = [f"set-{i}" for i in range(max(2, config.tablets))]

    def client(self) -> Client:
        """A set client."""
        return SetClient()

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
