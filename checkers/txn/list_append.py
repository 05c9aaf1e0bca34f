"""list-append inference: each key's version order from its longest read, the ww / wr / rw edges it implies,
and the anomalies visible without a cycle.

Every other read of a key must be a prefix of its longest read (else: incompatible-order). An element's writer is
the transaction that appended it; an element written by a failed transaction, or by nobody, is no version a
committed reader may see (G1a, garbage-read), and the edges skip it. Only a transaction's external reads (before
it appends to the key itself) give wr and rw edges. The per-transaction pass is plain Python over micro-ops; the
per-key and per-read work after it is numpy over arrays.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from checkers.txn import words
from checkers.txn.errors import MalformedTxn
from checkers.txn.inference import RW, WR, WW, Case, CaseLog, DataGraph, EdgeBuffer
from checkers.txn.txns import FAIL, TxnTable

_T = words.t
_V = words.value


def _bad_mop(m: int, mop: Any, why: str) -> MalformedTxn:
    return MalformedTxn(f"micro-op {m} {words.value(mop) if isinstance(mop, list) else repr(mop)}: {why}")


class ListAppendInference:
    """Observes list-append transactions, then infers the data graph (see the module's docstring)."""

    def __init__(self, cases: CaseLog | None = None) -> None:
        self.key_ids: dict[Any, int] = {}
        self.keys: list[Any] = []
        self.writers: list[dict[Any, int]] = []  # per key: value -> tid * 2 + (1 if intermediate)
        self.longest: list[list[Any] | None] = []  # per key: [read list, tid, micro-op index]
        self.r_txn, self.r_key, self.r_len, self.r_mop = array("q"), array("q"), array("q"), array("q")
        self.r_ext = array("b")
        self.r_wlater = array("b")  # external read of a key the transaction appends to later
        self.cases = cases if cases is not None else CaseLog()
        self._incompatible: list[tuple[int, int, int, list[Any], list[Any]]] = []
        self._future: list[tuple[int, int, int, list[Any], Any]] = []
        self._internal: list[tuple[int, int, int, list[Any], str]] = []
        # Filled by finish():
        self.off = np.zeros(1, dtype=np.int64)
        self.writer = np.zeros(0, dtype=np.int64)
        self.clean = np.zeros(0, dtype=bool)

    # --- observing -------------------------------------------------------------------------------------------

    def _key(self, k: Any, m: int, mop: Any) -> int:
        if (type(k) is not int and type(k) is not str) or isinstance(k, bool):
            raise _bad_mop(m, mop, f"a key must be an integer or a string, got {type(k).__name__}")
        kid = len(self.keys)
        self.key_ids[k] = kid
        self.keys.append(k)
        self.writers.append({})
        self.longest.append(None)
        return kid

    def _append(self, tid: int, kid: int, v: Any, own: dict[int, list[Any]], m: int, mop: Any) -> None:
        tv = type(v)
        if (tv is not int and tv is not str) or tv is bool:
            raise _bad_mop(m, mop, f"an appended value must be an integer or a string, got {tv.__name__}")
        wk = self.writers[kid]
        if v in wk:
            other = wk[v] >> 1
            raise _bad_mop(m, mop, f"{_T(other)} and {_T(tid)} both append {_V(v)} to key {_V(self.keys[kid])}; "
                                   "list-append needs every appended value unique per key")
        mine = own.get(kid)
        if mine is None:
            own[kid] = [v]
        else:
            wk[mine[-1]] = tid * 2 + 1  # the previous append is now an intermediate state
            mine.append(v)
        wk[v] = tid * 2

    def _mop(self, m: int, mop: Any) -> tuple[str, Any, Any]:
        if (type(mop) is not list and type(mop) is not tuple) or len(mop) != 3:
            raise _bad_mop(m, mop, "expected [f, key, value]")
        f, k, v = mop
        if f != "append" and f != "r":
            raise _bad_mop(m, mop, f"list-append micro-ops are append and r, got {f!r}")
        return f, k, v

    def committed(self, tid: int, mops: Any) -> None:
        """An ok transaction: record its appends and reads, and check it against itself."""
        key_ids = self.key_ids
        own: dict[int, list[Any]] = {}
        seen: dict[int, list[Any]] = {}  # the key's value as this transaction must see it, once it read it
        ext_reads: list[tuple[int, list[Any]]] = []
        longest = self.longest
        r_txn, r_key, r_len, r_mop, r_ext, r_wlater = (self.r_txn, self.r_key, self.r_len, self.r_mop, self.r_ext,
                                                      self.r_wlater)
        for m, mop in enumerate(mops):
            f, k, v = self._mop(m, mop)
            try:
                kid = key_ids.get(k)
            except TypeError:
                raise _bad_mop(m, mop, "a key must be an integer or a string") from None
            if kid is None:
                kid = self._key(k, m, mop)
            if f == "append":
                self._append(tid, kid, v, own, m, mop)
                known = seen.get(kid)
                if known is not None:
                    seen[kid] = [*known, v]
                continue
            if v is None:
                v = []
            elif type(v) is not list:
                if type(v) is not tuple:
                    raise _bad_mop(m, mop, "an ok read of a list-append key must be a list (or nil)")
                v = list(v)
            n = len(v)
            # Against its own earlier micro-ops on this key (internal consistency).
            known = seen.get(kid)
            mine = own.get(kid)
            if known is not None:
                if v != known:
                    self._internal.append((tid, kid, m, v, f"expected {_V(known)} from its own earlier micro-ops"))
            elif mine is not None and (n < len(mine) or v[n - len(mine):] != mine):
                self._internal.append((tid, kid, m, v, f"it does not end with its own appends {_V(mine)}"))
            seen[kid] = v
            # Against the longest read so far (the version order).
            entry = longest[kid]
            if entry is None:
                longest[kid] = [v, tid, m]
            else:
                lv = entry[0]
                ln = len(lv)
                if n <= ln:
                    fits = (lv == v) if n == ln else (lv[:n] == v)
                else:
                    fits = v[:ln] == lv
                    if fits:
                        longest[kid] = [v, tid, m]
                if not fits:
                    self._incompatible.append((tid, kid, m, v, entry))
                    continue
            ext = mine is None
            r_txn.append(tid)
            r_key.append(kid)
            r_len.append(n)
            r_mop.append(m)
            r_ext.append(ext)
            r_wlater.append(0)
            if ext:
                ext_reads.append((len(r_txn) - 1, v))
        if own and ext_reads:
            for j, v in ext_reads:
                kid = r_key[j]
                mine = own.get(kid)
                if mine is not None:
                    r_wlater[j] = 1
                    if not set(mine).isdisjoint(v):
                        later = next(x for x in mine if x in v)
                        self._future.append((tid, kid, r_mop[j], v, later))

    def attempted(self, tid: int, mops: Any) -> None:
        """A failed or indefinite transaction: only its appends matter (its reads are unknown)."""
        own: dict[int, list[Any]] = {}
        for m, mop in enumerate(mops):
            f, k, v = self._mop(m, mop)
            if f != "append":
                continue
            try:
                kid = self.key_ids.get(k)
            except TypeError:
                raise _bad_mop(m, mop, "a key must be an integer or a string") from None
            if kid is None:
                kid = self._key(k, m, mop)
            self._append(tid, kid, v, own, m, mop)

    # --- inferring -------------------------------------------------------------------------------------------

    def finish(self, table: TxnTable, order: str, base: int) -> DataGraph:
        """Version orders, edges and non-cycle anomalies (``order`` is unused: list-append needs no assumption)."""
        nk = len(self.keys)
        lens = np.fromiter((len(e[0]) if e is not None else 0 for e in self.longest), dtype=np.int64, count=nk)
        off = np.zeros(nk + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        total = int(off[-1])
        codes = np.empty(total, dtype=np.int64)
        for kid, entry in enumerate(self.longest):
            if entry is None or not entry[0]:
                continue
            wk = self.writers[kid]
            get = wk.get
            try:
                codes[off[kid]:off[kid + 1]] = [get(e, -1) for e in entry[0]]
            except TypeError:  # an unhashable element: garbage by definition
                codes[off[kid]:off[kid + 1]] = [get(e, -1) if _hashable(e) else -1 for e in entry[0]]
        writer = np.where(codes >= 0, codes >> 1, -1)
        inter = (codes >= 0) & ((codes & 1) == 1)
        kind = table.kind
        status = np.where(writer >= 0, kind[np.maximum(writer, 0)], -1)
        garbage = writer < 0
        failed = status == FAIL
        clean = ~garbage & ~failed
        key_of = np.repeat(np.arange(nk, dtype=np.int64), lens)
        cc = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(clean, out=cc[1:])
        cleanpos = np.flatnonzero(clean)
        self.off, self.writer, self.clean, self._cc, self._cleanpos = off, writer, clean, cc, cleanpos

        edges = EdgeBuffer()
        # ww: consecutive clean elements of a key.
        same = key_of[cleanpos[:-1]] == key_of[cleanpos[1:]]
        edges.add(writer[cleanpos[:-1]][same], writer[cleanpos[1:]][same], WW, key_of[cleanpos[:-1]][same])

        rt = np.frombuffer(self.r_txn, dtype=np.int64) if len(self.r_txn) else np.zeros(0, dtype=np.int64)
        rk = np.frombuffer(self.r_key, dtype=np.int64) if len(self.r_key) else np.zeros(0, dtype=np.int64)
        rl = np.frombuffer(self.r_len, dtype=np.int64) if len(self.r_len) else np.zeros(0, dtype=np.int64)
        rext = (np.frombuffer(self.r_ext, dtype=np.int8) == 1) if len(self.r_ext) else np.zeros(0, dtype=bool)
        start = off[rk]
        end = start + rl
        # wr: an external read's last element, when clean.
        m = rext & (rl > 0)
        last = end[m] - 1
        ok = clean[last]
        edges.add(writer[last[ok]], rt[m][ok], WR, rk[m][ok])
        # rw: an external read -> the writer of the next clean element of the key.
        nxt = cc[end[rext]]
        has = nxt < cc[off[rk[rext] + 1]]
        edges.add(rt[rext][has], writer[cleanpos[nxt[has]]], RW, rk[rext][has])

        self._cases(table, rt, rk, rl, rext, start, end, writer, inter, status, garbage, failed, cc, cleanpos,
                    key_of, off)
        return DataGraph(edges, 0, self.cases, self.keys)

    def _cases(self, table: TxnTable, rt: np.ndarray, rk: np.ndarray, rl: np.ndarray, rext: np.ndarray,
               start: np.ndarray, end: np.ndarray, writer: np.ndarray, inter: np.ndarray, status: np.ndarray,
               garbage: np.ndarray, failed: np.ndarray, cc: np.ndarray, cleanpos: np.ndarray, key_of: np.ndarray,
               off: np.ndarray) -> None:
        # Reads that saw an aborted append (G1a) or an element nobody appended (garbage-read).
        for flags, kind_ in ((failed, "G1a"), (garbage, "garbage-read")):
            if not flags.any():
                continue
            pos = np.flatnonzero(flags)
            fc = np.zeros(len(flags) + 1, dtype=np.int64)
            np.cumsum(flags, out=fc[1:])
            hit = np.flatnonzero(fc[end] - fc[start] > 0)
            firsts = pos[np.searchsorted(pos, start[hit])]
            for j, p in zip(hit.tolist(), firsts.tolist(), strict=True):
                self._bad_read_case(kind_, int(rt[j]), int(rk[j]), int(rl[j]), int(p), writer)
        # Intermediate reads (G1b): the last element read is one its writer appended over later.
        m = rl > 0
        last = end - 1
        g1b = np.flatnonzero(m & inter[np.maximum(last, 0)] & (writer[np.maximum(last, 0)] != rt)
                             & (status[np.maximum(last, 0)] != FAIL))
        for j in g1b.tolist():
            self._g1b_case(int(rt[j]), int(rk[j]), int(rl[j]), int(last[j]), writer)
        # Dirty updates: a failed append followed by a committed one in the version order.
        if failed.any():
            fpos = np.flatnonzero(failed)
            nxt = cc[fpos]
            has = nxt < cc[off[key_of[fpos] + 1]]
            for p, q in zip(fpos[has].tolist(), cleanpos[nxt[has]].tolist(), strict=True):
                self._dirty_case(int(key_of[p]), p, q, writer)
        # Duplicate elements in a key's longest read (every compatible read is a prefix of it).
        for kid, entry in enumerate(self.longest):
            if entry is not None and len(entry[0]) > 1 and _has_duplicates(entry[0]):
                self._duplicate_case(kid, entry)
        for tid, kid, mi, v, entry in self._incompatible:
            self._incompatible_case(tid, kid, mi, v, entry)
        for tid, kid, _mi, v, why in self._internal:
            self._internal_case(tid, kid, v, why)
        for tid, kid, _mi, v, later in self._future:
            self._future_case(tid, kid, v, later)
        self._lost_updates(rt, rk, rl, rext)

    def _internal_case(self, tid: int, kid: int, v: list[Any], why: str) -> None:
        k = _V(self.keys[kid])

        def build() -> Case:
            return Case("internal", [tid], f"{_T(tid)} read key {k} as {_V(v)}, against its own micro-ops",
                        [f"{_T(tid)} read key {k} as {_V(v)}, but {why}"], data={"key": self.keys[kid]})

        self.cases.add("internal", build)

    def _future_case(self, tid: int, kid: int, v: list[Any], later: Any) -> None:
        k = _V(self.keys[kid])

        def build() -> Case:
            return Case("future-read", [tid], f"{_T(tid)} read its own later append of {_V(later)}",
                        [f"{_T(tid)} read key {k} as {_V(v)}, which holds {_V(later)}, an element {_T(tid)} "
                         "appends only later in the same transaction"], data={"key": self.keys[kid]})

        self.cases.add("future-read", build)

    def _bad_read_case(self, kind_: str, reader: int, kid: int, n: int, p: int, writer: np.ndarray) -> None:
        keys = self.keys
        entry = self.longest[kid]
        assert entry is not None
        seen = entry[0][:n]
        elem = entry[0][p - int(self.off[kid])]
        w = int(writer[p])

        def build() -> Case:
            if kind_ == "G1a":
                return Case("G1a", [reader, w], f"{_T(reader)} read {_V(elem)}, appended by {_T(w)}, which failed",
                            [f"{_T(reader)} read key {_V(keys[kid])} as {_V(seen)}; {_V(elem)} was appended by "
                             f"{_T(w)}, which failed (it did not commit); so {_T(reader)} read an aborted write"],
                            support=[entry[1]], data={"key": keys[kid], "value": elem})
            return Case("garbage-read", [reader], f"{_T(reader)} read {_V(elem)}, which no transaction appended",
                        [f"{_T(reader)} read key {_V(keys[kid])} as {_V(seen)}; no transaction appended "
                         f"{_V(elem)} to key {_V(keys[kid])}"], data={"key": keys[kid], "value": elem})

        self.cases.add(kind_, build)

    def _g1b_case(self, reader: int, kid: int, n: int, p: int, writer: np.ndarray) -> None:
        keys = self.keys
        entry = self.longest[kid]
        assert entry is not None
        seen = entry[0][:n]
        w = int(writer[p])
        elem = seen[-1]
        after = next((e for e in entry[0][n:] if self.writers[kid].get(e, -1) >> 1 == w), None)
        self.cases.add("G1b", lambda: Case(
            "G1b", [reader, w], f"{_T(reader)} read {_T(w)}'s intermediate append of {_V(elem)}",
            [f"{_T(reader)} read key {_V(keys[kid])} as {_V(seen)}, ending in {_V(elem)}; {_T(w)} appended "
             f"{_V(elem)} and then {_V(after) if after is not None else 'more'} to the key, so {_V(elem)} was an "
             f"intermediate state of {_T(w)}"], support=[entry[1]], data={"key": keys[kid], "value": elem}))

    def _dirty_case(self, kid: int, p: int, q: int, writer: np.ndarray) -> None:
        keys = self.keys
        entry = self.longest[kid]
        assert entry is not None
        base = int(self.off[kid])
        a, b = int(writer[p]), int(writer[q])
        ea, eb = entry[0][p - base], entry[0][q - base]
        self.cases.add("dirty-update", lambda: Case(
            "dirty-update", [b, a], f"{_T(b)} appended to key {_V(keys[kid])} after {_T(a)}'s aborted append",
            [f"{_T(a)} appended {_V(ea)} to key {_V(keys[kid])} and failed; {_T(b)} appended {_V(eb)}, which comes "
             f"after it in key {_V(keys[kid])}'s version order {_V(entry[0][: q - base + 1])}; so a committed "
             "write was built on an aborted one"], support=[entry[1]], data={"key": keys[kid]}))

    def _duplicate_case(self, kid: int, entry: list[Any]) -> None:
        keys = self.keys
        v = entry[0]
        dup = _first_duplicate(v)
        self.cases.add("duplicate-elements", lambda: Case(
            "duplicate-elements", [entry[1]], f"{_T(entry[1])} read {_V(dup)} twice in key {_V(keys[kid])}",
            [f"{_T(entry[1])} read key {_V(keys[kid])} as {_V(v)}, in which {_V(dup)} appears more than once"],
            data={"key": keys[kid], "value": dup}))

    def _incompatible_case(self, tid: int, kid: int, mi: int, v: list[Any], entry: list[Any]) -> None:
        keys = self.keys
        other, lv = entry[1], entry[0]
        self.cases.add("incompatible-order", lambda: Case(
            "incompatible-order", [tid, other], f"{_T(tid)} and {_T(other)} read key {_V(keys[kid])} in orders no "
            "single history explains",
            [f"{_T(tid)} read key {_V(keys[kid])} as {_V(v)} and {_T(other)} read it as {_V(lv)}; neither is a "
             "prefix of the other, so no single version order explains both"], data={"key": keys[kid]}))

    def _lost_updates(self, rt: np.ndarray, rk: np.ndarray, rl: np.ndarray, rext: np.ndarray) -> None:
        wl = (np.frombuffer(self.r_wlater, dtype=np.int8) == 1) if len(self.r_wlater) else np.zeros(0, dtype=bool)
        sel = np.flatnonzero(wl & rext)
        if sel.size < 2:
            return
        triples = np.unique(np.stack([rk[sel], rl[sel], rt[sel]], axis=1), axis=0)
        pairs = triples[:, :2]
        change = np.ones(len(pairs), dtype=bool)
        change[1:] = np.any(pairs[1:] != pairs[:-1], axis=1)
        group = np.cumsum(change) - 1
        sizes = np.bincount(group)
        for g in np.flatnonzero(sizes >= 2).tolist():
            rows = triples[group == g]
            kid, n = int(rows[0, 0]), int(rows[0, 1])
            txns = [int(x) for x in rows[:, 2]]
            entry = self.longest[kid]
            assert entry is not None
            seen = entry[0][:n]
            names = " and ".join(_T(x) for x in txns[:4]) + (" and others" if len(txns) > 4 else "")
            self._lost_case(kid, txns, seen, names)

    def _lost_case(self, kid: int, txns: list[int], seen: list[Any], names: str) -> None:
        k = _V(self.keys[kid])

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
                if v and v[-1] in self.writers[key] and self.writers[key][v[-1]] >> 1 == a:
                    return (f"{_T(a)} appended {_V(v[-1])} to key {k}; {_T(b)} read key {k} as {_V(v)}; "
                            f"so {_T(a)} wr→ {_T(b)}")
        elif etype == RW:
            for v in self._ext_reads(table, a, key):
                j = next((j for j in range(len(v), len(order)) if clean[j]), None)
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

    def support(self, a: int, b: int, etype: int, key: int) -> list[int]:
        """The key's longest reader and every writer in its version order (so the order shows again)."""
        entry = self.longest[key]
        order_writers = {int(w) for w in self._order(key)[1].tolist() if w >= 0}
        return sorted(order_writers | ({entry[1]} if entry is not None else set()))


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _first_duplicate(v: list[Any]) -> Any:
    seen: set[Any] = set()
    for e in v:
        if _hashable(e):
            if e in seen:
                return e
            seen.add(e)
    return None


def _has_duplicates(v: list[Any]) -> bool:
    try:
        return len(set(v)) != len(v)
    except TypeError:
        hashable = [e for e in v if _hashable(e)]
        return len(set(hashable)) != len(hashable)
