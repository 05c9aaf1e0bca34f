"""The fake's transactional store: serializable mode is equivalent to a serial execution, snapshot isolation lets
write skew commit, and the fake's client maps what happened to ok, fail and info."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cluster_view import ClusterView
from harness.protocols import Invocation
from harness.testing import FakeStore, NodeStates
from harness.testing.fake import FakeTxnClient, Unavailable
from harness.testing.txn_store import SERIALIZABLE, SNAPSHOT_ISOLATION, Conflict, MalformedMicroOp, TxnStore


def write_skew(store: TxnStore) -> list[str]:
    """Two transactions, each reading the key the other appends to, interleaved; how each commit ended."""
    t1, t2 = store.begin(), store.begin()
    assert t1.run(["r", "x", None]) == ["r", "x", None] and t2.run(["r", "y", None]) == ["r", "y", None]
    t1.run(["append", "y", 1])
    t2.run(["append", "x", 1])
    ended = []
    for t in (t1, t2):
        try:
            t.commit()
            ended.append("ok")
        except Conflict:
            ended.append("fail")
    return ended


def test_serializable_refuses_write_skew_and_snapshot_isolation_commits_it() -> None:
    assert write_skew(TxnStore(SERIALIZABLE)) == ["ok", "fail"]
    si = TxnStore(SNAPSHOT_ISOLATION)
    assert write_skew(si) == ["ok", "ok"]
    assert si.latest("x") == (1,) and si.latest("y") == (1,)


@pytest.mark.parametrize("mode", [SERIALIZABLE, SNAPSHOT_ISOLATION])
def test_both_modes_refuse_a_lost_update_and_read_their_own_writes_from_a_snapshot(mode: str) -> None:
    store = TxnStore(mode)
    seed = store.begin()
    seed.run(["append", "k", 1])
    seed.commit()
    t1, t2, reader = store.begin(), store.begin(), store.begin()
    assert t1.run(["append", "k", 2]) == ["append", "k", 2]
    assert t1.run(["r", "k", None], empty=[]) == ["r", "k", [1, 2]]  # its own append, after the snapshot's
    t2.run(["append", "k", 3])
    t1.commit()
    with pytest.raises(Conflict, match="key 'k'"):  # first committer wins
        t2.commit()
    assert reader.run(["r", "k", None]) == ["r", "k", [1]]  # the snapshot of its start, not t1's commit
    assert reader.commit() == reader.start  # read-only: never refused
    assert store.begin().run(["r", "k", None]) == ["r", "k", [1, 2]]
    assert store.begin().run(["r", "never", None], empty=[]) == ["r", "never", []]
    assert (store.commits, store.aborts) == (2, 1)


def test_registers_and_malformed_micro_ops() -> None:
    store = TxnStore()
    t = store.begin()
    t.run(["w", 5, "a"])
    t.run(["w", 5, "b"])
    assert t.run(["r", 5, None]) == ["r", 5, "b"]
    t.commit()
    with pytest.raises(RuntimeError):
        t.commit()
    assert store.begin().run(["r", 5, None]) == ["r", 5, "b"]
    with pytest.raises(MalformedMicroOp, match="unknown micro-op function 'cas'"):
        store.begin().run(["cas", 5, None])
    with pytest.raises(MalformedMicroOp, match=r"\[f, k, v\]"):
        store.begin().run(["r", 5])
    with pytest.raises(ValueError, match="unknown isolation mode"):
        TxnStore("read-committed")


# A schedule: transactions (each a list of micro-ops over 3 keys) and an interleaving of their steps.
micro_ops = st.lists(st.tuples(st.sampled_from(["r", "append"]), st.integers(0, 2)), min_size=1, max_size=4)
schedules = st.tuples(st.lists(micro_ops, min_size=2, max_size=6), st.randoms(use_true_random=False))


def run_interleaved(store: TxnStore, txns: list[list[tuple[str, int]]], rng: Any) -> list[tuple[int, int, list]]:
    """Run ``txns`` with their steps (begin, each micro-op, commit) interleaved at random; for each committed
    one: its serialization point (commit stamp, or start for a read-only one), its index, its completed ops."""
    steps = [0] * len(txns)
    open_txns: dict[int, Any] = {}
    results: dict[int, list] = {}
    committed = []
    pending = list(range(len(txns)))
    while pending:
        i = rng.choice(pending)
        ops = txns[i]
        if steps[i] == 0:
            open_txns[i] = store.begin()
        elif steps[i] <= len(ops):
            f, k = ops[steps[i] - 1]
            value = 100 * i + steps[i] if f == "append" else None
            results.setdefault(i, []).append(open_txns[i].run([f, k, value], empty=[]))
        else:
            try:
                stamp = open_txns[i].commit()
                read_only = all(f == "r" for f, _ in ops)
                committed.append((stamp, 1 if read_only else 0, i, results[i]))
            except Conflict:
                pass
            pending.remove(i)
        steps[i] += 1
    return [(point, i, done) for point, _, i, done in sorted(committed)]


@settings(max_examples=150, deadline=None)
@given(schedules)
def test_serializable_mode_equals_running_the_committed_transactions_one_at_a_time(schedule: Any) -> None:
    """Replaying the committed transactions alone, in order of their serialization points (a writer's commit,
    a read-only one's start, after the commit it saw), gives every read they saw: the history is serializable."""
    txns, rng = schedule
    committed = run_interleaved(TxnStore(SERIALIZABLE), txns, rng)
    state: dict[int, list[int]] = {}
    for _, _, done in committed:
        for f, k, v in done:
            if f == "append":
                state[k] = [*state.get(k, []), v]
            else:
                assert v == state.get(k, []), (committed, done)


def test_snapshot_isolation_is_not_serializable_on_some_schedule() -> None:
    """The same replay finds a read no serial order explains under snapshot isolation (the property above can
    fail)."""
    import random

    txns = [[("r", 0), ("append", 1)], [("r", 1), ("append", 0)]]
    for seed in range(50):
        committed = run_interleaved(TxnStore(SNAPSHOT_ISOLATION), txns, random.Random(seed))
        state: dict[int, list[int]] = {}
        broken = False
        for _, _, done in committed:
            for f, k, v in done:
                if f == "append":
                    state[k] = [*state.get(k, []), v]
                elif v != state.get(k, []):
                    broken = True
        if broken:
            return
    pytest.fail("write skew never showed in 50 interleavings")


class GoesAway(FakeStore):
    """A fake store whose client's home node becomes unreachable after ``calls`` reachability checks."""

    def __init__(self, calls: int) -> None:
        super().__init__(["n1", "n2"], NodeStates())
        self.calls = calls

    def reach(self, node: str) -> None:
        self.calls -= 1
        if self.calls < 0:
            raise Unavailable(f"{node} is down")


@pytest.mark.parametrize(("calls", "kind", "applied"), [
    (0, "fail", False),  # before the first micro-op: aborted
    (1, "fail", False),  # before the second
    (2, "info", False),  # while the commit is sent: lost, and the client cannot tell
    (3, "info", True),   # after the commit applied, before the reply
    (4, "ok", True),
])
def test_the_fake_client_maps_where_its_node_went_away_to_fail_or_info(calls: int, kind: str, applied: bool) -> None:
    store = GoesAway(calls)
    client = FakeTxnClient(lambda: store, "list-append")
    asyncio.run(client.open(cast(ClusterView, FakeCluster())))
    invoked = [["append", 0, 1], ["r", 0, None]]
    outcome = asyncio.run(client.invoke(Invocation("txn", None, invoked)))
    assert outcome.type == kind, outcome
    assert (store.txns.latest(0) is not None) is applied
    if kind == "ok":
        assert outcome.value == [["append", 0, 1], ["r", 0, [1]]]
    if kind == "fail":
        assert outcome.value == invoked and "down" in str(outcome.error)


def test_the_fake_client_reports_a_refused_commit_as_fail() -> None:
    store = FakeStore(["n1"], NodeStates())
    client = FakeTxnClient(lambda: store, "rw-register")
    asyncio.run(client.open(cast(ClusterView, FakeCluster())))

    async def two_at_once() -> list[str]:
        done = await asyncio.gather(*(client.invoke(Invocation("txn", None, [["r", 0, None], ["w", 0, v]]))
                                      for v in (1, 2)))
        return sorted(o.type for o in done)

    assert asyncio.run(two_at_once()) == ["fail", "ok"]
    assert asyncio.run(client.invoke(Invocation("txn", None, [["r", 9, None]]))).value == [["r", 9, None]]
    with pytest.raises(ValueError, match="runs txn"):
        asyncio.run(client.invoke(Invocation("read", 0)))


class FakeCluster:
    """The one thing a fake client asks of a cluster: its nodes."""

    def nodes(self) -> list[str]:
        return ["n1"]
