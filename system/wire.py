"""The RPC used between clients, nodes and operators: length-prefixed JSON over TCP.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. A request is
``{"id": N, "method": M, "to": UUID-or-null, "params": {...}}``; its response carries the same id and
either ``{"ok": true, "result": R}`` or ``{"ok": false, "error": CODE, "message": TEXT, ...}``.
Requests on one connection may be answered out of order, so a connection carries many calls at once.

Error codes are definite refusals: the request had no effect. Transport trouble is raised as
:class:`Unreachable` (never sent: definite) or :class:`ConnectionLost` / ``TimeoutError`` (sent, outcome
unknown).
"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from system.failures import report_unplanned

MAX_FRAME = 64 * 1024 * 1024
_HEADER = struct.Struct(">I")

Handler = Callable[[str, "str | None", dict[str, Any]], Awaitable[Any]]


class RpcError(Exception):
    """A definite refusal: raised by a handler, sent as an error response, raised again at the caller."""

    def __init__(self, code: str, message: str = "", **data: Any) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message
        self.data = data


class Unreachable(Exception):
    """The connection could not be opened, so the request was never sent."""


class ConnectionLost(Exception):
    """The connection broke after the request was sent; it may or may not have taken effect."""


class FrameError(Exception):
    """The peer sent bytes that are not a valid frame."""


def encode(obj: Any) -> bytes:
    """One frame holding ``obj`` as compact JSON."""
    body = json.dumps(obj, separators=(",", ":")).encode()
    return _HEADER.pack(len(body)) + body


class Framer:
    """Splits a byte stream into decoded frames."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        """Add bytes; return every frame now complete. Raise FrameError on garbage or an oversized frame."""
        buf = self._buf
        buf += data
        out = []
        while len(buf) >= 4:
            (length,) = _HEADER.unpack_from(buf, 0)
            if length > MAX_FRAME:
                raise FrameError(f"frame of {length} bytes exceeds the {MAX_FRAME}-byte limit")
            if len(buf) < 4 + length:
                break
            body = bytes(buf[4: 4 + length])
            del buf[: 4 + length]
            try:
                out.append(json.loads(body))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise FrameError(f"frame is not JSON: {e}") from e
        return out


class _ServerProtocol(asyncio.Protocol):
    def __init__(self, server: RpcServer) -> None:
        self.server = server
        self.framer = Framer()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server._transports.add(transport)

    def data_received(self, data: bytes) -> None:
        t = self.transport
        assert t is not None
        try:
            msgs = self.framer.feed(data)
        except FrameError as e:
            t.write(encode({"id": None, "ok": False, "error": "bad_frame", "message": str(e)}))
            t.close()
            return
        for msg in msgs:
            if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
                t.write(encode({"id": None, "ok": False, "error": "bad_request",
                                "message": "a request is an object with a string 'method'"}))
                continue
            self.server._spawn(msg, t)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.server._transports.discard(self.transport)


class RpcServer:
    """Serves one handler on a TCP address; each request runs in its own task."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._transports: set[asyncio.Transport] = set()

    async def start(self, host: str, port: int) -> None:
        """Bind and start accepting connections."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _ServerProtocol(self), host, port, reuse_address=True)

    @property
    def port(self) -> int:
        """The bound port (useful when started on port 0)."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop accepting, drop open connections and cancel running handlers."""
        if self._server is not None:
            self._server.close()
        for t in list(self._transports):
            t.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, msg: dict[str, Any], transport: asyncio.Transport) -> None:
        task = asyncio.get_running_loop().create_task(self._answer(msg, transport))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg: dict[str, Any], transport: asyncio.Transport) -> None:
        rid = msg.get("id")
        params = msg.get("params") or {}
        to = msg.get("to")
        try:
            if not isinstance(params, dict):
                raise RpcError("bad_request", "params must be an object")
            if to is not None and not isinstance(to, str):
                raise RpcError("bad_request", "'to' must be a string")
            result = await self._handler(msg["method"], to, params)
            reply: dict[str, Any] = {"id": rid, "ok": True, "result": result}
        except RpcError as e:
            reply = {"id": rid, "ok": False, "error": e.code, "message": e.message, **e.data}
        except asyncio.CancelledError:
            return
        except (KeyError, TypeError, ValueError) as e:
            report_unplanned(f"the {msg.get('method')!r} handler", e)
            reply = {"id": rid, "ok": False, "error": "bad_request", "message": f"{type(e).__name__}: {e}"}
        except Exception as e:
            report_unplanned(f"the {msg.get('method')!r} handler", e)
            reply = {"id": rid, "ok": False, "error": "internal", "message": f"{type(e).__name__}: {e}"}
        if not transport.is_closing():
            transport.write(encode(reply))


def _expire(fut: asyncio.Future[Any]) -> None:
    if not fut.done():
        fut.set_exception(TimeoutError())


def _retrieve(attempt: asyncio.Task[None]) -> None:
    # A connect attempt whose callers all gave up still ends; reading its outcome keeps asyncio quiet.
    if not attempt.cancelled():
        attempt.exception()


