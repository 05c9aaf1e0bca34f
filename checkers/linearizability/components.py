"""Split one partition's search into its independent components: for keyed models, by key.

This is plainly P-compositionality (Herlihy & Wing's locality) applied *inside* a partition: when the
model says which independent part of the state each op touches (:meth:`ModelBase.component`, the
key's slot for :class:`~checkers.models.keyed.Keyed`), the partition is linearizable iff each
component's sub-history is, so each component gets its own search. For every model Fencepost ships,
that is splitting by key, the same split ``--no-partition`` turns off between partitions. It is what
decides Porcupine's kv c50-ok and c50-bad checked as one partition: the unsplit search has to explore
the product of the ten keys' configurations, which is what makes those histories hard.

Why it is sound, from any configuration the search reaches (not only the start): the ops not yet
linearized, with their real-time order, form a history whose every component starts from its state
in the configuration. Locality holds for such a history (with info ops pending): a linearization of
the whole restricts to one of each component, and per-component linearizations merge into one of the
whole, because ops on different components commute and never change each other's legality. So a
component that cannot be finished fails the whole, and components that all finish merge into a
whole. The tests check the split against the brute-force oracle with several keys.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from checkers.linearizability.search import Search
from checkers.models.base import Entry, ModelBase

FIRST_ROUND = 2048
"""Steps each undecided component gets in the first round; the budget doubles every round."""


def components(entries: Sequence[Entry], model: ModelBase) -> list[list[int]]:
    """Entry indices grouped by the model's independent component, in order of first appearance."""
    if type(model).component is ModelBase.component:  # the model declares no components: one
        return [list(range(len(entries)))]
    groups: dict[Hashable, list[int]] = {}
    component = model.component
    for i, e in enumerate(entries):
        groups.setdefault(component(e.input), []).append(i)
    return list(groups.values())


class SplitSearch:
    """A search over several independent components, each with its own :class:`Search`.

    The components race as partitions do: each undecided one gets a step budget that doubles every
    round, so an easy violation is found without first finishing a hard component. The interface is
    :class:`Search`'s, with :attr:`failed` naming the component that failed.

    Attributes:
        groups: each component's entry indices in the partition.
        searches: each component's search.
        valid: True, False, or None while undecided.
        nodes: steps tried so far, over every component.
        failed: index of the component found not linearizable, or None.
        stopped: why the last :meth:`run` stopped undecided (``time`` or ``memory``), else None.
    """

    def __init__(self, entries: list[Entry], model: ModelBase, init: Any, groups: list[list[int]], *,
                 guided: bool = True) -> None:
        self.groups = groups
        self.searches = [Search([entries[i] for i in g], model, init, guided=guided) for g in groups]
        self.valid: bool | None = True if all(s.valid for s in self.searches) else None
        self.failed: int | None = None
        self.stopped: str | None = None
        self.round = FIRST_ROUND
        self._turn = 0

    @property
    def nodes(self) -> int:
        """Steps tried so far, over every component."""
        return sum(s.nodes for s in self.searches)

    @property
    def best(self) -> list[int]:
        """The failing component's longest linearizable prefix (partition entry indices), or the
        longest one among all components while none has failed."""
        if self.failed is not None:
            k = self.failed
        else:
            k = max(range(len(self.searches)), key=lambda j: len(self.searches[j].best))
        group = self.groups[k]
        return [group[i] for i in self.searches[k].best]

    def run(self, max_nodes: int | None = None, deadline: float | None = None,
            max_rss: int | None = None) -> bool | None:
        """Search on for at most ``max_nodes`` steps in all, until ``deadline``, or until the process
        holds more than ``max_rss`` bytes; the verdict, or None."""
        if self.valid is not None:
            return self.valid
        self.stopped = None
        left = max_nodes
        while True:
            active = [k for k, s in enumerate(self.searches) if s.valid is None]
            if not active:
                self.valid = True
                return True
            # Resume the round where the last call stopped, so a small max_nodes still reaches everyone.
            order = [k for k in active if k >= self._turn] + [k for k in active if k < self._turn]
            for k in order:
                s = self.searches[k]
                budget = self.round if left is None else min(self.round, left)
                if budget <= 0:
                    self._turn = k
                    return None
                before = s.nodes
                verdict = s.run(budget, deadline, max_rss)
                if left is not None:
                    # A search stopped by its step budget counts the whole budget as spent (it stops
                    # one short of it), so the budget always runs out.
                    left -= budget if verdict is None else s.nodes - before
                if verdict is False:
                    self.valid, self.failed = False, k
                    return False
                if s.stopped is not None:
                    self.stopped = s.stopped
                    self._turn = k
                    return None
                if left is not None and left <= 0:
                    self._turn = k if verdict is None else k + 1
                    return None
            self._turn = 0
            self.round *= 2

    def drop_memo(self) -> None:
        """Free every component's memo (after a memory stop)."""
        for s in self.searches:
            s.cache = {}
