"""Hypothesis strategies for small random transactional histories (up to 6 transactions over 2 or 3 keys).

A history is drawn in three steps:

1. transactions: 1 to 4 micro-ops each, over the keys, in any order, as reads then a write, or as updates (read a
   key, write it); written values are unique per key;
2. a schedule: transactions spread over a few lanes (a lane runs one transaction at a time; its process number
   changes after an ``info``, as Jepsen's does), interleaved at random, so real time overlaps at random;
3. reads: an ``ok`` transaction's reads come from a simulated execution (a random commit order of the committed
   transactions, each transaction reading the state after a prefix of it: the whole prefix before it, one prefix
   for the whole transaction (any, or one that obeys first-committer-wins), or a prefix per read; a failed
   transaction's write leaks in now and then), and some
   reads are then replaced by other values, plausible (another prefix, another written value) or not (a value
   nobody wrote, a shuffled or shortened list).

So many histories are valid under some model and many are not, with the anomalies real databases show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from harness.history.op import Op
from tests.checkers.txn.oracle_histories import T, build

GARBAGE = 99
"""A value no transaction ever writes."""


SHAPES = ("random", "random", "rmw", "update")
READ_MODES = ("serial", "serial-by-completion", "snapshot", "si", "si", "per-read")
"""``serial``: each transaction reads the state just before it in the commit order; ``serial-by-completion``: the
same, the commit order being the completion order; ``snapshot``: a random earlier prefix for the whole
transaction; ``si``: the same, seeing every earlier writer of a key it writes; ``per-read``: a prefix per read."""


@dataclass(frozen=True)
class Drawn:
    """A drawn history and how it was made.

    Attributes:
        workload: ``list-append`` or ``rw-register``.
        txns: its transactions, as written.
        ops: the history.
        read_mode: how the simulated execution's reads were taken.
        leaked: whether a failed transaction's writes took effect in the execution.
        perturbed: how many reads were replaced afterwards.
    """

    workload: str
    txns: tuple[T, ...]
    ops: tuple[Op, ...]
    read_mode: str
    leaked: bool
    perturbed: int

    @property
    def clean(self) -> bool:
        """True when the reads are the simulated execution's own: no leaked write, no replaced read."""
        return not self.leaked and self.perturbed == 0


def _apply(workload: str, state: dict[int, Any], micro: list[list[Any]]) -> dict[int, Any]:
    out = dict(state)
    for f, k, v in micro:
        if f == "append":
            out[k] = [*out.get(k, []), v]
        elif f == "w":
            out[k] = v
    return out


