"""The operator's records in the metadata store.

- ``cluster``: ``{"tablets": T, "replication": R}``, written once on first start.
- ``nodes/<id>``: ``{"host", "port", "uuid"}``; the UUID is registered the first time the node
  answers a heartbeat. A node that later answers with another UUID lost its disk: it is not used.
- ``shards/<t>``: ``{"epoch", "status": "new"|"election"|"steady", "leader", "ensemble",
  "reconfig", "created"}`` (see :mod:`system.rules` for ``reconfig``); ``created`` turns true with the
  first completed election, after which elections never create replicas.
"""

from __future__ import annotations

from typing import Any


def shard_key(tablet: int) -> str:
    """The metadata key of a tablet's shard record."""
    return f"shards/{tablet:05d}"


def node_key(node: str) -> str:
    """The metadata key of a node's record."""
    return f"nodes/{node}"


def initial_shard(tablet: int, nodes: list[str], replication: int) -> dict[str, Any]:
    """A new tablet's record: ``replication`` nodes chosen round-robin, not yet elected."""
    ensemble = [nodes[(tablet + i) % len(nodes)] for i in range(min(replication, len(nodes)))]
    return {"epoch": 0, "status": "new", "leader": None, "ensemble": ensemble, "reconfig": None, "created": False}
