"""etcd as Jepsen tested it: one register with read, write and compare-and-set.

The register starts absent (``None``, read as ``nil``). Unlike Knossos's cas-register, a failed cas
keeps a meaning, as Porcupine reads these logs: the compare did not match, so the value was not
``old`` at some instant during the call.
"""

from __future__ import annotations

from typing import Any

from checkers.models.base import UNKNOWN, Entry, ModelError, freeze
from checkers.models.register import CAS, READ, WRITE, Register, prune_unobserved
from harness.history.op import Call, OpType


class Etcd(Register):
    """A cas register whose failed cas ops mean "the value was not ``old``"."""

    def __init__(self, init: Any = None, *, nil_read: str = "absent") -> None:
        super().__init__(init, allow_cas=True, nil_read=nil_read)
        self.name = "etcd"

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """Like cas-register, but a failed cas is kept with the output False."""
        if call.f == CAS and call.outcome is OpType.FAIL:
            arg = freeze(call.input)
            if not (isinstance(arg, tuple) and len(arg) == 2):
                raise ModelError(f"call {call.id}: cas needs [old, new], got {call.input!r}")
            return (CAS, arg), False
        if call.f not in (READ, WRITE, CAS):
            raise ModelError(f"call {call.id}: etcd has no function {call.f!r} (read, write, cas)")
        return super().encode(call)

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Read, write, or cas; a failed cas is legal only when the value differs from ``old``."""
        f, arg = input
        if f == READ:
            return output is UNKNOWN or output == state, state
        if f == WRITE:
            return True, arg
        if output is False:
            return state != arg[0], state
        if state == arg[0]:
            return True, arg[1]
        return output is UNKNOWN, state

    def prune(self, entries: list[Entry]) -> list[Entry]:
        """Drop info reads and unobserved info writes (failed cases count as observers)."""
        return prune_unobserved([e for e in entries if not (e.output is UNKNOWN and e.input[0] == READ)])
