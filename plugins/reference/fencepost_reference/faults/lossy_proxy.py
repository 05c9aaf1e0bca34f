"""A lossy link between two nodes: a proxy that drops single RPC requests, and the rules that route one
node's connections to another through it.

TCP never loses one message of a stream and delivers the next, but the networks that systems like Oxia
are tested under do (Maelstrom's drops messages one by one), and so does a connection that breaks with a
request in flight when the next request goes out on a new one. :class:`LossyProxy` reproduces the first:
it reads the RPC's frames (:mod:`system.wire`) from the client side and forwards each one, except the
requests its ``drop`` predicate picks, which vanish; replies pass untouched. The proxy listens on the
server's own address and connects to it from there: the client's hop still goes from its address to the
server's, so a partition between the two still cuts the proxied link, and the proxy's own hop matches no
rule (not the redirect either, which would loop).

:class:`LinkRedirect` sends new TCP connections from one address to ``host:port`` to the proxy instead
(DNAT in the nat table's OUTPUT, which loopback traffic passes), and resets the connections already open
on that link (a REJECT with a TCP reset in the filter table) so the next call reconnects through the
proxy. Both rules live in the run's own chain, ``FP-<tag>``, in each table, so
:func:`fencepost.iptables.delete_chain` removes them and a killed run's chains are reaped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from fencepost import iptables
from system.wire import FrameError, Framer, encode

Drop = Callable[[dict[str, Any]], bool]


class LossyProxy:
    """Forward RPC frames from clients to ``upstream``, dropping the requests ``drop`` picks.

    Args:
        upstream: (host, port) of the real server; the proxy listens on ``host`` too.
        drop: decides, per decoded request, whether it is lost.
    """

    def __init__(self, upstream: tuple[str, int], drop: Drop) -> None:
        self.upstream = upstream
        self.drop = drop
        self.forwarded = 0
        self.dropped = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> int:
        """Listen on a free port of the server's address; return the port."""
        self._server = await asyncio.start_server(self._serve, self.upstream[0], 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream, local_addr=(self.upstream[0], 0)), 5.0)
        except (OSError, TimeoutError):
            writer.close()
            return
        self._writers.add(up_writer)
        pumps = [asyncio.create_task(self._requests(reader, up_writer)),
                 asyncio.create_task(self._copy(up_reader, writer))]
        self._tasks.update(pumps)
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for p in pumps:
                p.cancel()
                self._tasks.discard(p)
            for w in (writer, up_writer):
                w.close()
                self._writers.discard(w)

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        framer = Framer()
        while data := await reader.read(65536):
            try:
                msgs = framer.feed(data)
            except FrameError:
                return
            for msg in msgs:
                if isinstance(msg, dict) and self.drop(msg):
                    self.dropped += 1
                    continue
                self.forwarded += 1
                writer.write(encode(msg))
            await writer.drain()

    @staticmethod
    async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()

    async def close(self) -> None:
        """Stop listening and close every proxied connection (the clients see them lost)."""
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.close()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        self._server = None


class LinkRedirect:
    """Route TCP connections from ``source`` to ``host:port`` through a proxy, in the chain ``FP-<tag>``.

    Args:
        tag: a short id unique to the run and fault (iptables chain names hold at most 28 characters).
    """

    def __init__(self, tag: str) -> None:
        self.chain = (iptables.CHAIN_PREFIX + tag)[:28]
        self._reset_rule: tuple[str, ...] | None = None

    def install(self) -> None:
        """Create the chain in the nat and filter tables, each jumped to from OUTPUT."""
        for table in ("nat", "filter"):
            iptables.add_jump(table, self.chain)

    def redirect(self, source: str, host: str, port: int, proxy_host: str, proxy_port: int) -> None:
        """New connections from ``source`` to ``host:port`` go to ``proxy_host:proxy_port`` instead."""
        iptables.run("-w", "-t", "nat", "-A", self.chain, "-p", "tcp", "-s", source, "-d", host, "--dport", str(port),
             "-j", "DNAT", "--to-destination", f"{proxy_host}:{proxy_port}")

    def reset_open(self, source: str, host: str, port: int) -> None:
        """Reset the connections already open from ``source`` to ``host:port`` (their next packet gets a
        TCP reset); new ones are redirected before this rule sees them. Undo with :meth:`end_reset`."""
        rule = ("-p", "tcp", "-s", source, "-d", host, "--dport", str(port), "-j", "REJECT",
                "--reject-with", "tcp-reset")
        iptables.run("-w", "-t", "filter", "-A", self.chain, *rule)
        self._reset_rule = rule

    def end_reset(self) -> None:
        """Remove the reset rule."""
        if self._reset_rule is not None:
            iptables.run("-w", "-t", "filter", "-D", self.chain, *self._reset_rule, check=False)
            self._reset_rule = None

    def remove(self) -> None:
        """Delete the chain and its jumps in both tables. Safe to call twice."""
        iptables.delete_chain(self.chain)
        self._reset_rule = None
