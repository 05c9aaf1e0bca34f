"""List-append workload: transactions that append unique values to lists and read whole lists (Elle's list-append).

A transaction is ``Invocation("txn", value=[micro-ops])`` with ``["append", k, v]`` and ``["r", k, None]``; the
system's client returns the completed micro-ops, each read filled in with the list it saw. A read shows every
append before it in the key's order, so the version order of each key is its longest read, which makes this the
workload whose anomalies the checker (:mod:`checkers.txn`) infers most precisely. Keys, values and options:
:mod:`workloads.txn_keys`.
"""

from __future__ import annotations

from harness.config import TestConfig
from workloads.txn_keys import TxnWorkload


class ListAppendWorkload(TxnWorkload):
    """Transactions of appends and reads on a skewed pool of list keys."""

    name = "list-append"
    write_f = "append"


def workload(config: TestConfig) -> ListAppendWorkload:
    """The list-append workload."""
    return ListAppendWorkload(config)
