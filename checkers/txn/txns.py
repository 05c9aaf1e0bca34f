"""Ops to transactions: pair each ``txn`` invocation with its completion, in one pass, into compact arrays.

A transaction's id is its position among the history's transactions in invocation order (T0, T1, ...). The
workload's inference (:class:`TxnObserver`) sees each transaction once, when it ends: an ``ok`` one with its
completed micro-ops, a ``fail`` or ``info`` one (or one never completed, which counts as ``info``) with the
micro-ops it invoked. Ops whose ``f`` is not ``txn`` (the nemesis's) are skipped.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from checkers.txn.errors import MalformedTxn
from harness.history.op import Op, OpType

OK, INFO, FAIL = 0, 1, 2
"""Transaction outcomes as stored in :attr:`TxnTable.kind`."""
KIND_NAMES = ("ok", "info", "fail")


class TxnObserver(Protocol):
    """What a workload's inference is told about each transaction (it raises MalformedTxn on bad micro-ops)."""

    def committed(self, tid: int, mops: Any) -> None:
        """An ``ok`` transaction ended; ``mops`` are its completed micro-ops, reads filled in."""
        ...

    def attempted(self, tid: int, mops: Any) -> None:
        """A ``fail`` or ``info`` transaction ended; ``mops`` are the micro-ops it invoked."""
        ...


@dataclass
class TxnTable:
    """Every transaction of a history, as parallel arrays indexed by transaction id.

    Attributes:
        ops: the history.
        process: the process that ran it.
        kind: :data:`OK`, :data:`INFO` or :data:`FAIL`.
        invoke_time: its invocation's time (ns since start).
        complete_time: its completion's time, -1 when it never completed (an ``info`` transaction's
            completion time says when the client gave up, not when it took effect).
        invoke_pos: its invocation's position in ``ops``.
        complete_pos: its completion's position in ``ops``, -1 when none.
        lines: each op's line in its file, by position in ``ops`` (None: from the ops' ``extra["line"]``).
    """

    ops: Sequence[Op]
    process: np.ndarray
    kind: np.ndarray
    invoke_time: np.ndarray
    complete_time: np.ndarray
    invoke_pos: np.ndarray
    complete_pos: np.ndarray
    lines: Sequence[int] | None = None

    @property
    def n(self) -> int:
        """How many transactions."""
        return len(self.kind)

    def line_of(self, pos: int) -> int | None:
        """The file line of the op at ``pos``, when known."""
        if pos < 0:
            return None
        if self.lines is not None:
            return int(self.lines[pos]) or None
        line = self.ops[pos].extra.get("line")
        return line if isinstance(line, int) else None

    def invoke_op(self, tid: int) -> Op:
        """The transaction's invocation."""
        return self.ops[int(self.invoke_pos[tid])]

    def complete_op(self, tid: int) -> Op | None:
        """The transaction's completion, None when it never completed."""
        pos = int(self.complete_pos[tid])
        return self.ops[pos] if pos >= 0 else None

    def mops(self, tid: int) -> list[Any]:
        """The micro-ops to show: the completed ones for ``ok``, the invoked ones otherwise."""
        done = self.complete_op(tid)
        if self.kind[tid] == OK and done is not None:
            return list(done.value)
        return list(self.invoke_op(tid).value or [])


def collect(ops: Sequence[Op], observer: TxnObserver, lines: Sequence[int] | None = None) -> TxnTable:
    """Pair the history's transactions and feed each to ``observer`` as it ends.

    Raises:
        MalformedTxn: a transaction's value is not a list of micro-ops, or the observer found a bad micro-op;
            it names the op's index and line.
    """
    process, kind = array("q"), array("b")
    itime, ctime, ipos, cpos = array("q"), array("q"), array("q"), array("q")
    open_txns: dict[Any, tuple[int, Op]] = {}
    invoke, ok, fail = OpType.INVOKE, OpType.OK, OpType.FAIL
    committed, attempted = observer.committed, observer.attempted
    tid = 0
    pos = -1
    op: Op | None = None
    try:
        for pos, op in enumerate(ops):
            if op.f != "txn":
                continue
            if op.type is invoke:
                if type(op.value) is not list:
                    raise MalformedTxn(f"a txn's value must be a list of micro-ops, got {_short(op.value)}")
                open_txns[op.process] = (tid, op)
                process.append(op.process if type(op.process) is int else -1)
                kind.append(INFO)
                itime.append(op.time)
                ctime.append(-1)
                ipos.append(pos)
                cpos.append(-1)
                tid += 1
                continue
            opened = open_txns.pop(op.process, None)
            if opened is None:
                continue  # a stray completion; the history readers report those
            t, inv = opened
            ctime[t] = op.time
            cpos[t] = pos
            if op.type is ok:
                kind[t] = OK
                if type(op.value) is not list or len(op.value) != len(inv.value):
                    raise MalformedTxn("an ok txn's completion must hold its micro-ops, as many as invoked "
                                       f"({len(inv.value)}), reads filled in; got {_short(op.value)}")
                committed(t, op.value)
            else:
                if op.type is fail:
                    kind[t] = FAIL
                attempted(t, inv.value)
        op = None
        for t, inv in open_txns.values():
            attempted(t, inv.value)
    except MalformedTxn as e:
        if op is not None and e.index is None:
            e.index = op.index
            e.line = _line(op, pos, lines)
        raise
    return TxnTable(ops, _np(process, np.int64), _np(kind, np.int8), _np(itime, np.int64), _np(ctime, np.int64),
                    _np(ipos, np.int64), _np(cpos, np.int64), lines)


def _np(a: array, dtype: Any) -> np.ndarray:
    return np.frombuffer(a, dtype=dtype).copy() if len(a) else np.zeros(0, dtype=dtype)


def _line(op: Op, pos: int, lines: Sequence[int] | None) -> int | None:
    if lines is not None and 0 <= pos < len(lines):
        return int(lines[pos]) or None
    line = op.extra.get("line")
    return line if isinstance(line, int) else None


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
