"""Blocking one-shot RPC helpers for tools and tests: ask an operator or a node one question."""

from __future__ import annotations

import asyncio
from typing import Any

from system.wire import RpcConnection


async def call(host: str, port: int, method: str, params: dict[str, Any], to: str | None = None,
               timeout: float = 5.0) -> Any:
    """Open a connection, make one call, close it."""
    conn = RpcConnection(host, port)
    try:
        return await conn.call(method, to, params, timeout=timeout)
    finally:
        await conn.close()


def call_sync(host: str, port: int, method: str, params: dict[str, Any], to: str | None = None,
              timeout: float = 5.0) -> Any:
    """:func:`call` from synchronous code (not from inside a running event loop)."""
    return asyncio.run(call(host, port, method, params, to, timeout))


def reconfig(host: str, port: int, tablet: int, op: str, old: str | None = None, new: str | None = None,
             timeout: float = 90.0) -> Any:
    """Ask the operator at ``host:port`` to swap, expand or contract a tablet's ensemble."""
    return call_sync(host, port, "reconfig", {"tablet": tablet, "op": op, "old": old, "new": new}, timeout=timeout)


def master_admin(host: str, port: int, method: str, params: dict[str, Any], token: str | None,
                 timeout: float = 10.0) -> Any:
    """Call the master's admin API (``add_replica``, ``move_replica``, ...), carrying the secret token.

    A tablet change needs ``config_id``; when it is absent, the committed one is read first (the
    caller then acts as one with a fresh view)."""
    params = dict(params)
    if "tablet" in params and params.get("config_id") is None and method != "retire_node":
        status = call_sync(host, port, "status", {}, timeout=timeout)
        params["config_id"] = status["tablets"][str(params["tablet"])]["config_id"]
    return call_sync(host, port, method, {**params, "token": token}, timeout=timeout)
