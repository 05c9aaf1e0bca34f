"""A history as a few numeric columns, no op objects: read fast, and checked for well-formedness at once.

A checker that splits a big history between processes reads it this way first: the columns say
which rows belong together (an invocation and its completion, a key's calls) before any process
builds an op. :func:`read_columns` gives None for anything off the common path (a missing or null
field, an unexpected column, a key that is not hashable): the caller then reads the file the usual
way, which reports every problem with its ``file:line``. :func:`invocations` gives None for a
history :class:`harness.history.validate.Validator` would find a problem in, and only then.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

KINDS = {"invoke": 0, "ok": 1, "fail": 2, "info": 3}
"""Type codes; a nemesis op's code is its type's plus :data:`NEMESIS_KIND`."""
NEMESIS_KIND = 4
_PROCESS = re.compile(r"-?[0-9]+")


@dataclass(slots=True)
class HistoryColumns:
    """One entry per op, in file order.

    Attributes:
        index: each op's index.
        time: each op's time.
        process: a code for each op's process number (equal numbers share one; any for the nemesis).
        kind: a code from :data:`KINDS`, plus :data:`NEMESIS_KIND` for the nemesis's ops.
        f: a code into ``fs``.
        fs: the functions, by code.
        key: a code into ``keys``; equal keys (``1`` and ``1.0``) share a code.
        keys: the keys, by code.
    """

    index: np.ndarray
    time: np.ndarray
    process: np.ndarray
    kind: np.ndarray
    f: np.ndarray
    fs: list[str]
    key: np.ndarray
    keys: list[Any]


def read_columns(path: str, fmt: str, jobs: int = 1) -> HistoryColumns | None:
    """The columns of a ``parquet`` or ``jsonl`` history (JSONL read in ``jobs`` processes), or None."""
    try:
        if fmt == "parquet":
            return _parquet(path)
        if fmt == "jsonl":
            return _jsonl(path, jobs)
    except (OSError, ValueError, TypeError, OverflowError):
        pass
    return None


def _canonical(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes for ``values`` such that equal values share one, and the value for each code.

    Raises:
        TypeError: a value is not hashable.
    """
    canon: dict[Any, int] = {}
    codes = [canon.setdefault(v, len(canon)) for v in values]
    return np.array(codes, dtype=np.int64), list(canon)


def _parquet(path: str) -> HistoryColumns | None:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from harness.history.parquet import COLUMNS, _schema

    schema = pq.read_schema(path)
    if schema.names != list(COLUMNS) or not schema.equals(_schema()):
        return None
    text = ["process", "type", "f", "key"]
    table = pq.read_table(path, columns=["index", "time", *text], read_dictionary=text).unify_dictionaries()
    if any(table.column(c).null_count for c in ("index", "time", "process", "type", "f")):
        return None
    index = table.column("index").to_numpy()
    time = table.column("time").to_numpy()
    if len(index) and (index.min() < 0 or time.min() < 0):
        return None

    def encoded(name: str) -> tuple[np.ndarray, list[Any]]:
        chunks = table.column(name).chunks
        words = chunks[0].dictionary.to_pylist() if chunks else []
        parts = [pc.fill_null(c.indices, len(words)).to_numpy() for c in chunks]
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64), words

    proc_codes, words = encoded("process")
    if any(w != "nemesis" and not _PROCESS.fullmatch(w) for w in words):
        return None
    nemesis = np.array([w == "nemesis" for w in words], dtype=bool)[proc_codes]
    process, _ = _canonical([0 if w == "nemesis" else int(w) for w in words])
    codes, words = encoded("type")
    if any(w not in KINDS for w in words):
        return None
    kind = np.array([KINDS[w] for w in words], dtype=np.int8)[codes] + NEMESIS_KIND * nemesis.astype(np.int8)
    f, fs = encoded("f")
    if not all(fs):
        return None
    codes, texts = encoded("key")
    key_codes, keys = _canonical([json.loads(t) for t in texts] + [None])
    return HistoryColumns(index, time, process[proc_codes], kind.astype(np.int8), f, fs, key_codes[codes], keys)


