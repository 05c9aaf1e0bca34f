"""Client workers: each drives one client through the generator, recording every invocation and outcome.

Jepsen's rules: an exception or timeout in a client is ``info``; a process whose op ended in ``info``
never invokes again, so the worker carries on under a new process number (``+ concurrency``) with a
fresh client.

An exception other than a timeout is also recorded on the completion as ``crash``: its type, where it was
raised (the innermost frame, ``file:line``), and whether it is a programming error
(:data:`PROGRAMMING_ERRORS`), which no client plans for and the ``client-crash`` checker reports.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.cluster_view import ClusterView
from harness.generator import RateLimiter
from harness.history.op import OpType
from harness.protocols import Client, Invocation, OpSource, Outcome, OutcomeObserver, WorkerBound
from harness.recorder import Recorder

_TYPES = {"ok": OpType.OK, "fail": OpType.FAIL, "info": OpType.INFO}
PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (
    AttributeError, TypeError, LookupError, NameError, AssertionError, ArithmeticError, RecursionError)
"""Exceptions only a mistake in a client's code raises: a refusal, a lost connection or a timeout is none."""


def crash_of(e: BaseException) -> dict[str, object]:
    """The ``crash`` field of a completion ended by ``e``: ``{"type", "at", "programming"}``."""
    frames = traceback.extract_tb(e.__traceback__)
    at = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None
    return {"type": type(e).__name__, "at": at, "programming": isinstance(e, PROGRAMMING_ERRORS)}


@dataclass
class Tally:
    """Live counts for the progress display."""

    outcomes: Counter[str] = field(default_factory=Counter)
    active_faults: set[str] = field(default_factory=set)


async def invoke_and_record(
    client_holder: list, process: int, op: Invocation, recorder: Recorder, timeout: float, tally: Tally,
) -> Outcome:
    """Record the invocation, run it with a deadline, record the completion, and return the outcome."""
    recorder.record(process, OpType.INVOKE, op.f, op.key, op.value)
    crash: dict[str, object] | None = None
    try:
        outcome = await asyncio.wait_for(client_holder[0].invoke(op), timeout)
        if outcome.type not in _TYPES:
            outcome = Outcome("info", None, f"client returned unknown outcome type {outcome.type!r}")
    except TimeoutError:
        outcome = Outcome("info", None, "timeout")
    except Exception as e:  # any client failure is an unknown outcome
        outcome = Outcome("info", None, f"{type(e).__name__}: {e}")
        crash = crash_of(e)
    value = outcome.value if outcome.type != "info" else None
    extra = dict(outcome.extra) if crash is None else {**outcome.extra, "crash": crash}
    recorder.record(process, _TYPES[outcome.type], op.f, op.key, value, outcome.error, **extra)
    tally.outcomes[outcome.type] += 1
    return outcome


async def client_worker(
    worker: int, concurrency: int, make_client: Callable[[], Client], source: OpSource, cluster: ClusterView,
    recorder: Recorder, limiter: RateLimiter, deadline: float, op_timeout: float, tally: Tally,
) -> None:
    """Run ops for ``worker`` until the monotonic ``deadline`` or the generator runs dry."""
    process = worker
    observer = source if isinstance(source, OutcomeObserver) else None
    holder = [await _open_bound(make_client, worker, cluster)]
    try:
        while time.monotonic() < deadline:
            await limiter.acquire()
            if time.monotonic() >= deadline:
                break
            op = source.next_op(worker)
            if op is None:
                break
            outcome = await invoke_and_record(holder, process, op, recorder, op_timeout, tally)
            if observer is not None:
                observer.observe(worker, op, outcome)
            if outcome.type == "info":
                process += concurrency
                await holder[0].close()
                holder[0] = await _open_bound(make_client, worker, cluster)
    finally:
        await holder[0].close()


async def _open_bound(make_client: Callable[[], Client], worker: int, cluster: ClusterView) -> Client:
    """A new client for ``worker``, told which worker it serves if it wants to know, then opened."""
    client = make_client()
    if isinstance(client, WorkerBound):
        client.bind(worker)
    await client.open(cluster)
    return client
