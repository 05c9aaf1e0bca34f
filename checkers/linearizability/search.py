"""The general linearizability search: Wing & Gong's algorithm with Lowe's memo, as in Porcupine.

Calls and returns sit in one list in real-time order. The search walks it from the front: a call may
be linearized next if its step is legal in the current state and the configuration it leads to has
not been seen before; the call is then lifted out of the list, with its return. Reaching a return
means the op it closes had to be linearized already: backtrack. The loop is iterative (no recursion
limit) and resumable, so many partitions can share a budget and race for the first violation.

Unknown-outcome (info) ops have no return in the list: they may be linearized any time after their
call, or never, and the search succeeds once every op with a known outcome is linearized. Info ops
would otherwise multiply the search space, so (all are dominance arguments, proven in the tests
against a brute-force oracle):

* an info op whose step leaves the state unchanged is not linearized (skipping it keeps more options);
* info ops with equal inputs are interchangeable, so they are used in invocation order;
* configurations are remembered as (definite ops linearized, state) -> sets of info ops used; a
  configuration that used a superset of a remembered one's info ops is pruned;
* a read-only op that is legal now is linearized now, and nothing else is tried in its place: any
  linearization that reads later can read here instead (its real-time predecessors are all done);
  so when the configuration after it is already known to fail (the memo) or is dropped by the
  model's guidance (below), the configuration before it fails too;
* for models that declare ``lazy_unknown`` (registers), info ops are used only in a *block* right
  before a definite op that needs them: the definite op must be illegal both where the block started
  and just before the block's last info op, and a block never contains an op that ``overwrites`` the
  state after its start.

Models that declare ``guided`` also prune by looking ahead: the earliest pending read-only op with a
known outcome must be linearized before anything invoked after it returned, so only the ops invoked
before that return can come first. The model's ``feasible`` says when none of their runs can make
the read legal (for kv: the string must stay a prefix of what the get returned, and the rest must be
spelt by pending appends), and the configuration is dropped at once instead of being explored. Keyed
models ask once per independent key.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from checkers.linearizability.memory import rss_bytes
from checkers.models.base import UNKNOWN, Entry, ModelBase

CHECK_EVERY = 4096
"""Steps between looks at the clock and at the process's memory (a power of two)."""
_CHECK_MASK = CHECK_EVERY - 1

SYMMETRY_SCAN = 8
"""Earlier identical ops looked at for one that dominates an op (see :meth:`Search._order_identical`)."""

_NONE: Any = object()
"""Block-start marker: the last op linearized had a known outcome."""


