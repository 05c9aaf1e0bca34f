"""The model protocol: a sequential specification the linearizability search runs against.

A model is a small object with two required methods, :meth:`Model.init` and :meth:`Model.step`.
Everything else is optional; :class:`ModelBase` supplies the defaults, so a model that only knows how
to step still works. Adding a model never touches the checker.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from harness.history.op import Call, OpType


class _Unknown:
    """The output of an operation whose outcome nobody knows (a Jepsen ``info``)."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
"""Output of an unknown-outcome op: a model's step must accept it in any state it can apply in."""


class ModelError(ValueError):
    """A history holds an operation the model cannot interpret (wrong function or value)."""


def freeze(value: Any) -> Any:
    """A hashable copy of a JSON-like value: lists become tuples, dicts sorted item tuples."""
    t = type(value)
    if t is int or t is str or value is None or t is float or t is bool:
        return value  # the common case, first
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value


@dataclass(slots=True)
class Entry:
    """One call as the search sees it.

    Attributes:
        call: the call it came from.
        input: the model's encoding of what was asked.
        output: the model's encoding of what came back, or :data:`UNKNOWN`.
        call_pos: position of the invocation in the history (real-time order).
        return_pos: position of the completion; ``INFINITY`` for unknown outcomes.
    """

    call: Call
    input: Any
    output: Any
    call_pos: int
    return_pos: int

    @property
    def info(self) -> bool:
        """True when the outcome is unknown: it may take effect any time after invocation, or never."""
        return self.output is UNKNOWN


INFINITY = 1 << 62
"""Return position of an unknown-outcome call: after everything."""


@dataclass(slots=True)
class Partition:
    """An independent sub-history with the model that checks it."""

    label: Any
    model: Model
    calls: list[Call]


@runtime_checkable
class Model(Protocol):
    """A sequential specification (Porcupine's model, Knossos's model)."""

    name: str

    def init(self) -> Hashable:
        """The initial state."""
        ...

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Apply one op: whether ``output`` is legal in ``state``, and the state after it."""
        ...


class ModelBase:
    """Defaults for the optional parts of a model: override only what a model knows better."""

    name = "model"
    lazy_unknown = False
    """True when an op legal in a state stays legal, with the same or a reachable outcome, if
    unknown-outcome ops are moved after it (registers): the search then uses info ops lazily."""

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """The ``(input, output)`` the search uses for ``call``, or None to drop it.

        By default fail calls are dropped (Jepsen: fail means it did not happen) and info calls get
        the output :data:`UNKNOWN`.
        """
        if call.outcome is OpType.FAIL:
            return None
        out = UNKNOWN if call.outcome is OpType.INFO else freeze(call.output)
        return (call.f, freeze(call.input)), out

    def partition(self, calls: list[Call]) -> list[Partition]:
        """Split calls into independent sub-histories (P-compositionality); default: one."""
        return [Partition(None, self, calls)]  # type: ignore[arg-type]

    def read_only(self, input: Any) -> bool:
        """True when an op with this input never changes the state (info ops like it are dropped)."""
        return False

    def overwrites(self, input: Any) -> bool:
        """True when an op with this input sets the state regardless of it (a register write)."""
        return False

    def prune(self, entries: list[Entry]) -> list[Entry]:
        """Drop unknown-outcome entries that cannot change the verdict; default: read-only ones."""
        return [e for e in entries if not (e.output is UNKNOWN and self.read_only(e.input))]

    guided = False
    """True when :meth:`feasible` can ever say False: the search then asks it at each new configuration."""

    def feasible(self, state: Any, input: Any, output: Any, candidates: Sequence[Any]) -> bool:
        """False only when no run of distinct ops from ``candidates`` can lead from ``state`` to a
        state where the op ``(input, output)`` is legal.

        The search asks this about the earliest pending read-only op with a known outcome: it must be
        linearized before anything invoked after it returned, so only the ``candidates`` (the inputs of
        the ops not yet linearized that were invoked before its return, itself included; each may be
        used at most once, or not at all) can come between now and it. False prunes the configuration;
        the default, True, never does. Any answer that is False only when truly unreachable is sound.
        """
        return True

    def component(self, input: Any) -> Hashable:
        """The independent part of the state an op with this input touches (a key); default: all one.

        Ops on different components never change each other's legality, so :meth:`feasible` is asked
        once per component, with only that component's candidates.
        """
        return None

    def fast_check(self, entries: Sequence[Entry], init: Any) -> bool | None:
        """A polynomial verdict for special histories, or None when it does not apply."""
        return None

    def unexplained(self, ops: Sequence[tuple[Any, Any]], init: Any) -> list[int]:
        """Positions of the ops among ``ops`` (``(input, output)`` pairs, unknown outputs included)
        whose known output no op among ``ops`` could have produced from ``init``: they read a value
        from nowhere (a read of 3 with no write of 3).

        The minimal-witness search keeps its sub-histories free of such ops, so that a witness shows
        why the ops cannot be ordered, not a read whose writer was cut away. Any answer that names
        only ops whose output truly cannot be produced is sound; the default names none.
        """
        return []

    def describe_operation(self, input: Any, output: Any) -> str:
        """A human description of one op, such as ``write 3`` or ``read -> 3``."""
        f, value = input if isinstance(input, tuple) and len(input) == 2 else (input, None)
        arg = "" if value is None else f" {value!r}"
        res = " -> ?" if output is UNKNOWN else f" -> {output!r}"
        return f"{f}{arg}{res}"

    def describe_state(self, state: Any) -> str:
        """A human description of a state."""
        return repr(state)


def describe_value(value: Any) -> str:
    """A short rendering of a register value (None is shown as ``absent``)."""
    return "absent" if value is None else repr(value)
