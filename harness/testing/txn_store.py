"""An in-memory multi-version transactional store: the fake system's transactions (list-append, rw-register).

Every key keeps its committed versions, each stamped with the commit's timestamp. A transaction reads from the
snapshot of the moment it began, sees its own writes, and buffers its writes until it commits. The two modes
differ only in what a commit must not conflict with:

- ``serializable`` (the correct store): optimistic concurrency control. A transaction that wrote commits only if
  no key it read or wrote got a newer version since it began; otherwise it aborts (:class:`Conflict`, a
  definite ``fail``). A committed writer is thus equivalent to running alone at its commit, and a read-only one
  at its start, both moments inside the transaction's own interval: the store is strict serializable.
- ``snapshot-isolation`` (the known-unsafe mode): first committer wins on write-write conflicts only. Two
  transactions that each read what the other writes both commit (write skew, Adya's G2-item): what snapshot
  isolation allows and serializability does not.

The store is synchronous and knows nothing of nodes or faults: the fake system's client
(:class:`harness.testing.fake.FakeTxnClient`) runs its micro-ops one await at a time, so transactions overlap.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Sequence
from typing import Any

SERIALIZABLE = "serializable"
SNAPSHOT_ISOLATION = "snapshot-isolation"
MODES = (SERIALIZABLE, SNAPSHOT_ISOLATION)
"""The isolation the store gives: the correct one, and the known-unsafe one."""


class Conflict(Exception):
    """A commit refused: the transaction conflicts with one that committed since it began; nothing applied."""


class MalformedMicroOp(ValueError):
    """A micro-op the store cannot run (not ``[f, k, v]`` with f one of append, r, w); the message is one line."""


class TxnStore:
    """Committed versions by key, and a logical clock of commits.

    Args:
        mode: :data:`SERIALIZABLE` or :data:`SNAPSHOT_ISOLATION`.
    """

    def __init__(self, mode: str = SERIALIZABLE) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown isolation mode {mode!r}; modes: {', '.join(MODES)}")
        self.mode = mode
        self.clock = 0
        """The timestamp of the last commit (0: none yet)."""
        self._stamps: dict[Hashable, list[int]] = {}
        self._values: dict[Hashable, list[Any]] = {}
        self.commits = 0
        self.aborts = 0

    def begin(self) -> Transaction:
        """A new transaction, reading from the snapshot of every commit so far."""
        return Transaction(self, self.clock)

    def value_at(self, key: Hashable, stamp: int) -> Any:
        """``key``'s value in the snapshot at ``stamp`` (None: never written by then)."""
        stamps = self._stamps.get(key)
        if not stamps:
            return None
        i = bisect.bisect_right(stamps, stamp)
        return self._values[key][i - 1] if i else None

    def latest(self, key: Hashable) -> Any:
        """``key``'s last committed value (None: never written)."""
        return self.value_at(key, self.clock)

    def changed_since(self, key: Hashable, stamp: int) -> bool:
        """Whether a commit after ``stamp`` wrote ``key``."""
        stamps = self._stamps.get(key)
        return stamps is not None and stamps[-1] > stamp

    def _install(self, writes: dict[Hashable, Any]) -> int:
        self.clock += 1
        for key, value in writes.items():
            self._stamps.setdefault(key, []).append(self.clock)
            self._values.setdefault(key, []).append(value)
        self.commits += 1
        return self.clock


class Transaction:
    """One transaction: snapshot reads, its own writes seen, writes buffered until :meth:`commit`."""

    def __init__(self, store: TxnStore, start: int) -> None:
        self.store = store
        self.start = start
        self.reads: set[Hashable] = set()
        self.writes: dict[Hashable, Any] = {}
        self.done = False

    def _current(self, key: Hashable) -> Any:
        return self.writes[key] if key in self.writes else self.store.value_at(key, self.start)

    def read(self, key: Hashable) -> Any:
        """``key`` as this transaction sees it: its own last write, else the snapshot's value."""
        self.reads.add(key)
        return self._current(key)

    def write(self, key: Hashable, value: Any) -> None:
        """Set ``key`` to ``value`` (seen by this transaction's later reads, by others once committed)."""
        self.writes[key] = value

    def append(self, key: Hashable, element: Any) -> None:
        """Append ``element`` to the list at ``key`` (an absent key is the empty list)."""
        self.writes[key] = (*(self._current(key) or ()), element)

    def commit(self) -> int:
        """Apply the writes atomically; return the commit's timestamp (the start's for a read-only one).

        Raises:
            Conflict: the mode refuses it (see the module's docstring); nothing was applied.
        """
        if self.done:
            raise RuntimeError("transaction already finished")
        self.done = True
        if not self.writes:  # read-only: equivalent to running alone at its start, in both modes
            return self.start
        watched = self.writes.keys() if self.store.mode == SNAPSHOT_ISOLATION else self.reads | self.writes.keys()
        clash = sorted((k for k in watched if self.store.changed_since(k, self.start)), key=repr)
        if clash:
            self.store.aborts += 1
            raise Conflict(f"key {clash[0]!r} was written by a transaction that committed after this one began")
        return self.store._install(self.writes)

    def abort(self) -> None:
        """Drop the writes."""
        self.done = True
        self.store.aborts += 1

    def run(self, micro_op: Sequence[Any], empty: Any = None) -> list[Any]:
        """Run one micro-op, ``[f, k, v]``, and return it completed: a read filled in (a list-append key's list;
        a register's value; ``empty`` for a key never written), a write as given.

        Raises:
            MalformedMicroOp: it is not a micro-op.
        """
        if not isinstance(micro_op, Sequence) or isinstance(micro_op, str) or len(micro_op) != 3:
            raise MalformedMicroOp(f"a micro-op is [f, k, v], not {micro_op!r}")
        f, key, value = micro_op
        if f == "r":
            seen = self.read(key)
            if seen is None:
                return ["r", key, empty]
            return ["r", key, list(seen) if isinstance(seen, tuple) else seen]
        if f == "append":
            self.append(key, value)
            return ["append", key, value]
        if f == "w":
            self.write(key, value)
            return ["w", key, value]
        raise MalformedMicroOp(f"unknown micro-op function {f!r} in {micro_op!r}: it is append, r or w")
