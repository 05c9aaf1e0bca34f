"""The master process: RPC dispatch (join, admin API, status) and the policy loop."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import signal
import time
from collections import Counter
from typing import Any

from system import bugs
from system.events import EventLog
from system.failures import report_unplanned
from system.master import admin, policy
from system.master.catalog import Catalog, JoinRefused, in_thread, placement_key
from system.metadata import MetadataStore
from system.wire import RpcError, RpcPool, RpcServer

LOOP_S = 0.5
HELLO_TIMEOUT_S = 1.0
ADMIN_METHODS = ("add_replica", "remove_replica", "move_replica", "change_replica_count", "cancel_migration",
                 "retire_node")


class Master:
    """One master process's state."""

    def __init__(self, store: MetadataStore, cluster_id: str, token: str, replication: int, events: EventLog,
                 dead_after: float = 10.0) -> None:
        self.catalog = Catalog(store)
        self.cluster_id = cluster_id
        self.token = token
        self.replication = replication
        self.events = events
        self.dead_after = dead_after
        self.pool = RpcPool()
        self.started = time.monotonic()
        self.last_ok: dict[str, float] = {}
        self.reports: dict[str, dict[str, Any]] = {}

    # --- RPC ------------------------------------------------------------------------------------------

    def _check_token(self, params: dict[str, Any]) -> None:
        if not hmac.compare_digest(str(params.get("token") or ""), self.token):
            raise RpcError("bad_token", "the cluster's secret token is missing or wrong")

    async def dispatch(self, method: str, to: str | None, params: dict[str, Any]) -> Any:
        """``join``, the admin methods (both need the token) and ``status``."""
        if method == "status":
            return await self.status()
        if method == "join":
            return await self.join(params)
        if method in ADMIN_METHODS:
            self._check_token(params)
            try:
                result = await in_thread(self._admin, method, params)
            except admin.AdminError as e:
                self.events.emit("admin_refused", method=method, error=e.code, reason=str(e))
                raise RpcError(e.code, str(e), **e.data) from e
            self.events.emit("admin_done", method=method, params={k: v for k, v in params.items() if k != "token"},
                             result=result)
            return result
        raise RpcError("unknown_method", f"no method {method!r}")

    def _admin(self, method: str, p: dict[str, Any]) -> dict[str, Any]:
        c = self.catalog
        if method == "retire_node":
            return admin.retire_node(c, str(p["node"]))
        t, cid = int(p["tablet"]), p.get("config_id")
        if method == "add_replica":
            return admin.add_replica(c, t, str(p["node"]), cid)
        if method == "remove_replica":
            return admin.remove_replica(c, t, str(p["node"]), cid)
        if method == "move_replica":
            return admin.move_replica(c, t, str(p["from"]), str(p["to"]), cid)
        if method == "change_replica_count":
            return admin.change_replica_count(c, t, int(p["count"]), cid)
        return admin.cancel_migration(c, t, cid)

    async def join(self, params: dict[str, Any]) -> Any:
        """The join procedure: check the cluster id and token, then the catalog's decision."""
        if params.get("cluster_id") != self.cluster_id:
            self.events.emit("join_refused", uuid=params.get("uuid"), error="wrong_cluster")
            raise RpcError("wrong_cluster", f"cluster id {params.get('cluster_id')!r} is not this cluster's")
        try:
            self._check_token(params)
        except RpcError:
            self.events.emit("join_refused", uuid=params.get("uuid"), error="bad_token")
            raise
        try:
            out = await in_thread(self.catalog.join, str(params["uuid"]), str(params["name"]), str(params["host"]),
                                  int(params["port"]))
        except JoinRefused as e:
            self.events.emit("join_refused", uuid=params.get("uuid"), error=e.code, reason=str(e))
            raise RpcError(e.code, str(e), **e.data) from e
        self.events.emit("join_accepted", name=params["name"], **out)
        return out

    async def status(self) -> dict[str, Any]:
        """Members, and per tablet the up set, acting set, stray set, migration and config id."""
        members, placements, shards = await asyncio.gather(in_thread(self.catalog.members),
                                                           in_thread(self.catalog.placements),
                                                           in_thread(self.catalog.shards))
        tablets = {}
        for t, shard in sorted(shards.items()):
            p = placements.get(t, ({}, 0))[0]
            stray = sorted(m for m, rep in self.reports.items()
                           if (rep.get(str(t)) or {}).get("state") == "READY")
            tablets[str(t)] = {"up": p.get("up"), "rf": p.get("rf"), "config_id": p.get("config_id"),
                               "acting": shard.get("ensemble"), "stray": stray, "leader": shard.get("leader"),
                               "epoch": shard.get("epoch"), "migration": shard.get("migration"),
                               "status": shard.get("status")}
        return {"members": {m: {**rec, "alive": self.alive(m)} for m, (rec, _) in members.items()},
                "tablets": tablets, "bugs": bugs.active()}

    # --- policy loop ----------------------------------------------------------------------------------

    def alive(self, member: str) -> bool:
        """Heard from with the right UUID within ``dead_after`` (a fresh master gives everyone that long)."""
        return time.monotonic() - self.last_ok.get(member, self.started) < self.dead_after

    async def _hello(self, member: str, rec: dict[str, Any]) -> None:
        try:
            reply = await self.pool.call(rec["host"], int(rec["port"]), "hello", None, {}, timeout=HELLO_TIMEOUT_S)
        except Exception:
            return
        if reply.get("uuid") == rec["uuid"]:
            self.last_ok[member] = time.monotonic()
            self.reports[member] = reply.get("tablets", {})

    async def tick(self) -> None:
        """One round of heartbeats, state transitions and placement repairs."""
        members = await in_thread(self.catalog.members)
        live = {m: rec for m, (rec, _) in members.items() if rec["state"] != "left"}
        await asyncio.gather(*(self._hello(m, rec) for m, rec in live.items()))
        for m in list(self.reports):
            if m not in live:
                self.reports.pop(m, None)
        placements = await in_thread(self.catalog.placements)
        shards = await in_thread(self.catalog.shards)
        for t, shard in shards.items():
            if t not in placements and shard.get("created"):
                rec = {"up": list(shard["ensemble"]), "rf": self.replication, "config_id": 1}
                if await in_thread(self.catalog.store.cas, placement_key(t), rec, 0) is not None:
                    self.events.emit("placement_created", tablet=t, **rec)
        placements = await in_thread(self.catalog.placements)
        plain = {t: p for t, (p, _) in placements.items()}
        await self._transitions(live, plain, shards)
        members = await in_thread(self.catalog.members)
        states = {m: rec["state"] for m, (rec, _) in members.items()}
        load = Counter(m for p in plain.values() for m in p["up"])
        for t, (p, version) in placements.items():
            want = policy.plan_up_set(p["up"], int(p["rf"]), states, self.alive,
                                      lambda m: not self.alive(m), load)
            if want != p["up"]:
                new = {**p, "up": want, "config_id": int(p["config_id"]) + 1}
                if await in_thread(self.catalog.store.cas, placement_key(t), new, version) is not None:
                    self.events.emit("placement_repaired", tablet=t, old=p["up"], up=want, config_id=new["config_id"])
                    for m in set(want) - set(p["up"]):
                        load[m] += 1

    async def _transitions(self, live: dict[str, dict[str, Any]], placements: dict[int, dict[str, Any]],
                           shards: dict[int, dict[str, Any]]) -> None:
        for m, rec in live.items():
            state = rec["state"]
            new = None
            if state == "none":
                new = "bootstrapping"
            elif state == "bootstrapping" and self.alive(m) and m in self.last_ok and \
                    policy.bootstrapped(m, placements, shards):
                new = "normal"
            elif state == "decommissioning" and not policy.wanted_somewhere(m, placements, shards):
                new = "left"
            if new is not None and await in_thread(self.catalog.set_state, m, new, "policy"):
                self.events.emit("node_state", member=m, uuid=rec["uuid"], was=state, state=new)

    async def run(self, stop: asyncio.Event) -> None:
        """Tick until ``stop`` is set."""
        while not stop.is_set():
            started = time.monotonic()
            try:
                await self.tick()
            except Exception as e:
                report_unplanned("the master's tick", e)
                self.events.emit("tick_failed", error=f"{type(e).__name__}: {e}")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, LOOP_S - (time.monotonic() - started)))
        await self.pool.close()


async def serve(master: Master, host: str, port: int) -> None:
    """Run the master and its RPC server until SIGTERM/SIGINT."""
    server = RpcServer(master.dispatch)
    await server.start(host, port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(json.dumps({"master": True, "host": host, "port": server.port}), flush=True)
    await master.run(stop)
    await server.close()
