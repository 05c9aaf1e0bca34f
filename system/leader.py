"""The leader role of a tablet replica: follow cursors, the commit index, client writes and reads,
and the leader's half of reconfiguration.

Reads are linearizable by a quorum round (``confirm``): a read waits until this leader has committed
an entry of its own epoch (the no-op it writes on election), takes the commit index as its read index,
then asks the ensemble whether any newer epoch has fenced them. A majority (counting the leader) that
answers "no" proves no newer leader could have acknowledged anything before the read began, so the
state at the read index is current. Concurrent reads share one round.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from system import bugs, rules
from system.cursor import FollowCursor
from system.failures import watch
from system.replica import TabletReplica
from system.rules import EntryId
from system.wire import ConnectionLost, RpcError, RpcPool, Unreachable

WRITE_TIMEOUT_S = 10.0  # pragma: no mutate
CONFIRM_TIMEOUT_S = 2.0  # pragma: no mutate


class LeaderRole:
    """What a replica does while it leads its epoch."""

    def __init__(self, replica: TabletReplica, ensemble: list[str], nodes: dict[str, dict[str, Any]],
                 pool: RpcPool) -> None:
        self.replica = replica
        self.ensemble = list(ensemble)
        self.nodes = dict(nodes)
        self.pool = pool
        self.cursors: dict[str, FollowCursor] = {}
        self.pre_voters: set[str] = set()
        self.epoch_start = len(replica.log)
        self.stopped = False
        self._waiters: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._read_waiters: list[asyncio.Future[None]] = []
        self._confirm_task: asyncio.Task[None] | None = None
        self._commit_moved = asyncio.Event()
        self._sweeper: asyncio.TimerHandle | None = None
        self._aging: set[int] = set()

    # --- lifecycle ------------------------------------------------------------------------------------

    def start(self, follower_map: dict[str, EntryId]) -> None:
        """Become leader: write this epoch's no-op, then start a cursor (truncating first if needed) for
        each follower in the follower map."""
        self.append({"op": "noop"})
        for node, head in sorted(follower_map.items()):
            self.add_follower(node, head, self.nodes[node])

    def stop(self, reason: str) -> None:
        """Stop leading: cursors end and every waiting write learns its outcome is unknown."""
        if self.stopped:
            return
        self.stopped = True
        for c in self.cursors.values():
            c.stop()
        for fut in list(self._waiters.values()) + self._read_waiters:
            if not fut.done():
                fut.set_exception(RpcError("leadership_lost", f"leader stopped: {reason}"))
        self._waiters.clear()
        self._read_waiters = []
        if self._confirm_task is not None:
            self._confirm_task.cancel()
        if self._sweeper is not None:
            self._sweeper.cancel()
        self.replica.events.emit("leader_stopped", tablet=self.replica.tablet, epoch=self.replica.epoch,
                                 reason=reason)

    def follower_ids(self) -> list[str]:
        """Followers with an active, synced cursor."""
        return sorted(n for n, c in self.cursors.items() if c.synced)

    def add_follower(self, node: str, head: EntryId | None, addr: dict[str, Any]) -> None:
        """Add Follower Request: (re)start the follow cursor for ``node`` from ``head``."""
        if node == self.replica.node_id:
            return
        self.nodes[node] = addr
        old = self.cursors.pop(node, None)
        if old is not None:
            old.stop()
        cursor = FollowCursor(self, node, addr, head, self.pool)
        self.cursors[node] = cursor
        cursor.start()

    def add_pre_voter(self, node: str, addr: dict[str, Any]) -> None:
        """Stream to ``node`` as a catch-up (PRE_VOTER) member: its acknowledgements do not count toward
        the commit majority (:func:`system.rules.voting_members`) until a reconfiguration promotes it.
        Repeating the call is harmless; a cursor already streaming to the same UUID is kept."""
        if node in self.ensemble or node == self.replica.node_id:
            return
        self.pre_voters.add(node)
        c = self.cursors.get(node)
        if c is None or c.addr.get("uuid") != addr.get("uuid"):
            self.add_follower(node, None, addr)
        self.replica.events.emit("pre_voter_added", tablet=self.replica.tablet, epoch=self.replica.epoch, member=node)

    def remove_pre_voter(self, node: str) -> None:
        """Stop streaming to a catch-up member (its migration was cancelled)."""
        if node in self.pre_voters:
            self.pre_voters.discard(node)
            self.remove_follower(node)
            self.replica.events.emit("pre_voter_removed", tablet=self.replica.tablet, member=node)

    def pre_voter_progress(self) -> dict[str, int]:
        """Each catch-up member's confirmed offset (-1 while its cursor is not synced)."""
        return {n: (c.confirmed if (c := self.cursors.get(n)) is not None and c.synced else -1)
                for n in sorted(self.pre_voters)}

    def remove_follower(self, node: str) -> None:
        """Deactivate and drop the cursor for ``node``."""
        c = self.cursors.pop(node, None)
        if c is not None:
            c.stop()

    def on_stale(self, node: str, epoch: int) -> None:
        """A follower reports a newer epoch: a newer election fenced it; this leader is superseded."""
        self.replica.events.emit("stale_follower", tablet=self.replica.tablet, epoch=self.replica.epoch, follower=node,
                                 follower_epoch=epoch)

    # --- commit ---------------------------------------------------------------------------------------

    def confirmed_offsets(self, members: list[str]) -> list[int]:
        """Each member's confirmed offset: the leader's own durable head, each synced cursor's
        confirmed offset, and -1 for members without an active cursor."""
        out = []
        for n in members:
            if n == self.replica.node_id:
                out.append(self.replica.durable)
            else:
                c = self.cursors.get(n)
                out.append(c.confirmed if c is not None and c.synced else -1)
        return out

    def on_progress(self) -> None:
        """Recompute the commit index after a local fsync or a follower's confirmation."""
        r = self.replica
        if self.stopped:
            return
        # The majority is of the ensemble (the voting config); the acknowledgements counted toward it come
        # from the voting members, which under bug count-pre-voter-acks include the catch-up members.
        confirmed = self.confirmed_offsets(rules.voting_members(self.ensemble, self.pre_voters))
        cand = rules.commit_candidate(confirmed, len(self.ensemble))
        if cand <= r.commit or cand >= len(r.log):
            return
        if not rules.can_commit(cand, r.log[cand]["e"], r.epoch, confirmed, len(self.ensemble)):
            return
        first = r.commit + 1
        r.advance_commit(cand)
        for off in range(first, cand + 1):
            fut = self._waiters.pop(off, None)
            if fut is not None and not fut.done():
                fut.set_result(r.results.pop(off))
            else:
                r.results.pop(off, None)
        self._commit_moved.set()
        self._commit_moved = asyncio.Event()
        for c in self.cursors.values():
            c.wake.set()

    # --- client operations ----------------------------------------------------------------------------

    def append(self, op: dict[str, Any]) -> int:
        """Append one operation at the current epoch; return its offset."""
        r = self.replica
        off = len(r.log)
        r.append_local([{"e": r.epoch, "o": off, "v": op}])
        for c in self.cursors.values():
            c.wake.set()
        return off

    async def write(self, op: dict[str, Any]) -> dict[str, Any]:
        """Replicate ``op``; return the state machine's result once it is committed and applied."""
        if self.stopped:
            raise RpcError("not_leader", "no longer leader")
        off = self.append(op)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._waiters[off] = fut
        if self._sweeper is None:
            self._sweeper = loop.call_later(WRITE_TIMEOUT_S / 2, self._sweep)  # pragma: no mutate
        return await fut

    def _sweep(self) -> None:
        """Fail writes that have waited about WRITE_TIMEOUT_S for their commit (outcome unknown).

        One timer per leader instead of one per write keeps the write path cheap."""
        self._sweeper = None
        if self.stopped:
            return
        aged, self._aging = self._aging, set(self._waiters)
        for off in aged & set(self._waiters):
            fut = self._waiters.pop(off)
            if not fut.done():
                fut.set_exception(RpcError("timeout", f"entry {off} not committed in time"))
        if self._waiters:
            self._sweeper = asyncio.get_running_loop().call_later(WRITE_TIMEOUT_S / 2, self._sweep)  # pragma: no mutate

    async def read(self, key: str) -> Any:
        """A linearizable read of ``key`` (see the module docstring)."""
        r = self.replica
        epoch = r.epoch
        deadline = asyncio.get_running_loop().time() + CONFIRM_TIMEOUT_S
        while r.commit < self.epoch_start:
            if self.stopped:
                raise RpcError("not_leader", "no longer leader")
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise RpcError("not_ready", "leader has not committed an entry of its epoch yet")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._commit_moved.wait(), left)
        if not bugs.enabled("stale-leader-reads"):
            await self._confirm_leadership()
        if self.stopped or r.epoch != epoch:
            raise RpcError("not_leader", "leadership changed during the read")
        return r.kv.get(key)

    async def _confirm_leadership(self) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._read_waiters.append(fut)
        if self._confirm_task is None or self._confirm_task.done():
            self._confirm_task = watch(asyncio.create_task(self._confirm_loop()), "the leader's read confirmations")
        await fut

    async def _confirm_loop(self) -> None:
        while self._read_waiters and not self.stopped:
            batch, self._read_waiters = self._read_waiters, []
            try:
                await self._confirm_round()
                for f in batch:
                    if not f.done():
                        f.set_result(None)
            except RpcError as e:
                for f in batch:
                    if not f.done():
                        f.set_exception(e)

    async def _confirm_round(self) -> None:
        r = self.replica
        need = rules.majority(len(self.ensemble)) - (1 if r.node_id in self.ensemble else 0)
        if need <= 0:
            return
        others = [n for n in self.ensemble if n != r.node_id and n in self.nodes]

        async def ask(n: str) -> bool:
            a = self.nodes[n]
            try:
                await self.pool.call(a["host"], int(a["port"]), "confirm", a["uuid"],
                                     {"tablet": r.tablet, "epoch": r.epoch}, timeout=CONFIRM_TIMEOUT_S)
                return True
            except (TimeoutError, RpcError, Unreachable, ConnectionLost, OSError):
                return False

        tasks = [asyncio.create_task(ask(n)) for n in others]
        got = 0
        try:
            for done in asyncio.as_completed(tasks):
                if await done:
                    got += 1
                    if got >= need:
                        return
        finally:
            for t in tasks:
                t.cancel()
        raise RpcError("not_leader", f"leadership not confirmed: {got + 1} of {len(self.ensemble)} answered")

    # --- reconfiguration ------------------------------------------------------------------------------

    async def prepare_reconfig(self, epoch: int, op: str, old: str | None, promote: bool = False) -> dict[str, Any]:
        """Prepare Reconfiguration: adopt the new epoch durably, fence ``old`` by deactivating its cursor,
        write a no-op at the new epoch, and return a snapshot (the log and commit index)."""
        r = self.replica
        if epoch <= r.epoch:
            raise RpcError("stale_epoch", f"reconfig epoch {epoch} is not above {r.epoch}", epoch=r.epoch)
        await r.set_epoch_durably(epoch)
        if op in ("swap", "contract") and old is not None:
            c = self.cursors.get(old)
            if c is not None:
                c.stop()
        self.append({"op": "noop"})
        r.events.emit("reconfig_prepared", tablet=r.tablet, epoch=epoch, op=op, old=old)
        if op == "contract" or (op == "expand" and promote):
            return {"head": list(r.head)}
        return {"entries": list(r.log), "commit": r.commit, "head": list(r.head)}

    def commit_reconfig(self, epoch: int, op: str, old: str | None, new: str | None, new_head: EntryId | None,
                        addr: dict[str, Any] | None) -> dict[str, Any]:
        """Commit Reconfiguration: apply the ensemble change. A contract succeeds only if
        :func:`system.rules.safe_to_contract` holds; the operator retries until it does."""
        r = self.replica
        if epoch != r.epoch:
            raise RpcError("stale_epoch", f"reconfig epoch {epoch}, leader at {r.epoch}", epoch=r.epoch)
        facts: dict[str, Any] = {}
        if op == "contract":
            if old in self.ensemble:
                remaining = [n for n in self.ensemble if n != old]
                confirmed = self.confirmed_offsets(remaining)
                if not rules.safe_to_contract(r.commit, confirmed, len(remaining)):
                    raise RpcError("contract_not_safe", "removing the node would lower the commit index")
                facts = {"commit": r.commit, "remaining_confirmed": dict(zip(remaining, confirmed, strict=True))}
                self.ensemble = remaining
                self.remove_follower(old)
        else:
            if op == "swap" and old in self.ensemble:
                self.ensemble.remove(old)
                self.remove_follower(old)
            if new is not None and new not in self.ensemble:
                assert addr is not None
                self.ensemble.append(new)
                c = self.cursors.get(new)
                if new in self.pre_voters and c is not None and c.addr.get("uuid") == addr.get("uuid"):
                    self.pre_voters.discard(new)  # promotion: the catch-up cursor simply starts to count
                else:
                    self.pre_voters.discard(new)
                    self.add_follower(new, new_head, addr)
        r.events.emit("reconfig_committed", tablet=r.tablet, epoch=epoch, op=op, old=old, new=new,
                      ensemble=self.ensemble, **facts)
        self.on_progress()
        return {"ensemble": self.ensemble, "commit": r.commit}


async def become_leader(replica: TabletReplica, epoch: int, follower_map: dict[str, EntryId], ensemble: list[str],
                        nodes: dict[str, dict[str, Any]], pool: RpcPool,
                        pre_voters: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Become Leader Request: a replica fenced at ``epoch`` takes the lead, replies, and then (in the
    background) truncates or starts streaming to each follower in ``follower_map``."""
    replica.check_serving()
    async with replica.lock:
        if replica.status != "fenced" or replica.epoch != epoch:
            raise RpcError("stale_epoch" if epoch < replica.epoch else "not_fenced",
                           f"become leader at {epoch}: replica is {replica.status} at {replica.epoch}",
                           epoch=replica.epoch)
        role = LeaderRole(replica, ensemble, nodes, pool)
        replica.role = role
        replica.status, replica.leader_id = "leader", replica.node_id
        await replica.persist()
        replica.events.emit("became_leader", tablet=replica.tablet, epoch=epoch, head=list(replica.head),
                            followers={n: list(h) for n, h in follower_map.items()}, ensemble=ensemble)
        role.start(follower_map)
        for node, addr in sorted((pre_voters or {}).items()):
            role.add_pre_voter(node, addr)
        return {"head": list(replica.head)}
