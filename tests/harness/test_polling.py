"""Bounded polling: the first truthy answer, or None once the limit has passed."""

from __future__ import annotations

import asyncio
import time

from harness.polling import poll_until


def test_the_first_truthy_answer_is_returned() -> None:
    answers = iter([None, 0, "", "leader", "later"])

    async def check() -> object:
        return next(answers)

    assert asyncio.run(poll_until(check, 5.0, 0.001)) == "leader"


def test_none_after_the_limit() -> None:
    calls = []

    async def check() -> None:
        calls.append(1)

    began = time.monotonic()
    assert asyncio.run(poll_until(check, 0.1, 0.01)) is None
    assert time.monotonic() - began >= 0.1 and len(calls) > 1
