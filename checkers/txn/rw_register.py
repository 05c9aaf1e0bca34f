"""rw-register inference: version orders only from what the history proves, and the edges they imply.

A key's versions are ordered only by:

* the initial state: nil comes before every written value;
* writes that follow reads: a transaction that read ``x1`` and then wrote ``x2`` (its last write of the key)
  puts ``x1`` before ``x2``;
* real-time order, when a checked model is strict (strict-serializable, strong-*): ``x1`` before ``x2`` when
  ``x1``'s writer committed before ``x2``'s writer was invoked;
* process order, when a checked model is strong-session: ``x1`` before the next value its process wrote.

Nothing else is guessed. A transaction's external read of a key (before it writes the key) gives wr edges from
the writer of the value read, and rw edges to the writers of every later version; a transaction's last write of
a key is the version it installs (an earlier write is an intermediate state: reading it is G1b). rw edges whose
order came from real time or process order are typed RW_REALTIME / RW_PROCESS, so a cycle through one is a
-realtime / -process anomaly, prohibited only by the models that allow the assumption.
"""

from __future__ import annotations

from itertools import compress
from operator import ne
from typing import Any

import numpy as np

from checkers.txn import words
from checkers.txn.fanout import all_but, build_chains, from_position
from checkers.txn.inference import RW, RW_PROCESS, RW_REALTIME, WR, WW, Case, CaseLog, DataGraph, EdgeBuffer
from checkers.txn.list_append import group_positions, unique_rows
from checkers.txn.mops import READ, WRITE, bad_mop, flatten, written
from checkers.txn.sorting import sort_rows
from checkers.txn.txns import FAIL, OK, TxnTable

_T = words.t
_V = words.value