def _jsonl(path: str, jobs: int) -> HistoryColumns | None:
    """JSONL columns, the file cut into ``jobs`` byte ranges on line boundaries read in parallel."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as fh:
        for i in range(1, max(1, jobs)):
            fh.seek(max(cuts[-1], size * i // jobs))
            if fh.tell() > 0:
                fh.seek(fh.tell() - 1)
                fh.readline()  # to the start of the next line
            cuts.append(fh.tell())
    cuts.append(size)
    ranges = [(path, a, b) for a, b in itertools.pairwise(cuts) if b > a]
    if len(ranges) > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(len(ranges)) as pool:
            parts = pool.map(_jsonl_range, ranges)
    else:
        parts = [_jsonl_range(r) for r in ranges]
    if any(p is None for p in parts):
        return None
    procs: dict[int, int] = {}
    fs: dict[str, int] = {}
    keys: dict[Any, int] = {}
    proc_codes, f_codes, key_codes = [], [], []
    for p in parts:
        assert p is not None
        proc_codes.append(np.array([procs.setdefault(x, len(procs)) for x in p[8]], dtype=np.int64)[p[2]])
        f_codes.append(np.array([fs.setdefault(f, len(fs)) for f in p[5]], dtype=np.int64)[p[4]])
        key_codes.append(np.array([keys.setdefault(k, len(keys)) for k in p[7]], dtype=np.int64)[p[6]])

    def joined(i: int, dtype: Any) -> np.ndarray:
        return np.concatenate([np.asarray(p[i], dtype=dtype) for p in parts if p is not None] or [np.zeros(0, dtype)])

    def codes(lists: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(lists or [np.zeros(0, np.int64)])

    return HistoryColumns(joined(0, np.int64), joined(1, np.int64), codes(proc_codes), joined(3, np.int8),
                          codes(f_codes), list(fs), codes(key_codes), list(keys))


def _jsonl_range(job: tuple[str, int, int]) -> tuple[Any, ...] | None:
    """The columns of the lines starting in ``[start, stop)``, local codes and all, or None."""
    import orjson

    path, start, stop = job
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(stop - start)
    index: list[int] = []
    time: list[int] = []
    proc_code: list[int] = []
    kind: list[int] = []
    f_code: list[int] = []
    key_code: list[int] = []
    procs: dict[int, int] = {}
    fs: dict[str, int] = {}
    keys: dict[Any, int] = {}
    kinds = KINDS
    try:
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            rec = orjson.loads(raw)
            ix, t, p, f = rec["index"], rec["time"], rec["process"], rec["f"]
            k = kinds[rec["type"]]
            if type(ix) is not int or type(t) is not int or ix < 0 or t < 0 or type(f) is not str or not f:
                return None
            if type(p) is not int:
                if p != "nemesis":
                    return None
                p, k = 0, k + NEMESIS_KIND
            index.append(ix)
            time.append(t)
            proc_code.append(procs.setdefault(p, len(procs)))
            kind.append(k)
            f_code.append(fs.setdefault(f, len(fs)))
            key_code.append(keys.setdefault(rec.get("key"), len(keys)))
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    return (np.array(index, np.int64), np.array(time, np.int64), np.array(proc_code, np.int64),
            np.array(kind, np.int8), np.array(f_code, np.int64), list(fs), np.array(key_code, np.int64), list(keys),
            list(procs))


def invocations(cols: HistoryColumns) -> np.ndarray | None:
    """For each op, the row of the invocation it belongs to (its own row for an invocation, -1 for
    the nemesis's ops); None when the history breaks a rule of :mod:`harness.history.validate`.

    The rules, per client process in file order: invocations and completions alternate, starting
    with an invocation; a completion has its invocation's ``f``; nothing follows an ``info``
    completion. Over all ops: indices increase, times never decrease.
    """
    n = len(cols.index)
    idx, t = cols.index, cols.time
    if n > 1 and (np.any(idx[1:] <= idx[:-1]) or np.any(t[1:] < t[:-1])):
        return None
    client = np.flatnonzero(cols.kind < NEMESIS_KIND)
    by = cols.process[client]
    if len(by) and by.max() < 2**15:
        by = by.astype(np.int16)  # a stable sort of 16-bit ints is a radix sort
    order = client[np.argsort(by, kind="stable")]
    p, k, f = cols.process[order], cols.kind[order], cols.f[order]
    m = len(order)
    first = np.ones(m, dtype=bool)
    first[1:] = p[1:] != p[:-1]
    starts = np.flatnonzero(first)
    pos = np.arange(m) - np.repeat(starts, np.diff(np.append(starts, m)))
    inv = k == KINDS["invoke"]
    if np.any(inv != (pos % 2 == 0)):
        return None
    comp = np.flatnonzero(~inv)  # each at an odd position: the row before it is its invocation
    if np.any(f[comp] != f[comp - 1]):
        return None
    last = np.ones(m, dtype=bool)
    last[:-1] = p[1:] != p[:-1]
    if np.any((k == KINDS["info"]) & ~last):
        return None
    out = np.full(n, -1, dtype=np.int64)
    out[order[inv]] = order[inv]
    out[order[comp]] = order[comp - 1]
    return out
