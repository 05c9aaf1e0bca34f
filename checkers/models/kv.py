"""A string key-value store, as in Porcupine's kv logs; split per key.

Each key holds a string, initially ``""`` (or ``--init``). Ops: ``get`` (the ok output is the whole
string), ``put v`` (replace) and ``append v`` (concatenate).
"""

from __future__ import annotations

from collections.abc import Sequence
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

    guided = True

    def feasible(self, state: Any, input: Any, output: Any, candidates: Sequence[Any]) -> bool:
        """Whether a get of ``output`` can still succeed after some of the ``candidates``.

        Without a put the string only grows, so it must stay a prefix of what the get returns, and
        the rest must be spelt out by distinct candidate appends. A candidate put restarts from its
        value, which must then be the prefix instead.
        """
        if input[0] != GET or output is UNKNOWN:
            return True
        pieces = []
        bases = [state]
        for f, arg in candidates:
            if f == APPEND:
                if arg:
                    pieces.append(arg)
            elif f == PUT:
                bases.append(arg)
        return any(output.startswith(b) and spells(output, len(b), pieces) for b in bases)

    def unexplained(self, ops: Sequence[tuple[Any, Any]], init: Any) -> list[int]:
        """Ok gets of a string that no put among ``ops`` (nor ``init``) followed by distinct appends
        among ``ops`` spells."""
        bases = {init}
        pieces = []
        for (f, arg), _ in ops:
            if f == PUT:
                bases.add(arg)
            elif f == APPEND and arg:
                pieces.append(arg)
        return [k for k, ((f, _), result) in enumerate(ops)
                if f == GET and result is not UNKNOWN
                and not any(result.startswith(b) and spells(result, len(b), pieces) for b in bases)]

    def describe_operation(self, input: Any, output: Any) -> str:
        """``get -> 'x'``, ``put 'x'``, ``append 'x'``."""
        f, arg = input
        if f == GET:
            return "get -> ?" if output is UNKNOWN else f"get -> {output!r}"
        return f"{f} {arg!r}" + (" (outcome unknown)" if output is UNKNOWN else "")


SPELL_STEPS = 10_000
"""Tries :func:`spells` makes before giving up and answering True (always a sound answer)."""


def spells(text: str, pos: int, pieces: list[str]) -> bool:
    """Whether ``text[pos:]`` is a concatenation of distinct ``pieces`` (True when unsure)."""
    need = len(text) - pos
    if not need:
        return True
    if sum(map(len, pieces)) < need:
        return False
    used = [False] * len(pieces)
    # Depth-first over (position, next piece to try), each level one piece placed at its position.
    stack: list[tuple[int, int]] = [(pos, 0)]
    steps = 0
    end = len(text)
    while stack:
        at, k = stack.pop()
        for j in range(k, len(pieces)):
            steps += 1
            if steps > SPELL_STEPS:
                return True
            if not used[j] and text.startswith(pieces[j], at):
                nxt = at + len(pieces[j])
                if nxt == end:
                    return True
                used[j] = True
                stack.append((at, j + 1))
                stack.append((nxt, 0))
                break
        else:
            if stack:
                # Every piece failed at this position: free the piece that led here.
                used[stack[-1][1] - 1] = False
    return False


def kv_model(init: Any = None) -> Keyed:
    """The kv model: one :class:`KvString` per key."""
    return Keyed(KvString(init))
