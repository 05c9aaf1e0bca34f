"""Lossy-link fault: a leader's link to one follower loses single requests, its other follower is cut off,
and then the leader dies (Oxia #1239, found under Maelstrom's lossy network).

1. pick a tablet whose leader has two followers, all live; send the leader's connections to one follower
   (the *lossy* one) through a proxy that drops some of its ``add_entries`` requests, one at a time
   (:class:`fencepost_reference.faults.lossy_proxy.LossyProxy`), and reset the connection open on that link;
2. cut the leader off from its other follower, so the lossy follower is the only one that can make a
   commit majority with it;
3. hold that for a few seconds while clients write, then kill the leader, wait (at most ``ELECTION_WAIT_S``)
   until the followers elected a new one without it, and heal the network.

A follower must refuse a batch that does not continue its log; the leader then syncs again and resends,
so everything it committed is on the lossy follower, which the next election picks. A follower that
acknowledges past a lost batch lets the leader commit entries only the leader holds: after the kill
the new leader lacks them, and the amnesia and linearizability checkers see acknowledged writes vanish.
The killed leader stays down until that election: started again at once, it would
take part in it with the entries only it holds, and hide the loss. The window's end starts the killed
leader again. The proxy runs in the harness and the redirect is an iptables DNAT on loopback, so this
fault needs the local cluster and root.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
from collections.abc import Sequence
from typing import Any

from fencepost import NETWORK, PROCESSES, ClusterView, FaultSpec, complete_grudge, iptables
from fencepost_reference.faults.lossy_proxy import LinkRedirect, LossyProxy
from fencepost_reference.info import await_election, cluster_info, operator_call
from fencepost_reference.master import master_status
from system.wire import RpcError

TARGETS = ("leader-follower",)
DROP_P = 0.3
"""The chance that each ``add_entries`` request carrying entries is lost on the lossy link."""
HOLD_S = 3.0
"""How long the leader streams over the lossy link alone; below the cursor's 5 s RPC timeout, so a
lost request is noticed only through the follower's refusal of the next batch."""
ELECTION_WAIT_S = 10.0
"""How long the window waits, the leader killed, for the followers to elect a new one."""
RESET_S = 0.6
"""How long the reset rule stays: longer than the leader's heartbeat, so its open connection gets one."""
LOSSY_LINK_WEIGHT = 4.0
"""How often the default campaign picks this package, against 2 for the other aimed ones: a window catches
``gap-ack`` only if a batch is lost and the election follows, and at 2 a 120 s plan could hold few windows,
some of them late and followed by no election."""
_tags = itertools.count()


