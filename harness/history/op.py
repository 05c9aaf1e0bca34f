"""The operation record every part of Fencepost shares, and completed calls built from it.

Outcome semantics follow Jepsen:

* ``ok``: the operation took effect;
* ``fail``: it definitely did not take effect;
* ``info``: nobody knows. It may take effect at any time after its invocation, or never.
  A process whose operation ended in ``info`` never invokes again.

An invocation with no completion counts as ``info``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Process = int | str
"""A client process number, or the string ``"nemesis"`` for fault operations."""

NEMESIS = "nemesis"
FINAL_PROCESS_BASE = 1_000_000
"""Processes from this number on are the final phase's, after every fault was healed (its reads)."""


class OpType(StrEnum):
    """The four kinds of history event."""

    INVOKE = "invoke"
    OK = "ok"
    FAIL = "fail"
    INFO = "info"

    @property
    def is_completion(self) -> bool:
        """True for ok, fail and info."""
        return self is not OpType.INVOKE


@dataclass(slots=True)
class Op:
    """One history event: an invocation or a completion.

    Attributes:
        index: unique and increasing position in the history.
        time: nanoseconds since the test started; never decreases.
        process: the client process, or ``"nemesis"``.
        type: invoke, ok, fail or info.
        f: the function, such as ``read``, ``write`` or ``cas``.
        key: the key the op addresses, if any (independent keys are checked apart).
        value: the argument on invocation, the result on completion.
        error: why a fail or info completion ended as it did.
        extra: free-form fields kept as they were read.
    """

    index: int
    time: int
    process: Process
    type: OpType
    f: str
    key: Any = None
    value: Any = None
    error: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The op as a plain JSON-ready dict; extras are merged at the top level."""
        out: dict[str, Any] = {
            "index": self.index,
            "time": self.time,
            "process": self.process,
            "type": self.type.value,
            "f": self.f,
        }
        if self.key is not None:
            out["key"] = self.key
        out["value"] = self.value
        if self.error is not None:
            out["error"] = self.error
        for k, v in self.extra.items():
            if k not in out:
                out[k] = v
        return out


CORE_FIELDS = ("index", "time", "process", "type", "f", "key", "value", "error")


@dataclass(slots=True)
class Call:
    """An invocation paired with its completion, as checkers consume it.

    Attributes:
        id: position of the call in its history's list of calls.
        process: the process that made the call.
        f: the function.
        key: the key, if any.
        input: the invocation's value.
        output: the completion's value (None when the outcome is unknown).
        outcome: ok, fail or info (an invocation with no completion is info).
        call_time: the invocation's time.
        return_time: the completion's time; for info, the end of the history.
        invoke: the invocation op.
        complete: the completion op, or None when there was none.
    """

    id: int
    process: Process
    f: str
    key: Any
    input: Any
    output: Any
    outcome: OpType
    call_time: int
    return_time: int
    invoke: Op
    complete: Op | None
