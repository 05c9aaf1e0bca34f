"""What the transactional workloads (list-append, rw-register) share: their options, the key pool, the generator.

A transaction is 1 to ``txn-length`` micro-ops, each a read or (as often) a write, ``[f, k, v]``. Keys come from
a pool of ``active-keys`` slots, drawn with an exponential skew (each slot half as likely as the one before), so
that concurrent transactions meet on the same keys. A key retires after ``writes-per-key`` writes and a fresh key
takes its slot, as Elle's generators do: every key's version order stays short and cheap to infer. Written values
are unique per key (the n-th write of a key writes n). Every key ever drawn is read after the heal.

The options (:data:`OPTIONS`, also what :meth:`TxnWorkload.options` declares) are read from
``TestConfig.extra["workload_options"]`` (set by a pytest campaign or a bug's recipe) and from
:attr:`TestConfig.options` (where ``--option NAME=VALUE`` puts them, once a run resolves the options a workload
declares as it does a system's); values as text or of the option's type.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.checker_protocol import Checker
from harness.config import TestConfig
from harness.plugin_api import SystemOption
from harness.protocols import Invocation
from harness.registry import Refused

EXTRA_KEY = "workload_options"
"""Where in ``TestConfig.extra`` a test gives the workload's options."""
SKEW = 2.0
"""How much likelier each key slot is than the next: slot ``i`` is drawn with weight ``SKEW ** -i``."""
WRITE_SHARE = 0.5
"""The share of micro-ops that write (Elle's generators: half reads, half writes)."""

OPTIONS = (
    SystemOption("txn-length", 4, "the most micro-ops in one transaction (each has 1 to this many)"),
    SystemOption("active-keys", 8, "keys in use at once, drawn with an exponential skew so transactions contend"),
    SystemOption("writes-per-key", 16, "writes after which a key retires and a fresh one takes its place"),
    SystemOption("consistency", "strict-serializable",
                 "the consistency models the txn checker checks (comma-separated, Elle's names)"),
)
"""The options both transactional workloads take, with their defaults."""


@dataclass(frozen=True)
class TxnOptions:
    """A transactional workload's settings (:data:`OPTIONS`)."""

    txn_length: int = 4
    active_keys: int = 8
    writes_per_key: int = 16
    consistency: tuple[str, ...] = ("strict-serializable",)


def options_of(config: TestConfig) -> TxnOptions:
    """The workload options ``config`` gives (see the module's docstring), each at its default otherwise.

    Raises:
        Refused: an option it does not know, a value of the wrong type, a count below 1, or a consistency model
            the txn checker does not know (one line).
    """
    given: dict[str, Any] = {}
    extra = config.extra.get(EXTRA_KEY) or {}
    if not isinstance(extra, Mapping):
        raise Refused(f"extra[{EXTRA_KEY!r}] must map option names to values, not {extra!r}")
    declared = {o.name: o for o in OPTIONS}
    unknown = sorted(set(extra) - set(declared))
    if unknown:
        raise Refused(f"the transactional workloads have no option {', '.join(unknown)}; their options: "
                      f"{', '.join(declared)}")
    given.update(extra)
    given.update({k: v for k, v in config.options.items() if k in declared})
    try:
        values = {name: o.parse(given[name]) if name in given else o.default for name, o in declared.items()}
    except ValueError as e:
        raise Refused(str(e)) from None
    for name in ("txn-length", "active-keys", "writes-per-key"):
        if int(values[name]) < 1:
            raise Refused(f"option {name} must be at least 1, not {values[name]}")
    models = tuple(m.strip() for m in str(values["consistency"]).split(",") if m.strip())
    if not models:
        raise Refused("option consistency names no model")
    from checkers.txn.models import UnknownModel, canonical

    try:
        models = tuple(dict.fromkeys(canonical(m) for m in models))
    except UnknownModel as e:
        raise Refused(f"option consistency: {e}") from None
    return TxnOptions(int(values["txn-length"]), int(values["active-keys"]), int(values["writes-per-key"]), models)


