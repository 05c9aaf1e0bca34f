"""Knossos's ``multi-register``: registers named by keys, read and written together in transactions.

Every op is ``txn``; its value is a list of micro-ops ``[f k v]`` with ``f`` either ``read`` or
``write``, such as ``[[:read :x nil] [:write :y 2]]``. Invoked, a read's ``v`` is nil; completed ok,
it is the value read. A transaction applies atomically, its micro-ops in order: a read must return
what the key holds at that point (its own earlier writes included), a write sets the key.

The initial state is a map (``--init '{:x 0 :y 0}'``, EDN or JSON); a key it lacks holds nil
(absent). An ok read of nil follows the history's semantics (:mod:`harness.history.semantics`): with
``nil_read="any"`` (Jepsen's EDN, as Knossos reads it) it constrains nothing and is left out, with
``"absent"`` it says the key is absent. A ``fail`` txn did not happen and is dropped; an ``info`` txn's
writes may take effect at any time after its invocation, or never, and its reads constrain nothing.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from checkers.models.base import UNKNOWN, Entry, ModelBase, ModelError, describe_value, freeze
from checkers.models.unique_register import unique_register_verdict
from harness.history.op import Call, OpType

TXN = "txn"
READ = "read"
WRITE = "write"
_R = 0
_W = 1
"""Micro-op codes in an encoded transaction: ``(code, key slot, written value or None)``."""


class MultiRegister(ModelBase):
    """Registers by key, changed by transactions (Knossos's ``multi-register``).

    The state is a tuple with one value per key slot; each key seen gets a slot when it is first
    encoded, so :meth:`init` covers the keys of the calls encoded before it (the checker encodes a
    partition's calls, then asks for its initial state).

    Args:
        init: a map of keys to initial values (None: every key absent).
        nil_read: ``absent`` or ``any`` (see the module).
    """

    name = "multi-register"

    def __init__(self, init: Any = None, *, nil_read: str = "absent") -> None:
        if init is None:
            init = {}
        if not isinstance(init, Mapping):
            raise ModelError(f"multi-register's initial value is a map of keys to values, such as "
                             f"{{:x 0 :y 0}}; got {init!r}")
        self.nil_any = nil_read == "any"
        self._slots: dict[Any, int] = {}
        self.keys: list[Any] = []
        self._initial: dict[int, Any] = {self._slot(k): freeze(v) for k, v in init.items()}

    def _slot(self, key: Any) -> int:
        """The state slot of ``key``, given on first sight."""
        k = freeze(key)
        slot = self._slots.get(k)
        if slot is None:
            slot = self._slots[k] = len(self.keys)
            self.keys.append(k)
        return slot

    def init(self) -> Any:
        """Each known key's initial value (None where ``init`` does not name the key)."""
        return tuple(self._initial.get(i) for i in range(len(self.keys)))

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """The transaction's micro-ops as ``(code, slot, value)`` and, when ok, the values its reads returned.

        Reads that constrain nothing (an info txn's, and nil reads under ``nil_read="any"``) are left
        out; a transaction left with nothing is dropped.
        """
        if call.f != TXN:
            raise ModelError(f"call {call.id}: multi-register has no function {call.f!r} (txn)")
        outcome = call.outcome
        if outcome is OpType.FAIL:
            return None
        ok = outcome is OpType.OK
        value = call.output if ok and call.output is not None else call.input
        ops: list[tuple[int, int, Any]] = []
        reads: list[Any] = []
        for f, key, v in _micro_ops(call, value):
            slot = self._slot(key)
            if f == WRITE:
                ops.append((_W, slot, freeze(v)))
            elif ok and not (v is None and self.nil_any):
                ops.append((_R, slot, None))
                reads.append(freeze(v))
        if not ops:
            return None
        return tuple(ops), tuple(reads) if ok else UNKNOWN

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Apply a transaction's micro-ops in order; illegal when a read returned another value."""
        known = output is not UNKNOWN
        values: list[Any] | None = None
        j = 0
        for code, slot, v in input:
            if code == _R:
                current = state[slot] if values is None else values[slot]
                if known and current != output[j]:
                    return False, state
                j += 1
            else:
                if values is None:
                    values = list(state)
                values[slot] = v
        return True, state if values is None else tuple(values)

    def read_only(self, input: Any) -> bool:
        """A transaction of reads only changes nothing."""
        return all(code == _R for code, _, _ in input)

    def prune(self, entries: list[Entry]) -> list[Entry]:
        """Drop info reads, and info transactions none of whose written values any read returned.

        Such a transaction sets keys to values no ok read observes at those keys: in any
        linearization, no ok read of those keys comes before the next write of each, so leaving the
        transaction out keeps the linearization legal.
        """
        entries = super().prune(entries)
        observed: set[tuple[int, Any]] = set()
        for e in entries:
            if e.output is not UNKNOWN:
                reads = iter(e.output)
                observed.update((slot, next(reads)) for code, slot, _ in e.input if code == _R)
        return [e for e in entries if e.output is not UNKNOWN
                or any((slot, v) in observed for code, slot, v in e.input if code == _W)]

    def fast_check(self, entries: Sequence[Entry], init: Any) -> bool | None:
        """When every transaction is one read or one write, the keys are independent registers
        (linearizability is local): each gets the unique-values register check
        (:mod:`checkers.models.unique_register`). None when a transaction does more, or a key's
        writes repeat a value."""
        by_slot: dict[int, list[Entry]] = defaultdict(list)
        for e in entries:
            if len(e.input) != 1:
                return None
            code, slot, v = e.input[0]
            if code == _R:
                register = Entry(e.call, (READ, None), e.output[0], e.call_pos, e.return_pos)
            else:
                register = Entry(e.call, (WRITE, v), e.output, e.call_pos, e.return_pos)
            by_slot[slot].append(register)
        verdict: bool | None = True
        for slot, group in by_slot.items():
            got = unique_register_verdict(group, init[slot])
            if got is False:
                return False
            if got is None:
                verdict = None
        return verdict

    def describe_operation(self, input: Any, output: Any) -> str:
        """``txn [read :x -> 0, write :y 2]``; ``(outcome unknown)`` marks an info txn."""
        reads = iter(output) if output is not UNKNOWN else itertools.repeat(UNKNOWN)
        parts = []
        for code, slot, v in input:
            key = self._key_text(slot)
            if code == _R:
                got = next(reads)
                parts.append(f"read {key} -> {'?' if got is UNKNOWN else describe_value(got)}")
            else:
                parts.append(f"write {key} {describe_value(v)}")
        return "txn [" + ", ".join(parts) + "]" + (" (outcome unknown)" if output is UNKNOWN else "")

    def describe_state(self, state: Any) -> str:
        """Every key's value: ``{:x 0, :y 2}`` (``absent`` for nil)."""
        return "{" + ", ".join(f"{self._key_text(slot)} {describe_value(v)}" for slot, v in enumerate(state)) + "}"

    def _key_text(self, slot: int) -> str:
        """A key as the history wrote it: ``:x`` for a keyword (:class:`harness.history.edn_values.Keyword`),
        else its ``repr``."""
        return repr(self.keys[slot])


def _micro_ops(call: Call, value: Any) -> list[tuple[Any, Any, Any]]:
    """``(f, key, value)`` for each micro-op of ``value``.

    Raises:
        ModelError: ``value`` is not a list of ``[f k v]`` with ``f`` read or write.
    """
    if not isinstance(value, list | tuple):
        raise ModelError(f"call {call.id}: a multi-register txn is a list of [f k v] micro-ops, got {value!r}")
    out = []
    for m in value:
        if not isinstance(m, list | tuple) or len(m) not in (2, 3) or m[0] not in (READ, WRITE):
            raise ModelError(f"call {call.id}: micro-op {m!r} is not [:read k v] or [:write k v]")
        out.append((m[0], m[1], m[2] if len(m) == 3 else None))
    return out
