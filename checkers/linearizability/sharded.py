"""Check one big history file on every core, from reading it to the last key's verdict.

:func:`checkers.linearizability.checker.check_calls` checks keys in parallel, but only once one
process has read, validated, paired and split the whole history, which is most of the time for a
big file. Here the file is read once as numeric columns (:mod:`harness.history.columns`: Parquet
through Arrow, JSONL in byte ranges, one per process), which validate the history as a whole and say
which rows belong to which call and key. The keys are then dealt into one share per process, the
biggest first to the least loaded share, and each process reads only its share's rows from the file,
builds the ops, pairs them, and checks its keys, sending the verdicts back as it goes.

The ops, calls, call ids and info return times are those the one-process path builds, so verdicts
and counterexamples are the same. Anything off the common path (a malformed row, an invalid
history, a file too small to pay for the processes) gives None, and the caller takes the
one-process path, which reports each problem with its ``file:line``.
"""

from __future__ import annotations

import heapq
import multiprocessing
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from checkers.linearizability.checker import CheckResult, PartitionVerdict, check_partition, fill_result
from checkers.linearizability.memory import share

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection

    from checkers.models.keyed import Keyed

SHARDED_MIN_EVENTS = 100_000
"""Below this many events (Parquet rows), a file is checked in one process: starting more costs more."""
SHARDED_MIN_BYTES = 8 * 2**20
"""The same threshold for JSONL, in bytes (about 100 bytes an event)."""
BATCH = 512
"""Verdicts a worker sends together (an invalid one goes at once)."""


@dataclass(slots=True)
class ShardPlan:
    """Which process reads which rows.

    Attributes:
        shard: each row's share (the nemesis's ops are dealt round the shares, only to be read).
        ids: each invocation row's call id, as :func:`harness.history.pairing.pair_calls` numbers
            calls over the whole history; -1 elsewhere.
        end: the history's last time (an info call returns after it).
        calls: calls in the history.
        partitions: distinct keys among the calls.
        fs: the calls' functions (for choosing the model).
    """

    shard: np.ndarray
    ids: np.ndarray
    end: int
    calls: int
    partitions: int
    fs: set[str]


def big_enough(path: str, fmt: str) -> bool:
    """True when ``path`` holds enough events to be worth several processes."""
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows) >= SHARDED_MIN_EVENTS
        return fmt == "jsonl" and os.path.getsize(path) >= SHARDED_MIN_BYTES
    except Exception:  # an unreadable file: the one-process path says why
        return False


def plan_shards(path: str, fmt: str, shares: int) -> ShardPlan | None:
    """Read the columns and deal the keys into ``shares`` shares; None when the file is not fit."""
    from harness.history.columns import NEMESIS_KIND, invocations, read_columns

    cols = read_columns(path, fmt, shares)
    if cols is None:
        return None
    owner = invocations(cols)
    if owner is None:
        return None
    client = cols.kind < NEMESIS_KIND
    invoke = cols.kind == 0
    per_key = np.bincount(cols.key[invoke], minlength=len(cols.keys))
    partitions = int(np.count_nonzero(per_key))
    if partitions < 2:
        return None
    heap = [(0, s) for s in range(shares)]
    key_share = np.zeros(len(cols.keys), dtype=np.int64)
    for k in np.argsort(-per_key, kind="stable"):
        if per_key[k] == 0:
            break
        load, s = heapq.heappop(heap)
        key_share[k] = s
        heapq.heappush(heap, (load + int(per_key[k]), s))
    rows = np.arange(len(cols.index))
    shard = np.where(client, key_share[cols.key[np.maximum(owner, 0)]], rows % shares)
    ids = np.where(invoke, np.cumsum(invoke) - 1, -1)
    fs = {cols.fs[i] for i in np.unique(cols.f[invoke])}
    end = int(cols.time.max()) if len(cols.time) else 0
    return ShardPlan(shard, ids, end, int(np.count_nonzero(invoke)), partitions, fs)


