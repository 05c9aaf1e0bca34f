"""Cycle search: the shortest cycle of each anomaly class inside each strongly connected component, as Elle does.

A class is a small automaton over edge roles (ww or an order edge, wr, rw) run on the product of the component
with the automaton's states; the shortest cycle through a start node is a shortest path (scipy's Dijkstra, in C)
from the start state to an accepting copy of the same node. Hops out of virtual nodes weigh (almost) nothing, so a
path through real-time barriers counts as one edge. Classes are tried weakest edge set first; a class implied by
one already found in the component (G0 implies G1c, G-single implies G-nonadjacent, ...) is skipped there.

* G0: ww only. G1c: ww and wr, at least one wr. G-single: exactly one rw. G-nonadjacent: two or more rw, no two
  adjacent (the cycle starts on a non-rw edge). G2-item: two or more rw, two of them adjacent (the cycle starts on
  them). The -process and -realtime variants also take process or real-time edges and need at least one.

Small components are searched many at a time; the search keeps to a time budget. When the budget runs out, a
class whose existence the component's structure proves (an edge of the required type inside a strongly connected
subgraph of the allowed edges) still gets a cycle (some cycle, classified by its edges); any other class whose
search did not finish is reported as incomplete, and the verdict can then only be unknown.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse.csgraph import connected_components, dijkstra

from checkers.txn import models
from checkers.txn.graph import Components, Graph, csr
from checkers.txn.inference import PASS, PROCESS, REALTIME, RW, RW_PROCESS, RW_REALTIME, WR, WW

EPS = 1e-9
"""The weight of a hop out of a virtual node."""
NEUTRAL, WR_ROLE, RW_ROLE = 1, 2, 3
_ROLE = np.zeros(8, dtype=np.int64)
_ROLE[[WW, PROCESS, REALTIME]] = NEUTRAL
_ROLE[WR] = WR_ROLE
_ROLE[[RW, RW_PROCESS, RW_REALTIME]] = RW_ROLE
_VARIANT_OF = {PROCESS: "-process", RW_PROCESS: "-process", REALTIME: "-realtime", RW_REALTIME: "-realtime"}
_BATCH_NODES = 4096
_DIST_CELLS = 1 << 22
_BIG = 1 << 18
"""A product graph of this many nodes or more gets at most :data:`_BIG_SOURCES` start nodes per class."""
_BIG_SOURCES = 64


@dataclass
class Step:
    """One logical edge of a cycle: ``src -[etype on key]-> dst`` (transaction ids)."""

    src: int
    etype: int
    key: int
    dst: int


@dataclass
class Found:
    """A cycle found, with its anomaly type and the component it lies in."""

    type: str
    steps: list[Step]
    component: int


@dataclass
class Automaton:
    """A class's state machine: ``trans[state, role]`` is the next state (-1: not allowed)."""

    trans: np.ndarray
    start: int
    accept: frozenset[int]
    start_roles: frozenset[int]


def _automaton(base: str) -> Automaton:
    bad = -1
    if base == "G0":
        t = [[0, 0, bad, bad]]
        return Automaton(np.array(t), 0, frozenset({0}), frozenset({NEUTRAL}))
    if base == "G1c":
        t = [[0, 0, 1, bad], [1, 1, 1, bad]]
        return Automaton(np.array(t), 0, frozenset({1}), frozenset({WR_ROLE}))
    if base == "G-single":
        t = [[0, 0, 0, 1], [1, 1, 1, bad]]
        return Automaton(np.array(t), 0, frozenset({1}), frozenset({RW_ROLE}))
    if base == "G-nonadjacent":
        rows = []
        for c in range(3):
            for last_rw in range(2):
                s = c * 2 + last_rw
                rows.append([s, c * 2, c * 2, bad if last_rw else min(c + 1, 2) * 2 + 1])
        return Automaton(np.array(rows), 1, frozenset({4, 5}), frozenset({NEUTRAL, WR_ROLE}))
    if base == "G2-item":
        t = [[0, bad, bad, 1], [1, bad, bad, 2], [2, 2, 2, 2]]
        return Automaton(np.array(t), 0, frozenset({2}), frozenset({RW_ROLE}))
    raise ValueError(base)


