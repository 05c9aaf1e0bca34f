"""What a workload's inference hands the checker: data edges, non-cycle anomalies, and how to explain both.

Edge types are small integer codes (:data:`WW` ... :data:`REALTIME`); an edge of type :data:`PASS` leaves a
virtual node and carries on the logical edge that entered it (real-time barriers, a key's "every other writer"
chains). A path ``T1 -> virtual ... -> T2`` is one logical edge, of the type of its first hop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from checkers.txn.txns import TxnTable

PASS, WW, WR, RW, PROCESS, REALTIME, RW_PROCESS, RW_REALTIME = range(8)
"""Edge type codes. RW_PROCESS and RW_REALTIME are anti-dependencies whose version order came from process or
real-time order (rw-register under a model that allows it); cycles through them are -process / -realtime."""
EDGE_NAMES = {WW: "ww", WR: "wr", RW: "rw", PROCESS: "process", REALTIME: "realtime", RW_PROCESS: "rw",
              RW_REALTIME: "rw"}


class EdgeBuffer:
    """Edges collected as numpy chunks, concatenated once."""

    def __init__(self) -> None:
        self._src: list[np.ndarray] = []
        self._dst: list[np.ndarray] = []
        self._type: list[np.ndarray] = []
        self._key: list[np.ndarray] = []

    def add(self, src: Any, dst: Any, etype: int | np.ndarray, key: Any = -1) -> None:
        """Add edges ``src[i] -> dst[i]``, dropping self-edges."""
        s = np.asarray(src, dtype=np.int64)
        d = np.asarray(dst, dtype=np.int64)
        if s.size == 0:
            return
        k = np.broadcast_to(np.asarray(key, dtype=np.int64), s.shape)
        t = np.broadcast_to(np.asarray(etype, dtype=np.uint8), s.shape)
        keep = s != d
        self._src.append(s[keep])
        self._dst.append(d[keep])
        self._type.append(t[keep])
        self._key.append(k[keep])

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, type, key)`` over everything added."""
        if not self._src:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy(), np.zeros(0, dtype=np.uint8), empty.copy()
        return (np.concatenate(self._src), np.concatenate(self._dst), np.concatenate(self._type),
                np.concatenate(self._key))


@dataclass
class Case:
    """One non-cycle anomaly, explained.

    Attributes:
        type: its anomaly type (G1a, internal, ...).
        txns: the transactions involved, the one the anomaly is about first.
        summary: one line in words.
        explanation: the sentences that justify it.
        support: further transactions a witness needs to show it again (e.g. the read that fixed a version order).
        data: JSON-ready facts (key, values).
    """

    type: str
    txns: list[int]
    summary: str
    explanation: list[str]
    support: list[int] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


class CaseLog:
    """Non-cycle anomalies as found: every one counted, the first ``cap`` of each type explained."""

    def __init__(self, cap: int = 20) -> None:
        self.cap = cap
        self.cases: list[Case] = []
        self.counts: dict[str, int] = {}

    def add(self, type_: str, build: Callable[[], Case]) -> None:
        """Count one anomaly of ``type_``; build and keep its case while under the cap."""
        n = self.counts.get(type_, 0) + 1
        self.counts[type_] = n
        if n <= self.cap:
            self.cases.append(build())


@dataclass
class DataGraph:
    """A workload inference's output.

    Attributes:
        edges: the ww / wr / rw edges (and any virtual structure), over transaction ids and virtual ids
            ``n_txn ..``.
        n_virtual: how many virtual nodes the edges use.
        cases: the non-cycle anomalies found (explained up to a cap per type, all counted).
        keys: key id -> the key as it appears in the history.
    """

    edges: EdgeBuffer
    n_virtual: int
    cases: CaseLog
    keys: list[Any]


class Inference(Protocol):
    """A workload's inference: from the transactions to the data graph, and the words for its edges."""

    def infer(self, table: TxnTable, order: str, base: int) -> DataGraph:
        """The data graph and the non-cycle anomalies.

        Args:
            table: the transactions.
            order: ``"realtime"``, ``"process"`` or ``""``: what the checked models let version orders use.
            base: the first free node id for virtual nodes (the number of transactions).

        Raises:
            MalformedTxn: a micro-op does not fit the workload's format.
        """
        ...

    def explain_edge(self, table: TxnTable, a: int, b: int, etype: int, key: int) -> str:
        """One sentence saying why ``a -> b`` is an edge of ``etype`` on key id ``key``."""
        ...

    def support(self, table: TxnTable, a: int, b: int, etype: int, key: int) -> list[int]:
        """Transactions besides ``a`` and ``b`` that a witness needs for the edge to hold again on its key."""
        ...

    def key_support(self, key: int) -> list[int]:
        """Transactions a witness needs to show key id ``key``'s version order again."""
        ...
