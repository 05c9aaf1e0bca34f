"""Checks of a transactional client against the client contract, for the conformance kit
(:class:`harness.testing.conformance.TransactionalConformance`) and a plugin's own tests.

The contract (docs/plugins.md, "Transactions: the client contract"): the client gets
``Invocation("txn", value=[micro-ops])`` and returns an :class:`~harness.protocols.Outcome`. ``ok`` means committed,
and carries the micro-ops completed, in order, reads filled in; ``fail`` means definitely not committed; ``info``
means unknown. These functions say, in sentences, where a client breaks it:

- :func:`shape_problems`: an ``ok`` whose value is not the invoked micro-ops completed;
- :func:`visibility_problems`: after contended transactions, an ``ok`` write missing from the final state (a
  commit reported that did not happen) or a ``fail`` write present in it (an abort reported for a commit).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.cluster_view import ClusterView
from harness.protocols import Client, Invocation, Outcome, WorkerBound

WRITE_F = {"list-append": "append", "rw-register": "w"}
"""Each transactional workload's write micro-op."""
OP_TIMEOUT_S = 5.0
"""How long one transaction may take before the check counts it ``info``, as the harness does."""


def shape_problems(invoked: Sequence[Sequence[Any]], outcome: Outcome, workload: str) -> list[str]:
    """What is wrong with ``outcome`` as the completion of a transaction of ``invoked`` micro-ops (empty: nothing).

    An ``ok`` must carry a list of as many micro-ops, each ``[f, k, v]`` with the invoked ``f`` and ``k``; a
    write keeps its value; a list-append read is a list (None meaning empty is allowed). ``fail`` and ``info``
    carry anything.
    """
    if outcome.type not in ("ok", "fail", "info"):
        return [f"outcome type {outcome.type!r}: it is ok, fail or info"]
    if outcome.type != "ok":
        return []
    done = outcome.value
    if not isinstance(done, list | tuple) or len(done) != len(invoked):
        return [f"ok carries {done!r}, not the {len(invoked)} micro-op(s) completed"]
    problems = []
    for i, (asked, got) in enumerate(zip(invoked, done, strict=True)):
        if not isinstance(got, list | tuple) or len(got) != 3:
            problems.append(f"micro-op {i}: {got!r} is not [f, k, v]")
        elif (got[0], got[1]) != (asked[0], asked[1]):
            problems.append(f"micro-op {i}: {list(got)!r} completes {list(asked)!r} with another function or key")
        elif asked[0] != "r" and got[2] != asked[2]:
            problems.append(f"micro-op {i}: the write {list(asked)!r} came back as {list(got)!r}")
        elif asked[0] == "r" and workload == "list-append" and not (got[2] is None or isinstance(got[2], list | tuple)):
            problems.append(f"micro-op {i}: a list-append read is a list, not {got[2]!r}")
    return problems


def read_value(micro_op: Sequence[Any], workload: str) -> Any:
    """What a completed read saw, a list-append read as a list (None, meaning empty, as ``[]``)."""
    if workload == "list-append":
        return list(micro_op[2] or [])
    return micro_op[2]


async def run_txn(client: Client, micro_ops: list[list[Any]], timeout: float = OP_TIMEOUT_S) -> Outcome:
    """``client``'s outcome for a transaction of ``micro_ops``: an exception or a timeout is ``info``, as the
    harness records it."""
    try:
        return await asyncio.wait_for(client.invoke(Invocation("txn", None, micro_ops)), timeout)
    except Exception as e:
        return Outcome("info", None, f"{type(e).__name__}: {e}")


async def open_client(make_client: Callable[[], Client], worker: int, cluster: ClusterView) -> Client:
    """A new client for ``worker``, bound and opened as the harness does."""
    client = make_client()
    if isinstance(client, WorkerBound):
        client.bind(worker)
    await client.open(cluster)
    return client


async def commit(make_client: Callable[[], Client], cluster: ClusterView, micro_ops: list[list[Any]],
                 attempts: int = 10) -> tuple[Outcome, list[Outcome]]:
    """Run ``micro_ops`` until a try is ``ok`` (a fail or info is retried, with a new client after an info);
    the last outcome, and every earlier one."""
    client = await open_client(make_client, 0, cluster)
    tries: list[Outcome] = []
    try:
        for _ in range(attempts):
            outcome = await run_txn(client, micro_ops)
            if outcome.type == "ok":
                return outcome, tries
            tries.append(outcome)
            if outcome.type == "info":
                await client.close()
                client = await open_client(make_client, 0, cluster)
            await asyncio.sleep(0.05)
    finally:
        await client.close()
    return tries[-1], tries[:-1]