def _split(cycle_type: str) -> tuple[str, str]:
    for v in ("-process", "-realtime"):
        if cycle_type.endswith(v):
            return cycle_type[: -len(v)], v
    return cycle_type, ""


def _allowed(etype: np.ndarray, base: str, variant: str) -> np.ndarray:
    ok = (etype == PASS) | (etype == WW)
    if base != "G0":
        ok |= etype == WR
    rw = base in ("G-single", "G-nonadjacent", "G2-item")
    if rw:
        ok |= etype == RW
    if variant == "-process":
        ok |= etype == PROCESS
        if rw:
            ok |= etype == RW_PROCESS
    elif variant == "-realtime":
        ok |= etype == REALTIME
        if rw:
            ok |= etype == RW_REALTIME
    return ok


def _is_variant(etype: np.ndarray, variant: str) -> np.ndarray:
    if variant == "-process":
        return (etype == PROCESS) | (etype == RW_PROCESS)
    if variant == "-realtime":
        return (etype == REALTIME) | (etype == RW_REALTIME)
    return np.zeros(len(etype), dtype=bool)


def classify(steps: list[Step]) -> str:
    """A cycle's anomaly type from its edges, as Elle names them."""
    roles = [int(_ROLE[s.etype]) for s in steps]
    rw = roles.count(RW_ROLE)
    if rw == 1:
        base = "G-single"
    elif rw > 1:
        adjacent = any(roles[i] == RW_ROLE and roles[i - 1] == RW_ROLE for i in range(len(roles)))
        base = "G2-item" if adjacent else "G-nonadjacent"
    elif WR_ROLE in roles:
        base = "G1c"
    else:
        base = "G0"
    variants = {_VARIANT_OF.get(s.etype, "") for s in steps}
    return base + ("-realtime" if "-realtime" in variants else "-process" if "-process" in variants else "")


@dataclass
class Outcome:
    """What the search found.

    Attributes:
        cycles: one cycle per class per component (the shortest found), at most ``cap`` per class in all.
        counts: per class, in how many components it was found.
        incomplete: classes whose search ran out of time somewhere without proving them absent.
    """

    cycles: list[Found] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    incomplete: set[str] = field(default_factory=set)


@dataclass
class _Batch:
    nodes: np.ndarray  # global ids
    comp: np.ndarray  # per local node, its component number
    src: np.ndarray
    dst: np.ndarray
    etype: np.ndarray
    key: np.ndarray
    out: np.ndarray  # edge indices sorted by tail
    indptr: np.ndarray  # out[indptr[v]:indptr[v + 1]] are v's out-edges
    pieces: dict[bytes, np.ndarray] = field(default_factory=dict)  # allowed edges -> those inside an SCC of them


def search(graph: Graph, comps: Components, classes: Iterable[str], budget_s: float = 10.0,
           cap: int = 20, class_budget_s: float = 1.0) -> Outcome:
    """Search every non-trivial component for each of ``classes`` (in the order given), within ``budget_s`` in
    all and ``class_budget_s`` per class in each group of components (Elle gives each a second)."""
    out = Outcome()
    classes = list(classes)
    deadline = time.monotonic() + budget_s
    for batch in _batches(graph, comps):
        found_in: dict[int, set[str]] = {}
        for cls in classes:
            _search_class(graph, batch, cls, found_in, out, min(deadline, time.monotonic() + class_budget_s), cap)
    return out


