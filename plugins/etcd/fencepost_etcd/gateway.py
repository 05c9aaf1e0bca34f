"""etcd's v3 API through its JSON gateway, over httpx: the calls the etcd plugin makes, and exact outcomes.

etcd serves its gRPC API as JSON at ``/v3/...`` on every client URL (keys and values base64). Each call
here raises one of two errors, so the caller can record the outcome Jepsen's way:

- :class:`Definite`: the request certainly did not take effect. The connection was refused (the
  request never left), the member had no leader or too many requests (etcd refuses those before it
  proposes anything), or the request was invalid.
- :class:`Indefinite`: nobody knows. A timeout, a connection lost after the request was sent, or an
  error etcd returns after proposing (``request timed out``, ``leader changed``, ``server stopped``).

A read that fails has no effect either way, so the client records every failed read as ``fail``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx

DEFINITE_ERRORS = ("etcdserver: no leader", "etcdserver: too many requests", "etcdserver: requested lease not found",
                   "etcdserver: member not found", "etcdserver: unhealthy cluster", "etcdserver: ID removed",
                   "etcdserver: Peer URLs already exists", "etcdserver: member ID already exist",
                   "etcdserver: re-configuration failed due to not enough started members")
"""Errors etcd returns only for requests it did not apply."""
INVALID_CODES = {3, 5, 6, 9, 11}
"""gRPC codes that mean the request was refused as it stands: invalid argument, not found, already exists,
failed precondition, out of range."""


class Definite(Exception):
    """The request certainly did not take effect."""


class Indefinite(Exception):
    """The request may or may not have taken effect."""


def b64(text: str) -> str:
    """``text`` as the gateway wants keys and values."""
    return base64.b64encode(text.encode()).decode()


def unb64(data: str) -> str:
    """A key or value from the gateway."""
    return base64.b64decode(data).decode()


def prefix_end(prefix: str) -> str:
    """The range end that makes a range request cover every key starting with ``prefix`` (base64)."""
    raw = bytearray(prefix.encode())
    raw[-1] += 1
    return base64.b64encode(bytes(raw)).decode()


class Gateway:
    """Calls to one member's JSON gateway.

    Args:
        url: the member's client URL, ``http://host:port``.
        timeout: seconds for each call.
    """

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url = url
        self._http = httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(timeout, pool=timeout))

    async def close(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``/v3/<path>``; the answer.

        Raises:
            Definite: the request certainly had no effect.
            Indefinite: it may have.
        """
        try:
            response = await self._http.post(f"/v3/{path}", content=json.dumps(body))
        except (httpx.ConnectError, httpx.PoolTimeout) as e:
            raise Definite(f"{type(e).__name__}: {e}") from None
        except httpx.HTTPError as e:  # a timeout, or a connection lost with the request sent
            raise Indefinite(f"{type(e).__name__}: {e}") from None
        try:
            answer: dict[str, Any] = response.json()
        except ValueError:
            raise Indefinite(f"HTTP {response.status_code}: {response.text[:200]!r}") from None
        if response.status_code != 200 or "error" in answer:
            message = str(answer.get("error") or answer.get("message") or f"HTTP {response.status_code}")
            if message.startswith(DEFINITE_ERRORS) or answer.get("code") in INVALID_CODES:
                raise Definite(message)
            raise Indefinite(message)
        return answer

    # --- keys ---------------------------------------------------------------------------------------

    async def get(self, key: str, *, serializable: bool = False) -> tuple[str | None, int]:
        """The value at ``key`` (None when absent) and its mod revision (0 when absent); a linearizable read
        unless ``serializable`` (served from the member's own state, without a quorum)."""
        answer = await self.call("kv/range", {"key": b64(key), "serializable": serializable})
        kvs = answer.get("kvs") or []
        if not kvs:
            return None, 0
        return unb64(kvs[0].get("value", "")), int(kvs[0].get("mod_revision", 0))

    async def get_prefix(self, prefix: str, *, serializable: bool = False) -> dict[str, str]:
        """Every key starting with ``prefix``, with its value."""
        answer = await self.call("kv/range", {"key": b64(prefix), "range_end": prefix_end(prefix),
                                              "serializable": serializable})
        return {unb64(kv["key"]): unb64(kv.get("value", "")) for kv in answer.get("kvs") or []}

    async def put(self, key: str, value: str, lease: str | None = None) -> None:
        """Write ``value`` at ``key`` (attached to ``lease`` if given)."""
        body: dict[str, Any] = {"key": b64(key), "value": b64(value)}
        if lease is not None:
            body["lease"] = lease
        await self.call("kv/put", body)

    async def cas(self, key: str, expected: str | None, new: str) -> bool:
        """A transaction: if ``key`` holds ``expected`` (None: the key is absent), put ``new``; whether it did."""
        if expected is None:
            compare = {"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": "0"}
        else:
            compare = {"key": b64(key), "target": "VALUE", "result": "EQUAL", "value": b64(expected)}
        answer = await self.call("kv/txn", {"compare": [compare],
                                            "success": [{"request_put": {"key": b64(key), "value": b64(new)}}]})
        return bool(answer.get("succeeded"))

    # --- leases and locks ---------------------------------------------------------------------------

    async def grant(self, ttl: int) -> str:
        """A new lease of ``ttl`` seconds; its id."""
        return str((await self.call("lease/grant", {"TTL": ttl}))["ID"])

    async def keep_alive(self, lease: str) -> None:
        """Renew a lease for another time to live.

        Raises:
            Definite: the lease has expired or never existed (etcd answers with no time to live).
        """
        answer = await self.call("lease/keepalive", {"ID": lease})
        if int((answer.get("result") or answer).get("TTL") or 0) <= 0:
            raise Definite(f"etcdserver: requested lease not found (lease {lease} expired or unknown)")

    async def revoke(self, lease: str) -> None:
        """Revoke a lease (its keys, a lock among them, go with it)."""
        await self.call("lease/revoke", {"ID": lease})

    async def lock(self, name: str, lease: str) -> str:
        """Acquire the lock ``name`` on ``lease`` (waiting until it is free); the lock's key (base64)."""
        return str((await self.call("lock/lock", {"name": b64(name), "lease": lease}))["key"])

    async def unlock(self, key: str) -> None:
        """Release the lock whose key (base64) :meth:`lock` gave."""
        await self.call("lock/unlock", {"key": key})

    # --- the cluster --------------------------------------------------------------------------------

    async def status(self) -> dict[str, Any]:
        """This member's status: its id (``header.member_id``), the leader's id, raft term and index."""
        return await self.call("maintenance/status", {})

    async def members(self) -> list[dict[str, Any]]:
        """The cluster's members: ``ID``, ``name`` (empty until started), ``peerURLs``, ``clientURLs``."""
        return list((await self.call("cluster/member/list", {})).get("members") or [])

    async def add_member(self, peer_url: str) -> dict[str, Any]:
        """Add a member with ``peer_url``; the answer (the new member, and every member)."""
        return await self.call("cluster/member/add", {"peerURLs": [peer_url]})

    async def remove_member(self, member_id: str) -> None:
        """Remove the member with id ``member_id``."""
        await self.call("cluster/member/remove", {"ID": member_id})
