"""Synthetic register histories, generated as a stream of ops from a simulated linearizable store.

Processes invoke reads and writes on random keys; each op takes effect at one instant between its
invocation and completion (so the history is linearizable by construction), and some end ``info``:
a crashed client, whose op may or may not have taken effect, and whose process is then replaced
(Jepsen's ``process + n``). ``anomalies`` injects violations, each in a different key: a read that
returns the initial value after a write to the key had completed, a stale read no linearization
allows. The same seed always gives the same history. Ops are yielded one at a time, never held in a
list, so a writer can stream any number of them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.history.op import Op, OpType

IDLE, PENDING, APPLIED = 0, 1, 2


@dataclass
class HistoryGenerator:
    """An iterable history of ``ops`` register operations over ``keys`` keys.

    Attributes:
        ops: operations (invocations) to generate; the history holds about twice as many events.
        keys: distinct keys (ints from 0).
        processes: concurrent client processes.
        unique_values: every write writes a value never written before (else values are 0..4).
        seed: the random seed; equal seeds give equal histories.
        anomalies: violations to inject, each in a different key.
        info_rate: probability that an op ends ``info``.
        read_ratio: probability that an op is a read.
        injected: keys where an anomaly was injected (filled while iterating).
    """

    ops: int
    keys: int = 1
    processes: int = 5
    unique_values: bool = False
    seed: int = 0
    anomalies: int = 0
    info_rate: float = 0.01
    read_ratio: float = 0.5
    injected: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.ops < 0 or self.keys < 1 or self.processes < 1:
            raise ValueError("ops must be >= 0, keys and processes >= 1")
        if not 0 <= self.anomalies <= self.keys:
            raise ValueError(f"anomalies must be between 0 and keys ({self.keys})")

    def __iter__(self) -> Iterator[Op]:
        """Yield the history's ops in order."""
        rng = random.Random(self.seed)
        n_proc = self.processes
        targets = set(rng.sample(range(self.keys), self.anomalies))
        self.injected = []
        values: dict[int, Any] = {}  # key -> current value (absent: None)
        written: dict[int, int] = {}  # key -> event index at which an ok write to it completed
        pid = list(range(n_proc))
        phase = [IDLE] * n_proc
        f_of: list[str] = [""] * n_proc
        key_of = [0] * n_proc
        arg: list[Any] = [None] * n_proc
        result: list[Any] = [None] * n_proc
        invoked_at = [0] * n_proc
        started = 0
        in_flight = 0
        counter = 0
        t = 0
        while started < self.ops or in_flight:
            s = rng.randrange(n_proc)
            ph = phase[s]
            if ph == IDLE:
                if started >= self.ops:
                    continue
                started += 1
                in_flight += 1
                key = rng.randrange(self.keys)
                if rng.random() < self.read_ratio:
                    f, value = "read", None
                elif self.unique_values:
                    counter += 1
                    f, value = "write", counter
                else:
                    f, value = "write", rng.randrange(5)
                f_of[s], key_of[s], arg[s], invoked_at[s] = f, key, value, t
                phase[s] = PENDING
                yield Op(t, t * 1000, pid[s], OpType.INVOKE, f, key, value)
                t += 1
                continue
            crash = rng.random() < self.info_rate
            if ph == PENDING and not crash:
                key = key_of[s]
                if f_of[s] == "write":
                    values[key] = arg[s]
                else:
                    result[s] = values.get(key)
                phase[s] = APPLIED
                continue
            in_flight -= 1
            phase[s] = IDLE
            if crash:
                yield Op(t, t * 1000, pid[s], OpType.INFO, f_of[s], key_of[s], arg[s], error="crashed")
                pid[s] += n_proc
            else:
                key = key_of[s]
                out = result[s] if f_of[s] == "read" else arg[s]
                if (f_of[s] == "read" and key in targets and key in written and written[key] < invoked_at[s]
                        and out is not None):
                    out = None
                    targets.discard(key)
                    self.injected.append(key)
                if f_of[s] == "write":
                    written.setdefault(key, t)
                yield Op(t, t * 1000, pid[s], OpType.OK, f_of[s], key, out)
            t += 1
