"""A brute-force oracle for small transactional histories: allowed or not under a consistency model, by enumeration.

It knows nothing of dependency graphs. It decides each model from its operational definition, by searching every
commit order of the committed transactions (all the ``ok`` ones, plus any subset of the ``info`` ones; ``fail``
ones never take effect) for one that explains every read an ``ok`` transaction observed. An ``info``
transaction's reads are unknown and never checked. A read of a key the transaction wrote earlier must see that write
(a transaction reads its own writes, on top of whatever it reads from the others).

* **serializable** (and ``repeatable-read``, see below): executing the committed transactions one after the other,
  in the order, gives exactly the observed reads.
* **strict-serializable** (= ``strong-serializable``): the same, and a transaction that completed before another
  was invoked comes first. **strong-session-serializable**: the same for transactions of one process only.
* **snapshot-isolation** (generalized SI): every committed transaction has a start point before its commit point
  on one timeline. It reads the state its start point sees (the writes of every transaction that committed before
  it), plus its own writes; two committed transactions whose [start, commit] intervals overlap never write the same
  key (first committer wins). With a commit order fixed, a start point is just how many of the earlier commits the
  transaction sees, so the search picks a commit order and, per transaction, a snapshot: a prefix of it.
* **strong-session-snapshot-isolation** / **strong-snapshot-isolation**: the same, and a transaction sees every
  earlier transaction of its own process / every transaction that completed before it was invoked.
* **read-committed** (Adya's PL-2: no G1a, G1b, G1c): a commit order such that every read that does not follow
  the transaction's own write to that key returns the key's state after some prefix of the order that ends before
  the transaction (reads of one transaction may see different prefixes); a read after its own write sees the state
  just before the transaction plus its own writes.

``repeatable-read`` (Adya's PL-2.99) prohibits G1 and G2-item. Without predicate reads, G2-item is G2, so PL-2.99
is PL-3; the oracle decides it as serializable. (Elle's repeatable-read also leaves ``internal`` allowed; the
oracle is stricter there, which can only make a soundness test weaker, never wrong.)

Reads: list-append reads are lists (``None`` and ``[]`` both mean empty); rw-register reads are values (``None``:
never written). Real time and process order come from the ops' indexes (a completion recorded before an
invocation happened before it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.history.op import Op, OpType

MAX_TXNS = 8
"""The oracle enumerates orders; more transactions than this is refused."""

WORKLOADS = ("list-append", "rw-register")


@dataclass(frozen=True)
class _Rules:
    """How one model is searched.

    Attributes:
        reads: ``serial`` (the state just before the transaction), ``snapshot`` (one earlier prefix for the whole
            transaction) or ``per-read`` (any earlier prefix, per read).
        first_committer_wins: two overlapping transactions never write the same key.
        order: ``None``, ``process`` or ``realtime``: which earlier transactions must commit first (and, for
            snapshots, be visible).
    """

    reads: str
    first_committer_wins: bool
    order: str | None


MODELS: dict[str, _Rules] = {
    "serializable": _Rules("serial", False, None),
    "repeatable-read": _Rules("serial", False, None),
    "strong-session-serializable": _Rules("serial", False, "process"),
    "strict-serializable": _Rules("serial", False, "realtime"),
    "strong-serializable": _Rules("serial", False, "realtime"),
    "snapshot-isolation": _Rules("snapshot", True, None),
    "strong-session-snapshot-isolation": _Rules("snapshot", True, "process"),
    "strong-snapshot-isolation": _Rules("snapshot", True, "realtime"),
    "read-committed": _Rules("per-read", False, None),
}
"""The models the oracle decides directly."""

IMPLIES: dict[str, tuple[str, ...]] = {
    "strict-serializable": ("serializable", "strong-session-serializable", "strong-snapshot-isolation"),
    "strong-serializable": ("strict-serializable",),
    "strong-session-serializable": ("serializable", "strong-session-snapshot-isolation"),
    "serializable": ("snapshot-isolation", "repeatable-read", "update-serializable"),
    "strong-snapshot-isolation": ("strong-session-snapshot-isolation", "strong-read-committed"),
    "strong-session-snapshot-isolation": ("snapshot-isolation", "strong-session-read-committed"),
    "snapshot-isolation": (
        "read-committed", "monotonic-atomic-view", "forward-consistent-view", "monotonic-snapshot-read",
        "parallel-snapshot-isolation", "prefix",
    ),
    "repeatable-read": ("read-committed", "cursor-stability", "monotonic-atomic-view"),
    "update-serializable": ("forward-consistent-view",),
    "forward-consistent-view": ("consistent-view",),
    "consistent-view": ("cursor-stability", "monotonic-view"),
    "cursor-stability": ("read-committed",),
    "monotonic-view": ("read-committed",),
    "monotonic-snapshot-read": ("read-committed",),
    "parallel-snapshot-isolation": ("causal-cerone", "update-atomic"),
    "prefix": ("causal-cerone",),
    "causal-cerone": ("read-atomic",),
    "update-atomic": ("read-atomic",),
    "read-atomic": ("monotonic-atomic-view",),
    "monotonic-atomic-view": ("read-committed",),
    "strong-read-committed": ("strong-session-read-committed", "strong-read-uncommitted"),
    "strong-session-read-committed": ("read-committed", "strong-session-read-uncommitted"),
    "strong-read-uncommitted": ("strong-session-read-uncommitted",),
    "strong-session-read-uncommitted": ("read-uncommitted",),
    "read-committed": ("read-uncommitted",),
}
"""Which models each model implies (a history allowed under the key is allowed under each value), as in Elle's
model hierarchy. A model the oracle does not decide is judged through the ones it decides that imply it: a history
that violates it violates each of them."""


def stronger_or_equal(model: str) -> set[str]:
    """Every model that implies ``model`` (itself included), by the closure of :data:`IMPLIES`."""
    out = {model}
    changed = True
    while changed:
        changed = False
        for strong, weaker in IMPLIES.items():
            if strong not in out and out.intersection(weaker):
                out.add(strong)
                changed = True
    return out


@dataclass(frozen=True)
class Txn:
    """One transaction, as the oracle sees it.

    Attributes:
        id: its position among the history's transactions, in invocation order.
        process: the process that ran it.
        outcome: ``ok``, ``fail`` or ``info`` (an invocation with no completion is ``info``).
        invoke_index: the invocation's index.
        complete_index: the completion's index; None for ``info`` (it may take effect at any later time).
        ops: the micro-ops: the completion's for ``ok``, the invocation's otherwise.
    """

    id: int
    process: Any
    outcome: str
    invoke_index: int
    complete_index: int | None
    ops: tuple[tuple[str, Any, Any], ...]

    @property
    def write_keys(self) -> frozenset[Any]:
        """The keys it writes or appends to."""
        return frozenset(k for f, k, _ in self.ops if f != "r")


@dataclass(frozen=True)
class Witness:
    """Why a history is allowed: the commit order found and, per transaction, the prefix it read from.

    Attributes:
        order: transaction ids in commit order (``info`` ones left out never committed).
        snapshots: for each transaction in ``order``, how many of the earlier commits it saw (``serial``: all of
            them; ``per-read``: the latest prefix any of its reads needed).
    """

    order: tuple[int, ...]
    snapshots: tuple[int, ...]


def parse_txns(ops: Sequence[Op]) -> list[Txn]:
    """The history's transactions: each ``txn`` invocation paired with its process's next completion."""
    pending: dict[Any, Op] = {}
    done: list[tuple[Op, Op | None]] = []
    for op in ops:
        if op.f != "txn":
            continue
        if op.type is OpType.INVOKE:
            if op.process in pending:
                done.append((pending.pop(op.process), None))
            pending[op.process] = op
        elif op.process in pending:
            done.append((pending.pop(op.process), op))
    done.extend((inv, None) for inv in pending.values())
    done.sort(key=lambda pair: pair[0].index)
    txns: list[Txn] = []
    for i, (inv, comp) in enumerate(done):
        outcome = "info" if comp is None else comp.type.value
        source = comp.value if comp is not None and comp.type is OpType.OK else inv.value
        micro = tuple((str(m[0]), m[1], m[2]) for m in source)
        complete = comp.index if comp is not None and outcome != "info" else None
        txns.append(Txn(i, inv.process, outcome, inv.index, complete, micro))
    return txns


class HistoryOracle:
    """Decides, by enumeration, under which models one small history is allowed.

    Args:
        ops: the history (non-``txn`` ops are ignored).
        workload: ``list-append`` or ``rw-register``.
    """

    def __init__(self, ops: Sequence[Op], workload: str) -> None:
        if workload not in WORKLOADS:
            raise ValueError(f"unknown workload {workload!r}")
        self.workload = workload
        self.txns = parse_txns(ops)
        if len(self.txns) > MAX_TXNS:
            raise ValueError(f"{len(self.txns)} transactions: the oracle enumerates at most {MAX_TXNS}")
        keys = {k for t in self.txns for _, k, _ in t.ops}
        self._keys = sorted(keys, key=repr)
        self._pos = {k: i for i, k in enumerate(self._keys)}
        self._empty: Any = () if workload == "list-append" else None
        self._committable = [t for t in self.txns if t.outcome != "fail"]
        self._oks = frozenset(t.id for t in self.txns if t.outcome == "ok")
        self._cache: dict[str, Witness | None] = {}

    # ---- the model's parts -------------------------------------------------------------------------------------

    def _norm(self, value: Any) -> Any:
        """An observed read as the state holds it."""
        if self.workload == "list-append":
            if value is None:
                return ()
            return tuple(value) if isinstance(value, list | tuple) else ("<not a list>", repr(value))
        return value

    def _must_precede(self, a: Txn, b: Txn, order: str | None) -> bool:
        """True when ``a`` has to commit before ``b`` (and be visible to it) under ``order``."""
        if order is None or a.complete_index is None or a.id == b.id:
            return False
        if order == "process" and a.process != b.process:
            return False
        return a.complete_index < b.invoke_index

    def _apply(self, txn: Txn, state: tuple[Any, ...]) -> tuple[Any, ...]:
        """The state after ``txn`` commits on top of ``state``."""
        out = list(state)
        for f, k, v in txn.ops:
            if f == "append":
                out[self._pos[k]] = (*out[self._pos[k]], v)
            elif f == "w":
                out[self._pos[k]] = v
        return tuple(out)

    def _reads_from(self, txn: Txn, base: tuple[Any, ...]) -> bool:
        """True when every read of ``txn``, run on ``base`` with its own writes applied as it goes, is as observed."""
        if txn.outcome != "ok":
            return True
        local = list(base)
        for f, k, v in txn.ops:
            i = self._pos[k]
            if f == "r":
                if self._norm(v) != local[i]:
                    return False
            elif f == "append":
                local[i] = (*local[i], v)
            else:
                local[i] = v
        return True

    def _reads_per_read(self, txn: Txn, states: list[tuple[Any, ...]]) -> bool:
        """Read-committed: each read before the txn's own write to its key sees some earlier prefix."""
        if txn.outcome != "ok":
            return True
        local = list(states[-1])
        written: set[Any] = set()
        for f, k, v in txn.ops:
            i = self._pos[k]
            if f == "r":
                seen = self._norm(v)
                if k in written:
                    if seen != local[i]:
                        return False
                elif all(s[i] != seen for s in states):
                    return False
            elif f == "append":
                local[i] = (*local[i], v)
                written.add(k)
            else:
                local[i] = v
                written.add(k)
        return True

    # ---- the search --------------------------------------------------------------------------------------------

    def witness(self, model: str) -> Witness | None:
        """A commit order that explains the history under ``model``, or None when there is none."""
        if model not in MODELS:
            raise ValueError(f"the oracle does not decide {model!r}; it decides {sorted(MODELS)}")
        if model not in self._cache:
            self._cache[model] = self._search(MODELS[model])
        return self._cache[model]

    def allowed(self, model: str) -> bool:
        """True when the history is allowed under ``model``."""
        return self.witness(model) is not None

    def _search(self, rules: _Rules) -> Witness | None:
        init = tuple(self._empty for _ in self._keys)
        preds = {
            t.id: frozenset(p.id for p in self._committable if self._must_precede(p, t, rules.order))
            for t in self._committable
        }
        failed: set[Any] = set()
        order: list[int] = []
        snaps: list[int] = []
        states: list[tuple[Any, ...]] = [init]
        position: dict[int, int] = {}

        def lowest_snapshot(t: Txn) -> int:
            """The earliest prefix ``t`` may read from, given what is placed."""
            lo = 0
            for u_id, pos in position.items():
                u = self.txns[u_id]
                if u_id in preds[t.id] or (rules.first_committer_wins and u.write_keys & t.write_keys):
                    lo = max(lo, pos + 1)
            return lo

        def memo_key() -> Any:
            placed = frozenset(order)
            if rules.reads == "serial":
                return placed, states[-1]
            if rules.reads == "per-read":
                return placed, states[-1], frozenset(states)
            rest = tuple(frozenset(states[lowest_snapshot(t):]) for t in self._committable if t.id not in placed)
            return placed, states[-1], rest

        def place(t: Txn) -> int | None:
            """The prefix ``t`` reads from if it commits next, or None when it cannot commit next."""
            placed = set(order)
            if not self._oks.intersection(preds[t.id]) <= placed:
                return None
            if any(t.id in preds[u] for u in placed):
                return None
            p = len(order)
            if rules.reads == "serial":
                return p if self._reads_from(t, states[p]) else None
            if rules.reads == "per-read":
                return p if self._reads_per_read(t, states) else None
            for s in range(p, lowest_snapshot(t) - 1, -1):
                if self._reads_from(t, states[s]):
                    return s
            return None

        def dfs() -> bool:
            if self._oks <= set(order):
                return True
            key = memo_key()
            if key in failed:
                return False
            placed = set(order)
            candidates = sorted(
                (t for t in self._committable if t.id not in placed), key=lambda t: t.outcome != "ok"
            )
            for t in candidates:
                s = place(t)
                if s is None:
                    continue
                position[t.id] = len(order)
                order.append(t.id)
                snaps.append(s)
                states.append(self._apply(t, states[-1]))
                if dfs():
                    return True
                states.pop()
                snaps.pop()
                order.pop()
                del position[t.id]
            failed.add(key)
            return False

        return Witness(tuple(order), tuple(snaps)) if dfs() else None


def allowed(ops: Sequence[Op], workload: str, model: str) -> bool:
    """True when the history ``ops`` is allowed under ``model`` (see :class:`HistoryOracle`)."""
    return HistoryOracle(ops, workload).allowed(model)