class KeyPool:
    """The active keys, drawn with a skew; each retires after ``writes_per_key`` writes for a fresh one.

    Keys are ints from 0, in the order they enter the pool; :meth:`next_value` gives a key's next unique value.
    """

    def __init__(self, rng: random.Random, active: int, writes_per_key: int) -> None:
        self._rng = rng
        self._fresh = itertools.count()
        self.slots = [next(self._fresh) for _ in range(active)]
        self._weights = [SKEW ** -i for i in range(active)]
        self._writes_per_key = writes_per_key
        self.writes: dict[int, int] = dict.fromkeys(self.slots, 0)
        """Writes handed out per key, for every key ever in the pool (in the order keys entered it)."""

    def draw(self) -> int:
        """A key to use, the first slots likeliest."""
        return self._rng.choices(self.slots, weights=self._weights, k=1)[0]

    def next_value(self, key: int) -> int:
        """The next unique value to write at ``key`` (1, 2, ...); the key retires once it has had its writes."""
        self.writes[key] += 1
        n = self.writes[key]
        if n >= self._writes_per_key and key in self.slots:
            fresh = next(self._fresh)
            self.slots[self.slots.index(key)] = fresh
            self.writes[fresh] = 0
        return n

    def used(self) -> list[int]:
        """Every key ever in the pool, retired or active."""
        return list(self.writes)


class TxnSource:
    """Transactions of 1 to ``txn_length`` micro-ops over a :class:`KeyPool`; ``write_f`` names the write
    ("append" for list-append, "w" for rw-register)."""

    def __init__(self, rng: random.Random, options: TxnOptions, write_f: str) -> None:
        self._rng = rng
        self._length = options.txn_length
        self._write_f = write_f
        self.pool = KeyPool(rng, options.active_keys, options.writes_per_key)

    def next_op(self, worker: int) -> Invocation:
        """The next transaction."""
        micro_ops: list[list[Any]] = []
        for _ in range(self._rng.randint(1, self._length)):
            key = self.pool.draw()
            if self._rng.random() < WRITE_SHARE:
                micro_ops.append([self._write_f, key, self.pool.next_value(key)])
            else:
                micro_ops.append(["r", key, None])
        return Invocation("txn", None, micro_ops)


def final_reads(keys: list[int], per_txn: int) -> list[Invocation]:
    """Read-only transactions reading every key of ``keys``, ``per_txn`` keys each, in order."""
    return [Invocation("txn", None, [["r", k, None] for k in keys[i:i + per_txn]])
            for i in range(0, len(keys), per_txn)]


class TxnWorkload:
    """A transactional workload (Jepsen's partial test): ``txn`` invocations whose micro-ops write with
    ``write_f``, the final reads of every key, and the txn checker. Subclasses name themselves and the write."""

    name = ""
    write_f = ""
    functions = frozenset({"txn"})

    def __init__(self, config: TestConfig) -> None:
        self.settings = options_of(config)
        """The options this test gives, each at its default otherwise."""
        self._source: TxnSource | None = None

    def options(self) -> Sequence[SystemOption]:
        """The options the workload takes (:data:`OPTIONS`), in the shape systems declare theirs
        (:class:`harness.plugin_api.HasOptions`)."""
        return OPTIONS

    def generator(self, rng: random.Random, concurrency: int) -> TxnSource:
        """Transactions over a skewed, retiring key pool (the module's docstring)."""
        self._source = TxnSource(rng, self.settings, self.write_f)
        return self._source

    def final_ops(self) -> list[Invocation]:
        """Read-only transactions covering every key the run used, ``txn-length`` keys each."""
        if self._source is None:
            return []
        return final_reads(self._source.pool.used(), self.settings.txn_length)

    def checkers(self) -> list[Checker]:
        """The txn checker, for this workload and the consistency models of the test's options."""
        from checkers.txn import TxnChecker

        return [TxnChecker(workload=self.name, consistency=self.settings.consistency)]
