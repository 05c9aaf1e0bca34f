from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

from harness.generator import IndependentKeys, RateLimiter, weighted_choice
from harness.protocols import Invocation


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
