"""The etcd metadata store: records in an etcd v3 server, reached through its JSON gateway (urllib).

A record's version is etcd's per-key ``version`` (0 means absent), and a compare-and-set is one
transaction comparing it, so it is as linearizable as etcd itself. Start a server with
:func:`system.metadata.etcd_server.start_etcd` (the cluster launcher does).
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any

from system.metadata.store import Versioned

PREFIX = "fencepost/"


def _b64(s: str | bytes) -> str:
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def _unb64(s: str) -> str:
    return base64.b64decode(s).decode()


class EtcdError(Exception):
    """The etcd gateway failed or answered something unexpected."""


class EtcdStore:
    """Versioned records under the ``fencepost/`` prefix of an etcd v3 keyspace."""

    def __init__(self, address: str, timeout: float = 5.0) -> None:
        self.base = f"http://{address}"
        self.timeout = timeout

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                out = json.loads(resp.read() or b"{}")
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise EtcdError(f"etcd {path}: {e}") from e
        if not isinstance(out, dict):
            raise EtcdError(f"etcd {path}: unexpected reply {out!r}")
        return out

    def get(self, key: str) -> Versioned | None:
        """The record under ``key``, or None."""
        out = self._post("/v3/kv/range", {"key": _b64(PREFIX + key)})
        kvs = out.get("kvs") or []
        if not kvs:
            return None
        return Versioned(json.loads(_unb64(kvs[0]["value"])), int(kvs[0].get("version", 0)))

    def cas(self, key: str, value: Any, expected_version: int) -> int | None:
        """Write ``value`` if etcd's key version matches; return the new version or None."""
        k = _b64(PREFIX + key)
        body = {
            "compare": [{"key": k, "target": "VERSION", "result": "EQUAL", "version": str(expected_version)}],
            "success": [{"request_put": {"key": k, "value": _b64(json.dumps(value, sort_keys=True))}}],
        }
        out = self._post("/v3/kv/txn", body)
        return expected_version + 1 if out.get("succeeded") else None

    def list(self, prefix: str) -> dict[str, Versioned]:
        """Every record whose key starts with ``prefix``."""
        start = (PREFIX + prefix).encode()
        end = start[:-1] + bytes([start[-1] + 1])
        out = self._post("/v3/kv/range", {"key": _b64(start), "range_end": _b64(end)})
        res = {}
        for kv in out.get("kvs") or []:
            key = _unb64(kv["key"])[len(PREFIX):]
            res[key] = Versioned(json.loads(_unb64(kv["value"])), int(kv.get("version", 0)))
        return res

    def close(self) -> None:
        """Nothing to release: every call is its own HTTP request."""