class LossyLinkNemesis:
    """Make a leader's link to one follower lose requests, cut its other follower off, kill it."""

    name = "lossy-link"
    color = "#9b5de5"
    needs = frozenset({NETWORK, PROCESSES})
    mix_weight = LOSSY_LINK_WEIGHT

    def __init__(self) -> None:
        self._redirect: LinkRedirect | None = None
        self._proxy: LossyProxy | None = None
        self._killed: str | None = None

    def targets(self) -> Sequence[str]:
        """leader-follower: the only shape."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Open the window described in the module docstring; return what was done."""
        reason = iptables.why_unavailable()
        if reason is not None:
            return {"target": spec.target, "skipped": reason}
        nodes = cluster_info(cluster)["nodes"]
        if any(not str(h).startswith("127.") for h, _ in nodes.values()):
            return {"target": spec.target, "skipped": "lossy links are routed on loopback: local cluster only"}
        picked = await self._pick(cluster, rng)
        if isinstance(picked, str):
            return {"target": spec.target, "skipped": picked}
        tablet, leader, lossy, cut = picked
        p = float(spec.params.get("drop", DROP_P))
        (lhost, _), (fhost, fport) = nodes[leader], nodes[lossy]
        self._proxy = LossyProxy((fhost, int(fport)), lambda m: _is_batch(m) and rng.random() < p)
        pport = await self._proxy.start()
        self._redirect = LinkRedirect(f"ll{os.getpid()}-{next(_tags)}")
        await asyncio.to_thread(self._redirect.install)
        await asyncio.to_thread(self._redirect.redirect, lhost, fhost, int(fport), fhost, pport)
        await asyncio.to_thread(self._redirect.reset_open, lhost, fhost, int(fport))
        await cluster.network.partition(complete_grudge([[leader], [cut]]))
        await asyncio.sleep(RESET_S)
        await asyncio.to_thread(self._redirect.end_reset)
        epoch = await self._epoch(cluster, tablet)
        await asyncio.sleep(HOLD_S - RESET_S)
        self._killed = leader  # before the kill: a run that ends during it must still restart it
        await cluster.processes.kill(leader)
        dropped, forwarded = self._proxy.dropped, self._proxy.forwarded
        await self._unroute()
        elected = None if epoch is None else await await_election(cluster, str(tablet), leader, epoch,
                                                                   ELECTION_WAIT_S)
        await cluster.network.heal()
        return {"target": spec.target, "tablet": tablet, "leader": leader, "lossy": lossy, "cut": cut,
                "drop_p": p, "dropped": dropped, "forwarded": forwarded, "killed": leader, "elected": elected}

    @staticmethod
    async def _epoch(cluster: ClusterView, tablet: int) -> int | None:
        """The tablet's epoch as the operator routes it, or None if no operator answers."""
        try:
            tab = (await operator_call(cluster, "routing", {}))["tablets"].get(str(tablet))
        except (RuntimeError, RpcError):
            return None
        return None if tab is None else int(tab["epoch"])

    @staticmethod
    async def _pick(cluster: ClusterView, rng: random.Random) -> tuple[int, str, str, str] | str:
        """A tablet with a leader and exactly two live followers: (tablet, leader, lossy, cut), or why not."""
        try:
            st = await master_status(cluster)
        except (TimeoutError, RpcError, OSError) as e:
            return f"master unreachable: {e}"
        members = st["members"]
        name = {m: r["name"] for m, r in members.items()}
        live = {m for m, r in members.items() if r["state"] == "normal" and r["alive"]}
        ready = sorted((int(t), tab) for t, tab in st["tablets"].items()
                       if tab["leader"] and tab["migration"] is None and len(tab["acting"]) == 3
                       and set(tab["acting"]) <= live)
        if not ready:
            return "no tablet with a leader and two live followers"
        t, tab = rng.choice(ready)
        followers = sorted(name[m] for m in tab["acting"] if m != tab["leader"])
        lossy = rng.choice(followers)
        cut = next(f for f in followers if f != lossy)
        return t, name[tab["leader"]], lossy, cut

    async def _unroute(self) -> None:
        """Remove the redirect, then close the proxy (its clients reconnect directly)."""
        redirect, proxy, self._redirect, self._proxy = self._redirect, self._proxy, None, None
        if redirect is not None:
            await asyncio.to_thread(redirect.remove)
        if proxy is not None:
            await proxy.close()

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Heal, and start the killed leader again."""
        await self._unroute()
        await cluster.network.heal()
        restarted, self._killed = self._killed, None
        if restarted is not None:
            await cluster.processes.start(restarted)
        return {"healed": True, "restarted": restarted}

    async def heal(self, cluster: ClusterView) -> None:
        """Remove the redirect and the proxy, heal the network, start the killed leader (best effort)."""
        with contextlib.suppress(Exception):
            await self._unroute()
        with contextlib.suppress(Exception):
            await self.stop(cluster)


def _is_batch(msg: dict[str, Any]) -> bool:
    """An ``add_entries`` request that carries entries (probes and heartbeats are never dropped)."""
    params = msg.get("params")
    return msg.get("method") == "add_entries" and isinstance(params, dict) and bool(params.get("entries"))


def package() -> LossyLinkNemesis:
    """The lossy-link fault package."""
    return LossyLinkNemesis()
