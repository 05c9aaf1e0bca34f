"""A polynomial-time verdict for read/write registers whose written values are all unique.

With unique values every read names the write it saw, and linearizability reduces to interval
arithmetic (Gibbons & Korach, "Testing shared memories", 1997). Group each written value's write
with the reads that returned it (a *cluster*); let ``f`` be the earliest completion in the cluster
and ``s`` its latest invocation. If ``f < s`` the cluster must stay in force over all of ``(f, s)``:
a *forward zone*. Otherwise it can take effect at any instant of ``(s, f)``: a *backward zone*.
The history is linearizable iff

1. every read returns the initial value or a written one, never completing before that write starts;
2. no two forward zones overlap; and
3. no backward zone lies inside a forward zone.

This runs in O(n log n) against the exponential general search, which the tests cross-check it with.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from checkers.models.base import UNKNOWN, Entry


def unique_register_verdict(entries: Sequence[Entry], init: Any) -> bool | None:
    """True or False for a unique-values read/write register history; None when it does not apply.

    Args:
        entries: register entries with inputs ``("read", None)`` or ``("write", v)``.
        init: the initial value; no write may write it again.
    """
    # value -> [earliest completion, latest invocation, write's call position]
    clusters: dict[Any, list[int]] = {init: [-1, -1, -1]}
    reads: list[Entry] = []
    for e in entries:
        f, value = e.input
        if f == "write":
            if value in clusters:
                return None
            clusters[value] = [e.return_pos, e.call_pos, e.call_pos]
        elif f == "read":
            if e.output is not UNKNOWN:
                reads.append(e)
        else:
            return None
    for r in reads:
        try:
            c = clusters.get(r.output)
        except TypeError:
            return None
        if c is None or r.return_pos < c[2]:
            return False
        if r.return_pos < c[0]:
            c[0] = r.return_pos
        if r.call_pos > c[1]:
            c[1] = r.call_pos
    forward = sorted((f, s) for f, s, _ in clusters.values() if f < s)
    for (_, s1), (f2, _) in itertools.pairwise(forward):
        if f2 < s1:
            return False
    starts = [f for f, _ in forward]
    for f, s, _ in clusters.values():
        if s < f:
            i = bisect_left(starts, s) - 1
            if i >= 0 and f < forward[i][1]:
                return False
    return True