def check_sharded(path: str, fmt: str, model: Keyed, plan: ShardPlan, *, shares: int, start: float,
                  timeout: float | None, all_violations: bool, explain: bool, split: bool = True,
                  witness: bool = False, max_memory: int | None = None,
                  on_verdict: Callable[[PartitionVerdict], None] | None = None) -> CheckResult | None:
    """Check ``path`` in ``shares`` processes by ``plan``; None when a share finds a malformed row.

    Args:
        path: the history file.
        fmt: ``parquet`` or ``jsonl``.
        model: the keyed model.
        plan: from :func:`plan_shards`.
        shares: processes.
        start: :func:`time.monotonic` when checking the file began.
        timeout: seconds from ``start`` before a key's verdict is unknown.
        all_violations: keep checking after the first invalid key.
        explain: attach counterexamples.
        split: search a key's independent components apart (a key is one component: no effect).
        witness: find a minimal witness for each invalid key.
        max_memory: bytes all the shares may hold; each share gets its part.
        on_verdict: called in this process with each key's verdict as it arrives.

    Raises:
        checkers.models.ModelError: a call the model cannot take (as on the one-process path).
    """
    options = {"deadline": None if timeout is None else start + timeout, "explain": explain, "split": split,
               "witness": witness, "max_rss": share(max_memory, shares)}
    ctx = multiprocessing.get_context("fork")
    conns: list[Connection] = []
    procs = []
    found: list[tuple[int, PartitionVerdict]] = []
    try:
        for s in range(shares):
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_share, args=(s, send, path, fmt, model, plan, options), daemon=True)
            proc.start()
            send.close()
            conns.append(recv)
            procs.append(proc)
        if not _collect(conns, found, all_violations, on_verdict):
            return None
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()
        for conn in conns:
            conn.close()
    found.sort(key=lambda item: item[0])
    verdicts = [v for _, v in found]
    return fill_result(CheckResult(True, model.name, plan.calls, partitions=plan.partitions), verdicts, start)


def _collect(conns: list[Connection], found: list[tuple[int, PartitionVerdict]], all_violations: bool,
             on_verdict: Callable[[PartitionVerdict], None] | None = None) -> bool:
    """Gather the shares' verdicts into ``found``; False when one found a malformed row."""
    from multiprocessing.connection import wait

    pending = list(conns)
    while pending:
        for conn in wait(pending):
            assert isinstance(conn, multiprocessing.connection.Connection)
            try:
                what, got = conn.recv()
            except EOFError:
                raise RuntimeError("a checker process died before it had checked its keys") from None
            if what == "verdicts":
                found.extend(got)
                if on_verdict is not None:
                    for _, v in got:
                        on_verdict(v)
                if not all_violations and any(v.valid is False for _, v in got):
                    return True
            elif what == "done":
                pending.remove(conn)
            elif what == "malformed":
                return False
            else:
                raise got
    return True


def _share(share: int, conn: Connection, path: str, fmt: str, model: Keyed, plan: ShardPlan,
           options: dict[str, Any]) -> None:  # pragma: no cover - runs in the child
    """A child process: read, pair and check one share's keys, sending verdicts on ``conn``."""
    from harness.history.op import Op
    from harness.history.pairing import pair_calls

    try:
        rows = np.flatnonzero(plan.shard == share)
        ops = []
        for _, item in _reader(path, fmt, rows.tolist()):
            if type(item) is not Op:
                conn.send(("malformed", None))
                return
            ops.append(item)
        calls = pair_calls(ops, end=plan.end)
        del ops
        ids = plan.ids[rows]
        for call, i in zip(calls, ids[ids >= 0].tolist(), strict=True):
            call.id = i
        batch: list[tuple[int, PartitionVerdict]] = []
        for part in model.partition(calls):
            verdict = check_partition(part, **options)
            batch.append((part.calls[0].id, verdict))
            if len(batch) >= BATCH or verdict.valid is False:
                conn.send(("verdicts", batch))
                batch = []
        conn.send(("verdicts", batch))
        conn.send(("done", None))
    except BaseException as e:  # raised again by the parent
        conn.send(("error", e))
    finally:
        conn.close()


def _reader(path: str, fmt: str, rows: list[int]) -> Any:
    """The format's reader over the chosen rows only."""
    if fmt == "parquet":
        from harness.history.parquet import read_parquet

        return read_parquet(path, rows)
    from harness.history.jsonl import read_jsonl

    return read_jsonl(path, rows=rows)
