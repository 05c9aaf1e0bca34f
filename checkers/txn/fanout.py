"""Virtual structures that let one edge stand for many: "this reader precedes every writer of the key but
itself", "... every writer invoked after time t", in O(n) edges instead of one per pair.

Within a group (a key, or a version), targets are in a fixed order ``T[0..m)``. A suffix chain has a node
``Q[j]`` per target with ``Q[j] -> T[j]`` and ``Q[j] -> Q[j+1]``, so an edge into ``Q[j]`` reaches ``T[j..m)``;
a prefix chain ``P[j] -> T[j], P[j] -> P[j-1]`` reaches ``T[0..j]``. Every target but ``T[i]`` is then
``P[i-1]`` and ``Q[i+1]``. The edge into a chain carries the logical edge's type; hops inside it are PASS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from checkers.txn.inference import PASS, EdgeBuffer


@dataclass
class Chains:
    """Prefix and suffix chains over grouped targets.

    Attributes:
        start: per group, the index of its first target in ``targets``.
        size: per group, its number of targets.
        targets: the targets (transaction ids), group after group, each group in its order.
        base: the virtual id of the first prefix node (suffix nodes follow the prefix nodes).
    """

    start: np.ndarray
    size: np.ndarray
    targets: np.ndarray
    base: int

    @property
    def n_nodes(self) -> int:
        """Virtual nodes used."""
        return 2 * len(self.targets)

    def prefix(self, pos: np.ndarray) -> np.ndarray:
        """Node ids of ``P`` at global target positions ``pos``."""
        return self.base + pos

    def suffix(self, pos: np.ndarray) -> np.ndarray:
        """Node ids of ``Q`` at global target positions ``pos``."""
        return self.base + len(self.targets) + pos


def build_chains(group: np.ndarray, targets: np.ndarray, n_groups: int, base: int, edges: EdgeBuffer) -> Chains:
    """Chains over ``targets`` grouped by ``group`` (rows already sorted by group, then in each group's order)."""
    size = np.bincount(group, minlength=n_groups).astype(np.int64) if len(group) else np.zeros(n_groups, np.int64)
    start = np.zeros(n_groups, dtype=np.int64)
    np.cumsum(size[:-1], out=start[1:])
    ch = Chains(start, size, targets.astype(np.int64), base)
    pos = np.arange(len(targets), dtype=np.int64)
    edges.add(ch.prefix(pos), ch.targets, PASS)
    edges.add(ch.suffix(pos), ch.targets, PASS)
    same = group[1:] == group[:-1] if len(group) else np.zeros(0, dtype=bool)
    edges.add(ch.prefix(pos[1:][same]), ch.prefix(pos[:-1][same]), PASS)
    edges.add(ch.suffix(pos[:-1][same]), ch.suffix(pos[1:][same]), PASS)
    return ch


def all_but(ch: Chains, src: np.ndarray, group: np.ndarray, self_pos: np.ndarray, etype: int, key: np.ndarray,
            edges: EdgeBuffer) -> None:
    """``src[i]`` -> every target of ``group[i]`` except the one at local position ``self_pos[i]`` (-1: none)."""
    first = ch.start[group]
    size = ch.size[group]
    outside = (self_pos < 0) & (size > 0)
    edges.add(src[outside], ch.suffix(first[outside]), etype, key[outside])
    inside = self_pos >= 0
    before = inside & (self_pos > 0)
    edges.add(src[before], ch.prefix(first[before] + self_pos[before] - 1), etype, key[before])
    after = inside & (self_pos < size - 1)
    edges.add(src[after], ch.suffix(first[after] + self_pos[after] + 1), etype, key[after])


def from_position(ch: Chains, src: np.ndarray, group: np.ndarray, lo: np.ndarray, self_pos: np.ndarray, etype: int,
                  key: np.ndarray, edges: EdgeBuffer, direct_limit: int = 64) -> None:
    """``src[i]`` -> every target of ``group[i]`` at local positions ``lo[i]..`` except ``self_pos[i]``.

    The part before ``self_pos`` (when it lies in the range) is written as direct edges up to ``direct_limit``
    of them; beyond that the nearest ones only (a conservative choice: fewer edges, never a wrong one).
    """
    size = ch.size[group]
    first = ch.start[group]
    live = lo < size
    plain = live & ((self_pos < lo) | (self_pos < 0))
    edges.add(src[plain], ch.suffix(first[plain] + lo[plain]), etype, key[plain])
    split = live & (self_pos >= lo)
    after = split & (self_pos < size - 1)
    edges.add(src[after], ch.suffix(first[after] + self_pos[after] + 1), etype, key[after])
    rows = np.flatnonzero(split & (self_pos > lo))
    if not len(rows):
        return
    counts = np.minimum(self_pos[rows] - lo[rows], direct_limit)
    rep = np.repeat(rows, counts)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(counts) - counts, counts)
    at = first[rep] + self_pos[rep] - 1 - offs  # nearest first
    edges.add(src[rep], ch.targets[at], etype, key[rep])
