"""Bank workload: transfers between accounts; every read must show the same total.

``read`` returns ``{account: balance}``; ``transfer`` moves ``amount`` ``from`` one account ``to``
another, or fails definitely (``insufficient-funds``, or a conflict). Every account starts at the
workload's ``initial_balances()``. The system's client decides how: the reference system keeps the map
under one key and transfers by compare-and-set on it, a mismatch being a definite fail.
"""

from __future__ import annotations

import random
from typing import Any

from checkers.bank import BankChecker
from harness.checker_protocol import Checker
from harness.config import TestConfig
from harness.protocols import Invocation, OpSource

ACCOUNTS = 5
INITIAL = 20
KEY = "bank"


def initial_balances() -> dict[str, int]:
    """Every account at its initial balance."""
    return {f"a{i}": INITIAL for i in range(ACCOUNTS)}


class BankSource:
    """Random transfers and reads."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def next_op(self, worker: int) -> Invocation:
        """A read (one in three) or a transfer of 1-5 between two distinct accounts."""
        if self._rng.random() < 1 / 3:
            return Invocation("read", KEY)
        src, dst = self._rng.sample(range(ACCOUNTS), 2)
        value: dict[str, Any] = {"from": f"a{src}", "to": f"a{dst}", "amount": self._rng.randint(1, 5)}
        return Invocation("transfer", KEY, value)


class BankWorkload:
    """A bank of accounts, on any system whose client reads balances and transfers."""

    name = "bank"
    functions = frozenset({"read", "transfer"})

    def __init__(self, config: TestConfig) -> None:
        self.config = config

    @staticmethod
    def initial_balances() -> dict[str, int]:
        """Every account at its initial balance."""
        return initial_balances()

    def generator(self, rng: random.Random, concurrency: int) -> OpSource:
        """Random transfers and reads."""
        return BankSource(rng)

    def final_ops(self) -> list[Invocation]:
        """One final read."""
        return [Invocation("read", KEY)]

    def checkers(self) -> list[Checker]:
        """Conservation of the total."""
        return [BankChecker(total=ACCOUNTS * INITIAL)]


def workload(config: TestConfig) -> BankWorkload:
    """The bank workload."""
    return BankWorkload(config)
