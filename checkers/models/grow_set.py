"""A grow-only set: ``add v`` inserts; ``read`` returns every element."""

from __future__ import annotations

from typing import Any

from checkers.models.base import UNKNOWN, ModelBase, ModelError, freeze
from harness.history.op import Call, OpType

ADD = "add"
READ = "read"


class GrowSet(ModelBase):
    """A single set of values, initially empty (or ``--init``'s list)."""

    name = "set"

    def __init__(self, init: Any = None) -> None:
        self.initial = frozenset(freeze(init)) if init is not None else frozenset()

    def init(self) -> Any:
        """The initial set."""
        return self.initial

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """``("add", v)`` or ``("read", None)`` and the output (a frozenset for reads)."""
        if call.outcome is OpType.FAIL:
            return None
        info = call.outcome is OpType.INFO
        if call.f == ADD:
            return (ADD, freeze(call.input)), UNKNOWN if info else True
        if call.f == READ:
            if info:
                return (READ, None), UNKNOWN
            if not isinstance(call.output, list | tuple | set | frozenset):
                raise ModelError(f"call {call.id}: set read should return a list, got {call.output!r}")
            return (READ, None), frozenset(freeze(v) for v in call.output)
        raise ModelError(f"call {call.id}: set has no function {call.f!r} (add, read)")

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Add an element, or compare a read with the whole set."""
        f, arg = input
        if f == ADD:
            return True, state | {arg}
        return output is UNKNOWN or output == state, state

    def read_only(self, input: Any) -> bool:
        """Reads change nothing."""
        return bool(input[0] == READ)

    def describe_operation(self, input: Any, output: Any) -> str:
        """``add 3`` or ``read -> [1, 3]``."""
        f, arg = input
        if f == ADD:
            return f"add {arg!r}" + (" (outcome unknown)" if output is UNKNOWN else "")
        return "read -> ?" if output is UNKNOWN else f"read -> {sorted(output, key=repr)!r}"

    def describe_state(self, state: Any) -> str:
        """The elements, sorted."""
        return repr(sorted(state, key=repr))
