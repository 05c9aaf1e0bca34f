"""Bank workload: transfers between accounts by compare-and-set; every read must show the same total.

All accounts live under one key (so in one tablet) as ``{account: balance}``. A transfer reads the
map and compare-and-sets the updated map; a mismatch is a definite fail. Before the first transfer
the key is absent, which means every account holds its initial balance.
"""

from __future__ import annotations

import random
from typing import Any

from checkers.bank import BankChecker
from harness.checker import Checker
from harness.config import TestConfig
from harness.protocols import Client, Invocation, OpSource, Outcome
from workloads.reference_client import ReferenceClient

ACCOUNTS = 5
INITIAL = 20
KEY = "bank"


def initial_balances() -> dict[str, int]:
    """Every account at its initial balance."""
    return {f"a{i}": INITIAL for i in range(ACCOUNTS)}


class BankClient(ReferenceClient):
    """``read`` returns the balances; ``transfer`` moves an amount by cas on the whole map."""

    async def invoke(self, op: Invocation) -> Outcome:
        """Run a read or a transfer."""
        current = await super().invoke(Invocation("read", KEY))
        if current.type != "ok":
            return Outcome("fail" if current.type == "fail" else "info", None, current.error)
        balances: dict[str, int] | None = current.value
        seen = dict(balances) if balances is not None else initial_balances()
        if op.f == "read":
            return Outcome("ok", seen)
        if op.f != "transfer":
            raise ValueError(f"unknown function {op.f!r}")
        src, dst, amount = op.value["from"], op.value["to"], op.value["amount"]
        if seen[src] < amount:
            return Outcome("fail", None, "insufficient-funds")
        new = dict(seen)
        new[src] -= amount
        new[dst] += amount
        out = await super().invoke(Invocation("cas", KEY, [balances, new]))
        return Outcome(out.type, op.value if out.type == "ok" else None, out.error)


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
    """A bank of accounts on the reference system."""

    name = "bank"

    def __init__(self, config: TestConfig) -> None:
        self.config = config

    def client(self) -> Client:
        """A bank client."""
        return BankClient()

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
