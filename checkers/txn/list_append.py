"""list-append inference: each key's version order from its longest read, the ww / wr / rw edges it implies,
and the anomalies visible without a cycle.

Every other read of a key must be a prefix of its longest read (else: incompatible-order). An element's writer is
the transaction that appended it; an element written by a failed transaction, or by nobody, is no version a
committed reader may see (G1a, garbage-read), and the edges skip it. Only a transaction's external reads of a key
(before it appends to the key itself) give wr and rw edges. All of it works on whole columns with numpy; plain
Python touches each read once (the prefix check) and only the transactions that read a key they touched before.
"""

from __future__ import annotations

from itertools import chain, compress
from operator import eq
from typing import Any

import numpy as np

from checkers.txn import words
from checkers.txn.inference import RW, WR, WW, Case, CaseLog, DataGraph, EdgeBuffer
from checkers.txn.mops import READ, WRITE, Mops, bad_mop, flatten, written
from checkers.txn.sorting import sort_rows
from checkers.txn.txns import FAIL, TxnTable

_T = words.t
_V = words.value


def group_positions(mops: Mops) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each micro-op, within its transaction's micro-ops on the same key (its group): how many writes come
    before it, how many after, and its position in the group; and the rows sorted by group (then position).
    """
    g = sort_rows(mops.txn, mops.key)  # stable: within a group, by position
    n = len(g)
    start = np.ones(n, dtype=bool)
    if n:
        t, k = mops.txn[g], mops.key[g]
        start[1:] = (t[1:] != t[:-1]) | (k[1:] != k[:-1])
        del t, k
    gid = (np.cumsum(start) - 1).astype(np.int32)
    first_row = np.flatnonzero(start).astype(np.int32)
    del start
    is_w = (mops.f[g] == WRITE).astype(np.int32)
    cum = np.cumsum(is_w, dtype=np.int32) - is_w  # writes before, counted from the first row
    w_before_s = cum - cum[first_row][gid]
    del cum
    total = np.add.reduceat(is_w, first_row) if n else np.zeros(0, dtype=np.int32)
    w_after_s = total[gid] - w_before_s - is_w
    pos_s = np.arange(n, dtype=np.int32) - first_row[gid]
    del gid, is_w, total
    w_before, w_after, pos = (np.empty(n, dtype=np.int32) for _ in range(3))
    w_before[g], w_after[g], pos[g] = w_before_s, w_after_s, pos_s
    return w_before, w_after, pos, g


class ListAppendInference:
    """Infers the data graph of a list-append history (see the module's docstring)."""

    write_f = "append"

    def __init__(self, cases: CaseLog | None = None) -> None:
        self.cases = cases if cases is not None else CaseLog()
        self.keys: list[Any] = []
        self.longest: list[tuple[list[Any], int] | None] = []  # per key: (the longest read, its reader)
        self.off = np.zeros(1, dtype=np.int64)
        self.writer = np.zeros(0, dtype=np.int64)
        self.clean = np.zeros(0, dtype=bool)

    def infer(self, table: TxnTable, order: str, base: int) -> DataGraph:
        """Version orders, edges and non-cycle anomalies (``order`` is unused: list-append needs no assumption)."""
        mops = flatten(table, self.write_f)
        self.keys = mops.keys
        nk = len(mops.keys)
        w_before, w_after, gpos, gsort = group_positions(mops)
        # Appends: the writer of each (key, value), and whether it is an intermediate state of its writer.
        a, index = written(table, mops, "append", "appended", "list-append")
        a_txn = mops.txn[a].astype(np.int64)
        a_inter = w_after[a] > 0
        # Committed reads.
        is_r = (mops.f == READ) & mops.committed
        r = np.flatnonzero(is_r)
        rv = list(compress(mops.values, is_r.view(np.uint8).tobytes()))
        rtypes = set(map(type, rv))
        if not rtypes <= {list, type(None), tuple}:
            i = next(int(j) for j, v in zip(r.tolist(), rv, strict=True) if type(v) not in (list, type(None), tuple))
            raise bad_mop(table, mops, i, "an ok read of a list-append key must be a list (or nil)")
        if rtypes != {list}:
            rv = [v if type(v) is list else list(v or ()) for v in rv]
        rl = np.fromiter(map(len, rv), dtype=np.int64, count=len(rv))
        rk, rt = mops.key[r].astype(np.int64), mops.txn[r].astype(np.int64)
        # The longest read of each key is its version order; every other read must be a prefix of it.
        o = sort_rows(rk, -rl)
        head = np.ones(len(o), dtype=bool)
        head[1:] = rk[o][1:] != rk[o][:-1]
        longest_row = np.full(nk, -1, dtype=np.int64)
        longest_row[rk[o][head]] = o[head]
        self.longest = [None] * nk
        for kid, row in zip(rk[o][head].tolist(), o[head].tolist(), strict=True):
            self.longest[kid] = (rv[row], int(rt[row]))
        compat = self._prefixes(rk, rl, rv, o)
        # Elements of the version orders and their writers.
        lens = np.zeros(nk, dtype=np.int64)
        have = longest_row >= 0
        lens[have] = rl[longest_row[have]]
        off = np.zeros(nk + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        key_of = np.repeat(np.arange(nk, dtype=np.int64), lens)
        elems = list(chain.from_iterable(entry[0] for entry in self.longest if entry is not None))
        row = index.lookup(key_of, elems)
        writer = np.where(row >= 0, a_txn[np.maximum(row, 0)] if len(a) else -1, -1)
        inter = (row >= 0) & (a_inter[np.maximum(row, 0)] if len(a) else False)
        status = np.where(writer >= 0, table.kind[np.maximum(writer, 0)], -1)
        garbage = writer < 0
        failed = status == FAIL
        clean = ~garbage & ~failed
        cc = np.zeros(len(clean) + 1, dtype=np.int64)
        np.cumsum(clean, out=cc[1:])
        cleanpos = np.flatnonzero(clean)
        self.off, self.writer, self.clean = off, writer, clean

        edges = EdgeBuffer()
        same = key_of[cleanpos[:-1]] == key_of[cleanpos[1:]]
        edges.add(writer[cleanpos[:-1]][same], writer[cleanpos[1:]][same], WW, key_of[cleanpos[:-1]][same])
        ext = compat & (w_before[r] == 0)
        start = off[rk]
        end = start + rl
        m = ext & (rl > 0)
        last = end[m] - 1
        fine = clean[last]
        edges.add(writer[last[fine]], rt[m][fine], WR, rk[m][fine])
        nxt = self._next_version(cc[end[ext]], end[ext] - 1, rl[ext] > 0, writer, cleanpos)
        has = nxt < cc[off[rk[ext] + 1]]
        edges.add(rt[ext][has], writer[cleanpos[nxt[has]]], RW, rk[ext][has])

        view = _Reads(rt[compat], rk[compat], rl[compat], start[compat], end[compat])
        self._bad_reads(view, writer, failed, garbage)
        self._intermediate_reads(view, writer, inter, status)
        self._dirty_updates(key_of, writer, failed, cc, cleanpos, off)
        self._duplicates()
        self._incompatible(np.flatnonzero(~compat), rt, rk, rv)
        a_pos = np.full(len(a), -1, dtype=np.int64)
        seen_at = row >= 0
        a_pos[row[seen_at]] = (np.arange(len(row)) - off[key_of])[seen_at]
        self._internal(table, mops, gpos, gsort, r, rv, rl, compat, a, a_pos)
        self._future_reads(rt[ext & (w_after[r] > 0)], rk[ext & (w_after[r] > 0)], rl[ext & (w_after[r] > 0)],
                           key_of, writer, nk)
        sel = ext & (w_after[r] > 0)
        self._lost_updates(rt[sel], rk[sel], rl[sel])
        return DataGraph(edges, 0, self.cases, self.keys)

    @staticmethod
    def _next_version(ci: np.ndarray, last: np.ndarray, nonempty: np.ndarray, writer: np.ndarray,
                      cleanpos: np.ndarray) -> np.ndarray:
        """The clean element that starts the version after a read: the next clean one, unless that continues the
        read's last element's writer (a read of a writer's intermediate state), then the first after its run."""
        if not len(cleanpos):
            return ci
        w = writer[cleanpos]
        run_start = np.ones(len(w), dtype=bool)
        run_start[1:] = w[1:] != w[:-1]  # a key change starts a run too unless the same writer: harmless
        starts = np.flatnonzero(run_start)
        next_run = np.append(starts[1:], len(w))[np.cumsum(run_start) - 1]
        inside = ci < len(w)
        same = inside & nonempty & (w[np.minimum(ci, len(w) - 1)] == writer[np.maximum(last, 0)])
        return np.where(same, next_run[np.minimum(ci, len(w) - 1)], ci)

    def _prefixes(self, rk: np.ndarray, rl: np.ndarray, rv: list[Any], o: np.ndarray) -> np.ndarray:
        """Whether each read is a prefix of its key's longest read (one slice per key and length, then one C
        loop of list comparisons)."""
        if not len(rv):
            return np.zeros(0, dtype=bool)
        ko, lo = rk[o], rl[o]
        start = np.ones(len(o), dtype=bool)
        start[1:] = (ko[1:] != ko[:-1]) | (lo[1:] != lo[:-1])
        group = np.cumsum(start) - 1
        firsts = np.flatnonzero(start)
        prefixes = []
        for kid, n in zip(ko[firsts].tolist(), lo[firsts].tolist(), strict=True):
            lv = self.longest[kid][0]
            prefixes.append(lv if n == len(lv) else lv[:n])
        gid = np.empty(len(o), dtype=np.int64)
        gid[o] = group
        per_read = [prefixes[g] for g in gid.tolist()]
        return np.fromiter(map(eq, rv, per_read), dtype=bool, count=len(rv))

    # --- non-cycle anomalies ---------------------------------------------------------------------------------

    def _bad_reads(self, v: _Reads, writer: np.ndarray, failed: np.ndarray, garbage: np.ndarray) -> None:
        """Reads that saw an aborted append (G1a) or an element nobody appended (garbage-read)."""
        for flags, kind in ((failed, "G1a"), (garbage, "garbage-read")):
            if not flags.any():
                continue
            pos = np.flatnonzero(flags)
            fc = np.zeros(len(flags) + 1, dtype=np.int64)
            np.cumsum(flags, out=fc[1:])
            hit = np.flatnonzero(fc[v.end] - fc[v.start] > 0)
            firsts = pos[np.searchsorted(pos, v.start[hit])]
            for j, p in zip(hit.tolist(), firsts.tolist(), strict=True):
                self._bad_read_case(kind, int(v.txn[j]), int(v.key[j]), int(v.len[j]), int(p), writer)

    def _bad_read_case(self, kind: str, reader: int, kid: int, n: int, p: int, writer: np.ndarray) -> None:
        entry = self.longest[kid]
        assert entry is not None
        k, seen, elem, w = _V(self.keys[kid]), entry[0][:n], entry[0][p - int(self.off[kid])], int(writer[p])

        def build() -> Case:
            if kind == "G1a":
                return Case("G1a", [reader, w], f"{_T(reader)} read {_V(elem)}, appended by {_T(w)}, which failed",
                            [f"{_T(reader)} read key {k} as {_V(seen)}; {_V(elem)} was appended by {_T(w)}, which "
                             f"failed (it did not commit); so {_T(reader)} read an aborted write"],
                            support=[entry[1]], data={"key": self.keys[kid], "value": elem})
            return Case("garbage-read", [reader], f"{_T(reader)} read {_V(elem)}, which no transaction appended",
                        [f"{_T(reader)} read key {k} as {_V(seen)}; no transaction appended {_V(elem)} to key {k}"],
                        support=[entry[1]], data={"key": self.keys[kid], "value": elem})

        self.cases.add(kind, build)

    def _intermediate_reads(self, v: _Reads, writer: np.ndarray, inter: np.ndarray, status: np.ndarray) -> None:
        """G1b: the last element read is one its writer appended over later in the same transaction."""
        if not len(writer):
            return
        last = np.maximum(v.end - 1, 0)
        hit = np.flatnonzero((v.len > 0) & inter[last] & (writer[last] != v.txn) & (status[last] != FAIL))
        for j in hit.tolist():
            reader, kid, n = int(v.txn[j]), int(v.key[j]), int(v.len[j])
            entry = self.longest[kid]
            assert entry is not None
            w = int(writer[last[j]])
            base = int(self.off[kid])
            later = next((entry[0][i] for i in range(n, len(entry[0])) if writer[base + i] == w), None)
            self._g1b_case(reader, kid, entry, n, w, later)

    def _g1b_case(self, reader: int, kid: int, entry: tuple[list[Any], int], n: int, w: int, later: Any) -> None:
        k, seen = _V(self.keys[kid]), entry[0][:n]
        elem = seen[-1]

        def build() -> Case:
            return Case("G1b", [reader, w], f"{_T(reader)} read {_T(w)}'s intermediate append of {_V(elem)}",
                        [f"{_T(reader)} read key {k} as {_V(seen)}, ending in {_V(elem)}; {_T(w)} appended "
                         f"{_V(elem)} and then {_V(later) if later is not None else 'more'} to key {k}, so "
                         f"{_V(elem)} was an intermediate state of {_T(w)}"],
                        support=[entry[1]], data={"key": self.keys[kid], "value": elem})

        self.cases.add("G1b", build)

    def _dirty_updates(self, key_of: np.ndarray, writer: np.ndarray, failed: np.ndarray, cc: np.ndarray,
                       cleanpos: np.ndarray, off: np.ndarray) -> None:
        """A failed append followed by a committed one in the version order."""
        if not failed.any():
            return
        fpos = np.flatnonzero(failed)
        nxt = cc[fpos]
        has = nxt < cc[off[key_of[fpos] + 1]]
        for p, q in zip(fpos[has].tolist(), cleanpos[nxt[has]].tolist(), strict=True):
            kid = int(key_of[p])
            entry = self.longest[kid]
            assert entry is not None
            base = int(off[kid])
            self._dirty_case(kid, entry, int(writer[p]), int(writer[q]), p - base, q - base)

    def _dirty_case(self, kid: int, entry: tuple[list[Any], int], a: int, b: int, i: int, j: int) -> None:
        k = _V(self.keys[kid])
        order = entry[0]

        def build() -> Case:
            return Case("dirty-update", [b, a], f"{_T(b)} appended to key {k} after {_T(a)}'s aborted append",
                        [f"{_T(a)} appended {_V(order[i])} to key {k} and failed; {_T(b)} appended {_V(order[j])}, "
                         f"which comes after it in key {k}'s version order {_V(order[: j + 1])}; so a committed "
                         "write was built on an aborted one"], support=[entry[1]], data={"key": self.keys[kid]})

        self.cases.add("dirty-update", build)

    def _duplicates(self) -> None:
        """An element twice in a key's longest read (every compatible read is a prefix of it)."""
        for kid, entry in enumerate(self.longest):
            if entry is None or len(entry[0]) < 2:
                continue
            dup = _first_duplicate(entry[0])
            if dup is _NONE:
                continue
            self._duplicate_case(kid, entry, dup)

    def _duplicate_case(self, kid: int, entry: tuple[list[Any], int], dup: Any) -> None:
        k = _V(self.keys[kid])

        def build() -> Case:
            return Case("duplicate-elements", [entry[1]], f"{_T(entry[1])} read {_V(dup)} twice in key {k}",
                        [f"{_T(entry[1])} read key {k} as {_V(entry[0])}, in which {_V(dup)} appears more than "
                         "once"], data={"key": self.keys[kid], "value": dup})

        self.cases.add("duplicate-elements", build)

    def _incompatible(self, rows: np.ndarray, rt: np.ndarray, rk: np.ndarray, rv: list[Any]) -> None:
        for j in rows.tolist():
            tid, kid = int(rt[j]), int(rk[j])
            entry = self.longest[kid]
            assert entry is not None
            self._incompatible_case(tid, kid, rv[j], entry)

    def _incompatible_case(self, tid: int, kid: int, v: list[Any], entry: tuple[list[Any], int]) -> None:
        k, other, lv = _V(self.keys[kid]), entry[1], entry[0]

        def build() -> Case:
            return Case("incompatible-order", [tid, other],
                        f"{_T(tid)} and {_T(other)} read key {k} in orders no single version order explains",
                        [f"{_T(tid)} read key {k} as {_V(v)} and {_T(other)} read it as {_V(lv)}; neither is a "
                         "prefix of the other, so no single version order explains both"],
                        data={"key": self.keys[kid]})

        self.cases.add("incompatible-order", build)

    def _internal(self, table: TxnTable, mops: Mops, gpos: np.ndarray, gsort: np.ndarray, r: np.ndarray,
                  rv: list[Any], rl: np.ndarray, compat: np.ndarray, a: np.ndarray, a_pos: np.ndarray) -> None:
        """A read that disagrees with its own transaction's earlier micro-ops on the key.

        Reads that are prefixes of the version order are checked by position, in bulk: a read with no append of
        its own since the previous read must be as long as it; one with appends since must be longer by exactly
        them, and they must sit at its end, in order. The rest, and every read found wrong, are checked (and
        explained) one by one.
        """
        n = len(gsort)
        if not n:
            return
        i32 = np.int32
        read_row = np.full(n, -1, dtype=i32)
        read_row[r] = np.arange(len(r), dtype=i32)
        rows = read_row[gsort]  # per sorted micro-op: its read row, or -1
        del read_row
        is_read = rows >= 0
        gp = gpos[gsort]
        late = np.flatnonzero(is_read & (gp > 0)).astype(i32)
        if not len(late):
            return
        group_first = np.arange(n, dtype=i32) - gp
        del gp
        marks = np.where(is_read, np.arange(n, dtype=i32), i32(-1))
        last_read = np.maximum.accumulate(marks)
        p = np.full(len(late), -1, dtype=i32)
        p[late > 0] = last_read[late[late > 0] - 1]
        p = np.where(p >= group_first[late], p, i32(-1))
        del last_read
        is_w = (mops.f[gsort] == WRITE).astype(i32)
        w_before = np.cumsum(is_w, dtype=i32) - is_w  # writes before, counted from the first row
        start_w = np.where(p >= 0, w_before[np.maximum(p, 0)], w_before[group_first[late]])
        since = w_before[late] - start_w
        cur = rows[late]
        prow = np.where(p >= 0, rows[np.maximum(p, 0)], i32(-1))
        exact = compat[cur] & ((prow < 0) | compat[np.maximum(prow, 0)])
        base = np.where(prow >= 0, rl[np.maximum(prow, 0)], rl[cur] - since)
        ok = exact & np.where(prow >= 0, rl[cur] == base + since, base >= 0)
        # Each append since a late read's previous read must sit at base + its ordinal.
        marks[:] = np.where(is_read, np.arange(n, dtype=i32), i32(n))
        del rows, is_read
        next_read = np.minimum.accumulate(marks[::-1])[::-1]
        del marks
        appends = np.flatnonzero(is_w == 1)
        del is_w
        nr = next_read[appends]
        del next_read
        in_group = nr < n
        in_group[in_group] = group_first[nr[in_group]] == group_first[appends[in_group]]
        appends, nr = appends[in_group], nr[in_group]
        del group_first
        owner = np.searchsorted(late, nr)  # every next read after an append in its group is a late read
        ordinal = w_before[appends] - start_w[owner]
        w_pos = np.full(len(mops), -1, dtype=np.int64)
        w_pos[a] = a_pos
        placed = w_pos[gsort[appends]] == base[owner] + ordinal
        ok[np.unique(owner[~placed])] = False
        check = late[~ok]
        if not len(check):
            return
        values = table.values
        for s in check.tolist():
            i = int(gsort[s])
            tid, kid, at = int(mops.txn[i]), int(mops.key[i]), int(mops.idx[i])
            key = mops.keys[kid]
            known: list[Any] | None = None
            mine: list[Any] = []
            for f, k, v in values[tid][:at]:
                if k != key:
                    continue
                if f == "append":
                    mine.append(v)
                    if known is not None:
                        known = [*known, v]
                else:
                    known = list(v or [])
                    mine = []
            got = list(values[tid][at][2] or [])
            if known is not None:
                if got != known:
                    self._internal_case(tid, kid, got, f"expected {_V(known)} from its own earlier micro-ops")
            elif mine and (len(got) < len(mine) or got[len(got) - len(mine):] != mine):
                self._internal_case(tid, kid, got, f"it does not end with its own appends {_V(mine)}")

    def _internal_case(self, tid: int, kid: int, v: list[Any], why: str) -> None:
        k = _V(self.keys[kid])

        def build() -> Case:
            return Case("internal", [tid], f"{_T(tid)} read key {k} as {_V(v)}, against its own micro-ops",
                        [f"{_T(tid)} read key {k} as {_V(v)}, but {why}"], data={"key": self.keys[kid]})

        self.cases.add("internal", build)

    def _future_reads(self, rt: np.ndarray, rk: np.ndarray, rl: np.ndarray, key_of: np.ndarray,
                      writer: np.ndarray, nk: int) -> None:
        """An external read that holds an element its own transaction appends only later."""
        if not len(rt) or not len(writer):
            return
        pos = np.arange(len(writer)) - np.repeat(self.off[:-1], np.diff(self.off))
        own = writer >= 0
        code = writer[own] * nk + key_of[own]
        o = sort_rows(code, pos[own])
        code_s, pos_s = code[o], pos[own][o]
        head = np.ones(len(o), dtype=bool)
        head[1:] = code_s[1:] != code_s[:-1]
        first_code, first_pos = code_s[head], pos_s[head]
        if not len(first_code):
            return
        want = rt * nk + rk
        at = np.minimum(np.searchsorted(first_code, want), len(first_code) - 1)
        hit = np.flatnonzero((first_code[at] == want) & (first_pos[at] < rl))
        for j in hit.tolist():
            tid, kid, n = int(rt[j]), int(rk[j]), int(rl[j])
            entry = self.longest[kid]
            assert entry is not None
            self._future_case(tid, kid, entry[0][:n], entry[0][int(first_pos[at[j]])])

    def _future_case(self, tid: int, kid: int, v: list[Any], later: Any) -> None:
        k = _V(self.keys[kid])

        def build() -> Case:
            return Case("future-read", [tid], f"{_T(tid)} read its own later append of {_V(later)}",
                        [f"{_T(tid)} read key {k} as {_V(v)}, which holds {_V(later)}, an element {_T(tid)} "
                         "appends only later in the same transaction"], data={"key": self.keys[kid]})

        self.cases.add("future-read", build)

    def _lost_updates(self, rt: np.ndarray, rk: np.ndarray, rl: np.ndarray) -> None:
        """Two transactions externally read the same version of a key, then both appended to it."""
        if len(rt) < 2:
            return
        triples = unique_rows(rk, rl, rt)
        change = np.ones(len(triples), dtype=bool)
        change[1:] = np.any(triples[1:, :2] != triples[:-1, :2], axis=1)
        starts = np.append(np.flatnonzero(change), len(triples))
        for g in np.flatnonzero(np.diff(starts) >= 2).tolist():
            rows = triples[starts[g]:starts[g + 1]]
            kid, n = int(rows[0, 0]), int(rows[0, 1])
            entry = self.longest[kid]
            assert entry is not None
            self._lost_case(kid, [int(x) for x in rows[:, 2]], entry[0][:n])

    def _lost_case(self, kid: int, txns: list[int], seen: list[Any]) -> None:
        k = _V(self.keys[kid])
        names = " and ".join(_T(x) for x in txns[:4]) + (" and others" if len(txns) > 4 else "")

        def build() -> Case:
            return Case("lost-update", txns, f"{names} read the same version of key {k} and each appended to it",
                        [f"{names} each read key {k} as {_V(seen)} and then appended to it; each made its update "
                         "without seeing the other's"], data={"key": self.keys[kid], "value": seen})

        self.cases.add("lost-update", build)

    # --- explaining ------------------------------------------------------------------------------------------

    def _order(self, kid: int) -> tuple[list[Any], np.ndarray, np.ndarray]:
        entry = self.longest[kid]
        a, b = int(self.off[kid]), int(self.off[kid + 1])
        return (entry[0] if entry is not None else []), self.writer[a:b], self.clean[a:b]

    def explain_edge(self, table: TxnTable, a: int, b: int, etype: int, key: int) -> str:
        """One sentence for ``a -> b`` on key id ``key``."""
        k = _V(self.keys[key])
        order, wr_, clean = self._order(key)
        if etype == WW:
            for i in range(len(order)):
                if wr_[i] == a and clean[i]:
                    j = next((j for j in range(i + 1, len(order)) if clean[j]), None)
                    if j is not None and wr_[j] == b:
                        return (f"{_T(a)} appended {_V(order[i])} to key {k}; {_T(b)} appended {_V(order[j])}, "
                                f"which comes next in key {k}'s version order; so {_T(a)} ww→ {_T(b)}")
        elif etype == WR:
            for v in self._ext_reads(table, b, key):
                if v and v[-1] in order and wr_[order.index(v[-1])] == a:
                    return (f"{_T(a)} appended {_V(v[-1])} to key {k}; {_T(b)} read key {k} as {_V(v)}; "
                            f"so {_T(a)} wr→ {_T(b)}")
        elif etype == RW:
            for v in self._ext_reads(table, a, key):
                j = _next_clean(clean, len(v))
                if j is not None and v and wr_[j] == wr_[len(v) - 1]:  # the read saw part of a writer's appends
                    j = next((i for i in range(j, len(order)) if clean[i] and wr_[i] != wr_[j]), None)
                if j is not None and wr_[j] == b:
                    return (f"{_T(a)} read key {k} as {_V(v)}; {_T(b)} appended {_V(order[j])}, which comes next in "
                            f"key {k}'s version order; so {_T(a)} rw→ {_T(b)}")
        return f"{_T(a)} {('ww', 'wr', 'rw')[etype - WW]}→ {_T(b)} on key {k}"

    def _ext_reads(self, table: TxnTable, tid: int, kid: int) -> list[list[Any]]:
        key = self.keys[kid]
        out: list[list[Any]] = []
        for f, k, v in table.mops(tid):
            if k != key:
                continue
            if f == "append":
                break
            out.append(list(v or []))
        return out

    def support(self, table: TxnTable, a: int, b: int, etype: int, key: int) -> list[int]:
        """The key's longest reader and every writer in its version order (so the order shows again)."""
        return self.key_support(key)

    def key_support(self, key: int) -> list[int]:
        """The key's longest reader and every writer in its version order."""
        entry = self.longest[key]
        order_writers = {int(w) for w in self._order(key)[1].tolist() if w >= 0}
        return sorted(order_writers | ({entry[1]} if entry is not None else set()))


def unique_rows(*cols: np.ndarray) -> np.ndarray:
    """The distinct rows of the columns, sorted (``np.unique(..., axis=0)`` without its slow path)."""
    o = sort_rows(*cols)
    rows = np.stack([c[o] for c in cols], axis=1)
    keep = np.ones(len(rows), dtype=bool)
    keep[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    return rows[keep]


def _next_clean(clean: np.ndarray, start: int) -> int | None:
    return next((j for j in range(start, len(clean)) if clean[j]), None)


class _Reads:
    """Compatible committed reads as columns."""

    def __init__(self, txn: np.ndarray, key: np.ndarray, n: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
        self.txn, self.key, self.len, self.start, self.end = txn, key, n, start, end


_NONE = object()


def _first_duplicate(v: list[Any]) -> Any:
    seen: set[Any] = set()
    try:
        if len(set(v)) == len(v):
            return _NONE
    except TypeError:
        pass
    for e in v:
        try:
            if e in seen:
                return e
            seen.add(e)
        except TypeError:
            continue
    return _NONE
