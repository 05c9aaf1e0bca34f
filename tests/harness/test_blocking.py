"""BlockingCalls: a blocking client library's calls on a worker's own thread, each bounded by a timeout."""

from __future__ import annotations

import asyncio
import threading

import pytest

from harness.blocking import BlockingCalls


def test_each_client_has_its_own_thread_and_its_calls_run_there_in_order() -> None:
    async def scenario() -> None:
        a, b = BlockingCalls(name="a"), BlockingCalls(name="b")
        try:
            ids_a = [await a.run(threading.get_ident) for _ in range(3)]
            id_b = await b.run(threading.get_ident)
            assert len(set(ids_a)) == 1 and id_b not in ids_a and threading.get_ident() not in ids_a
            assert await a.run(lambda x, y=0: x + y, 2, y=3) == 5
            with pytest.raises(ZeroDivisionError):
                await a.run(lambda: 1 / 0)
        finally:
            a.close()
            b.close()

    asyncio.run(scenario())


def test_twenty_workers_blocked_at_once_all_run_without_waiting_for_a_shared_pool() -> None:
    """Every call blocks until all twenty have started: on a shared pool of a few threads they never would."""
    async def scenario() -> None:
        started = threading.Barrier(20, timeout=10)
        calls = [BlockingCalls() for _ in range(20)]
        try:
            await asyncio.gather(*(c.run(started.wait, timeout=15) for c in calls))
        finally:
            for c in calls:
                c.close()

    asyncio.run(scenario())


def test_a_hung_call_times_out_and_the_next_call_does_not_wait_behind_it() -> None:
    async def scenario() -> None:
        release = threading.Event()
        calls = BlockingCalls(timeout=0.2)
        try:
            with pytest.raises(TimeoutError, match=r"took more than 0\.2 s"):
                await calls.run(release.wait)
            assert await calls.run(lambda: "answered", timeout=5) == "answered"  # while the first still hangs
            assert not release.is_set()
        finally:
            release.set()
            calls.close()
        with pytest.raises(RuntimeError, match="after close"):
            await calls.run(lambda: None)

    asyncio.run(scenario())


def test_a_hung_call_is_recorded_as_info_by_the_harness() -> None:
    """Through the worker loop: the timeout is an indeterminate outcome, as any exception from invoke."""
    from harness.client_workers import Tally, invoke_and_record
    from harness.protocols import Invocation, Outcome

    class Recorded:
        def __init__(self) -> None:
            self.ops: list[tuple[object, ...]] = []

        def record(self, *args: object, **extra: object) -> None:
            self.ops.append(args)

    class Client:
        def __init__(self) -> None:
            self.calls = BlockingCalls(timeout=0.2)
            self.hang = threading.Event()

        async def invoke(self, op: Invocation) -> Outcome:
            await self.calls.run(self.hang.wait)
            return Outcome("ok")

    async def scenario() -> Outcome:
        client = Client()
        try:
            return await invoke_and_record([client], 0, Invocation("read", "k"), Recorded(),  # type: ignore[arg-type]
                                           5.0, Tally())
        finally:
            client.hang.set()
            client.calls.close()

    outcome = asyncio.run(scenario())
    assert outcome.type == "info" and outcome.error == "timeout"
