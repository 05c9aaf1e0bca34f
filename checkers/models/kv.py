"""A string key-value store, as in Porcupine's kv logs; split per key.

Each key holds a string, initially ``""`` (or ``--init``). Ops: ``get`` (the ok output is the whole
string), ``put v`` (replace) and ``append v`` (concatenate).
"""

from __future__ import annotations

from typing import Any

from checkers.models.base import UNKNOWN, ModelBase, ModelError
from checkers.models.keyed import Keyed
from harness.history.op import Call, OpType

GET = "get"
PUT = "put"
APPEND = "append"


class KvString(ModelBase):
    """One key's string."""

    name = "kv"

    def __init__(self, init: Any = None) -> None:
        self.initial = "" if init is None else str(init)

    def init(self) -> Any:
        """The initial string."""
        return self.initial

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """``(f, value)`` and the output; fail calls are dropped."""
        f = call.f
        if f not in (GET, PUT, APPEND):
            raise ModelError(f"call {call.id}: kv has no function {f!r} (get, put, append)")
        if call.outcome is OpType.FAIL:
            return None
        if call.outcome is OpType.INFO:
            out = UNKNOWN
        else:
            out = ("" if call.output is None else str(call.output)) if f == GET else True
        arg = None if f == GET else ("" if call.input is None else str(call.input))
        return (f, arg), out

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Apply one get, put or append."""
        f, arg = input
        if f == GET:
            return output is UNKNOWN or output == state, state
        if f == PUT:
            return True, arg
        return True, state + arg

    def read_only(self, input: Any) -> bool:
        """Gets change nothing."""
        return bool(input[0] == GET)

    def describe_operation(self, input: Any, output: Any) -> str:
        """``get -> 'x'``, ``put 'x'``, ``append 'x'``."""
        f, arg = input
        if f == GET:
            return "get -> ?" if output is UNKNOWN else f"get -> {output!r}"
        return f"{f} {arg!r}" + (" (outcome unknown)" if output is UNKNOWN else "")


def kv_model(init: Any = None) -> Keyed:
    """The kv model: one :class:`KvString` per key."""
    return Keyed(KvString(init))
