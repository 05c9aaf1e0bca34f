"""Ops to transactions: each ``txn`` invocation paired with its completion, as compact arrays.

A transaction's id is its position among the history's transactions in invocation order (T0, T1, ...). Pairing
is done with numpy (each process's ops alternate invocation and completion); ops whose ``f`` is not ``txn`` (the
nemesis's) are skipped. An invocation never completed counts as ``info``. The micro-ops the inference reads are
an ``ok`` transaction's completed ones (reads filled in) and a ``fail`` or ``info`` one's invoked ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from checkers.txn.errors import MalformedTxn
from harness.history.op import Op, OpType

OK, INFO, FAIL = 0, 1, 2
"""Transaction outcomes as stored in :attr:`TxnTable.kind`."""
KIND_NAMES = ("ok", "info", "fail")
_CODE = {OpType.INVOKE: 0, OpType.OK: 1, OpType.FAIL: 2, OpType.INFO: 3}


@dataclass
class TxnTable:
    """Every transaction of a history, as parallel arrays indexed by transaction id.

    Attributes:
        ops: the history.
        process: the process that ran it (as a number; see :meth:`invoke_op` for the op itself).
        kind: :data:`OK`, :data:`INFO` or :data:`FAIL`.
        invoke_time: its invocation's time (ns since start).
        complete_time: its completion's time, -1 when it never completed (an ``info`` completion says when the
            client gave up, not when the transaction took effect).
        invoke_pos: its invocation's position in ``ops``.
        complete_pos: its completion's position in ``ops``, -1 when none.
        values: the micro-ops the inference uses: an ok transaction's completed ones, else the invoked ones.
        lines: each op's line in its file, by position in ``ops`` (None: from the ops' ``extra["line"]``).
        lens: how many micro-ops each transaction's :attr:`values` holds.
    """

    ops: Sequence[Op]
    process: np.ndarray
    kind: np.ndarray
    invoke_time: np.ndarray
    complete_time: np.ndarray
    invoke_pos: np.ndarray
    complete_pos: np.ndarray
    values: list[Any]
    lines: Sequence[int] | None = None
    lens: np.ndarray | None = None

    @property
    def n(self) -> int:
        """How many transactions."""
        return len(self.kind)

    def value_pos(self, tid: int) -> int:
        """The position in ``ops`` of the op whose micro-ops :attr:`values` holds for ``tid``."""
        return int(self.complete_pos[tid] if self.kind[tid] == OK else self.invoke_pos[tid])

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
        """The micro-ops to show and explain with (see :attr:`values`)."""
        return list(self.values[tid] or [])

    def error(self, tid: int, message: str) -> MalformedTxn:
        """A MalformedTxn about transaction ``tid``, naming its op's index and line."""
        pos = self.value_pos(tid)
        return MalformedTxn(message, self.ops[pos].index, self.line_of(pos))


def collect(ops: Sequence[Op], lines: Sequence[int] | None = None) -> TxnTable:
    """Pair the history's transactions.

    Raises:
        MalformedTxn: a transaction's value (an ok one's completed value) is not a list of micro-ops.
    """
    types: list[OpType] = []
    times_l: list[int] = []
    procs_l: list[Any] = []
    vals: list[Any] = []
    where_l: list[int] = []
    add_type, add_time, add_proc, add_val, add_pos = (types.append, times_l.append, procs_l.append, vals.append,
                                                      where_l.append)
    for i, op in enumerate(ops):  # one pass over the ops: each is touched once
        if op.f == "txn":
            add_type(op.type)
            add_time(op.time)
            add_proc(op.process)
            add_val(op.value)
            add_pos(i)
    where = np.array(where_l, dtype=np.int64)
    code = np.fromiter(map(_CODE.__getitem__, types), dtype=np.int8, count=len(types))
    times = np.array(times_l, dtype=np.int64)
    procs = _process_numbers(procs_l)
    del types, times_l, procs_l, where_l
    # Each process's ops in history order: an invocation pairs with the next op when that is a completion.
    o = np.argsort(procs, kind="stable")
    po, co = procs[o], code[o]
    pairs = np.flatnonzero((co[:-1] == 0) & (co[1:] != 0) & (po[:-1] == po[1:]))
    partner = np.full(len(code), -1, dtype=np.int64)
    partner[o[pairs]] = o[pairs + 1]
    inv = np.flatnonzero(code == 0)
    comp = partner[inv]
    done = comp >= 0
    ccode = np.where(done, code[np.maximum(comp, 0)], 3)
    kind = np.select([ccode == 1, ccode == 2], [OK, FAIL], INFO).astype(np.int8)
    vpos = np.where(kind == OK, comp, inv)
    values = [vals[i] for i in vpos.tolist()]
    table = TxnTable(ops, procs[inv], kind, times[inv], np.where(done, times[np.maximum(comp, 0)], -1),
                     where[inv], np.where(done, where[np.maximum(comp, 0)], -1), values, lines)
    try:
        table.lens = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    except TypeError:
        table.lens = None
    if table.lens is None:  # (a value of another type with a length fails the micro-op checks instead)
        tid = next(t for t, v in enumerate(values) if type(v) is not list)
        what = "an ok txn's completion" if kind[tid] == OK else "a txn's value"
        raise table.error(tid, f"{what} must be a list of micro-ops, got {_short(values[tid])}")
    return table


def _process_numbers(procs: list[Any]) -> np.ndarray:
    """Processes as int64 (any that is not an int gets a number of its own, below every real one)."""
    if set(map(type, procs)) <= {int}:
        try:
            return np.array(procs, dtype=np.int64)
        except OverflowError:
            pass
    names: dict[Any, int] = {}
    return np.array([p if type(p) is int and abs(p) < 1 << 62 else -1 - names.setdefault(p, len(names))
                     for p in procs], dtype=np.int64)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
