"""An append-only log: ``append v`` returns the offset it landed at; ``read`` returns a range.

The state is the tuple of appended values. ``read``'s invocation value picks the range: ``None``
(the whole log), ``start`` (from ``start`` to the end) or ``[start, end]`` (a slice); its ok output is
the list of values in that range. An ok append whose output is ``None`` did not report its offset.
"""

from __future__ import annotations

from typing import Any

from checkers.models.base import UNKNOWN, ModelBase, ModelError, freeze
from harness.history.op import Call, OpType

APPEND = "append"
READ = "read"


class Log(ModelBase):
    """A single append-only log."""

    name = "log"

    def __init__(self, init: Any = None) -> None:
        self.initial = tuple(freeze(init)) if init is not None else ()

    def init(self) -> Any:
        """The initial log (empty unless ``--init`` gives a list)."""
        return self.initial

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """``("append", v)`` or ``("read", (start, end))`` and the output."""
        if call.outcome is OpType.FAIL:
            return None
        info = call.outcome is OpType.INFO
        if call.f == APPEND:
            return (APPEND, freeze(call.input)), UNKNOWN if info else call.output
        if call.f == READ:
            rng = freeze(call.input)
            if rng is None:
                rng = (0, None)
            elif isinstance(rng, int):
                rng = (rng, None)
            elif not (isinstance(rng, tuple) and len(rng) == 2):
                raise ModelError(f"call {call.id}: log read takes null, start or [start, end]")
            out = UNKNOWN if info else freeze(call.output)
            if not info and not isinstance(out, tuple):
                raise ModelError(f"call {call.id}: log read should return a list, got {call.output!r}")
            return (READ, rng), out
        raise ModelError(f"call {call.id}: log has no function {call.f!r} (append, read)")

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Append at the end, or compare a read's range."""
        f, arg = input
        if f == APPEND:
            ok = output is UNKNOWN or output is None or output == len(state)
            return ok, (*state, arg)
        if output is UNKNOWN:
            return True, state
        start, end = arg
        return state[start:end] == output, state

    def read_only(self, input: Any) -> bool:
        """Reads change nothing."""
        return bool(input[0] == READ)

    def describe_operation(self, input: Any, output: Any) -> str:
        """``append 'x' -> offset 3`` or ``read [0:] -> [...]``."""
        f, arg = input
        if f == APPEND:
            where = "?" if output is UNKNOWN or output is None else f"offset {output}"
            return f"append {arg!r} -> {where}"
        start, end = arg
        shown = "?" if output is UNKNOWN else repr(list(output))
        return f"read [{start}:{'' if end is None else end}] -> {shown}"

    def describe_state(self, state: Any) -> str:
        """The log's contents."""
        return repr(list(state))
