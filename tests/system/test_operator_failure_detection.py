"""The operator's failure detector: a node that keeps answering is never taken for dead.

A freshly started operator opens its connections on first use. When a node is cut off, the election
that fences it waits on a connect that never completes, and a heartbeat to that node used to queue
behind it (one connection per node), so a heartbeat round took the whole fence timeout. By the end of
the round the answers of the healthy nodes were older than the failure timeout, and the operator
re-elected tablets whose leaders had answered all along. In the stalled-swap fault that re-election
came between the fault's election and its follow-up swap, which it refused, so that fault caught
`fence-current-ensemble-only` less often.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from fencepost_reference.info import cluster_info, operators

from harness.backends.iptables import why_unavailable
from harness.targets import complete_grudge
from system.admin import call
from system.wire import ConnectionLost, Unreachable
from tests.harness.backends.local_cluster import local_cluster

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=f"{why_unavailable()}")

WATCH_S = 10.0


async def tablets(ops: list[tuple[str, int]]) -> dict[str, dict[str, Any]]:
    """The operator's routing table, tablet -> {leader, epoch, status, ensemble}, once it answers (a
    restarted operator takes a moment to listen and to load the tablets)."""
    host, port = ops[0]
    deadline = time.monotonic() + 30.0
    while True:
        try:
            routing = await call(host, int(port), "routing", {}, timeout=5.0)
            if routing["tablets"]:
                return dict(routing["tablets"])
        except (OSError, TimeoutError, Unreachable, ConnectionLost):
            pass
        assert time.monotonic() < deadline, "the operator did not answer within 30 s"
        await asyncio.sleep(0.1)


async def scenario(tmp_path: Path) -> None:
    async with local_cluster(tmp_path, client_timeout=2.0, nodes=3, options={"tablets": 6}) as (backend, _client):
        ops = cluster_info(backend)["operators"]
        before = await tablets(ops)
        cut = before["0"]["leader"]
        healthy = {t: tab for t, tab in before.items() if tab["leader"] != cut}
        assert healthy, f"every tablet is led by {cut}: {before}"
        await backend.network.partition(complete_grudge([[cut], [n for n in backend.nodes() if n != cut]
                                                 + list(operators(backend))]))
        # A new operator: its connection to the cut node must be opened, and that connect hangs.
        op = operators(backend)[0]
        await backend.processes.kill(op)
        await backend.processes.start(op)
        deadline = time.monotonic() + WATCH_S
        moved: dict[str, dict[str, Any]] = {}
        while time.monotonic() < deadline:
            with_leaders = await tablets(ops)
            moved.update({t: tab for t, tab in with_leaders.items()
                          if t in healthy and (tab["epoch"], tab["leader"]) != (healthy[t]["epoch"],
                                                                                 healthy[t]["leader"])})
            await asyncio.sleep(0.25)
        assert not moved, (f"tablets whose leaders never stopped answering were re-elected while {cut} "
                           f"was cut off: {moved} (before: {healthy})")
        after = await tablets(ops)
        assert any(tab["leader"] not in (None, cut) for t, tab in after.items() if t not in healthy), \
            f"no tablet led by {cut} got another leader: {after}"


def test_a_cut_off_node_does_not_make_the_healthy_leaders_look_dead(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))