@dataclass
class Contended:
    """What :func:`contend` saw: each write with how its transaction ended, and the final read of every key.

    Attributes:
        writes: ``(key, value, outcome type)`` for each write micro-op of every transaction.
        final: each key's value in the final read (a list for list-append).
        problems: outcomes whose shape breaks the contract (:func:`shape_problems`).
    """

    writes: list[tuple[Any, Any, str]] = field(default_factory=list)
    final: dict[Any, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


async def contend(make_client: Callable[[], Client], cluster: ClusterView, workload: str, keys: Sequence[Any],
                  clients: int = 6, txns: int = 20) -> Contended:
    """``clients`` clients at once, each running ``txns`` transactions that read one of ``keys`` and write
    another (the shape of write skew, and conflicting writes), then one read of every key.

    Values are unique: client ``c``'s ``t``-th write is ``c * txns + t + 1``.
    """
    seen = Contended()
    write_f = WRITE_F[workload]

    async def one(c: int) -> None:
        client = await open_client(make_client, c, cluster)
        try:
            for t in range(txns):
                read_key, write_key = keys[(c + t) % len(keys)], keys[(c + t + 1) % len(keys)]
                micro_ops = [["r", read_key, None], [write_f, write_key, c * txns + t + 1]]
                outcome = await run_txn(client, micro_ops)
                seen.problems.extend(f"{micro_ops!r}: {p}" for p in shape_problems(micro_ops, outcome, workload))
                seen.writes.append((write_key, c * txns + t + 1, outcome.type))
                if outcome.type == "info":
                    await client.close()
                    client = await open_client(make_client, c, cluster)
        finally:
            await client.close()

    await asyncio.gather(*(one(c) for c in range(clients)))
    reads = [["r", k, None] for k in keys]
    outcome, _ = await commit(make_client, cluster, reads)
    if outcome.type != "ok":
        seen.problems.append(f"the final read {reads!r} never committed: {outcome.type} {outcome.error or ''}")
    else:
        seen.problems.extend(shape_problems(reads, outcome, workload))
        seen.final = {m[1]: m[2] for m in outcome.value}
    return seen


def visibility_problems(seen: Contended, workload: str) -> list[str]:
    """Where the outcomes ``seen`` reported contradict the final state.

    list-append: every ``ok`` append is in its key's final list, no ``fail`` append is, no value is there twice
    and none is there that no transaction appended. rw-register: each key's final value was written by an
    ``ok`` or ``info`` transaction (or the key was never written by one that committed).
    """
    problems: list[str] = []
    ended = {(k, v): how for k, v, how in seen.writes}
    for key, value in seen.final.items():
        if workload == "list-append":
            present = read_value(["r", key, value], workload)
            dupes = sorted({v for v in present if present.count(v) > 1}, key=repr)
            if dupes:
                problems.append(f"key {key!r}'s final list {present!r} holds {dupes!r} twice")
            for v in present:
                how = ended.get((key, v))
                if how is None:
                    problems.append(f"key {key!r}'s final list holds {v!r}, which no transaction appended")
                elif how == "fail":
                    problems.append(f"key {key!r}'s final list holds {v!r}, appended by a transaction reported "
                                    "fail (definitely not committed)")
            missing = [v for (k, v), how in ended.items() if k == key and how == "ok" and v not in present]
            if missing:
                problems.append(f"key {key!r}'s final list {present!r} lacks {missing!r}, appended by transactions "
                                "reported ok (committed)")
        elif value is not None:
            how = ended.get((key, value))
            if how is None:
                problems.append(f"key {key!r} finally reads {value!r}, which no transaction wrote")
            elif how == "fail":
                problems.append(f"key {key!r} finally reads {value!r}, written by a transaction reported fail "
                                "(definitely not committed)")
        elif any(k == key and how == "ok" for k, _, how in seen.writes):
            problems.append(f"key {key!r} finally reads nothing, though transactions writing it were reported ok")
    return problems
