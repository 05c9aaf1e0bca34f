from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

from harness.generator import IndependentKeys, RateLimiter, weighted_choice
from harness.protocols import Invocation, Outcome


def make(rng: random.Random, key: object, n: int) -> Invocation:
    return Invocation("write", key, n)


def test_groups_share_keys_and_rotate_after_ops_per_key() -> None:
    gen = IndependentKeys(random.Random(1), concurrency=8, make_op=make, workers_per_key=4, ops_per_key=10)
    ops = [gen.next_op(w % 8) for w in range(80)]
    per_key = Counter(op.key for op in ops)
    assert all(count == 10 for count in per_key.values())
    assert len(per_key) == 8
    # workers 0-3 and 4-7 never share a key
    first = {gen.next_op(0).key, gen.next_op(3).key}
    second = {gen.next_op(4).key}
    assert not first & second


def test_weighted_choice_is_seeded() -> None:
    mix = [("read", 1.0), ("write", 1.0), ("cas", 2.0)]
    a = [weighted_choice(random.Random(5), mix) for _ in range(3)]
    b = [weighted_choice(random.Random(5), mix) for _ in range(3)]
    assert a == b
    counts = Counter(weighted_choice(r, mix) for r in [random.Random(3)] for _ in range(4000))
    assert counts["cas"] > counts["read"] and counts["cas"] > counts["write"]


def test_rate_limiter_spaces_ops() -> None:
    async def go() -> float:
        limiter = RateLimiter(200)
        start = time.monotonic()
        await asyncio.gather(*(limiter.acquire() for _ in range(41)))
        return time.monotonic() - start

    elapsed = asyncio.run(go())
    assert 0.18 <= elapsed < 2.0


def _stuck(op: Invocation, outcome: Outcome) -> bool:
    return outcome.type != "ok"


def test_a_stuck_key_is_set_aside_and_taken_up_again_later() -> None:
    gen = IndependentKeys(random.Random(1), concurrency=4, make_op=make, workers_per_key=4, ops_per_key=100,
                          stuck=_stuck, stuck_after=3, revisit_after=10)
    ops = [gen.next_op(w) for w in range(4)]
    assert {op.key for op in ops} == {0}
    for w in range(3):
        gen.observe(w, ops[w], Outcome("info", None, "timeout"))
    assert gen.set_aside() == [0]
    moved = gen.next_op(0)
    assert moved.key != 0 and moved.value == 0
    # the fourth op's late completion is for a key the group has left: it counts for nothing
    gen.observe(3, ops[3], Outcome("info", None, "timeout"))
    assert gen.set_aside() == [0]
    assert gen.issued() == {0: 4, moved.key: 1}
    for _ in range(9):
        gen.next_op(1)
    assert gen.next_op(1).key == moved.key  # still on its own key: nothing rotates it
    for w in range(3):
        gen.observe(w, Invocation("write", moved.key, 0), Outcome("fail", None, "no leader"))
    back = gen.next_op(0)
    assert back.key == 0 and back.value == 4  # carries on from the key's own count
    assert gen.set_aside() == [moved.key]


def test_an_ok_between_starts_the_count_again() -> None:
    gen = IndependentKeys(random.Random(1), concurrency=4, make_op=make, workers_per_key=4, ops_per_key=100,
                          stuck=_stuck, stuck_after=3)
    op = gen.next_op(0)
    for outcome in ("info", "info", "ok", "info", "info"):
        gen.observe(0, op, Outcome(outcome))
    assert gen.set_aside() == [] and gen.next_op(0).key == op.key


def test_without_a_stuck_rule_nothing_is_set_aside() -> None:
    gen = IndependentKeys(random.Random(1), concurrency=4, make_op=make, workers_per_key=4, ops_per_key=100)
    op = gen.next_op(0)
    for _ in range(10):
        gen.observe(0, op, Outcome("info"))
    assert gen.set_aside() == [] and gen.next_op(0).key == op.key
