"""Simulated Jepsen runs, written the way Jepsen writes ``history.edn``: the fixtures beside this file.

Regenerate them with ``python -m tests.checkers.linearizability.jepsen_histories.simulate``; a test
checks that the files match what this module makes, so they cannot drift apart.

The simulation follows Jepsen's interpreter. Worker threads each run one process; an invocation is
journaled, with its ``:time``, when it is dispatched; the worker performs the op against a simulated
store, which applies it at one instant between invocation and completion; the completion gets its
``:time`` on the worker and is journaled when the interpreter takes it off its queue, a little later,
so ``:time`` sometimes goes backwards between neighbouring lines, as in real Jepsen histories. A
timed-out op completes ``:info`` (it may or may not have taken effect) and its worker continues as a
new process (process + concurrency). A nemesis partitions the nodes and heals them, recorded as
``:process :nemesis`` ``:info`` ops. ``:index`` is the position.

Each store is linearizable unless a bug is switched on (stale reads from a node cut off by the
partition, a lock granted twice), so a history without a bug is linearizable by construction; one
with a bug has the anomaly the bug makes (the tests check Fencepost finds it, with a counterexample).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.history.edn_values import EdnSet, Keyword

HERE = Path(__file__).resolve().parent
MS = 1_000_000
NODES = ["n1", "n2", "n3", "n4", "n5"]


def pr(value: Any) -> str:
    """A value as Clojure's ``prn`` prints it."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Keyword):
        return ":" + str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, EdnSet):
        return "#{" + " ".join(pr(v) for v in value) + "}"
    if isinstance(value, list | tuple):
        return "[" + " ".join(pr(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{pr(k)} {pr(v)}" for k, v in value.items()) + "}"
    return str(value)


K = Keyword


@dataclass(order=True)
class _Event:
    journal: int
    seq: int
    fields: dict[Any, Any] = field(compare=False)


@dataclass
class Op:
    """One client op in flight: what it asks, and (once the store applied it) what it got."""

    f: str
    value: Any
    worker: int
    result: Any = None
    outcome: str = "ok"
    error: Any = None


class Simulation:
    """A Jepsen-like run: ``concurrency`` workers against a store, with a partitioning nemesis.

    Args:
        seed: for every random choice.
        concurrency: worker threads.
        ops: client ops to run in all.
        choose: ``(rng, worker, n) -> (f, value)``, the generator.
        apply: ``(op, node, now) -> None``, the store: sets ``op.result`` / ``op.outcome``.
        timeout_rate: chance that an op times out (``:info``).
        effect_on_timeout: chance that a timed-out op took effect anyway.
        partitions: ``(start_ms, end_ms)`` windows during which the nemesis isolates ``n1``, ``n2``.
        first_alone: the first op runs alone (no timeout), the other workers start after it.
    """

    def __init__(self, seed: int, concurrency: int, ops: int, choose: Callable[[random.Random, int, int], Any],
                 apply: Callable[[Op, str, int], None], *, timeout_rate: float = 0.03,
                 effect_on_timeout: float = 0.5, partitions: tuple[tuple[int, int], ...] = (),
                 first_alone: bool = False) -> None:
        self.rng = random.Random(seed)
        self.concurrency = concurrency
        self.total = ops
        self.choose = choose
        self.apply = apply
        self.timeout_rate = timeout_rate
        self.effect_on_timeout = effect_on_timeout
        self.partitions = partitions
        self.first_alone = first_alone
        self.events: list[_Event] = []
        self.seq = 0

    def _journal(self, at: int, fields: dict[Any, Any]) -> None:
        self.seq += 1
        self.events.append(_Event(at, self.seq, fields))

    def run(self) -> list[dict[Any, Any]]:
        """Run to the end; the history's ops as ordered field maps (``:index`` set)."""
        rng = self.rng
        queue: list[tuple[int, int, str, Any]] = []  # (true time, tiebreak, kind, payload)
        tie = 0

        def push(at: int, kind: str, payload: Any) -> None:
            nonlocal tie
            tie += 1
            heapq.heappush(queue, (at, tie, kind, payload))

        for w in range(self.concurrency):
            if self.first_alone:
                push(0 if w == 0 else 20 * MS + rng.randrange(0, 5 * MS), "invoke", (w, w))
            else:
                push(rng.randrange(0, 5 * MS), "invoke", (w, w))
        for start, end in self.partitions:
            push(start * MS, "nemesis-start", None)
            push(end * MS, "nemesis-stop", None)
        started = 0
        while queue:
            now, _, kind, payload = heapq.heappop(queue)
            if kind == "nemesis-start":
                self._journal(now, {K("type"): K("info"), K("f"): K("start-partition"), K("value"): K("majority"),
                                    K("process"): K("nemesis")})
                grudge = {n: EdnSet(sorted(set(NODES) - {n, "n1", "n2"} if n in ("n1", "n2") else {"n1", "n2"}))
                          for n in NODES}
                self._journal(now + 3 * MS, {K("type"): K("info"), K("f"): K("start-partition"),
                                             K("value"): [K("isolated"), grudge], K("process"): K("nemesis")})
            elif kind == "nemesis-stop":
                self._journal(now, {K("type"): K("info"), K("f"): K("stop-partition"), K("value"): None,
                                    K("process"): K("nemesis")})
                self._journal(now + 2 * MS, {K("type"): K("info"), K("f"): K("stop-partition"),
                                             K("value"): K("network-healed"), K("process"): K("nemesis")})
            elif kind == "invoke":
                worker, process = payload
                if started >= self.total:
                    continue
                started += 1
                f, value = self.choose(rng, worker, started)
                op = Op(f, value, worker)
                self._journal(now, {K("type"): K("invoke"), K("f"): K(f), K("value"): value, K("process"): process})
                node = NODES[process % len(NODES)]
                if rng.random() < self.timeout_rate and not (self.first_alone and started == 1):
                    done = now + 50 * MS
                    if rng.random() < self.effect_on_timeout:
                        push(now + rng.randrange(1, 50 * MS), "apply", (op, node))
                    push(done, "timeout", (worker, process, op))
                else:
                    lin = now + rng.randrange(100_000, 8 * MS)
                    push(lin, "apply", (op, node))
                    push(lin + rng.randrange(50_000, 6 * MS), "complete", (worker, process, op))
            elif kind == "apply":
                op, node = payload
                self.apply(op, node, now)
            else:
                worker, process, op = payload
                seen = now + rng.randrange(0, 400_000)  # on the completion queue until the interpreter looks
                if kind == "timeout":
                    fields = {K("type"): K("info"), K("f"): K(op.f), K("value"): op.value, K("process"): process,
                              K("error"): K("timeout")}
                    process += self.concurrency
                else:
                    fields = {K("type"): K(op.outcome), K("f"): K(op.f), K("value"): op.result,
                              K("process"): process}
                    if op.error is not None:
                        fields[K("error")] = op.error
                self._journal(seen, dict(fields, **{"_time": now}))
                push(seen + rng.randrange(0, 3 * MS), "invoke", (worker, process))
        self.events.sort()
        out = []
        for i, e in enumerate(self.events):
            when = e.fields.pop("_time", e.journal)
            out.append({K("index"): i, K("time"): when, **e.fields})
        return out


def in_partition(partitions: tuple[tuple[int, int], ...], now: int) -> bool:
    """True while the nemesis has ``n1`` and ``n2`` cut off."""
    return any(a * MS <= now < b * MS for a, b in partitions)


# --- cas-register, lifted over keys by jepsen.independent (jepsen.tests.linearizable-register) -------


def cas_register_independent(seed: int, *, bad_key: int | None, keys: int = 5, per_key: int = 60,
                             partitions: tuple[tuple[int, int], ...] = ((150, 400),)) -> list[dict[Any, Any]]:
    """Ten workers in two groups of five, each group working through its keys one after another, like
    ``independent/concurrent-generator``: reads ``[k nil]``, writes ``[k v]``, cas ``[k [v v']]`` with
    values below 5, against registers that start absent (Knossos's ``(cas-register)``). With
    ``bad_key``, nodes cut off by the partition serve that key's reads from the value they had when
    it began: stale reads."""
    store: dict[int, Any] = {}
    snapshot: dict[int, Any] = {}
    done = [0, 0]
    current = [0, 1]

    def choose(rng: random.Random, worker: int, n: int) -> Any:
        group = worker // 5
        if done[group] >= per_key:
            current[group] += 2
            done[group] = 0
        done[group] += 1
        k = current[group] % keys
        kind = rng.choice(["read", "read", "write", "cas"])
        if kind == "read":
            return "read", [k, None]
        if kind == "write":
            return "write", [k, rng.randrange(5)]
        return "cas", [k, [rng.randrange(5), rng.randrange(5)]]

    def apply(op: Op, node: str, now: int) -> None:
        k, arg = op.value
        cut_off = in_partition(partitions, now) and node in ("n1", "n2")
        if not in_partition(partitions, now):
            snapshot.clear()
        elif not snapshot:
            snapshot.update(store)
            snapshot[-1] = True
        if op.f == "read":
            value = snapshot.get(k) if cut_off and k == bad_key else store.get(k)
            op.result = [k, value]
        elif op.f == "write":
            store[k] = arg
            op.result = op.value
        elif store.get(k) == arg[0]:
            store[k] = arg[1]
            op.result = op.value
        else:
            op.outcome, op.result = "fail", op.value

    return Simulation(seed, 10, keys * per_key, choose, apply, partitions=partitions).run()


# --- a single cas-register from 0 whose client returns nil when it did not learn the value ----------


def cas_register_nil_reads(seed: int, *, stale: bool) -> list[dict[Any, Any]]:
    """Five workers on one register that starts at 0 (Knossos's ``(cas-register 0)``). A read answered
    by a node cut off by the partition comes back ``:ok`` with nil: the client learned nothing, as
    Knossos reads it. With ``stale``, such nodes answer with the value from before the partition
    instead: a real anomaly."""
    partitions = ((120, 300),)
    state: dict[str, Any] = {"value": 0, "frozen": None}

    def choose(rng: random.Random, worker: int, n: int) -> Any:
        kind = rng.choice(["read", "read", "write", "cas"])
        if kind == "read":
            return "read", None
        if kind == "write":
            return "write", rng.randrange(5)
        return "cas", [rng.randrange(5), rng.randrange(5)]

    def apply(op: Op, node: str, now: int) -> None:
        cut_off = in_partition(partitions, now) and node in ("n1", "n2")
        if not in_partition(partitions, now):
            state["frozen"] = None
        elif state["frozen"] is None:
            state["frozen"] = [state["value"]]
        if op.f == "read":
            if cut_off:
                op.result = state["frozen"][0] if stale else None
            else:
                op.result = state["value"]
        elif op.f == "write":
            state["value"] = op.value
            op.result = op.value
        elif state["value"] == op.value[0]:
            state["value"] = op.value[1]
            op.result = op.value
        else:
            op.outcome, op.result = "fail", op.value

    return Simulation(seed, 5, 160, choose, apply, partitions=partitions).run()


# --- Knossos's multi-register: transactions over :x and :y ---------------------------------------------


def multi_register(seed: int) -> list[dict[Any, Any]]:
    """Five workers running transactions of one to three micro-ops over ``:x`` and ``:y``, which start at
    0 (``(multi-register {:x 0 :y 0})``), writing values 1 to 5. The first transaction, a read of
    ``:x``, completes before any other op is invoked: from ``{:x 1 :y 0}`` the history is invalid."""
    regs = {"x": 0, "y": 0}

    def choose(rng: random.Random, worker: int, n: int) -> Any:
        if n == 1:
            return "txn", [[K("read"), K("x"), None]]
        txn: list[list[Any]] = []
        for _ in range(rng.randint(1, 3)):
            key = K(rng.choice("xy"))
            if rng.random() < 0.5:
                txn.append([K("read"), key, None])
            else:
                txn.append([K("write"), key, rng.randint(1, 5)])
        return "txn", txn

    def apply(op: Op, node: str, now: int) -> None:
        result = []
        for f, k, v in op.value:
            if f == "read":
                result.append([f, k, regs[k]])
            else:
                regs[k] = v
                result.append([f, k, v])
        op.result = result

    return Simulation(seed, 5, 150, choose, apply, partitions=((100, 220),), first_alone=True).run()


# --- Knossos's mutex: acquire and release a lock -------------------------------------------------------


def mutex(seed: int, *, double_grant: bool) -> list[dict[Any, Any]]:
    """Five workers, each acquiring then releasing a lock, in turn. A busy lock makes an acquire fail
    (``:fail``, definite: it did not get the lock); releasing a lock the worker does not hold fails
    with ``:error :not-held``. A timed-out op did not take effect. With ``double_grant``, a node cut off
    by the partition grants the lock even while another worker holds it (split brain): two acquires
    succeed without a release between them."""
    partitions = ((60, 200),)
    lock: dict[str, int | None] = {"holder": None}
    phase: dict[int, int] = {}

    def choose(rng: random.Random, worker: int, n: int) -> Any:
        step = phase.get(worker, 0)
        phase[worker] = step + 1
        return ("acquire" if step % 2 == 0 else "release"), None

    def apply(op: Op, node: str, now: int) -> None:
        holder = lock["holder"]
        if op.f == "acquire":
            split = double_grant and in_partition(partitions, now) and node in ("n1", "n2")
            if holder is None or split:
                lock["holder"] = op.worker
            else:
                op.outcome = "fail"
        elif holder == op.worker:
            lock["holder"] = None
        else:
            op.outcome, op.error = "fail", K("not-held")

    return Simulation(seed, 5, 120, choose, apply, timeout_rate=0.02, effect_on_timeout=0.0,
                      partitions=partitions).run()


FIXTURES: dict[str, Callable[[], list[dict[Any, Any]]]] = {
    "cas-register-independent-valid.edn": lambda: cas_register_independent(1, bad_key=None),
    "cas-register-independent-bad-key-3.edn": lambda: cas_register_independent(2, bad_key=3),
    "cas-register-nil-reads-valid.edn": lambda: cas_register_nil_reads(3, stale=False),
    "cas-register-stale-reads-invalid.edn": lambda: cas_register_nil_reads(4, stale=True),
    "multi-register-valid.edn": lambda: multi_register(5),
    "mutex-valid.edn": lambda: mutex(6, double_grant=False),
    "mutex-double-grant-invalid.edn": lambda: mutex(7, double_grant=True),
}
STYLES = {"cas-register-nil-reads-valid.edn": "map", "mutex-valid.edn": "map"}


def render(name: str) -> str:
    """The text of fixture ``name`` as this module makes it."""
    ops = FIXTURES[name]()
    lines = []
    for op in ops:
        if STYLES.get(name, "record") == "record":
            order = ["index", "time", "type", "process", "f", "value"]
            fields = {K(k): op[K(k)] for k in order if K(k) in op}
            fields.update({k: v for k, v in op.items() if k not in fields})
            lines.append("#jepsen.history.Op" + pr(fields))
        else:
            order = ["type", "f", "value", "process", "time"]
            fields = {K(k): op[K(k)] for k in order if K(k) in op}
            fields.update({k: v for k, v in op.items() if k not in fields and k != K("index")})
            lines.append(pr(fields))
    return "\n".join(lines) + "\n"


def main() -> None:
    """Write every fixture."""
    for name in FIXTURES:
        (HERE / name).write_text(render(name), encoding="utf-8")


if __name__ == "__main__":
    main()