def _batches(graph: Graph, comps: Components) -> Iterable[_Batch]:
    """Components smallest first, grouped so a group's product graph stays small."""
    if len(comps.sizes) == 0:
        return
    e = comps.edge_index
    ecomp = comps.label[graph.src[e]]
    order = np.argsort(ecomp, kind="stable")
    e, ecomp = e[order], ecomp[order]
    bounds = np.searchsorted(ecomp, np.arange(len(comps.sizes) + 1))
    nodes_all = np.flatnonzero(comps.label >= 0)
    ncomp = comps.label[nodes_all]
    norder = np.argsort(ncomp, kind="stable")
    nodes_all, ncomp = nodes_all[norder], ncomp[norder]
    nbounds = np.searchsorted(ncomp, np.arange(len(comps.sizes) + 1))
    by_size = np.argsort(comps.sizes, kind="stable")
    group: list[int] = []
    total = 0
    for c in by_size.tolist():
        size = int(comps.sizes[c])
        if group and total + size > _BATCH_NODES:
            yield _make_batch(graph, group, e, bounds, nodes_all, nbounds)
            group, total = [], 0
        group.append(c)
        total += size
    if group:
        yield _make_batch(graph, group, e, bounds, nodes_all, nbounds)


def _make_batch(graph: Graph, group: list[int], e: np.ndarray, bounds: np.ndarray, nodes_all: np.ndarray,
                nbounds: np.ndarray) -> _Batch:
    edges = np.concatenate([e[bounds[c]:bounds[c + 1]] for c in group])
    nodes = np.concatenate([nodes_all[nbounds[c]:nbounds[c + 1]] for c in group])
    comp = np.concatenate([np.full(nbounds[c + 1] - nbounds[c], c, dtype=np.int64) for c in group])
    o = np.argsort(nodes)
    nodes, comp = nodes[o], comp[o]
    src = np.searchsorted(nodes, graph.src[edges])
    dst = np.searchsorted(nodes, graph.dst[edges])
    out = np.argsort(src, kind="stable")
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=len(nodes)), out=indptr[1:])
    return _Batch(nodes, comp, src, dst, graph.etype[edges], graph.key[edges], out, indptr)


def _search_class(graph: Graph, b: _Batch, cls: str, found_in: dict[int, set[str]], out: Outcome,
                  deadline: float, cap: int) -> None:
    base, variant = _split(cls)
    m = len(b.nodes)
    closed = [c for c, have in found_in.items() if cls in have]
    allowed = _allowed(b.etype, base, variant)
    if closed:
        allowed &= ~np.isin(b.comp[b.src], closed)
    if not allowed.any():
        return
    # Only edges inside a strongly connected piece of the allowed edges can be on such a cycle.
    memo = allowed.tobytes()
    inside = b.pieces.get(memo)
    if inside is None:
        _, sub = connected_components(csr(m, b.src[allowed], b.dst[allowed]), directed=True, connection="strong")
        inside = b.pieces[memo] = allowed & (sub[b.src] == sub[b.dst])
    if not inside.any():
        return
    role = _ROLE[b.etype]
    var = _is_variant(b.etype, variant)
    auto = _automaton(base)
    from_txn = inside & (b.nodes[b.src] < graph.n_txn)
    # The edges every such cycle has one of: a variant edge, else the class's own kind of edge.
    required = inside & (var if variant else (role == {"G0": NEUTRAL, "G1c": WR_ROLE}.get(base, RW_ROLE)))
    if not required.any():
        return
    # Start nodes: tails of the edges the automaton may start on; where it has no place constraint, of the
    # required edges (any cycle can be turned to start on one).
    if base in ("G0", "G1c", "G-single"):
        start_ok = from_txn & required
    else:
        start_ok = from_txn & np.isin(role, list(auto.start_roles))
    sources = np.unique(b.src[start_ok])
    if len(sources) == 0:
        return
    every = True
    if (auto.trans.shape[0] * (2 if variant else 1) + 1) * m >= _BIG and len(sources) > _BIG_SOURCES:
        sources = sources[np.linspace(0, len(sources) - 1, _BIG_SOURCES).astype(np.int64)]
        every = False  # a sample: a class it misses is not ruled out
    best: dict[int, tuple[float, list[Step]]] = {}
    finished = _run(graph, b, auto, variant, inside, role, var, sources, best, deadline) and every
    for c in sorted(best):
        _record(out, found_in, c, cls, best[c][1], cap)
    if finished:
        return
    # Out of time: some cycle through a required edge of each component left, classified by its edges.
    for c in sorted(set(b.comp[b.src[required]].tolist()) - set(best)):
        steps = _fallback(graph, b, inside, required, c)
        if steps:
            found = classify(steps)
            _record(out, found_in, c, found, steps, cap)
            if cls in models.implied_anomalies([found]):
                continue
        out.incomplete.add(cls)