class Search:
    """A resumable search over one partition's entries.

    Attributes:
        valid: True, False, or None while undecided.
        nodes: steps tried so far (a measure of work).
        best: entry indices of the longest linearizable prefix seen, in linearization order.
        stopped: why the last :meth:`run` stopped undecided: ``time`` (past the deadline),
            ``memory`` (the process held more than ``max_rss``), or None (the step budget, or decided).
    """

    def __init__(self, entries: list[Entry], model: ModelBase, init: Any, *, guided: bool = True,
                 symmetry: bool = True, eager: bool = False) -> None:
        self.step = model.step  # type: ignore[attr-defined]
        self.lazy = bool(getattr(model, "lazy_unknown", False))
        n = len(entries)
        events: list[tuple[int, int, int]] = []  # (position, is-return, entry)
        for i, e in enumerate(entries):
            events.append((e.call_pos, 0, i))
            if e.output is not UNKNOWN:
                events.append((e.return_pos, 1, i))
        events.sort()
        m = len(events)
        # Node 0 is the head; nodes 1..m are events; node m + 1 is the tail.
        self.nxt = [*range(1, m + 2), m + 1]
        self.prv = [0, *range(m + 1)]
        self.is_call = [False] * (m + 2)
        self.op_of = [0] * (m + 2)
        self.match = [0] * (m + 2)
        return_node = [0] * n
        for k, (_, is_ret, i) in enumerate(events, start=1):
            self.op_of[k] = i
            if is_ret:
                return_node[i] = k
            else:
                self.is_call[k] = True
        for k in range(1, m + 1):
            if self.is_call[k]:
                self.match[k] = return_node[self.op_of[k]]
        self.inputs = [e.input for e in entries]
        self.outputs = [e.output for e in entries]
        self.reads = [bool(model.read_only(e.input)) and e.output is not UNKNOWN for e in entries]
        self.overwrites = [self.lazy and bool(model.overwrites(e.input)) for e in entries]
        self.feasible = model.feasible if guided and getattr(model, "guided", False) else None
        self.group: list[int] = []
        if self.feasible is not None:
            # Independent components of the state (keys of an unpartitioned keyed model) are asked
            # about apart, each with its own candidates.
            ids: dict[Any, int] = {}
            self.group = [ids.setdefault(model.component(e.input), len(ids)) for e in entries]
            if not any(self.reads):
                self.feasible = None
        # Definite ops get bits in one set, info ops in another.
        self.info = [e.output is UNKNOWN for e in entries]
        self.bit: list[int] = []
        counts = [0, 0]
        for flag in self.info:
            self.bit.append(counts[flag])
            counts[flag] += 1
        self.remaining = counts[0]
        # Info ops with equal inputs are interchangeable once invoked: use them in invocation order.
        self.before = [-1] * n
        last: dict[Any, int] = {}
        for i in sorted(range(n), key=lambda i: entries[i].call_pos):
            if self.info[i]:
                try:
                    prev = last.get(entries[i].input, -1)
                    last[entries[i].input] = i
                except TypeError:
                    continue
                self.before[i] = -1 if prev < 0 else self.bit[prev]
        # Symmetry pays only on hard searches, and costs a pass over the entries: it is set up once a
        # search has taken CHECK_EVERY steps, unless ``eager`` (adding it then is sound too; see
        # _order_identical).
        self._pending: list[Entry] | None = entries if symmetry else None
        if symmetry and eager:
            self._order_identical(entries)
            self._pending = None
        self.state = init
        self.dlin = 0
        self.ilin = 0
        self.start = _NONE
        self.last = _NONE
        self.cache: dict[tuple[Any, ...], list[int]] = {}
        self.stack: list[tuple[Any, ...]] = []
        self.path: list[int] = []
        self.best: list[int] = []
        self.nodes = 0
        self.node = self.nxt[0]
        self.valid: bool | None = None if self.remaining else True
        self.stopped: str | None = None

    def run(self, max_nodes: int | None = None, deadline: float | None = None,
            max_rss: int | None = None) -> bool | None:
        """Search on for at most ``max_nodes`` steps, until ``deadline``, or until the process holds
        more than ``max_rss`` bytes (both looked at every :data:`CHECK_EVERY` steps); the verdict, or
        None (:attr:`stopped` says why)."""
        if self.valid is not None:
            return self.valid
        self.stopped = None
        step, nxt, prv, is_call, op_of, match = self.step, self.nxt, self.prv, self.is_call, self.op_of, self.match
        inputs, outputs, info, bit, cache = self.inputs, self.outputs, self.info, self.bit, self.cache
        before, overwrites, lazy, reads = self.before, self.overwrites, self.lazy, self.reads
        stack, path, feasible = self.stack, self.path, self.feasible
        state, dlin, ilin, remaining = self.state, self.dlin, self.ilin, self.remaining
        start, last, node, best, nodes = self.start, self.last, self.node, self.best, self.nodes
        tail = len(nxt) - 1
        limit = nodes + max_nodes + 1 if max_nodes is not None else -1  # stops after max_nodes steps
        verdict: bool | None = None
        while True:
            if is_call[node]:
                i = op_of[node]
                b = before[i]
                if b >= 0 and not (ilin if info[i] else dlin) >> b & 1:
                    node = nxt[node]  # an identical op that must come first is not linearized yet
                    continue
                nodes += 1
                if nodes == limit:
                    nodes -= 1
                    break
                if not nodes & _CHECK_MASK:
                    if self._pending is not None:
                        self._order_identical(self._pending)  # fills `before` in place
                        self._pending = None
                    if deadline is not None and time.monotonic() > deadline:
                        self.stopped = "time"
                    elif max_rss is not None and rss_bytes() > max_rss:
                        self.stopped = "memory"
                    if self.stopped is not None:
                        nodes -= 1
                        break
                ok, new_state = step(state, inputs[i], outputs[i])
                if ok:
                    if info[i]:
                        if (new_state is state or new_state == state
                                or (overwrites[i] and start is not _NONE)):
                            node = nxt[node]
                            continue
                        new_dlin = dlin
                        new_ilin = ilin | (1 << bit[i])
                        new_start = state if start is _NONE else start
                        new_last = state
                    else:
                        if lazy and start is not _NONE and (step(start, inputs[i], outputs[i])[0]
                                                            or step(last, inputs[i], outputs[i])[0]):
                            node = nxt[node]
                            continue
                        new_dlin = dlin | (1 << bit[i])
                        new_ilin = ilin
                        new_start = new_last = _NONE
                    key = (new_dlin, new_state, new_start, new_last) if lazy else (new_dlin, new_state)
                    seen = cache.get(key)
                    if seen is None:
                        cache[key] = [new_ilin]
                    else:
                        dominated = False
                        for used in seen:
                            if not used & ~new_ilin:
                                dominated = True
                                break
                        if dominated:
                            # A legal read whose configuration failed before fails its parent too.
                            node = tail if reads[i] else nxt[node]
                            continue
                        seen.append(new_ilin)
                    if feasible is not None and not self._feasible(node, new_state):
                        node = tail if reads[i] else nxt[node]  # likewise
                        continue
                    stack.append((node, state, dlin, ilin, start, last, reads[i]))
                    path.append(i)
                    state, dlin, ilin, start, last = new_state, new_dlin, new_ilin, new_start, new_last
                    p = prv[node]
                    q = nxt[node]
                    nxt[p] = q
                    prv[q] = p
                    r = match[node]
                    if r:
                        p = prv[r]
                        q = nxt[r]
                        nxt[p] = q
                        prv[q] = p
                        remaining -= 1
                        if not remaining:
                            verdict = True
                            best = path[:]
                            break
                    if len(path) > len(best):
                        best = path[:]
                    node = nxt[0]
                    continue
                node = nxt[node]
            else:
                if not stack:
                    verdict = False
                    break
                node, state, dlin, ilin, start, last, forced = stack.pop()
                path.pop()
                r = match[node]
                if r:
                    remaining += 1
                    nxt[prv[r]] = r
                    prv[nxt[r]] = r
                nxt[prv[node]] = node
                prv[nxt[node]] = node
                # A legal read was the only child worth trying: its failure fails the parent too.
                node = tail if forced else nxt[node]
        self.state, self.dlin, self.ilin, self.remaining = state, dlin, ilin, remaining
        self.start, self.last, self.node, self.best, self.nodes = start, last, node, best, nodes
        self.valid = verdict
        if verdict is not None:
            self.cache = {}
        return verdict

    def _order_identical(self, entries: list[Entry]) -> None:
        """Symmetry between interchangeable definite ops: of two ops with equal input and output, one
        invoked no later and returned no later than the other (it *dominates* it) is linearized first.

        Sound by an exchange argument, proven in the tests against brute force: in a linearization
        where the dominated op comes first, swapping the two keeps every state (the ops step alike)
        and every real-time constraint (the dominating op moves earlier and invoked no later; the
        dominated one moves later and returned no earlier). Each swap removes an inversion of the
        dominance order, so some linearization respects all of them at once. Each op is tied to the
        nearest op that dominates it (a subset of the constraints, so still sound).

        Set up part way through a search, the rule is still sound: an op already linearized is never
        blocked again, and from any configuration the exchange argument applies to the ops not yet
        linearized, so a continuation in dominance order exists if any continuation does; the memo
        only ever prunes configurations already explored at least as widely.
        """
        by_value: dict[Any, list[int]] = {}
        info = self.info
        for i, e in enumerate(entries):
            if not info[i]:
                try:
                    by_value.setdefault((e.input, e.output), []).append(i)
                except TypeError:
                    continue
        returns = [e.return_pos for e in entries]
        before, bit = self.before, self.bit
        # Entries usually come in invocation order, and each group with them.
        ordered = all(a.call_pos < b.call_pos for a, b in itertools.pairwise(entries))
        for group in by_value.values():
            if not ordered:
                group.sort(key=lambda i: (entries[i].call_pos, returns[i]))
            for j in range(1, len(group)):
                b = group[j]
                for a in reversed(group[max(0, j - SYMMETRY_SCAN):j]):
                    if returns[a] <= returns[b]:
                        before[b] = bit[a]
                        break

    def _feasible(self, node: int, state: Any) -> bool:
        """Ask the model whether the earliest pending read can still be met once ``node`` is lifted
        out of the list (with its return).

        Only the lifted op's component is asked about: every other component's state, candidates and
        pending read are as they were when an op of that component was last lifted, and passed then.
        """
        nxt, is_call, op_of, reads, inputs = self.nxt, self.is_call, self.op_of, self.reads, self.inputs
        group = self.group
        skip = self.match[node]
        mine = group[op_of[node]]
        candidates: list[Any] = []
        k = nxt[0]
        tail = len(nxt) - 1
        while k != tail:
            i = op_of[k]
            if group[i] == mine and k != node and k != skip:
                if is_call[k]:
                    candidates.append(inputs[i])
                elif reads[i]:
                    return bool(self.feasible(state, inputs[i], self.outputs[i], candidates))  # type: ignore[misc]
            k = nxt[k]
        return True


def search(entries: list[Entry], model: ModelBase, init: Any, deadline: float | None = None) -> bool | str:
    """Decide whether ``entries`` linearize under ``model`` from ``init``; ``"unknown"`` past ``deadline``."""
    s = Search(entries, model, init)
    verdict = s.run(deadline=deadline)
    return "unknown" if verdict is None else verdict
