"""Synthetic transactional histories (list-append, rw-register) from a simulated strict-serializable store.

``processes`` clients each run one transaction at a time. A transaction is 1 to ``txn_length`` micro-ops,
half reads and half writes (appends in list-append), on keys drawn from ``keys`` active slots with an
exponential skew (each slot half as likely as the one before), so that transactions contend. A key
retires after ``writes_per_key`` writes and a fresh key takes its slot; the n-th write of a key writes n,
so values are unique per key. These are the rules of Fencepost's transactional workloads.

Each transaction takes effect atomically at one instant between its invocation and its completion, in
one store, so the order of those instants is a serial order that respects real time: the history is
strict-serializable by construction. Some transactions fail (``fail_rate``: a serialization failure,
never applied) and some end ``info`` (``info_rate``: a lost connection, applied or not at random, and
the process is replaced by a fresh one, as Jepsen's are).

``anomalies`` plants that many anomalies of ``anomaly_types`` (in turn), spread evenly through the
history: each a few transactions on keys of their own (:mod:`checkers.gen_history_plants`). The same
seed always gives the same history. Events are produced one at a time; the generator holds only the
store's state, never the history, and :func:`write_txn_jsonl` writes them without building ops.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from checkers.gen_history_plants import PLANT_TYPES, Plant, make_plant
from harness.history.op import Op, OpType

WORKLOADS = ("list-append", "rw-register")
SKEW = 2.0
"""Each key slot is this much likelier to be drawn than the next."""
WRITE_SHARE = 0.5
"""The share of micro-ops that write."""
TICK = 1000
"""Nanoseconds between consecutive events."""

_IDLE, _PENDING, _APPLIED, _FAILED, _CRASHED = range(5)
_TYPES = {t.value: t for t in OpType}

Event = tuple[int, str, list[list[Any]], str | None]
"""``(process, type, micro-ops, error)``: one history event before it is numbered."""


@dataclass(frozen=True)
class PlantedAt:
    """Where an anomaly was planted.

    Attributes:
        type: its class.
        keys: the keys it uses (no other transaction touches them).
        indices: the history indices of its events (invocations and completions).
    """

    type: str
    keys: tuple[int, ...]
    indices: tuple[int, ...]


@dataclass
class TxnHistoryGenerator:
    """An iterable transactional history (see the module's rules).

    Attributes:
        workload: ``list-append`` or ``rw-register``.
        txns: transactions to run (planted ones come on top).
        processes: concurrent client processes.
        txn_length: the most micro-ops in one transaction (each has 1 to this many).
        keys: active key slots.
        writes_per_key: writes after which a key retires.
        seed: the random seed; equal seeds give equal histories.
        fail_rate: the share of transactions that fail.
        info_rate: the share that end ``info``.
        anomalies: anomalies to plant.
        anomaly_types: the classes to plant, in turn (default: every class the workload can have planted).
        planted: where each anomaly was planted (filled while iterating).
    """

    workload: str = "list-append"
    txns: int = 1000
    processes: int = 5
    txn_length: int = 4
    keys: int = 8
    writes_per_key: int = 16
    seed: int = 0
    fail_rate: float = 0.05
    info_rate: float = 0.01
    anomalies: int = 0
    anomaly_types: tuple[str, ...] = ()
    planted: list[PlantedAt] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.workload not in WORKLOADS:
            raise ValueError(f"unknown workload {self.workload!r}; expected one of {', '.join(WORKLOADS)}")
        for name in ("processes", "txn_length", "keys", "writes_per_key"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1, not {getattr(self, name)}")
        if self.txns < 0 or self.anomalies < 0:
            raise ValueError("txns and anomalies must not be negative")
        if not (self.fail_rate >= 0 and self.info_rate >= 0 and self.fail_rate + self.info_rate < 1):
            raise ValueError("fail-rate and info-rate must be at least 0, and together below 1")
        if not self.anomaly_types:
            self.anomaly_types = PLANT_TYPES[self.workload]
        for kind in self.anomaly_types:
            if kind not in PLANT_TYPES[self.workload]:
                raise ValueError(f"cannot plant {kind!r} in a {self.workload} history; choose from "
                                 f"{', '.join(PLANT_TYPES[self.workload])}")

    def __iter__(self) -> Iterator[Op]:
        """Yield the history's ops in order."""
        types = _TYPES
        for index, (process, kind, value, error) in enumerate(self.events()):
            yield Op(index, index * TICK, process, types[kind], "txn", None, value, error)

    def events(self) -> Iterator[Event]:
        """Yield ``(process, type, micro-ops, error)`` for each event; event ``i`` has index ``i``."""
        rng = random.Random(self.seed)
        rand = rng.random
        n_proc, length, wpk = self.processes, self.txn_length, self.writes_per_key
        append = self.workload == "list-append"
        write_f = "append" if append else "w"
        weights = list(itertools.accumulate(SKEW ** -i for i in range(self.keys)))
        total = weights[-1]
        pick = bisect.bisect_right
        slots = list(range(self.keys))
        fresh = itertools.count(self.keys)
        written: dict[int, int] = {}  # key -> writes invoked so far (the last value handed out)
        state: dict[int, Any] = {}  # key -> its list (list-append) or value (rw-register)
        fail_at, info_at = self.fail_rate, self.fail_rate + self.info_rate
        next_pid = itertools.count(n_proc)
        pid = list(range(n_proc))
        phase = [_IDLE] * n_proc
        txn: list[list[list[Any]]] = [[] for _ in range(n_proc)]
        done: list[list[list[Any]]] = [[] for _ in range(n_proc)]
        plants = _plant_positions(self.txns, self.anomalies)
        self.planted = []
        emitted = 0
        started = in_flight = 0
        while started < self.txns or in_flight:
            s = int(rand() * n_proc)
            ph = phase[s]
            if ph == _IDLE:
                if started >= self.txns:
                    continue
                while plants and plants[-1] <= started:
                    plants.pop()
                    events = self._plant(emitted, fresh, next_pid)
                    emitted += len(events)
                    yield from events
                started += 1
                in_flight += 1
                mops: list[list[Any]] = []
                for _ in range(1 + int(rand() * length)):
                    slot = pick(weights, rand() * total)
                    k = slots[slot]
                    if rand() < WRITE_SHARE:
                        v = written.get(k, 0) + 1
                        written[k] = v
                        if v >= wpk:
                            slots[slot] = next(fresh)
                        mops.append([write_f, k, v])
                    else:
                        mops.append(["r", k, None])
                txn[s] = mops
                phase[s] = _PENDING
                emitted += 1
                yield pid[s], "invoke", mops, None
            elif ph == _PENDING:
                r = rand()
                if r < fail_at:
                    phase[s] = _FAILED
                elif r < info_at:
                    if rand() < 0.5:
                        _apply(txn[s], state, append)
                    phase[s] = _CRASHED
                else:
                    done[s] = _apply(txn[s], state, append)
                    phase[s] = _APPLIED
            else:
                in_flight -= 1
                phase[s] = _IDLE
                emitted += 1
                if ph == _APPLIED:
                    yield pid[s], "ok", done[s], None
                elif ph == _FAILED:
                    yield pid[s], "fail", [m[:] for m in txn[s]], "serialization-failure"
                else:
                    yield pid[s], "info", [m[:] for m in txn[s]], "connection-lost"
                    pid[s] = next(next_pid)
        for _ in plants:  # no transactions to place them among
            events = self._plant(emitted, fresh, next_pid)
            emitted += len(events)
            yield from events

    def _plant(self, emitted: int, fresh: Iterator[int], next_pid: Iterator[int]) -> list[Event]:
        """The next plant's events, recorded in :attr:`planted` (its first event will have index ``emitted``)."""
        kind = self.anomaly_types[len(self.planted) % len(self.anomaly_types)]
        plant = make_plant(self.workload, kind, fresh.__next__)
        events = list(_plant_events(plant, next_pid))
        self.planted.append(PlantedAt(kind, plant.keys, tuple(range(emitted, emitted + len(events)))))
        return events


def _apply(mops: list[list[Any]], state: dict[int, Any], append: bool) -> list[list[Any]]:
    """Run a transaction against the store; its micro-ops as completed (reads filled in)."""
    out: list[list[Any]] = []
    for f, k, v in mops:
        if f != "r":
            if not append:
                state[k] = v
            elif k in state:
                state[k].append(v)
            else:
                state[k] = [v]
            out.append([f, k, v])
        elif append:
            out.append(["r", k, state[k][:] if k in state else []])
        else:
            out.append(["r", k, state.get(k)])
    return out


def _plant_positions(txns: int, anomalies: int) -> list[int]:
    """The transaction counts after which each plant goes, evenly spread, last first (popped from the end)."""
    return sorted(((i + 1) * txns // (anomalies + 1) for i in range(anomalies)), reverse=True)


def _plant_events(plant: Plant, next_pid: Iterator[int]) -> Iterator[Event]:
    """A plant's events: every invocation, then every completion (or each completed before the next,
    when the plant is sequential), each transaction on a fresh process."""
    procs = [next(next_pid) for _ in plant.txns]
    completions = [(p, t.outcome, t.complete, None if t.outcome == "ok" else "planted")
                   for p, t in zip(procs, plant.txns, strict=True)]
    if plant.sequential:
        for p, t, done in zip(procs, plant.txns, completions, strict=True):
            yield p, "invoke", t.invoke, None
            yield done
        return
    for p, t in zip(procs, plant.txns, strict=True):
        yield p, "invoke", t.invoke, None
    yield from completions


def write_txn_jsonl(generator: TxnHistoryGenerator, path: str | Path) -> int:
    """Stream ``generator``'s history to ``path`` as Fencepost JSONL (what :class:`Op`'s ``to_dict`` gives,
    written without building ops); the number of events written."""
    dumps = orjson.dumps
    count = 0
    with open(path, "wb", buffering=1 << 20) as fh:
        write = fh.write
        for index, (process, kind, value, error) in enumerate(generator.events()):
            head = b'{"index":%d,"time":%d,"process":%d,"type":"%s","f":"txn","value":' % (
                index, index * TICK, process, kind.encode())
            if error is None:
                write(head + dumps(value) + b"}\n")
            else:
                write(head + dumps(value) + b',"error":' + dumps(error) + b"}\n")
            count += 1
    return count