def _record(out: Outcome, found_in: dict[int, set[str]], comp: int, cls: str, steps: list[Step], cap: int) -> None:
    have = found_in.setdefault(comp, set())
    if cls in have:
        return
    have.update(models.implied_anomalies([cls]))
    out.counts[cls] = out.counts.get(cls, 0) + 1
    if out.counts[cls] <= cap:
        out.cycles.append(Found(cls, steps, comp))


def _product(b: _Batch, auto: Automaton, variant: str, inside: np.ndarray, role: np.ndarray,
             var: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
    """The product graph: node ``state * m + v``, plus terminal copies ``n_states * m + v`` of accepting states."""
    m = len(b.nodes)
    flags = 2 if variant else 1
    n_states = auto.trans.shape[0] * flags
    src, dst, etype, rl, vr = b.src[inside], b.dst[inside], b.etype[inside], role[inside], var[inside]
    weight = np.where(etype == PASS, EPS, 1.0)
    ps, pd, pw = [], [], []
    for s in range(n_states):
        base_s, flag = divmod(s, flags)
        nxt = auto.trans[base_s][rl]
        ok = nxt >= 0
        nflag = (flag | vr) if variant else np.zeros(len(vr), dtype=np.int64)
        ns = nxt * flags + nflag
        ps.append(s * m + src[ok])
        pd.append(ns[ok] * m + dst[ok])
        pw.append(weight[ok])
        acc = ok & np.isin(nxt, list(auto.accept)) & ((nflag == 1) if variant else True)
        ps.append(s * m + src[acc])
        pd.append(n_states * m + dst[acc])
        pw.append(weight[acc])
    return m, n_states, np.concatenate(ps), np.concatenate(pd), np.concatenate(pw)


def _run(graph: Graph, b: _Batch, auto: Automaton, variant: str, inside: np.ndarray, role: np.ndarray,
         var: np.ndarray, sources: np.ndarray, best: dict[int, tuple[float, list[Step]]], deadline: float) -> bool:
    """Dijkstra from each source's start state; keep each component's shortest. False if out of time."""
    m, n_states, ps, pd, pw = _product(b, auto, variant, inside, role, var)
    size = (n_states + 1) * m
    g = csr(size, ps, pd, pw)
    flags = 2 if variant else 1
    start = auto.start * flags
    single = len(set(b.comp[sources].tolist())) == 1
    chunk = max(1, _DIST_CELLS // size)
    for i in range(0, len(sources), chunk):
        if time.monotonic() > deadline:
            return False
        part = sources[i:i + chunk]
        limit = np.inf
        if single and best:
            limit = min(v[0] for v in best.values())
        dist, pred = dijkstra(g, directed=True, indices=start * m + part, return_predecessors=True, limit=limit)
        lengths = dist[np.arange(len(part)), n_states * m + part]
        for row in np.flatnonzero(np.isfinite(lengths)).tolist():
            c = int(b.comp[part[row]])
            length = float(lengths[row])
            if c in best and best[c][0] <= length + EPS / 2:
                continue
            steps = _path(graph, b, auto, variant, inside, role, var, pred[row], int(part[row]), m, n_states)
            best[c] = (length, steps)
    return True


def _path(graph: Graph, b: _Batch, auto: Automaton, variant: str, inside: np.ndarray, role: np.ndarray,
          var: np.ndarray, pred: np.ndarray, s: int, m: int, n_states: int) -> list[Step]:
    """The cycle from ``s`` that the predecessor row describes, as logical steps between transactions."""
    nodes = [n_states * m + s]
    while nodes[-1] != auto.start * (2 if variant else 1) * m + s:
        p = int(pred[nodes[-1]])
        if p < 0:
            break
        nodes.append(p)
    nodes.reverse()
    flags = 2 if variant else 1
    hops = []
    for a, z in itertools.pairwise(nodes):
        sa, va = divmod(a, m)
        sz, vz = divmod(z, m)
        hops.append(_edge_between(b, auto, variant, inside, role, var, va, sa, vz, sz, n_states, flags))
    steps: list[Step] = []
    n_txn = graph.n_txn
    i = 0
    while i < len(hops):
        e = hops[i]
        u = int(b.nodes[b.src[e]])
        j = i
        while int(b.nodes[b.dst[hops[j]]]) >= n_txn:
            j += 1
        steps.append(Step(u, int(b.etype[e]), int(b.key[e]), int(b.nodes[b.dst[hops[j]]])))
        i = j + 1
    return steps


def _edge_between(b: _Batch, auto: Automaton, variant: str, inside: np.ndarray, role: np.ndarray,
                  var: np.ndarray, u: int, su: int, v: int, sv: int, n_states: int, flags: int) -> int:
    """An edge ``u -> v`` that takes state ``su`` to ``sv`` (or to an accepting state, for the terminal copy)."""
    row = b.out[b.indptr[u]:b.indptr[u + 1]]
    cand = row[inside[row] & (b.dst[row] == v)]
    base_u, flag_u = divmod(su, flags)
    for e in cand.tolist():
        r = int(role[e])
        nxt = base_u if r == 0 else int(auto.trans[base_u][r])
        if nxt < 0:
            continue
        nflag = (flag_u | int(var[e])) if variant else 0
        got = nxt * flags + nflag
        if sv == n_states:
            if nxt in auto.accept and (nflag == 1 or not variant):
                return e
        elif got == sv:
            return e
    raise AssertionError("no edge for a step of a found path")


def _fallback(graph: Graph, b: _Batch, inside: np.ndarray, required: np.ndarray, comp: int) -> list[Step]:
    """Some cycle through a required edge of ``comp`` (when the budget is spent): the edge, then a shortest
    path back over the allowed edges."""
    cand = np.flatnonzero(required & (b.comp[b.src] == comp))
    if len(cand) == 0:
        return []
    e0 = int(cand[0])
    m = len(b.nodes)
    g = csr(m, b.src[inside], b.dst[inside], np.where(b.etype[inside] == PASS, EPS, 1.0))
    dist, pred = dijkstra(g, directed=True, indices=int(b.dst[e0]), return_predecessors=True)
    u = int(b.src[e0])
    if not np.isfinite(dist[u]):
        return []
    path = [u]
    while path[-1] != int(b.dst[e0]):
        path.append(int(pred[path[-1]]))
    path.reverse()
    hops = [e0]
    for a, z in itertools.pairwise(path):
        row = b.out[b.indptr[a]:b.indptr[a + 1]]
        hops.append(int(row[inside[row] & (b.dst[row] == z)][0]))
    steps: list[Step] = []
    i = 0
    while i < len(hops):
        e = hops[i]
        j = i
        while int(b.nodes[b.dst[hops[j]]]) >= graph.n_txn:
            j += 1
        steps.append(Step(int(b.nodes[b.src[e]]), int(b.etype[e]), int(b.key[e]), int(b.nodes[b.dst[hops[j]]])))
        i = j + 1
    return steps
