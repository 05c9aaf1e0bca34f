"""Unplanned failures made visible: a traceback in the process's log for every programming error.

A node, master or operator plans for a peer that does not answer, a refusal, a damaged file: those are
handled where they happen. An ``AttributeError``, a ``TypeError`` or a ``KeyError`` escaping a request
handler or a background loop is not planned for: it is a bug, and whatever caught it (the RPC server's
``internal`` reply, the operator's retry of a failed action, a task that ends unnoticed) would hide it.
Each such exception is printed to stderr with its traceback, the way a crashing program reports, so that
a run's log scan (Fencepost's ``log-pattern`` checker, or Jepsen's own log grepping) sees it.

A malformed request, which the RPC server refuses as ``bad_request`` when its handler trips over it, is
logged the same way: in a test run every request comes from Fencepost's own client or faults, so one is a
bug on one side or the other.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from typing import Any

PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (
    AttributeError, TypeError, LookupError, NameError, AssertionError, ArithmeticError, RecursionError)
"""Exceptions that only a mistake in the code raises here: nothing in the protocol handles them."""


def unplanned(e: BaseException) -> bool:
    """Whether ``e`` is a programming error rather than a failure the code plans for."""
    return isinstance(e, PROGRAMMING_ERRORS)


def report(what: str, e: BaseException) -> None:
    """Print ``e``, raised in ``what``, with its traceback to stderr."""
    print(f"unplanned failure in {what}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    sys.stderr.flush()


def report_unplanned(what: str, e: BaseException) -> None:
    """:func:`report` ``e`` if it is :func:`unplanned`."""
    if unplanned(e):
        report(what, e)


def watch(task: asyncio.Task[Any], what: str) -> asyncio.Task[Any]:
    """Report ``task``'s exception when it ends in one that is not planned (cancelling is); return ``task``.
    For loops meant to run as long as their owner: one that dies of a bug would otherwise stop silently."""
    def done(t: asyncio.Task[Any]) -> None:
        if not t.cancelled() and t.exception() is not None:
            report_unplanned(what, t.exception())  # type: ignore[arg-type]

    task.add_done_callback(done)
    return task
