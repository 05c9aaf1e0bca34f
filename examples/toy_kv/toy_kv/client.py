"""The toy store's client for Fencepost's workloads: register (read, write, cas) and set (add, read).

Writes go to the primary and reads to the standby, which holds every acknowledged write.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fencepost import ClusterView, Invocation, Outcome

PRIMARY = "n1"
STANDBY = "n2"


class ToyClient:
    """One worker's connections. A reply of ``ok: null`` and a lost connection after the request went out are
    ``info``; a refused connection (the request never left) and ``ok: false`` are ``fail``."""

    def __init__(self, workload: str) -> None:
        self._workload = workload
        self._addrs: dict[str, tuple[str, int]] = {}
        self._conns: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}

    async def open(self, cluster: ClusterView) -> None:
        """Remember where the primary and the standby are (connections are made on demand)."""
        self._addrs = {n: cluster.address(n) for n in (PRIMARY, STANDBY)}

    async def _ask(self, req: dict[str, Any], node: str = PRIMARY) -> Outcome:
        assert self._addrs, "client used before open()"
        if node not in self._conns:
            try:
                self._conns[node] = await asyncio.open_connection(*self._addrs[node])
            except OSError as e:
                return Outcome("fail", None, f"connection refused: {e}")  # the request never left
        reader, writer = self._conns[node]
        try:
            writer.write(json.dumps(req).encode() + b"\n")
            await writer.drain()
            line = await reader.readline()
            if not line:
                raise ConnectionError("the connection closed before an answer")
            answer = json.loads(line)
        except (OSError, ValueError) as e:
            self._conns.pop(node)[1].close()
            return Outcome("info", None, f"{type(e).__name__}: {e}")
        if answer.get("ok") is True:
            return Outcome("ok", answer.get("value"))
        return Outcome("fail" if answer.get("ok") is False else "info", None, answer.get("error"))

    async def _read(self, key: str) -> Outcome:
        return await self._ask({"op": "read", "key": key}, STANDBY)

    async def invoke(self, op: Invocation) -> Outcome:
        """Translate one workload operation into requests."""
        key = str(op.key)
        if op.f == "read":
            out = await self._read(key)
            if self._workload == "set" and out.type == "ok":
                return Outcome("ok", sorted(out.value or [], key=repr))
            return out
        if op.f == "write":
            out = await self._ask({"op": "write", "key": key, "value": op.value})
        elif op.f == "cas":
            expected, new = op.value
            out = await self._ask({"op": "cas", "key": key, "expected": expected, "value": new})
        elif op.f == "add":
            out = await self._ask({"op": "add", "key": key, "value": op.value})
        else:
            raise ValueError(f"unknown function {op.f!r}")
        return Outcome(out.type, op.value if out.type != "info" else None, out.error)

    async def close(self) -> None:
        """Close the connections."""
        for _, writer in self._conns.values():
            writer.close()
        self._conns = {}
