"""Anomalies the transactional history generator plants: each a few transactions on keys of their own.

A plant is the smallest history that has exactly one anomaly class (Adya's and Elle's textbook cases),
written on fresh keys that no other transaction touches, so the rest of the history cannot add to it or
hide it. Its transactions run on fresh processes and overlap in time (all invoked, then all completed),
so no real-time or process order joins them, except where the class needs that order
(``G-single-realtime``: each completes before the next is invoked). The same argument keeps the rest of
the history out of the plant's cycles: any order between a plant and the (serializable) rest runs
forward in time, and a cycle through both would need a plant transaction to complete before another
one of the plant was invoked.

Some classes bring another with them, as they do in Elle: a lost update in list-append is also a
G-single cycle (each transaction's read misses the other's append), and a dirty update is also G1a
(its final read sees the aborted append). Each class here is found as itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MicroOp = list[Any]
NewKey = Callable[[], int]


@dataclass(frozen=True)
class PlantedTxn:
    """One transaction of a plant.

    Attributes:
        invoke: the micro-ops as invoked (reads with value None).
        outcome: ``ok``, ``fail`` or ``info``.
        complete: the micro-ops as completed (reads filled in for ``ok``; as invoked otherwise).
    """

    invoke: list[MicroOp]
    outcome: str
    complete: list[MicroOp]


@dataclass(frozen=True)
class Plant:
    """The transactions that make one anomaly.

    Attributes:
        type: the anomaly class (Elle's name).
        keys: the fresh keys it uses.
        txns: its transactions, in the order they are invoked.
        sequential: each transaction completes before the next is invoked (a real-time order).
    """

    type: str
    keys: tuple[int, ...]
    txns: tuple[PlantedTxn, ...]
    sequential: bool = False


def _txn(*completed: MicroOp, outcome: str = "ok") -> PlantedTxn:
    """A transaction from its completed micro-ops; the invocation has each read's value None."""
    invoke = [[f, k, None if f == "r" else v] for f, k, v in completed]
    complete = [list(m) for m in completed] if outcome == "ok" else [list(m) for m in invoke]
    return PlantedTxn(invoke, outcome, complete)


def _r(k: int, v: Any) -> MicroOp:
    return ["r", k, v]


def _a(k: int, v: int) -> MicroOp:
    return ["append", k, v]


def _w(k: int, v: int) -> MicroOp:
    return ["w", k, v]


def _list_append(kind: str, key: NewKey) -> Plant:
    """A list-append plant of class ``kind`` on fresh keys."""
    a, b = key(), key()
    t = _txn
    plans: dict[str, tuple[tuple[PlantedTxn, ...], tuple[int, ...]]] = {
        # T1 and T2 append to a and b in opposite orders; T3 sees both orders.
        "G0": ((t(_a(a, 1), _a(b, 1)), t(_a(a, 2), _a(b, 2)), t(_r(a, [1, 2]), _r(b, [2, 1]))), (a, b)),
        "G1a": ((t(_a(a, 1), outcome="fail"), t(_r(a, [1]))), (a,)),
        "G1b": ((t(_a(a, 1), _a(a, 2)), t(_r(a, [1]))), (a,)),
        "G1c": ((t(_a(a, 1), _r(b, [1])), t(_a(b, 1), _r(a, [1]))), (a, b)),
        "G-single": ((t(_a(a, 1), _a(b, 1)), t(_r(a, []), _r(b, [1])), t(_r(a, [1]))), (a, b)),
        "G2-item": ((t(_r(a, []), _a(b, 1)), t(_r(b, []), _a(a, 1)), t(_r(a, [1]), _r(b, [1]))), (a, b)),
        "G-single-realtime": ((t(_a(a, 1)), t(_r(a, [])), t(_r(a, [1]))), (a,)),
        "lost-update": ((t(_r(a, []), _a(a, 1)), t(_r(a, []), _a(a, 2)), t(_r(a, [1, 2]))), (a,)),
        "internal": ((t(_a(a, 1), _r(a, [])),), (a,)),
        "dirty-update": ((t(_a(a, 1), outcome="fail"), t(_a(a, 2)), t(_r(a, [1, 2]))), (a,)),
        "duplicate-elements": ((t(_a(a, 1)), t(_r(a, [1, 1]))), (a,)),
        "incompatible-order": ((t(_a(a, 1)), t(_a(a, 2)), t(_r(a, [1, 2])), t(_r(a, [2, 1]))), (a,)),
        "garbage-read": ((t(_r(a, [1])),), (a,)),
        "future-read": ((t(_r(a, [1]), _a(a, 1)),), (a,)),
    }
    if kind == "G-nonadjacent":
        c, d = key(), key()
        # T1 rw-> T2 wr-> T3 rw-> T4 wr-> T1: two rw edges, never adjacent; T5 shows a's and c's appends.
        txns: tuple[PlantedTxn, ...] = (t(_r(a, []), _r(d, [1])), t(_a(a, 1), _a(b, 1)), t(_r(b, [1]), _r(c, [])),
                                        t(_a(c, 1), _a(d, 1)), t(_r(a, [1]), _r(c, [1])))
        return Plant(kind, (a, b, c, d), txns)
    txns, keys = plans[kind]
    return Plant(kind, keys, txns, sequential=kind.endswith("-realtime"))


def _rw_register(kind: str, key: NewKey) -> Plant:
    """An rw-register plant of class ``kind`` on fresh keys (version orders only from what the plant proves:
    the initial state, and a write that follows a read of the same key in one transaction)."""
    a, b = key(), key()
    t = _txn
    plans: dict[str, tuple[tuple[PlantedTxn, ...], tuple[int, ...]]] = {
        # T2 read a=1 then wrote 2 (1 < 2); T1 read b=2 then wrote 1 (2 < 1): ww both ways.
        "G0": ((t(_w(a, 1), _r(b, 2), _w(b, 1)), t(_r(a, 1), _w(a, 2), _w(b, 2))), (a, b)),
        "G1a": ((t(_w(a, 1), outcome="fail"), t(_r(a, 1))), (a,)),
        "G1b": ((t(_w(a, 1), _w(a, 2)), t(_r(a, 1))), (a,)),
        "G1c": ((t(_w(a, 1), _r(b, 1)), t(_w(b, 1), _r(a, 1))), (a, b)),
        "G-single": ((t(_w(a, 1), _w(b, 1)), t(_r(a, None), _r(b, 1))), (a, b)),
        "G2-item": ((t(_r(a, None), _w(b, 1)), t(_r(b, None), _w(a, 1))), (a, b)),
        "G-single-realtime": ((t(_w(a, 1)), t(_r(a, None))), (a,)),
        "lost-update": ((t(_r(a, None), _w(a, 1)), t(_r(a, None), _w(a, 2))), (a,)),
        "internal": ((t(_w(a, 1), _r(a, None)),), (a,)),
        "dirty-update": ((t(_w(a, 1), outcome="fail"), t(_r(a, 1), _w(a, 2))), (a,)),
        "garbage-read": ((t(_r(a, 1)),), (a,)),
    }
    if kind == "G-nonadjacent":
        c, d = key(), key()
        txns: tuple[PlantedTxn, ...] = (t(_r(a, None), _r(d, 1)), t(_w(a, 1), _w(b, 1)), t(_r(b, 1), _r(c, None)),
                                        t(_w(c, 1), _w(d, 1)))
        return Plant(kind, (a, b, c, d), txns)
    txns, keys = plans[kind]
    return Plant(kind, keys, txns, sequential=kind.endswith("-realtime"))


PLANT_TYPES: dict[str, tuple[str, ...]] = {
    "list-append": ("G0", "G1a", "G1b", "G1c", "G-single", "G-nonadjacent", "G2-item", "G-single-realtime",
                    "lost-update", "internal", "dirty-update", "duplicate-elements", "incompatible-order",
                    "garbage-read", "future-read"),
    "rw-register": ("G0", "G1a", "G1b", "G1c", "G-single", "G-nonadjacent", "G2-item", "G-single-realtime",
                    "lost-update", "internal", "dirty-update", "garbage-read"),
}
"""The anomaly classes each workload's generator can plant."""

_BUILDERS = {"list-append": _list_append, "rw-register": _rw_register}


def make_plant(workload: str, kind: str, new_key: NewKey) -> Plant:
    """The plant of class ``kind`` for ``workload``, on keys drawn from ``new_key``.

    Raises:
        ValueError: the workload cannot have that class planted (the message lists those it can).
    """
    if kind not in PLANT_TYPES.get(workload, ()):
        raise ValueError(f"cannot plant {kind!r} in a {workload} history; choose from "
                         f"{', '.join(PLANT_TYPES.get(workload, ()))}")
    return _BUILDERS[workload](kind, new_key)