class _ClientProtocol(asyncio.Protocol):
    def __init__(self, conn: RpcConnection) -> None:
        self.conn = conn
        self.framer = Framer()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            msgs = self.framer.feed(data)
        except FrameError:
            if self.transport is not None:
                self.transport.close()
            return
        pending = self.conn._pending
        for msg in msgs:
            fut = pending.pop(msg.get("id", -1), None) if isinstance(msg, dict) else None
            if fut is not None and not fut.done():
                fut.set_result(msg)

    def connection_lost(self, exc: Exception | None) -> None:
        self.conn._lost(self.transport)


class RpcConnection:
    """One client connection that carries many concurrent calls.

    ``source``, when given, is the local address the connection is made from. Nodes connect from their
    own address, so a network fault that drops one node's traffic to another (iptables rules matching
    source and destination on 127.0.0.N) cuts exactly that link.
    """

    def __init__(self, host: str, port: int, source: str | None = None) -> None:
        self.host, self.port = host, port
        self.source = source
        self._transport: asyncio.Transport | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._attempt: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        """True while the connection is open."""
        return self._transport is not None and not self._transport.is_closing()

    async def _open(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        try:
            local = (self.source, 0) if self.source else None
            transport, _ = await asyncio.wait_for(
                loop.create_connection(lambda: _ClientProtocol(self), self.host, self.port, local_addr=local),
                timeout)
        except (TimeoutError, OSError) as e:
            raise Unreachable(f"{self.host}:{self.port}: {e or type(e).__name__}") from e
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    async def _connect(self, deadline: float) -> None:
        """Open the connection by ``deadline`` (loop time), sharing one connect attempt among callers.

        A caller waits for an attempt already under way only until its own deadline, and the wait never
        cancels that attempt (so no caller queues behind another's longer timeout). If another caller's
        attempt failed, this one tries again while it has time left.
        """
        loop = asyncio.get_running_loop()
        while not self.connected:
            left = deadline - loop.time()
            if left <= 0:
                raise Unreachable(f"{self.host}:{self.port}: no connection by the call's deadline")
            attempt, mine = self._attempt, False
            if attempt is None or attempt.done():
                attempt = self._attempt = loop.create_task(self._open(left))
                attempt.add_done_callback(_retrieve)
                mine = True
            done, _ = await asyncio.wait({attempt}, timeout=left)
            if not done:
                raise Unreachable(f"{self.host}:{self.port}: still connecting at the call's deadline")
            if attempt.cancelled():
                raise Unreachable(f"{self.host}:{self.port}: connection closed while connecting")
            if mine:
                attempt.result()  # raises the attempt's Unreachable if it failed
                return

    def _lost(self, transport: asyncio.Transport | None) -> None:
        if transport is not None and transport is not self._transport:
            return
        self._transport = None
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(ConnectionLost(f"{self.host}:{self.port}: connection lost"))

    async def call(self, method: str, to: str | None, params: dict[str, Any], timeout: float = 5.0) -> Any:
        """Send one request and return its result; raise RpcError, Unreachable, ConnectionLost or TimeoutError.

        ``timeout`` bounds the whole call: waiting for the connection, opening it, and the reply.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if not self.connected:
            await self._connect(deadline)
        transport = self._transport
        if transport is None or transport.is_closing():
            raise Unreachable(f"{self.host}:{self.port}: connection closed before sending")
        self._next_id += 1
        rid = self._next_id
        fut: asyncio.Future[Any] = loop.create_future()
        self._pending[rid] = fut
        transport.write(encode({"id": rid, "method": method, "to": to, "params": params}))
        # A plain timer is much cheaper than asyncio.wait_for on this hot path.
        timer = loop.call_at(deadline, _expire, fut)
        try:
            reply = await fut
        finally:
            timer.cancel()
            self._pending.pop(rid, None)
        if reply.get("ok"):
            return reply.get("result")
        extra = {k: v for k, v in reply.items() if k not in ("id", "ok", "error", "message")}
        raise RpcError(str(reply.get("error")), str(reply.get("message", "")), **extra)

    async def close(self) -> None:
        """Close the connection; pending calls fail with ConnectionLost, waiting connects with Unreachable."""
        attempt, self._attempt = self._attempt, None
        if attempt is not None:
            attempt.cancel()
        t = self._transport
        if t is not None:
            t.close()
        self._lost(t)
        await asyncio.sleep(0)


class RpcPool:
    """Connections keyed by address, opened on first use and reused, all made from ``source`` if given."""

    def __init__(self, source: str | None = None) -> None:
        self.source = source
        self._conns: dict[tuple[str, int], RpcConnection] = {}

    def get(self, host: str, port: int) -> RpcConnection:
        """The connection to ``host:port`` (not yet opened if new)."""
        key = (host, port)
        conn = self._conns.get(key)
        if conn is None:
            conn = self._conns[key] = RpcConnection(host, port, self.source)
        return conn

    async def call(self, host: str, port: int, method: str, to: str | None, params: dict[str, Any],
                   timeout: float = 5.0) -> Any:
        """Call ``method`` on ``host:port`` over the pooled connection."""
        return await self.get(host, port).call(method, to, params, timeout)

    async def close(self) -> None:
        """Close every connection."""
        conns, self._conns = list(self._conns.values()), {}
        for c in conns:
            await c.close()
