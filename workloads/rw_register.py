"""Read-write register workload: transactions that write unique values to registers and read them (Elle's
rw-register).

A transaction is ``Invocation("txn", value=[micro-ops])`` with ``["w", k, v]`` and ``["r", k, None]``; the
system's client returns the completed micro-ops, each read filled in with the value it saw (None: never
written). A read shows only the last write, so the checker (:mod:`checkers.txn`) orders versions only from what
the history proves. Keys, values and options: :mod:`workloads.txn_keys`.
"""

from __future__ import annotations

from harness.config import TestConfig
from workloads.txn_keys import TxnWorkload


class RwRegisterWorkload(TxnWorkload):
    """Transactions of writes and reads on a skewed pool of register keys."""

    name = "rw-register"
    write_f = "w"


def workload(config: TestConfig) -> RwRegisterWorkload:
    """The rw-register workload."""
    return RwRegisterWorkload(config)
