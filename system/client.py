"""The client of the reference system: routes each key to its tablet's leader and classifies outcomes.

Every operation returns a :class:`Result` whose ``type`` is
- ``"ok"``: it took effect (``value`` holds its result);
- ``"fail"``: it definitely did not (a refusal before anything was applied: not leader, stale epoch,
  bad request, oversized value, a CAS whose expected value did not match, no leader found in time);
- ``"info"``: nobody knows (a timeout, or the connection was lost after the request was sent, or the
  leader lost its leadership while the entry was in flight).

The routing table (tablet -> leader, node addresses and UUIDs) comes from the operator's ``routing``
RPC and is cached; a ``not_leader`` refusal drops the cache entry and follows the refusal's hint.
A leader that timed out, dropped the connection or answered an indefinite error is suspect too: its
entry is dropped, so the next operation on that tablet asks the operator again (otherwise a leader cut
off from its followers but not from clients would keep a client long after the operator elected
another).

A client may have a ``home`` node, as each of Jepsen's clients talks to its own node: its first
routing table sends every tablet to that node, and refusals redirect it from there. A node that
wrongly still believes it leads (cut off from its followers, not from clients) then keeps answering
its home clients each time they reconnect, so a test sees the reads it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from system.routing import tablet_for
from system.wire import ConnectionLost, RpcError, RpcPool, Unreachable

# Refusals that mean "try another node": the request had no effect.
# A tombstone (tablet_deleted) or a replica still being copied (tablet_copying) is a node the
# tablet has moved away from, or not yet to: the routing table is stale.
REDIRECT = {"not_leader", "not_ready", "unknown_tablet", "wrong_node", "tablet_damaged", "stale_epoch",
            "not_fenced", "unknown_node", "tablet_deleted", "tablet_copying"}
# Errors after which the operation may or may not have taken effect.
INDEFINITE = {"leadership_lost", "timeout", "internal"}


@dataclass(frozen=True)
class Result:
    """An operation's outcome: ``type`` is "ok", "fail" or "info"."""

    type: str
    value: Any = None
    error: str = ""


class Client:
    """An asyncio client for one cluster, given its operators' addresses."""

    def __init__(self, operators: list[tuple[str, int]],
                 timeout: float = 5.0,  # pragma: no mutate
                 home: str | None = None) -> None:
        self.operators = list(operators)
        self.timeout = timeout
        self.home = home
        self.pool = RpcPool()
        self.tablet_count = 0
        self.leaders: dict[int, str] = {}
        self.nodes: dict[str, dict[str, Any]] = {}

    async def refresh(self) -> bool:
        """Fetch the routing table from the first operator that answers; True on success."""
        for host, port in self.operators:
            try:
                r = await self.pool.call(host, port, "routing", None, {}, timeout=2.0)  # pragma: no mutate
            except (RpcError, Unreachable, ConnectionLost, TimeoutError, OSError):
                continue
            self.tablet_count = int(r["tablet_count"])
            self.nodes = r["nodes"]
            self.leaders = {int(t): m["leader"] for t, m in r["tablets"].items()
                            if m.get("leader") and m.get("status") == "steady"}
            if self.home is not None:  # the first table only: later ones come after a refusal or timeout
                if self.home in self.nodes:
                    self.leaders = dict.fromkeys(range(self.tablet_count), self.home)
                self.home = None
            return True
        return False

    async def put(self, key: str, value: Any) -> Result:
        """Set ``key`` to ``value``."""
        return await self._op("put", key, {"value": value})

    async def get(self, key: str) -> Result:
        """Linearizable read of ``key`` (value None if absent)."""
        return await self._op("get", key, {})

    async def delete(self, key: str) -> Result:
        """Remove ``key``; value says whether it existed."""
        return await self._op("delete", key, {})

    async def cas(self, key: str, expected: Any, new: Any) -> Result:
        """Set ``key`` to ``new`` if it holds ``expected``; a mismatch is a definite fail."""
        return await self._op("cas", key, {"expected": expected, "new": new})

    async def append(self, key: str, value: Any) -> Result:
        """Append ``value`` to the list under ``key``; value is its position."""
        return await self._op("append", key, {"value": value})

    async def read(self, key: str) -> Result:
        """Linearizable read of the list under ``key``."""
        return await self._op("read", key, {})

    async def call_raw(self, method: str, key: str, params: dict[str, Any]) -> Result:
        """Send any method to the key's leader (for tests of bad requests)."""
        return await self._op(method, key, params)

    async def _op(self, method: str, key: str, params: dict[str, Any]) -> Result:
        deadline = time.monotonic() + self.timeout
        last = "no leader known"
        backoff = 0.02  # pragma: no mutate
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return Result("fail", error=f"no leader accepted the request: {last}")
            if not self.tablet_count and not await self.refresh():
                last = "no operator answered"
                await asyncio.sleep(min(backoff, left))  # pragma: no mutate
                backoff = min(backoff * 2, 0.5)  # pragma: no mutate
                continue
            t = tablet_for(key, self.tablet_count)
            leader = self.leaders.get(t)
            addr = self.nodes.get(leader) if leader else None
            if addr is None:
                await self.refresh()
                leader = self.leaders.get(t)
                addr = self.nodes.get(leader) if leader else None
                if addr is None:
                    await asyncio.sleep(min(backoff, max(left, 0)))  # pragma: no mutate
                    backoff = min(backoff * 2, 0.5)  # pragma: no mutate
                    continue
            try:
                value = await self.pool.call(addr["host"], int(addr["port"]), method, addr["uuid"],
                                             {"tablet": t, "key": key, **params}, timeout=left)
                return Result("ok", value)
            except RpcError as e:
                if e.code in REDIRECT:
                    last = f"{leader}: {e.code}"
                    hint = e.data.get("leader")
                    if hint and hint != leader and hint in self.nodes:
                        self.leaders[t] = hint
                    else:
                        self.leaders.pop(t, None)
                        await asyncio.sleep(min(backoff, max(deadline - time.monotonic(), 0)))  # pragma: no mutate
                        backoff = min(backoff * 2, 0.5)  # pragma: no mutate
                    continue
                if e.code in INDEFINITE:
                    self.leaders.pop(t, None)
                    return Result("info", error=f"{e.code}: {e.message}")
                return Result("fail", e.data.get("value"), error=e.code)
            except Unreachable as e:
                last = f"{leader}: unreachable ({e})"
                self.leaders.pop(t, None)
                await asyncio.sleep(min(backoff, max(deadline - time.monotonic(), 0)))  # pragma: no mutate
                backoff = min(backoff * 2, 0.5)  # pragma: no mutate
            except ConnectionLost as e:
                self.leaders.pop(t, None)
                return Result("info", error=f"connection lost: {e}")
            except TimeoutError:
                self.leaders.pop(t, None)
                return Result("info", error="timeout")

    async def close(self) -> None:
        """Close all connections."""
        await self.pool.close()


class SyncClient:
    """A blocking wrapper around :class:`Client` with its own event loop."""

    def __init__(self, operators: list[tuple[str, int]], timeout: float = 5.0) -> None:  # pragma: no mutate
        self._loop = asyncio.new_event_loop()
        self._client = Client(operators, timeout)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any) -> Any:
            return self._loop.run_until_complete(method(*args))
        return call

    def close(self) -> None:
        """Close connections and the loop."""
        with contextlib.suppress(Exception):
            self._loop.run_until_complete(self._client.close())
        self._loop.close()
