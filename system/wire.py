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
import contextlib
import json
import struct
from collections.abc import Awaitable, Callable
from typing import Any

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


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """Read one frame; raise EOFError at a clean end and FrameError on garbage or an oversized frame."""
    try:
        header = await reader.readexactly(4)
    except asyncio.IncompleteReadError as e:
        if e.partial:
            raise FrameError("truncated frame header") from e
        raise EOFError from e
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise FrameError(f"frame of {length} bytes exceeds the {MAX_FRAME}-byte limit")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError as e:
        raise FrameError("truncated frame body") from e
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FrameError(f"frame is not JSON: {e}") from e


class RpcServer:
    """Serves one handler on a TCP address; each request runs in its own task."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self, host: str, port: int) -> None:
        """Bind and start accepting connections."""
        self._server = await asyncio.start_server(self._on_connection, host, port, reuse_address=True)

    @property
    def port(self) -> int:
        """The bound port (useful when started on port 0)."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop accepting, drop open connections and cancel running handlers."""
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.close()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    msg = await read_frame(reader)
                except EOFError:
                    return
                except FrameError as e:
                    writer.write(encode({"id": None, "ok": False, "error": "bad_frame", "message": str(e)}))
                    return
                if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
                    writer.write(encode({"id": None, "ok": False, "error": "bad_request",
                                         "message": "a request is an object with a string 'method'"}))
                    continue
                task = asyncio.create_task(self._answer(msg, writer))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except (ConnectionError, OSError, asyncio.CancelledError):
            return  # a cancelled handler (server shutdown) ends quietly
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _answer(self, msg: dict[str, Any], writer: asyncio.StreamWriter) -> None:
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
            raise
        except (KeyError, TypeError, ValueError) as e:
            reply = {"id": rid, "ok": False, "error": "bad_request", "message": f"{type(e).__name__}: {e}"}
        except Exception as e:
            reply = {"id": rid, "ok": False, "error": "internal", "message": f"{type(e).__name__}: {e}"}
        if writer.is_closing():
            return
        try:
            writer.write(encode(reply))
            await writer.drain()
        except (ConnectionError, OSError):
            pass


def _expire(fut: asyncio.Future[Any]) -> None:
    if not fut.done():
        fut.set_exception(TimeoutError())


class RpcConnection:
    """One client connection that carries many concurrent calls."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._read_task: asyncio.Task[None] | None = None
        self._connecting = asyncio.Lock()

    @property
    def connected(self) -> bool:
        """True while the connection is open."""
        return self._writer is not None and not self._writer.is_closing()

    async def _connect(self, timeout: float) -> None:
        async with self._connecting:
            if self.connected:
                return
            try:
                reader, self._writer = await asyncio.wait_for(
                    asyncio.open_connection(self.host, self.port), timeout)
            except (TimeoutError, OSError) as e:
                raise Unreachable(f"{self.host}:{self.port}: {e or type(e).__name__}") from e
            self._read_task = asyncio.create_task(self._read_loop(reader))

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                msg = await read_frame(reader)
                fut = self._pending.pop(msg.get("id", -1), None) if isinstance(msg, dict) else None
                if fut is not None and not fut.done():
                    fut.set_result(msg)
        except (EOFError, FrameError, ConnectionError, OSError):
            pass
        finally:
            self._fail_pending()

    def _fail_pending(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._writer = None
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(ConnectionLost(f"{self.host}:{self.port}: connection lost"))

    async def call(self, method: str, to: str | None, params: dict[str, Any], timeout: float = 5.0) -> Any:
        """Send one request and return its result; raise RpcError, Unreachable, ConnectionLost or TimeoutError."""
        if not self.connected:
            await self._connect(timeout)
        assert self._writer is not None
        self._next_id += 1
        rid = self._next_id
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        try:
            self._writer.write(encode({"id": rid, "method": method, "to": to, "params": params}))
        except (ConnectionError, OSError) as e:
            self._pending.pop(rid, None)
            raise Unreachable(str(e)) from e
        # A plain timer is much cheaper than asyncio.wait_for on this hot path.
        timer = asyncio.get_running_loop().call_later(timeout, _expire, fut)
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
        """Close the connection; pending calls fail with ConnectionLost."""
        if self._writer is not None:
            self._writer.close()
        if self._read_task is not None:
            self._read_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._read_task
        self._fail_pending()


class RpcPool:
    """Connections keyed by address, opened on first use and reused."""

    def __init__(self) -> None:
        self._conns: dict[tuple[str, int], RpcConnection] = {}

    def get(self, host: str, port: int) -> RpcConnection:
        """The connection to ``host:port`` (not yet opened if new)."""
        key = (host, port)
        conn = self._conns.get(key)
        if conn is None:
            conn = self._conns[key] = RpcConnection(host, port)
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
