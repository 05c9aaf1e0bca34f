"""Independent keys: a model of many objects, one per key, each checked on its own.

Jepsen's ``independent`` checker and Porcupine's partitions: linearizability is local (Herlihy &
Wing), so a history over many keys is linearizable iff each key's sub-history is. :class:`Keyed` wraps
a single-object model. Partitioned, each key is checked with the inner model; unpartitioned
(``--no-partition``), the state is a tuple holding one inner state per key, so the search sees the
whole map.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from checkers.models.base import Entry, ModelBase, Partition
from harness.history.op import Call


class Keyed(ModelBase):
    """Many independent copies of ``inner``, addressed by each call's key."""

    def __init__(self, inner: ModelBase) -> None:
        self.inner = inner
        self.name = inner.name
        # Ops on different keys commute, so the inner model's lazy rule holds across keys too.
        self.lazy_unknown = inner.lazy_unknown
        self.guided = inner.guided
        self._slots: dict[Any, int] = {}
        self._keys: list[Any] = []

    def partition(self, calls: list[Call]) -> list[Partition]:
        """One partition per key, in order of first appearance."""
        by_key: dict[Any, list[Call]] = defaultdict(list)
        for c in calls:
            by_key[c.key].append(c)
        return [Partition(k, self.inner, cs) for k, cs in by_key.items()]  # type: ignore[arg-type]

    def encode(self, call: Call) -> tuple[Any, Any] | None:
        """The inner encoding, tagged with the key's slot in the state tuple."""
        enc = self.inner.encode(call)
        if enc is None:
            return None
        slot = self._slots.get(call.key)
        if slot is None:
            slot = self._slots[call.key] = len(self._keys)
            self._keys.append(call.key)
        return (slot, enc[0]), enc[1]

    def init(self) -> Any:
        """One initial inner state per key seen so far (encode every call first)."""
        return (self.inner.init(),) * len(self._keys)  # type: ignore[attr-defined]

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Any]:
        """Step the key's inner state; the other keys' states are untouched."""
        slot, inner_input = input
        old = state[slot]
        ok, new = self.inner.step(old, inner_input, output)  # type: ignore[attr-defined]
        if not ok or new is old or new == old:
            return ok, state
        return True, (*state[:slot], new, *state[slot + 1:])

    def read_only(self, input: Any) -> bool:
        """Read-only iff the inner op is."""
        return self.inner.read_only(input[1])

    def feasible(self, state: Any, input: Any, output: Any, candidates: Sequence[Any]) -> bool:
        """The inner answer for the op's key, among the candidates on that key."""
        slot, inner_input = input
        return self.inner.feasible(state[slot], inner_input, output, [c[1] for c in candidates if c[0] == slot])

    def component(self, input: Any) -> Any:
        """The key's slot: keys are independent."""
        return input[0]

    def unexplained(self, ops: Sequence[tuple[Any, Any]], init: Any) -> list[int]:
        """The inner model's answer, key by key, each key from its own initial state."""
        by_slot: dict[int, list[int]] = defaultdict(list)
        for k, ((slot, _), _) in enumerate(ops):
            by_slot[slot].append(k)
        out: list[int] = []
        for slot, positions in by_slot.items():
            start = init[slot] if slot < len(init) else self.inner.init()  # type: ignore[attr-defined]
            inner = [(ops[k][0][1], ops[k][1]) for k in positions]
            out.extend(positions[j] for j in self.inner.unexplained(inner, start))
        return sorted(out)

    def prune(self, entries: list[Entry]) -> list[Entry]:
        """Prune key by key with the inner model's rules."""
        groups: dict[int, list[Entry]] = defaultdict(list)
        for e in entries:
            groups[e.input[0]].append(e)
        kept: list[Entry] = []
        for slot, group in groups.items():
            inner = [Entry(e.call, e.input[1], e.output, e.call_pos, e.return_pos) for e in group]
            survivors = {id(e.call) for e in self.inner.prune(inner)}
            kept.extend(e for e in group if id(e.call) in survivors)
            del slot
        kept.sort(key=lambda e: e.call_pos)
        return kept

    def describe_operation(self, input: Any, output: Any) -> str:
        """The inner description, prefixed with the key."""
        slot, inner_input = input
        return f"[{self._keys[slot]!r}] {self.inner.describe_operation(inner_input, output)}"

    def describe_state(self, state: Any) -> str:
        """Every key's state."""
        parts = [f"{k!r}: {self.inner.describe_state(s)}" for k, s in zip(self._keys, state, strict=False)]
        return "{" + ", ".join(parts) + "}"
