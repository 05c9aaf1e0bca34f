"""The ``client-partition`` fault: clients cut off from a node while the nodes still reach one another.

The harness's clients run as root; every PostgreSQL server runs as ``postgres``. So a rule that drops what
root sends to a node's port (``iptables -m owner --uid-owner 0``) cuts the clients from that node and leaves
its replication alone. The rules live in a chain of the fault's own (``FP-`` and the run's id, jumped to
from OUTPUT with this harness's pid, as the partitioner's are), so the next start reaps them after a
SIGKILL; healing flushes the chain and the run's end deletes it.

Targets: ``primary`` (writes stop; the standbys stay current), ``standby`` (one standby; in the
``standby-reads`` mode its readers go elsewhere only after their timeouts) and ``one`` (any node).
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Sequence
from typing import Any

from fencepost import NETWORK, ClusterView, FaultSpec, iptables

TARGETS = ("primary", "standby", "one")


class ClientPartition:
    """Drop the clients' traffic to one node's port."""

    name = "client-partition"
    color = "#8e44ad"
    needs = frozenset({NETWORK})

    def __init__(self) -> None:
        self.chain: str | None = None

    def targets(self) -> Sequence[str]:
        """primary, standby or one."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Cut the clients from the target node."""
        nodes = cluster.nodes()
        primary = nodes[0]
        choices = {"primary": [primary], "standby": nodes[1:] or nodes, "one": nodes}
        node = rng.choice(choices.get(spec.target, nodes))
        host, port = cluster.address(node)
        if self.chain is None:
            self.chain = f"{iptables.CHAIN_PREFIX}c{os.getpid()}-{id(self) % 100000}"[:28]
            await asyncio.to_thread(iptables.add_jump, "filter", self.chain)
        await asyncio.to_thread(iptables.run, "-w", "-A", self.chain, "-p", "tcp", "-d", host, "--dport", str(port),
                                "-m", "owner", "--uid-owner", "0", "-j", "DROP")
        return {"target": spec.target, "cut": [node]}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Let the clients through again."""
        if self.chain is not None:
            await asyncio.to_thread(iptables.run, "-w", "-F", self.chain, check=False)
        return {"healed": True}

    async def heal(self, cluster: ClusterView) -> None:
        """Remove the chain and its jump."""
        if self.chain is not None:
            await asyncio.to_thread(iptables.delete_chain, self.chain)
            self.chain = None


def package() -> ClientPartition:
    """The client-partition fault package."""
    return ClientPartition()
