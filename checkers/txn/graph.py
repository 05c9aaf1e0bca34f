"""The dependency graph: the inference's data edges plus process or real-time order, as arrays, and its strongly
connected components (scipy.sparse.csgraph: Pearce's algorithm in C; see docs/results/txn-graph-library.md).

Nodes are transaction ids, then virtual nodes. Real-time order takes O(n) edges, not a pair per ordered pair of
transactions: completions are sorted by time and each maximal run of completions with no invocation between them
becomes one barrier node; ``T -> barrier`` (realtime) for each transaction completing in the run, ``barrier ->
next barrier`` and ``barrier -> T2`` (pass) for each transaction invoked after the run and before the next one.
So ``T1 -> ... -> T2`` through barriers exactly when T1 completed before T2 was invoked. Process order is the
chain of each process's consecutive transactions. Failed transactions are no nodes of the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

from checkers.txn.inference import PASS, PROCESS, REALTIME, EdgeBuffer
from checkers.txn.sorting import sort_rows
from checkers.txn.txns import FAIL, OK, TxnTable


@dataclass
class Graph:
    """Edges as parallel arrays over ``n_nodes`` nodes (the first ``n_txn`` are transactions).

    Attributes:
        n_txn: how many transactions (node ids below this are transactions).
        n_nodes: transactions plus virtual nodes.
        src: edge tails.
        dst: edge heads.
        etype: edge type codes (:mod:`checkers.txn.inference`).
        key: the key id an edge is about (-1 for order edges).
    """

    n_txn: int
    n_nodes: int
    src: np.ndarray
    dst: np.ndarray
    etype: np.ndarray
    key: np.ndarray


def order_edges(table: TxnTable, order: str, edges: EdgeBuffer, base: int) -> int:
    """Add process (``order="process"``) or real-time (``"realtime"``) edges; return how many virtual nodes."""
    kind = table.kind
    live = np.flatnonzero(kind != FAIL)
    if order == "process":
        proc = table.process[live]
        live = live[proc >= 0]
        proc = proc[proc >= 0]
        o = np.argsort(proc, kind="stable")
        chain, p = live[o], proc[o]
        same = p[1:] == p[:-1]
        edges.add(chain[:-1][same], chain[1:][same], PROCESS)
        return 0
    if order != "realtime":
        return 0
    done = np.flatnonzero(kind == OK)
    times = np.concatenate([table.invoke_time[live], table.complete_time[done]])
    is_c = np.concatenate([np.zeros(len(live), dtype=bool), np.ones(len(done), dtype=bool)])
    tids = np.concatenate([live, done])
    o = sort_rows(times, is_c.astype(np.int64))  # by time; at equal times an invocation first
    is_c, tids = is_c[o], tids[o]
    run_start = is_c.copy()
    run_start[1:] &= ~is_c[:-1]
    run = np.cumsum(run_start) - 1  # the latest run of completions at or before each event
    n_barriers = int(run[-1]) + 1 if len(run) else 0
    edges.add(tids[is_c], base + run[is_c], REALTIME)
    if n_barriers > 1:
        b = np.arange(base, base + n_barriers - 1, dtype=np.int64)
        edges.add(b, b + 1, PASS)
    after = ~is_c & (run >= 0)
    edges.add(base + run[after], tids[after], PASS)
    return n_barriers


def build(table: TxnTable, data_edges: EdgeBuffer, n_virtual: int, order: str) -> Graph:
    """The whole graph: data edges (whose virtual nodes start at ``table.n``) plus ``order`` edges."""
    n = table.n
    n_order = order_edges(table, order, data_edges, n + n_virtual)
    src, dst, etype, key = data_edges.arrays()
    if len(src):
        live = np.ones(n + n_virtual + n_order, dtype=bool)
        live[:n] = table.kind != FAIL
        keep = live[src] & live[dst]
        if not keep.all():
            src, dst, etype, key = src[keep], dst[keep], etype[keep], key[keep]
    return Graph(n, n + n_virtual + n_order, src, dst, etype, key)


def csr(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray | None = None) -> csr_array:
    """A CSR adjacency matrix, built directly.

    Without ``weight`` parallel edges are merged (the strongly-connected-components routine needs that: given
    parallel edges it can loop forever). With ``weight`` they are kept as they are, not summed: Dijkstra takes
    the lightest.
    """
    o = np.argsort(src, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    data = np.ones(len(src), dtype=np.float64) if weight is None else weight[o].astype(np.float64)
    matrix = csr_array((data, dst[o].astype(np.int64), indptr), shape=(n, n))
    if weight is None:
        matrix.sum_duplicates()
    return matrix


def strong_components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Each node's strongly connected component label."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _, labels = connected_components(csr(n, src, dst), directed=True, connection="strong")
    return labels.astype(np.int64)


@dataclass
class Components:
    """The graph's non-trivial strongly connected components, with the edges inside them.

    Attributes:
        label: per node, its component, or -1 when the component is trivial (a single node).
        sizes: per component, its number of nodes (components numbered 0..).
        edge_index: indices into the graph's edge arrays of the edges inside a non-trivial component.
    """

    label: np.ndarray
    sizes: np.ndarray
    edge_index: np.ndarray


def components(graph: Graph) -> Components:
    """The non-trivial strongly connected components (the only places a cycle can be)."""
    labels = strong_components(graph.n_nodes, graph.src, graph.dst)
    sizes = np.bincount(labels) if len(labels) else np.zeros(0, dtype=np.int64)
    big = np.flatnonzero(sizes > 1)
    remap = np.full(len(sizes), -1, dtype=np.int64)
    remap[big] = np.arange(len(big))
    label = remap[labels] if len(labels) else labels
    inside = np.flatnonzero((label[graph.src] >= 0) & (label[graph.src] == label[graph.dst])) if len(graph.src) \
        else np.zeros(0, dtype=np.int64)
    return Components(label, sizes[big], inside)
