"""Every micro-op of a history as flat arrays, checked against the workload's format.

The checks run over whole columns (``set(map(type, ...))``); only when one fails is the offending micro-op looked
for, to name it with its op's index and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, compress
from typing import Any, NoReturn

import numpy as np

from checkers.txn import words
from checkers.txn.errors import MalformedTxn
from checkers.txn.txns import OK, TxnTable

READ, WRITE = 0, 1


@dataclass
class Mops:
    """The micro-ops, in transaction order, then position.

    Attributes:
        txn: each micro-op's transaction (int32, as the other per-micro-op columns: cast before arithmetic).
        idx: its position in the transaction.
        f: :data:`READ` or :data:`WRITE` (``append`` or ``w``).
        key: its key id.
        values: its value, as given.
        committed: it belongs to an ok transaction (so a read's value is known).
        keys: key id -> the key.
        keys_are_ints: every key is an int (key ids are then in the keys' order).
        write_f: the workload's write micro-op (``append`` or ``w``).
    """

    txn: np.ndarray
    idx: np.ndarray
    f: np.ndarray
    key: np.ndarray
    values: list[Any]
    committed: np.ndarray
    keys: list[Any]
    keys_are_ints: bool
    write_f: str

    def __len__(self) -> int:
        return len(self.txn)


def flatten(table: TxnTable, write_f: str) -> Mops:
    """All micro-ops; each must be ``[f, key, value]`` with ``f`` one of ``write_f`` and ``r``.

    Raises:
        MalformedTxn: naming the first malformed micro-op's op index and line.
    """
    values = table.values
    lens = table.lens if table.lens is not None else np.fromiter(map(len, values), dtype=np.int64,
                                                                 count=len(values))
    total = int(lens.sum())
    txn = np.repeat(np.arange(len(values), dtype=np.int32), lens)
    starts = np.zeros(len(values), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    idx = (np.arange(total, dtype=np.int64) - np.repeat(starts, lens)).astype(np.int32)
    # One pass over the micro-ops: their items, three per micro-op. A micro-op of another length shifts every
    # later one, which the checks of the columns below then catch (an f that is no function name, a key of
    # the wrong type) unless lengths that differ exactly make up for each other; only then is each looked at.
    try:
        items = list(chain.from_iterable(chain.from_iterable(values)))
    except TypeError:
        items = []
    if len(items) != 3 * total:
        _raise_first_bad(table, values, txn, idx, write_f)
    fs, ks, vs = items[0::3], items[1::3], items[2::3]
    del items
    try:
        f = np.fromiter(map({write_f: WRITE, "r": READ}.__getitem__, fs), dtype=np.int8, count=total)
    except (KeyError, TypeError):
        _raise_first_bad(table, values, txn, idx, write_f)
    ints = small_ints(ks)
    if ints is not None:
        keys, key = _int_key_ids(ints)
        keys_are_ints = True
    else:
        if not set(map(type, ks)) <= {int, str}:
            _raise_first_bad(table, values, txn, idx, write_f)
        ids: dict[Any, int] = {}
        key = np.fromiter((ids.setdefault(k, len(ids)) for k in ks), dtype=np.int64, count=len(ks))
        keys, keys_are_ints = list(ids), False
    committed = (table.kind == OK)[txn] if total else np.zeros(0, dtype=bool)
    return Mops(txn, idx, f, key.astype(np.int32), vs, committed, keys, keys_are_ints, write_f)


def _int_key_ids(arr: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Key ids for int keys, in the keys' order."""
    if arr.max() < 4 * len(arr) + 1024:
        present = np.zeros(int(arr.max()) + 1, dtype=bool)
        present[arr] = True
        rank = np.cumsum(present) - 1
        return np.flatnonzero(present).tolist(), rank[arr]
    uniq, inverse = np.unique(arr, return_inverse=True)
    return uniq.tolist(), inverse.reshape(-1)


def _raise_first_bad(table: TxnTable, values: list[Any], txn: np.ndarray, idx: np.ndarray, write_f: str) -> NoReturn:
    """Raise MalformedTxn for the first micro-op that is not ``[f, key, value]`` of the workload."""
    names = f"{'list-append' if write_f == 'append' else 'rw-register'} micro-ops are {write_f} and r"
    for i, m in enumerate(chain.from_iterable(values)):
        shown = words.value(m) if isinstance(m, list | tuple) else repr(m)
        why = None
        if type(m) not in (list, tuple) or len(m) != 3:
            why = "expected [f, key, value]"
        elif not isinstance(m[0], str) or m[0] not in (write_f, "r"):
            why = names
        elif type(m[1]) not in (int, str):
            why = "a key must be an integer or a string"
        if why is not None:
            raise table.error(int(txn[i]), f"micro-op {int(idx[i])} {shown}: {why}")
    raise AssertionError("no malformed micro-op found")


def bad_mop(table: TxnTable, mops: Mops, i: int, why: str) -> MalformedTxn:
    """A MalformedTxn for micro-op ``i``."""
    m = [("r", mops.write_f)[int(mops.f[i])], mops.keys[int(mops.key[i])], mops.values[i]]
    return table.error(int(mops.txn[i]), f"micro-op {int(mops.idx[i])} {words.value(m)}: {why}")


_SHIFT = 40


class ValueIndex:
    """Rows of written ``(key id, value)`` pairs, looked up in bulk (sorted int64 codes when values are small
    non-negative ints, as generated histories' are; a dict otherwise).

    Args:
        kid: each write's key id.
        vals: each write's value.
        nkeys: how many keys there are.
        ints: ``vals`` as :func:`small_ints` gives them, when already known.
    """

    def __init__(self, kid: np.ndarray, vals: list[Any], nkeys: int, ints: np.ndarray | None = None) -> None:
        self.n = len(vals)
        self._codes: np.ndarray | None = None
        self._map: dict[tuple[int, Any], int] = {}
        self._dup: tuple[int, int] | None = None
        arr = (ints if ints is not None else small_ints(vals)) if nkeys < (1 << 23) else None
        kid = kid.astype(np.int64)
        if arr is not None:
            codes = (kid << _SHIFT) | arr
            order = np.argsort(codes, kind="stable")
            srt = codes[order]
            same = np.flatnonzero(srt[1:] == srt[:-1])
            if len(same):
                pairs = sorted((int(order[i]), int(order[i + 1])) for i in same.tolist())
                self._dup = min(pairs, key=lambda p: p[1])
            self._order, self._sorted = order, srt
            self._codes = codes
            return
        for row, (k, v) in enumerate(zip(kid.tolist(), vals, strict=True)):
            first = self._map.setdefault((k, v), row)
            if first != row and self._dup is None:
                self._dup = (first, row)

    def duplicate(self) -> tuple[int, int] | None:
        """Two rows that wrote the same value to the same key (the earlier pair by its second row), if any."""
        return self._dup

    def lookup(self, kid: np.ndarray, vals: list[Any]) -> np.ndarray:
        """The row that wrote each ``(kid[i], vals[i])``, or -1."""
        if not vals:
            return np.zeros(0, dtype=np.int64)
        if self._codes is not None:
            if len(self._sorted) == 0:
                return np.full(len(vals), -1, dtype=np.int64)
            arr = small_ints(vals)
            if arr is None:  # some values are no small ints: those match nothing
                arr = np.fromiter((v if type(v) is int and 0 <= v < (1 << _SHIFT) else -1 for v in vals),
                                  dtype=np.int64, count=len(vals))
            codes = (kid.astype(np.int64) << _SHIFT) | np.maximum(arr, 0)
            pos = np.minimum(np.searchsorted(self._sorted, codes), len(self._sorted) - 1)
            hit = (arr >= 0) & (self._sorted[pos] == codes)
            return np.where(hit, self._order[pos], -1)
        get = self._map.get
        out = np.empty(len(vals), dtype=np.int64)
        for i, (k, v) in enumerate(zip(kid.tolist(), vals, strict=True)):
            try:
                out[i] = get((k, v), -1)
            except TypeError:
                out[i] = -1
        return out


def small_ints(vals: list[Any]) -> np.ndarray | None:
    """``vals`` as int64 when every one is an int in [0, 2**40) (one C pass: numpy's own conversion), else None."""
    if not vals:
        return None
    try:
        arr = np.array(vals)
    except (ValueError, OverflowError):
        return None
    if arr.dtype.kind != "i" or arr.ndim != 1:
        return None
    if arr.min() < 0 or arr.max() >= (1 << _SHIFT):
        return None
    return arr.astype(np.int64, copy=False)



def written(table: TxnTable, mops: Mops, verb: str, participle: str, workload: str
            ) -> tuple[np.ndarray, ValueIndex]:
    """The writes (their positions in ``mops``), and the index from (key, value) to the write.

    Args:
        verb, participle: how the workload says it writes ("append" and "appended", "write" and "written").
        workload: its name, for the message when a value is written twice to one key.

    Raises:
        MalformedTxn: a written value is neither an integer nor a string, or two micro-ops write the same value
            to one key (the workload needs every written value unique per key).
    """
    w = np.flatnonzero(mops.f == WRITE)
    vals = list(compress(mops.values, (mops.f == WRITE).view(np.uint8).tobytes()))
    ints = small_ints(vals)
    if ints is None and not set(map(type, vals)) <= {int, str}:
        i = next(int(j) for j, v in zip(w.tolist(), vals, strict=True) if type(v) not in (int, str))
        article = "an" if participle[0] in "aeiou" else "a"
        raise bad_mop(table, mops, i, f"{article} {participle} value must be an integer or a string")
    index = ValueIndex(mops.key[w], vals, len(mops.keys), ints)
    dup = index.duplicate()
    if dup is not None:
        i, j = int(w[dup[0]]), int(w[dup[1]])
        first, second, value = words.t(int(mops.txn[i])), words.t(int(mops.txn[j])), words.value(mops.values[j])
        raise bad_mop(table, mops, j, f"{first} and {second} both {verb} {value} to key "
                                      f"{words.value(mops.keys[int(mops.key[j])])}; "
                                      f"{workload} needs every {participle} value unique per key")
    return w, index
