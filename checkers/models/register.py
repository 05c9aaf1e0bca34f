"""Read/write registers, with and without compare-and-set (Knossos's ``register``/``cas-register``).

A register holds one value; ``None`` means absent. Ops:

* ``read``: the ok output is the value held.
* ``write v``: sets the value.
* ``cas [old, new]`` (cas-register only): sets ``new`` if the value is ``old``; an ok cas swapped.

Fail ops are dropped (they did not happen). Histories whose ops carry keys are split per key, each an
independent register (see :mod:`checkers.models.keyed`).

An ok read of ``None`` (nil) depends on the history's semantics (:mod:`harness.history.semantics`):
with ``nil_read="absent"`` (native histories) it says the register is absent; with ``"any"`` (Jepsen's
EDN, as Knossos reads it) it says nothing, since the client did not learn the value, and is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkers.models.base import UNKNOWN, Entry, ModelBase, ModelError, describe_value, freeze
from checkers.models.unique_register import unique_register_verdict
from harness.history.op import Call, OpType

READ = "read"
WRITE = "write"
CAS = "cas"


class Register(ModelBase):
    """A single register; ``cas`` is accepted only when ``allow_cas`` is set.

    Args:
        init: the initial value (None: absent).
        allow_cas: accept ``cas``.
        nil_read: ``absent`` (an ok read of None reads an absent register) or ``any`` (it constrains
            nothing, as in Knossos).
    """

    def __init__(self, init: Any = None, *, allow_cas: bool = False, nil_read: str = "absent") -> None:
        self.initial = freeze(init)
        self.allow_cas = allow_cas
        self.nil_any = nil_read == "any"
        self.name = "cas-register" if allow_cas else "register"

    def init(self) -> Any:
        """The initial value (``None``: absent)."""
        return self.initial

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """``(f, argument)`` and the output; fail calls are dropped."""
        f = call.f
        if f == READ:
            arg = None
        elif f == WRITE:
            arg = freeze(call.input)
        elif f == CAS:
            if not self.allow_cas:
                raise ModelError(f"call {call.id}: the register model has no cas; use --model cas-register")
            arg = freeze(call.input)
            if not (isinstance(arg, tuple) and len(arg) == 2):
                raise ModelError(f"call {call.id}: cas needs [old, new], got {call.input!r}")
        else:
            raise ModelError(f"call {call.id}: {self.name} has no function {f!r} (read, write"
                             + (", cas)" if self.allow_cas else ")"))
        outcome = call.outcome
        if outcome is OpType.FAIL:
            return None
        if self.nil_any and f == READ and outcome is OpType.OK and call.output is None:
            return None  # Knossos: a nil read is legal in every state and changes nothing
        out = UNKNOWN if outcome is OpType.INFO else (freeze(call.output) if f == READ else True)
        return (f, arg), out

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Apply one read, write or cas."""
        f, arg = input
        if f == READ:
            return output is UNKNOWN or output == state, state
        if f == WRITE:
            return True, arg
        if state == arg[0]:
            return True, arg[1]
        return output is UNKNOWN, state

    lazy_unknown = True

    def read_only(self, input: Any) -> bool:
        """Reads change nothing."""
        return bool(input[0] == READ)

    def overwrites(self, input: Any) -> bool:
        """Writes set the value whatever it was."""
        return bool(input[0] == WRITE)

    def prune(self, entries: list[Entry]) -> list[Entry]:
        """Drop info reads, and info writes and cases whose value nobody can observe."""
        return prune_unobserved(super().prune(entries))

    def unexplained(self, ops: Sequence[tuple[Any, Any]], init: Any) -> list[int]:
        """Ok reads of a value, and ok cases from a value, that is neither ``init`` nor written by any
        other write or cas among ``ops``."""
        made: dict[Any, int] = {init: 1}
        for (f, arg), _ in ops:
            if f in (WRITE, CAS):
                value = arg if f == WRITE else arg[1]
                made[value] = made.get(value, 0) + 1
        out = []
        for k, ((f, arg), result) in enumerate(ops):
            if result is UNKNOWN:
                continue
            if f == READ and result not in made:
                out.append(k)
            elif f == CAS and result is True and made.get(arg[0], 0) - (arg[0] == arg[1]) <= 0:
                out.append(k)  # a cas from 0 to 0 does not explain its own 0
        return out

    def fast_check(self, entries: Sequence[Entry], init: Any) -> bool | None:
        """The polynomial unique-values check, when every write is unique and there is no cas."""
        return unique_register_verdict(entries, init)

    def describe_operation(self, input: Any, output: Any) -> str:
        """``read -> 3``, ``write 3``, ``cas 1->3``; ``?`` marks an unknown outcome."""
        return describe_register_op(input, output)

    def describe_state(self, state: Any) -> str:
        """The value held, or ``absent``."""
        return describe_value(state)


def describe_register_op(input: Any, output: Any) -> str:
    """A register op in words."""
    f, arg = input
    if f == READ:
        return "read -> ?" if output is UNKNOWN else f"read -> {describe_value(output)}"
    suffix = " (outcome unknown)" if output is UNKNOWN else ""
    if f == WRITE:
        return f"write {describe_value(arg)}{suffix}"
    if output is False:
        suffix = " (failed: did not match)"
    return f"cas {describe_value(arg[0])} -> {describe_value(arg[1])}{suffix}"


def prune_unobserved(entries: list[Entry]) -> list[Entry]:
    """Drop unknown-outcome writes and cases whose new value no op could ever observe.

    Such an op changes the value to something no read returns and no cas compares against; placing it
    at the end of any linearization (or never) is then as good as placing it anywhere. A failed cas
    that keeps its meaning (etcd: "the value was not ``old``") observes any change, so entries that
    could take effect before such a cas completes are kept.
    """
    observed: set[Any] = set()
    last_negative = None
    for e in entries:
        f, arg = e.input
        if f == READ and e.output is not UNKNOWN:
            observed.add(e.output)
        elif f == CAS:
            observed.add(arg[0])
            if e.output is False and (last_negative is None or e.return_pos > last_negative):
                last_negative = e.return_pos
    kept = []
    for e in entries:
        if e.output is UNKNOWN and e.input[0] != READ:
            value = e.input[1] if e.input[0] == WRITE else e.input[1][1]
            if value not in observed and (last_negative is None or e.call_pos > last_negative):
                continue
        kept.append(e)
    return kept
