"""Blocking client libraries in an async harness: each worker's calls on a thread of its own, bounded.

Many databases' Python clients block. ``asyncio.to_thread`` runs such calls on the event loop's default
pool, a handful of threads shared by every worker, so 10 to 20 workers on a small machine queue behind
each other and a hung call holds a pool thread for good. :class:`BlockingCalls` gives one client (one
worker) a thread of its own instead: calls run there one at a time, each bounded by a timeout. A call that
times out raises :class:`TimeoutError`, which the harness records as ``info`` (as any exception from
``invoke``); its thread is left to finish the call on its own, and the next call gets a new thread, so a
hung call never delays the next one. Threads are daemons: a call that never returns does not keep the
harness from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
_STOP = object()


class _Thread:
    """One daemon thread running submitted calls in order, handing each result to its future's loop."""

    def __init__(self, name: str) -> None:
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (job := self.jobs.get()) is not _STOP:
            loop, future, fn, args, kwargs = job
            try:
                outcome: tuple[Any, BaseException | None] = (fn(*args, **kwargs), None)
            except BaseException as e:  # handed to the caller, whatever it is
                outcome = (None, e)
            with contextlib.suppress(RuntimeError):  # the loop has closed: an abandoned call nobody awaits
                loop.call_soon_threadsafe(_settle, future, *outcome)

    def stop(self) -> None:
        """Let the thread end once its current call (if any) returns."""
        self.jobs.put(_STOP)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # timed out or cancelled meanwhile: nobody waits for it
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class BlockingCalls:
    """Run one client's blocking calls on a thread of its own, each with a timeout (``await calls.run(...)``).

    Make one per client in its ``open`` (or ``__init__``), and ``close`` it in the client's ``close``.

    Args:
        timeout: the default seconds a call may take before it raises :class:`TimeoutError`.
        name: the thread's name (shown by debuggers and ``py-spy``).
    """

    def __init__(self, timeout: float = 5.0, name: str = "fencepost-client") -> None:
        self.timeout = timeout
        self.name = name
        self._thread: _Thread | None = None
        self._generation = 0

    async def run(self, fn: Callable[..., T], *args: Any, timeout: float | None = None, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on this client's thread; its result, or its exception.

        Raises:
            TimeoutError: it took longer than ``timeout`` (default: the helper's); the thread is abandoned to
                finish the call, and the next call runs on a new one.
            RuntimeError: the helper was closed.
        """
        if self._generation < 0:
            raise RuntimeError("BlockingCalls.run after close")
        if self._thread is None:
            self._generation += 1
            self._thread = _Thread(f"{self.name}-{self._generation}")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._thread.jobs.put((loop, future, fn, args, kwargs))
        limit = self.timeout if timeout is None else timeout
        try:
            return await asyncio.wait_for(future, limit)
        except TimeoutError:
            self._abandon()
            raise TimeoutError(f"{getattr(fn, '__name__', 'the call')} took more than {limit:g} s") from None
        except asyncio.CancelledError:
            self._abandon()  # the call may still be running: never queue the next one behind it
            raise

    def _abandon(self) -> None:
        if self._thread is not None:
            self._thread.stop()
            self._thread = None

    def close(self) -> None:
        """End the thread once its current call returns; later calls raise. Safe to call twice."""
        self._abandon()
        self._generation = -1
