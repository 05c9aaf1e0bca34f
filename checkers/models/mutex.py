"""Knossos's ``mutex``: one lock, taken by ``acquire`` and given back by ``release``.

An ``acquire`` is legal only while the lock is free, and takes it; a ``release`` is legal only while
it is held, and frees it. The model does not know who holds the lock, as in Knossos. A ``fail`` did
not happen and is dropped: a release that failed with ``:error :not-held``, or an acquire that
definitely did not get the lock, change nothing. An ``info`` op may have taken effect, or not.

The lock starts free, unless ``--init`` says ``held`` (or ``true``).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from checkers.models.base import UNKNOWN, Entry, ModelBase, ModelError
from harness.history.op import Call, OpType

ACQUIRE = "acquire"
RELEASE = "release"
_FREE = (None, False, "free", "released", "unlocked")
_HELD = (True, "held", "locked", "acquired")


class Mutex(ModelBase):
    """A single lock; the state is True while it is held.

    Args:
        init: ``free`` (default; also None or false) or ``held`` (also true).
    """

    name = "mutex"

    def __init__(self, init: Any = None) -> None:
        if any(init is v or (isinstance(init, str) and init == v) for v in _FREE):
            self.initial = False
        elif any(init is v or (isinstance(init, str) and init == v) for v in _HELD):
            self.initial = True
        else:
            raise ModelError(f"mutex's initial state is free or held, got {init!r}")

    def init(self) -> Any:
        """True when the lock starts held."""
        return self.initial

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """``acquire`` or ``release``, with the output True (ok) or unknown (info); fail calls are dropped."""
        f = call.f
        if f == ACQUIRE:
            op = ACQUIRE
        elif f == RELEASE:
            op = RELEASE
        else:
            raise ModelError(f"call {call.id}: mutex has no function {f!r} (acquire, release)")
        if call.outcome is OpType.FAIL:
            return None
        return op, UNKNOWN if call.outcome is OpType.INFO else True

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Acquire a free lock or release a held one; anything else is illegal."""
        if input == ACQUIRE:
            return (False, state) if state else (True, True)
        return (True, False) if state else (False, state)

    def unexplained(self, ops: Sequence[tuple[Any, Any]], init: Any) -> list[int]:
        """Ok releases beyond the acquires among ``ops`` (and a lock that starts held): a release with
        no acquire to give back (the last ones are named)."""
        held = sum(1 for inp, _ in ops if inp == ACQUIRE) + (1 if init else 0)
        out = []
        for k, (inp, result) in enumerate(ops):
            if inp == RELEASE and result is not UNKNOWN:
                if held:
                    held -= 1
                else:
                    out.append(k)
        return out

    def fast_check(self, entries: Sequence[Entry], init: Any) -> bool | None:
        """An exact greedy check when every outcome is known; None when some op's outcome is unknown.

        The ops must be linearized alternately as acquire and release, from the initial state. At each
        step the ops that may come next are those invoked before every unplaced op's completion; of
        those of the kind needed, the one that completes first is placed (exchanging two ops of the same
        kind keeps a linearization legal, so choosing the earliest deadline never loses one). O(n log n).
        """
        if any(e.output is UNKNOWN for e in entries):
            return None
        order = sorted(entries, key=lambda e: e.call_pos)
        n = len(order)
        returns = [(e.return_pos, i) for i, e in enumerate(order)]
        heapq.heapify(returns)
        placed = [False] * n
        ready: dict[Any, list[tuple[int, int]]] = {ACQUIRE: [], RELEASE: []}
        held = bool(init)
        k = 0
        for _ in range(n):
            while placed[returns[0][1]]:
                heapq.heappop(returns)
            horizon = returns[0][0]
            while k < n and order[k].call_pos < horizon:
                heapq.heappush(ready[order[k].input], (order[k].return_pos, k))
                k += 1
            candidates = ready[RELEASE if held else ACQUIRE]
            if not candidates:
                return False
            _, i = heapq.heappop(candidates)
            placed[i] = True
            held = not held
        return True

    def describe_operation(self, input: Any, output: Any) -> str:
        """``acquire`` or ``release``; ``(outcome unknown)`` marks an info op."""
        return str(input) + (" (outcome unknown)" if output is UNKNOWN else "")

    def describe_state(self, state: Any) -> str:
        """``held`` or ``free``."""
        return "held" if state else "free"