class RwRegisterInference:
    """Infers the data graph of an rw-register history (see the module's docstring).

    Args:
        order: ``"realtime"``, ``"process"`` or ``""``: which order the checked models let version orders use.
    """

    write_f = "w"

    def __init__(self, order: str = "", cases: CaseLog | None = None) -> None:
        self.order = order
        self.cases = cases if cases is not None else CaseLog()
        self.keys: list[Any] = []
        self._writer: dict[tuple[int, Any], int] = {}

    def infer(self, table: TxnTable, order: str, base: int) -> DataGraph:
        """Edges and non-cycle anomalies; ``order`` (or the constructor's) says which order assumptions apply."""
        order = order or self.order
        mops = flatten(table, self.write_f)
        self.keys = mops.keys
        nk = len(mops.keys)
        w_before, w_after, gpos, gsort = group_positions(mops)
        kind = table.kind
        # Writes, and the writer of each (key, value).
        w, index = written(table, mops, "write", "written", "rw-register")
        w_txn = mops.txn[w].astype(np.int64)
        w_key = mops.key[w].astype(np.int64)
        w_final = w_after[w] == 0
        w_kind = kind[w_txn]
        # Committed reads.
        is_r = (mops.f == READ) & mops.committed
        r = np.flatnonzero(is_r)
        rv = list(compress(mops.values, is_r.view(np.uint8).tobytes()))
        if rv and not set(map(type, rv)) <= {int, str, type(None)}:
            i = next(int(j) for j, v in zip(r.tolist(), rv, strict=True) if type(v) not in (int, str, type(None)))
            raise bad_mop(table, mops, i, "an ok read of an rw-register key must be a value (or nil)")
        rt, rk = mops.txn[r].astype(np.int64), mops.key[r].astype(np.int64)
        nil = np.fromiter((v is None for v in rv), dtype=bool, count=len(rv))
        row = index.lookup(rk, rv)
        row[nil] = -1
        wtx = np.where(row >= 0, w_txn[np.maximum(row, 0)] if len(w) else -1, -1)
        ext = w_before[r] == 0
        first = ext & (gpos[r] == 0)  # the first micro-op on the key: what the transaction saw from outside
        self._writes = (w_txn, index)

        edges = EdgeBuffer()
        n_virtual = 0
        # wr: the writer of the value read -> the reader (not itself: that is a future read).
        seen = first & (row >= 0) & (wtx != rt)
        wkind = np.where(row >= 0, kind[np.maximum(wtx, 0)], -1)
        edges.add(wtx[seen & (wkind != FAIL)], rt[seen & (wkind != FAIL)], WR, rk[seen & (wkind != FAIL)])
        # The writers whose last write of a key is a version: ok or info transactions.
        inst = np.flatnonzero(w_final & (w_kind != FAIL))
        o = sort_rows(w_key[inst], table.invoke_time[w_txn[inst]], w_txn[inst])
        inst = inst[o]
        chains = build_chains(w_key[inst], w_txn[inst], nk, base + n_virtual, edges)
        n_virtual += chains.n_nodes
        pos_of = {(int(t), int(k)): p for p, (t, k) in enumerate(zip(w_txn[inst].tolist(), w_key[inst].tolist(),
                                                                     strict=True))}
        # (a) nil precedes every version: a reader of nil -> every other installer of the key.
        a_rows = np.flatnonzero(first & nil)
        a_self = self._local(pos_of, chains, rt[a_rows], rk[a_rows])
        all_but(chains, rt[a_rows], rk[a_rows], a_self, RW, rk[a_rows], edges)
        # (b) writes that follow reads: T read x1, then wrote the key, so x1 precedes T's version.
        n_virtual += self._follows(table, mops, r, rt, rk, row, first, w_after, wtx, wkind, edges, base + n_virtual)
        # (c), (d): real-time or process order between writers.
        if order == "realtime":
            self._realtime(table, chains, pos_of, rt, rk, row, first, wtx, w_txn, w_key, w_final, edges)
        elif order == "process":
            self._process(table, rt, rk, row, first, wtx, w_txn, w_key, w_final, inst, edges)
        self._cases(table, mops, r, rv, rt, rk, row, nil, first, wtx, wkind, w_final, w_txn, w_key, gpos, gsort,
                    w_after, w_before)
        return DataGraph(edges, n_virtual, self.cases, self.keys)

    @staticmethod
    def _local(pos_of: dict[tuple[int, int], int], chains: Any, txns: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Each (txn, key)'s position among the key's installers, or -1."""
        glob = np.fromiter((pos_of.get((t, k), -1) for t, k in zip(txns.tolist(), keys.tolist(), strict=True)),
                           dtype=np.int64, count=len(txns))
        return np.where(glob >= 0, glob - chains.start[keys], -1)

    def _follows(self, table: TxnTable, mops: Any, r: np.ndarray, rt: np.ndarray, rk: np.ndarray, row: np.ndarray,
                 first: np.ndarray, w_after: np.ndarray, wtx: np.ndarray, wkind: np.ndarray, edges: EdgeBuffer,
                 base: int) -> int:
        """Edges from "T read x1 and then wrote the key": writer(x1) ww-> T, other readers of x1 rw-> T."""
        wrote = first & (w_after[r] > 0)  # read first, wrote the key after: its version follows x1
        # A version is (key, row of the write) or, for nil, (key, -1): nil's successors are every installer.
        succ = np.flatnonzero(wrote & (row >= 0))
        if not len(succ):
            return 0
        ok_w = wkind[succ] != FAIL
        edges.add(wtx[succ][ok_w], rt[succ][ok_w], WW, rk[succ][ok_w])
        # Group successors by the version they read; readers of that version rw-> each successor but themselves.
        ver = row[succ]
        o = np.argsort(ver, kind="stable")
        succ, ver = succ[o], ver[o]
        uniq, group = np.unique(ver, return_inverse=True)
        chains = build_chains(group, rt[succ], len(uniq), base, edges)
        readers = np.flatnonzero(first & (row >= 0))
        at = np.searchsorted(uniq, row[readers])
        hit = (at < len(uniq)) & (uniq[np.minimum(at, len(uniq) - 1)] == row[readers])
        readers, at = readers[hit], at[hit]
        succ_pos = {(int(v), int(t)): i for i, (v, t) in enumerate(zip(ver.tolist(), rt[succ].tolist(),
                                                                        strict=True))}
        glob = np.fromiter((succ_pos.get((int(v), int(t)), -1) for v, t in zip(row[readers].tolist(),
                                                                                  rt[readers].tolist(), strict=True)),
                           dtype=np.int64, count=len(readers))
        local = np.where(glob >= 0, glob - chains.start[at], -1)
        all_but(chains, rt[readers], at, local, RW, rk[readers], edges)
        return chains.n_nodes

    def _realtime(self, table: TxnTable, chains: Any, pos_of: dict[tuple[int, int], int], rt: np.ndarray,
                  rk: np.ndarray, row: np.ndarray, first: np.ndarray, wtx: np.ndarray, w_txn: np.ndarray,
                  w_key: np.ndarray, w_final: np.ndarray, edges: EdgeBuffer) -> None:
        """A reader of x1 -> every installer of the key invoked after x1's writer committed."""
        sel = np.flatnonzero(first & (row >= 0) & _at(w_final, row))
        if not len(sel):
            return
        writer = wtx[sel]
        sel = sel[table.kind[writer] == OK]
        writer = wtx[sel]
        done = table.complete_time[writer]
        keys = rk[sel]
        lo = _first_after(table.invoke_time[chains.targets], chains.start, chains.size, keys, done)
        me = self._local(pos_of, chains, rt[sel], keys)
        from_position(chains, rt[sel], keys, lo, me, RW_REALTIME, keys, edges)

    def _process(self, table: TxnTable, rt: np.ndarray, rk: np.ndarray, row: np.ndarray, first: np.ndarray,
                 wtx: np.ndarray, w_txn: np.ndarray, w_key: np.ndarray, w_final: np.ndarray, inst: np.ndarray,
                 edges: EdgeBuffer) -> None:
        """A reader of x1 -> the next installer of the key on x1's writer's process."""
        t, k = w_txn[inst], w_key[inst]
        proc = table.process[t]
        o = sort_rows(k, proc - proc.min() if len(proc) else proc, t)
        t, k, proc = t[o], k[o], proc[o]
        nxt = np.full(len(t), -1, dtype=np.int64)
        same = (k[1:] == k[:-1]) & (proc[1:] == proc[:-1])
        nxt[:-1][same] = t[1:][same]
        following = {(int(a), int(b)): int(c) for a, b, c in zip(t.tolist(), k.tolist(), nxt.tolist(), strict=True)
                     if c >= 0}
        sel = np.flatnonzero(first & (row >= 0))
        src, dst, keys = [], [], []
        for i, writer, key in zip(sel.tolist(), wtx[sel].tolist(), rk[sel].tolist(), strict=True):
            if table.kind[writer] != OK:
                continue
            after = following.get((writer, key))
            if after is not None and after != int(rt[i]):
                src.append(int(rt[i]))
                dst.append(after)
                keys.append(key)
        edges.add(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), RW_PROCESS,
                  np.array(keys, dtype=np.int64))

    # --- non-cycle anomalies ---------------------------------------------------------------------------------

    def _cases(self, table: TxnTable, mops: Any, r: np.ndarray, rv: list[Any], rt: np.ndarray, rk: np.ndarray,
               row: np.ndarray, nil: np.ndarray, first: np.ndarray, wtx: np.ndarray, wkind: np.ndarray,
               w_final: np.ndarray, w_txn: np.ndarray, w_key: np.ndarray, gpos: np.ndarray, gsort: np.ndarray,
               w_after: np.ndarray, w_before: np.ndarray) -> None:
        keys = self.keys
        ext = w_before[r] == 0
        for j in np.flatnonzero(~nil & (row < 0)).tolist():
            self._case("garbage-read", [int(rt[j])], int(rk[j]), rv[j], None,
                       f"{_T(int(rt[j]))} read key {_V(keys[int(rk[j])])} = {_V(rv[j])}, which no transaction wrote")
        for j in np.flatnonzero(ext & (row >= 0) & (wkind == FAIL)).tolist():
            t, w = int(rt[j]), int(wtx[j])
            self._case("G1a", [t, w], int(rk[j]), rv[j], None,
                       f"{_T(t)} read key {_V(keys[int(rk[j])])} = {_V(rv[j])}; {_T(w)} wrote it and failed (it did "
                       f"not commit); so {_T(t)} read an aborted write")
        for j in np.flatnonzero(first & (row >= 0) & (wkind == FAIL) & (w_after[r] > 0)).tolist():
            t, w = int(rt[j]), int(wtx[j])
            self._case("dirty-update", [t, w], int(rk[j]), rv[j], None,
                       f"{_T(t)} read key {_V(keys[int(rk[j])])} = {_V(rv[j])}, written by {_T(w)}, which failed, "
                       f"and then wrote the key itself; so a committed write was built on an aborted one")
        inter = (row >= 0) & ~_at(w_final, row) & (wtx != rt) & (wkind != FAIL) & ext
        for j in np.flatnonzero(inter).tolist():
            t, w = int(rt[j]), int(wtx[j])
            self._case("G1b", [t, w], int(rk[j]), rv[j], None,
                       f"{_T(t)} read key {_V(keys[int(rk[j])])} = {_V(rv[j])}; {_T(w)} wrote {_V(rv[j])} and then "
                       f"wrote the key again, so {_V(rv[j])} was an intermediate state of {_T(w)}")
        for j in np.flatnonzero(ext & (row >= 0) & (wtx == rt)).tolist():
            t = int(rt[j])
            self._case("future-read", [t], int(rk[j]), rv[j], None,
                       f"{_T(t)} read key {_V(keys[int(rk[j])])} = {_V(rv[j])} before writing {_V(rv[j])} itself, "
                       "later in the same transaction")
        self._internal(table, mops, r, rv, gpos, gsort)
        self._lost_updates(rt, rk, row, first, w_after[r] > 0, rv)

    def _case(self, kind: str, txns: list[int], kid: int, value: Any, support: list[int] | None,
              sentence: str) -> None:
        key = self.keys[kid]

        def build() -> Case:
            return Case(kind, txns, sentence.split(";")[0], [sentence], support=support or [],
                        data={"key": key, "value": value})

        self.cases.add(kind, build)

    def _internal(self, table: TxnTable, mops: Any, r: np.ndarray, rv: list[Any], gpos: np.ndarray,
                  gsort: np.ndarray) -> None:
        """A read must see the transaction's own last write of the key, or else its own earlier read."""
        late = np.flatnonzero(gpos[r] > 0)
        if not len(late):
            return
        rank = np.empty(len(gsort), dtype=np.int64)
        rank[gsort] = np.arange(len(gsort))
        prev = gsort[rank[r[late]] - 1]
        got = [rv[j] for j in late.tolist()]
        want = [mops.values[i] for i in prev.tolist()]
        differ = np.fromiter(map(ne, got, want), dtype=bool, count=len(got))
        for j, p in zip(late[differ].tolist(), prev[differ].tolist(), strict=True):
            t, kid = int(mops.txn[r[j]]), int(mops.key[r[j]])
            what = "its own write of" if mops.f[p] == WRITE else "its own earlier read,"
            self._case("internal", [t], kid, rv[j], None,
                       f"{_T(t)} read key {_V(self.keys[kid])} = {_V(rv[j])}, but {what} {_V(mops.values[p])} came "
                       "before in the same transaction")

    def _lost_updates(self, rt: np.ndarray, rk: np.ndarray, row: np.ndarray, first: np.ndarray,
                      wrote: np.ndarray, rv: list[Any]) -> None:
        """Two committed transactions read the same version of a key and both wrote the key after."""
        sel = np.flatnonzero(first & wrote)
        if len(sel) < 2:
            return
        ver = np.where(row[sel] >= 0, row[sel], -1)
        trip = unique_rows(rk[sel], ver, rt[sel])
        change = np.ones(len(trip), dtype=bool)
        change[1:] = np.any(trip[1:, :2] != trip[:-1, :2], axis=1)
        starts = np.append(np.flatnonzero(change), len(trip))
        first_of: dict[tuple[int, int], int] = {}
        for j, k, v in zip(sel.tolist(), rk[sel].tolist(), ver.tolist(), strict=True):
            first_of.setdefault((k, v), j)
        for g in np.flatnonzero(np.diff(starts) >= 2).tolist():
            rows = trip[starts[g]:starts[g + 1]]
            kid = int(rows[0, 0])
            txns = [int(x) for x in rows[:, 2]]
            j = first_of.get((kid, int(rows[0, 1])), int(sel[0]))
            names = " and ".join(_T(x) for x in txns[:4]) + (" and others" if len(txns) > 4 else "")
            self._case("lost-update", txns, kid, rv[j], None,
                       f"{names} each read key {_V(self.keys[kid])} = {_V(rv[j])} and then wrote it; each made its "
                       "update without seeing the other's")

    # --- explaining ------------------------------------------------------------------------------------------

    def _reads(self, table: TxnTable, tid: int, kid: int) -> tuple[bool, Any]:
        """Whether the transaction read the key before writing it, and what it read."""
        key = self.keys[kid]
        for f, k, v in table.mops(tid):
            if k == key:
                return f == "r", v
        return False, None

    def _final_write(self, table: TxnTable, tid: int, kid: int) -> Any:
        key = self.keys[kid]
        out = None
        for f, k, v in table.mops(tid):
            if k == key and f == "w":
                out = v
        return out

    def _writer_of(self, kid: int, value: Any) -> int | None:
        if value is None:
            return None
        w_txn, index = self._writes
        found = int(index.lookup(np.array([kid], dtype=np.int64), [value])[0])
        return int(w_txn[found]) if found >= 0 else None

    def explain_edge(self, table: TxnTable, a: int, b: int, etype: int, key: int) -> str:
        """One sentence for ``a -> b`` on key id ``key``."""
        k = _V(self.keys[key])
        if etype == WR:
            _, v = self._reads(table, b, key)
            return f"{_T(a)} wrote key {k} = {_V(v)}; {_T(b)} read key {k} = {_V(v)}; so {_T(a)} wr→ {_T(b)}"
        if etype == WW:
            _, v = self._reads(table, b, key)
            x2 = self._final_write(table, b, key)
            return (f"{_T(a)} wrote key {k} = {_V(v)}; {_T(b)} read {_V(v)} and then wrote {_V(x2)}, so {_V(v)} "
                    f"precedes {_V(x2)} in key {k}'s version order; so {_T(a)} ww→ {_T(b)}")
        _, v = self._reads(table, a, key)
        x2 = self._final_write(table, b, key)
        if etype == RW and v is None:
            return (f"{_T(a)} read key {k} = nil, its initial state; {_T(b)} wrote {_V(x2)}, a later version; so "
                    f"{_T(a)} rw→ {_T(b)}")
        if etype == RW:
            return (f"{_T(a)} read key {k} = {_V(v)}; {_T(b)} read {_V(v)} too and then wrote {_V(x2)}, so {_V(x2)} "
                    f"follows {_V(v)} in key {k}'s version order; so {_T(a)} rw→ {_T(b)}")
        w = self._writer_of(key, v)
        who = _T(w) if w is not None else "its writer"
        if etype == RW_REALTIME and w is not None:
            done, began = int(table.complete_time[w]), int(table.invoke_time[b])
            return (f"{_T(a)} read key {k} = {_V(v)}, written by {who}; {who} completed at "
                    f"{words.seconds(done, began)} before {_T(b)} was invoked at {words.seconds(began, done)}, so in "
                    f"real-time order {_T(b)}'s {_V(x2)} follows {_V(v)}; so {_T(a)} rw→ {_T(b)}")
        return (f"{_T(a)} read key {k} = {_V(v)}, written by {who}; {_T(b)} is the next transaction of {who}'s "
                f"process to write key {k} ({_V(x2)}), so {_V(x2)} follows {_V(v)}; so {_T(a)} rw→ {_T(b)}")

    def key_support(self, key: int) -> list[int]:
        """None: an rw-register key's order shows from the transactions an anomaly names."""
        return []

    def support(self, table: TxnTable, a: int, b: int, etype: int, key: int) -> list[int]:
        """For an rw edge: the writer of the value ``a`` read (a witness needs it to show that version)."""
        if etype not in (RW, RW_REALTIME, RW_PROCESS):
            return []
        w = self._writer_of(key, self._reads(table, a, key)[1])
        return [w] if w is not None else []


