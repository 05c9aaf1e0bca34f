"""Programming errors in handlers and background loops reach the log with a traceback; planned failures do not."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from checkers.log_pattern import DEFAULT_PATTERNS
from system.admin import call
from system.failures import unplanned, watch
from system.wire import RpcError, RpcServer

TRACEBACK = "Traceback (most recent call last):"


async def _handler(method: str, to: str | None, params: dict[str, Any]) -> Any:
    if method == "refuse":
        raise RpcError("busy", "planned")
    if method == "unreachable":
        raise OSError("planned: a peer is down")
    if method == "bug":
        return None.stop()  # type: ignore[attr-defined]
    return "fine"


async def _serve_and_call(methods: list[str]) -> list[str]:
    server = RpcServer(_handler)
    await server.start("127.0.0.1", 0)
    answers = []
    try:
        for method in methods:
            try:
                answers.append(str(await call("127.0.0.1", server.port, method, {}, timeout=5)))
            except RpcError as e:
                answers.append(e.code)
    finally:
        await server.close()
    return answers


def test_a_handler_bug_is_logged_with_its_traceback_and_planned_refusals_are_not(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert asyncio.run(_serve_and_call(["refuse", "unreachable", "ok"])) == ["busy", "internal", "fine"]
    assert TRACEBACK not in capsys.readouterr().err
    assert asyncio.run(_serve_and_call(["bug"])) == ["internal"]
    err = capsys.readouterr().err
    assert TRACEBACK in err and "AttributeError" in err and "in _handler" in err
    assert re.search(DEFAULT_PATTERNS["traceback"], err, re.MULTILINE), "the log-pattern checker sees it"


async def _loop_dies(exc: BaseException | None) -> None:
    async def loop() -> None:
        await asyncio.sleep(0)
        if exc is not None:
            raise exc
        await asyncio.sleep(3600)

    task = watch(asyncio.create_task(loop()), "a test loop")
    await asyncio.sleep(0.05)
    if exc is None:
        task.cancel()
    await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(("exc", "logged"), [(KeyError("tablet"), True), (None, False),
                                             (ConnectionResetError("peer"), False)])
def test_a_watched_loop_that_dies_of_a_bug_is_logged(exc: BaseException | None, logged: bool,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(_loop_dies(exc))
    err = capsys.readouterr().err
    assert (TRACEBACK in err) is logged
    assert ("unplanned failure in a test loop: KeyError" in err) is logged


def test_programming_errors_are_unplanned_and_transport_failures_are_not() -> None:
    assert all(unplanned(e) for e in (AttributeError(), TypeError(), KeyError(), IndexError(), ZeroDivisionError()))
    assert not any(unplanned(e) for e in (TimeoutError(), OSError(), RpcError("busy"), ValueError()))
