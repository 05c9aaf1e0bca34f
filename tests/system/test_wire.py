"""An RPC call's timeout bounds the whole call: the wait for its connection, the connect, and the reply.

The peer is a real loopback listener whose accept queue is full, so the kernel drops new SYNs and a
connect hangs until a retransmitted SYN finds room: the same stall a cut-off node gives.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from system.wire import RpcConnection, Unreachable


@dataclass
class StalledPeer:
    """A listener that takes no new connection until ``admit`` is set; then it accepts one and never replies."""

    port: int
    admit: threading.Event = field(default_factory=threading.Event)
    accepted_at: float | None = None
    closing: bool = False


@contextmanager
def stalled_peer() -> Iterator[StalledPeer]:
    """A loopback listener with backlog 0, its one queue slot taken, so connects to it hang."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    filler = socket.create_connection(listener.getsockname(), timeout=5)
    peer = StalledPeer(listener.getsockname()[1])
    held: list[socket.socket] = []

    def serve() -> None:
        peer.admit.wait()
        if peer.closing:
            return
        listener.settimeout(10)
        try:
            first, _ = listener.accept()  # the filler: frees the queue slot
            held.append(first)
            conn, _ = listener.accept()
        except OSError:
            return
        peer.accepted_at = time.monotonic()
        held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield peer
    finally:
        peer.closing = True
        peer.admit.set()
        thread.join(15)
        listener.close()
        for s in [filler, *held]:
            s.close()


async def outcome_of(call: asyncio.Task[object]) -> type[BaseException] | None:
    """The type of exception ``call`` ended with, or None if it returned."""
    try:
        await call
    except Exception as e:
        return type(e)
    return None


def test_a_short_call_does_not_queue_behind_a_longer_calls_connect() -> None:
    async def scenario(port: int) -> tuple[bool, type[BaseException] | None]:
        conn = RpcConnection("127.0.0.1", port)
        long_call = asyncio.create_task(conn.call("hello", None, {}, timeout=20.0))
        await asyncio.sleep(0.05)  # the long call's connect is under way
        with pytest.raises(Unreachable):
            await conn.call("hello", None, {}, timeout=0.3)
        long_still_waiting = not long_call.done()
        await conn.close()
        return long_still_waiting, await outcome_of(long_call)

    with stalled_peer() as peer:
        long_still_waiting, long_outcome = asyncio.run(scenario(peer.port))
    assert long_still_waiting, "the 0.3 s call waited for the 20 s call's connect"
    assert long_outcome is Unreachable  # closing abandons the connect: never sent


def test_the_reply_timer_counts_from_the_start_of_the_call() -> None:
    timeout = 2.5

    async def scenario(peer: StalledPeer) -> tuple[float, type[BaseException] | None]:
        conn = RpcConnection("127.0.0.1", peer.port)
        started = time.monotonic()
        call = asyncio.create_task(conn.call("hello", None, {}, timeout=timeout))
        await asyncio.sleep(0.2)
        peer.admit.set()  # the SYN retransmitted after about 1 s now finds room
        outcome = await outcome_of(call)
        ended = time.monotonic()
        await conn.close()
        return ended - started, outcome

    with stalled_peer() as peer:
        elapsed, outcome = asyncio.run(scenario(peer))
        accepted_at = peer.accepted_at
    assert accepted_at is not None, "the connect never completed, so this run says nothing about the reply timer"
    assert outcome is TimeoutError  # sent, never answered: outcome unknown
    # The reply timer must not restart once the connection opens: the call ends by its own deadline, which
    # is well before ``timeout`` after the (retransmit-delayed) accept.
    assert elapsed < timeout + 0.5, f"{elapsed:.2f} s for a {timeout} s call"