def _at(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values[rows]`` where ``rows >= 0``, False elsewhere (and for an empty ``values``)."""
    if not len(values):
        return np.zeros(len(rows), dtype=bool)
    return np.where(rows >= 0, values[np.maximum(rows, 0)], False)


def _first_after(times: np.ndarray, start: np.ndarray, size: np.ndarray, keys: np.ndarray,
                 after: np.ndarray) -> np.ndarray:
    """Per query, the local position of the first target of ``keys[i]`` whose time is above ``after[i]``
    (targets sorted by key, then time)."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    lo = min(int(times.min()) if len(times) else 0, int(after.min()))
    span = max(int(times.max()) if len(times) else 0, int(after.max())) - lo + 2
    group = np.repeat(np.arange(len(start), dtype=np.int64), size)
    if span.bit_length() + max(len(start), 1).bit_length() <= 62:
        codes = group * span + (times - lo)
        want = keys * span + (after - lo)
        return np.searchsorted(codes, want, side="right") - start[keys]
    out = np.empty(len(keys), dtype=np.int64)
    for i, (k, t) in enumerate(zip(keys.tolist(), after.tolist(), strict=True)):
        a, n = int(start[k]), int(size[k])
        out[i] = np.searchsorted(times[a:a + n], t, side="right")
    return out