@st.composite
def histories(
    draw: st.DrawFn,
    workload: str,
    max_txns: int = 6,
    allow_info: bool = True,
    final_read: bool = False,
    shapes: tuple[str, ...] = SHAPES,
    read_modes: tuple[str, ...] = READ_MODES,
) -> Drawn:
    """A small random history of ``workload`` (see the module's docstring).

    Args:
        draw: hypothesis's.
        workload: ``list-append`` or ``rw-register``.
        max_txns: at most this many transactions, ``final_read``'s included.
        allow_info: whether ``info`` outcomes are drawn.
        final_read: add, after all the others, an ``ok`` transaction on a process of its own that reads every key
            as the whole execution left it.
        shapes: the transaction shapes to draw from: ``random``, ``rmw`` (reads, then a write) or ``update`` (per
            key, a read and then, mostly, a write of it).
        read_modes: the executions to draw from (see :data:`READ_MODES`).
    """
    write = "append" if workload == "list-append" else "w"
    n = draw(st.integers(1, max_txns - 1 if final_read else max_txns))
    keys = list(range(1, draw(st.integers(2, 3)) + 1))
    next_value = dict.fromkeys(keys, 1)
    # "random": any mix of reads and writes; "rmw": read some keys, then write some (write skew's shape);
    # "update": read a key, then write it (a register's version order follows from these).
    shape = draw(st.sampled_from(shapes))
    micro_ops: list[list[list[Any]]] = []
    for _ in range(n):
        txn: list[list[Any]] = []
        if shape == "rmw":
            plan = [("r", k) for k in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True))]
            plan += [(write, k) for k in draw(st.lists(st.sampled_from(keys), max_size=1))]
        elif shape == "update":
            plan = []
            for k in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True)):
                plan += [("r", k), (write, k)] if draw(st.integers(0, 3)) else [("r", k)]
        else:
            size = draw(st.integers(1, 4))
            plan = [(draw(st.sampled_from(["r", write])), draw(st.sampled_from(keys))) for _ in range(size)]
        for f, k in plan:
            if f == write:
                txn.append([write, k, next_value[k]])
                next_value[k] += 1
            else:
                txn.append(["r", k, None])
        micro_ops.append(txn)
    outcomes = ["ok", "ok", "ok", "ok", "fail", *(["info"] if allow_info else [])]
    outcome = [draw(st.sampled_from(outcomes)) for _ in range(n)]

    # The schedule: lanes run their transactions in turn; events interleave at random.
    lanes = draw(st.integers(1, n))
    lane_of = [draw(st.integers(0, lanes - 1)) for _ in range(n)]
    queue = {lane: [i for i in range(n) if lane_of[i] == lane] for lane in range(lanes)}
    running: dict[int, int] = {}
    start: dict[int, int] = {}
    end: dict[int, int | None] = {}
    infos = dict.fromkeys(range(lanes), 0)
    process: dict[int, int] = {}
    clock = 0
    while any(queue.values()) or running:
        actions = [("invoke", lane) for lane in range(lanes) if lane not in running and queue[lane]]
        actions += [("complete", lane) for lane in running]
        kind, lane = actions[draw(st.integers(0, len(actions) - 1))]
        clock += 1
        if kind == "invoke":
            i = queue[lane].pop(0)
            running[lane] = i
            start[i] = clock
            process[i] = lane + lanes * infos[lane]
        else:
            i = running.pop(lane)
            last = not queue[lane]
            end[i] = None if outcome[i] == "info" and last and draw(st.booleans()) else clock
            if outcome[i] == "info":
                infos[lane] += 1

    # A simulated execution: a commit order, and the prefix each read sees.
    read_mode = draw(st.sampled_from(read_modes))
    committed = [i for i in range(n) if outcome[i] == "ok"
                 or (outcome[i] == "info" and draw(st.booleans()))
                 or (outcome[i] == "fail" and draw(st.integers(0, 5)) == 0)]
    if read_mode == "serial-by-completion":
        big = 10 * (n + 2) * (n + 2)
        order = sorted(committed, key=lambda i: big if end[i] is None else int(end[i] or 0))
    else:
        order = list(draw(st.permutations(committed)))
    states: list[dict[int, Any]] = [{}]
    for i in order:
        states.append(_apply(workload, states[-1], micro_ops[i]))
    empty: Any = [] if workload == "list-append" else None
    observed: list[list[list[Any]]] = []
    for i in range(n):
        pos = order.index(i) if i in order else len(order)
        snap = pos
        if read_mode == "snapshot":
            snap = draw(st.integers(0, pos))
        elif read_mode == "si":  # first committer wins: see every earlier writer of a key it writes
            mine = {k for f, k, _ in micro_ops[i] if f != "r"}
            lo = max((p + 1 for p, u in enumerate(order[:pos]) if mine & {k for f, k, _ in micro_ops[u] if f != "r"}),
                     default=0)
            snap = lo if draw(st.booleans()) else draw(st.integers(lo, pos))
        local = dict(states[snap])
        written: set[int] = set()
        txn = []
        for f, k, v in micro_ops[i]:
            if f == "r":
                if read_mode == "per-read" and k not in written:
                    seen = states[draw(st.integers(0, pos))].get(k, empty)
                else:
                    seen = local.get(k, empty)
                txn.append(["r", k, _copy(seen)])
            else:
                local = _apply(workload, local, [[f, k, v]])
                written.add(k)
                txn.append([f, k, v])
        observed.append(txn)
    leaked = any(outcome[i] == "fail" for i in order)
    if final_read:
        observed.append([["r", k, _copy(states[-1].get(k, empty))] for k in keys])
        outcome.append("ok")
        process[n] = 1000
        start[n], end[n] = clock + 1, clock + 2
        n += 1

    # Perturb some ok reads.
    reads = [(i, j) for i in range(n) if outcome[i] == "ok" for j, m in enumerate(observed[i]) if m[0] == "r"]
    perturbed = 0
    if reads and draw(st.integers(0, 2)) == 0:
        for i, j in draw(st.lists(st.sampled_from(reads), min_size=1, max_size=2, unique=True)):
            k = observed[i][j][1]
            observed[i][j][2] = draw(_other_read(workload, k, states, micro_ops))
            perturbed += 1

    if read_mode == "per-read" and draw(st.booleans()):
        # Empty reads as None now and then: both mean the key is absent.
        for txn in observed:
            for m in txn:
                if m[0] == "r" and m[2] == []:
                    m[2] = None
    txns = tuple(T(process[i], observed[i], outcome[i], start[i], end[i]) for i in range(n))
    return Drawn(workload, txns, tuple(build(txns)), read_mode, leaked, perturbed)


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _other_read(workload: str, k: int, states: list[dict[int, Any]], micro_ops: list[list[list[Any]]]) -> Any:
    """A replacement value for a read of key ``k``: plausible or not."""
    written = [v for txn in micro_ops for f, key, v in txn if key == k and f != "r"]
    if workload == "rw-register":
        return st.sampled_from([None, GARBAGE, *written])
    prefixes = [s.get(k, []) for s in states]
    options: list[st.SearchStrategy[Any]] = [st.sampled_from(prefixes)]
    if written:
        options.append(st.permutations(written).flatmap(lambda p: st.integers(0, len(p)).map(lambda n: p[:n])))
        options.append(st.sampled_from(prefixes).map(lambda p: [*p, GARBAGE]))
        options.append(st.sampled_from(prefixes).flatmap(
            lambda p: st.sampled_from(written).map(lambda v: [*p, v])))
    return st.one_of(options)
