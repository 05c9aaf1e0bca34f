"""The operator's control loop: heartbeats, failure detection, and what to do for each tablet.

Every ``HEARTBEAT_S`` it reloads the master's member records (``members/``: each node UUID ever
accepted, under its member id) and placements (``placement/``: up sets), and sends ``hello`` to every
member that has not left. A member is down when it had not answered, with its own UUID, for
``FAIL_AFTER_S`` when the last heartbeat round began: its silence counts only while the operator was
asking, so a round slowed by unreachable nodes never makes the nodes that answered it look dead. Each
``hello`` gives up after ``HELLO_TIMEOUT_S``, the wait for its connection included (an election's call
to a cut-off node may be connecting for seconds; see :meth:`.RpcConnection.call`). For each tablet,
from the metadata record:
- ``new``: run the first election (which creates the replicas);
- ``election`` or a reconfiguration left unchanged for the stall timeout: another operator died
  mid-way (or is very slow); run an election, which resolves either;
- ``steady``: elect if the leader is down or no longer reports itself leader of the recorded epoch;
  otherwise bring back ensemble members the leader does not follow (:func:`.election.late_join`),
  then move the acting set toward the up set (:mod:`.migration`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from typing import Any

from system import bugs
from system.events import EventLog
from system.failures import report_unplanned
from system.metadata import MetadataStore
from system.operator import election, migration, reconfig
from system.operator.shards import initial_shard, shard_key
from system.wire import RpcError, RpcPool, RpcServer

HEARTBEAT_S = 0.25  # pragma: no mutate
FAIL_AFTER_S = 1.5  # pragma: no mutate
HELLO_TIMEOUT_S = 1.0  # pragma: no mutate
LAGGING_GRACE_S = 1.0  # pragma: no mutate
NEW_TABLET_WAIT_S = 5.0  # pragma: no mutate

CRASH_POINTS = ("election:after-epoch", "election:after-fence", "election:after-become-leader",
                "reconfig:after-prepare-meta", "reconfig:after-prepare", "reconfig:after-commit-meta",
                "reconfig:after-commit")


class Operator:
    """One operator process's state."""

    def __init__(self, op_id: str, store: MetadataStore, nodes: dict[str, tuple[str, int]], tablets: int,
                 replication: int, events: EventLog, stall_timeout: float = 3.0,  # pragma: no mutate
                 crash_at: tuple[str, ...] = (), source: str | None = None) -> None:
        self.id = op_id
        self.store = store
        self.node_addrs = dict(nodes)
        self.initial_nodes = sorted(nodes)
        self.members: dict[str, dict[str, Any]] = {}
        self.placements: dict[int, dict[str, Any]] = {}
        self.tablets = tablets
        self.replication = replication
        self.events = events
        self.stall_timeout = stall_timeout
        self.crash_at = set(crash_at)
        self.pool = RpcPool(source)  # calls leave from the operator's own address, so partitions can cut them
        self.uuids: dict[str, str] = {}
        self.started = time.monotonic()
        self.round_started = self.started  # when the last completed heartbeat round began
        self.last_ok: dict[str, float] = {}
        self.info: dict[str, tuple[float, dict[str, Any]]] = {}
        self.shards: dict[int, tuple[dict[str, Any], int]] = {}
        self.seen: dict[int, tuple[int, float]] = {}
        self.lagging: dict[tuple[int, str], float] = {}
        self.cooldown: dict[int, float] = {}
        self.busy: dict[int, asyncio.Task[Any]] = {}

    # --- helpers used by election and reconfig --------------------------------------------------------

    def emit(self, event: str, **fields: Any) -> None:
        """Write an operator event."""
        self.events.emit(event, operator=self.id, **fields)

    def crash_point(self, name: str) -> None:
        """Test hook: exit abruptly here if ``--crash-at name`` was given."""
        if name in self.crash_at:
            self.emit("crash_point", point=name)
            os._exit(99)

    async def meta_get(self, key: str) -> tuple[Any, int] | None:
        """A metadata record and its version."""
        rec = await asyncio.to_thread(self.store.get, key)
        return (rec.value, rec.version) if rec is not None else None

    async def meta_cas(self, key: str, value: Any, version: int) -> int | None:
        """Compare-and-set a metadata record; the new version or None if another writer moved first."""
        return await asyncio.to_thread(self.store.cas, key, value, version)

    def node_ids(self) -> list[str]:
        """Every member that has not left, sorted."""
        return sorted(m for m in self.node_addrs if (self.members.get(m) or {}).get("state") != "left")

    def live_members(self) -> list[str]:
        """Members that have not left and answer heartbeats."""
        return [m for m in self.node_ids() if self.alive(m)]

    def name_of(self, member: str | None) -> str | None:
        """The process name of a member (its first incarnation's member id is the name itself)."""
        if member is None:
            return None
        return str((self.members.get(member) or {}).get("name") or member)

    def addr(self, node: str) -> dict[str, Any] | None:
        """``{"host", "port", "uuid"}`` of a node whose UUID is registered, else None."""
        if node not in self.node_addrs or node not in self.uuids:
            return None
        host, port = self.node_addrs[node]
        return {"host": host, "port": port, "uuid": self.uuids[node]}

    def addrs(self, nodes: list[str]) -> dict[str, dict[str, Any]]:
        """Addresses of the given nodes that have one."""
        return {n: a for n in nodes if (a := self.addr(n)) is not None}

    async def call(self, node: str, method: str, params: dict[str, Any],
                   timeout: float = 3.0) -> Any:  # pragma: no mutate
        """Call a node, naming its registered UUID."""
        a = self.addr(node)
        if a is None:
            raise RpcError("unknown_node", f"node {node} has no registered UUID yet")
        return await self.pool.call(a["host"], a["port"], method, a["uuid"], params, timeout=timeout)

    def alive(self, node: str) -> bool:
        """Had the node answered a heartbeat, with its registered UUID, within FAIL_AFTER_S of the start of
        the last completed heartbeat round? (A node that answered that round is alive however long the
        round took.)"""
        if (self.members.get(node) or {}).get("state") == "left":
            return False
        last = self.last_ok.get(node, self.started)
        return self.round_started - last < FAIL_AFTER_S

    # --- bootstrap and heartbeats -----------------------------------------------------------------------

    async def bootstrap(self) -> None:
        """Create the cluster records on first start; load registered node UUIDs."""
        rec = await self.meta_get("cluster")
        if rec is None and await self.meta_cas("cluster", {"tablets": self.tablets, "replication": self.replication},
                                               0) is not None:
            self.emit("cluster_created", tablets=self.tablets, replication=self.replication)
        rec = await self.meta_get("cluster")
        assert rec is not None
        self.tablets = int(rec[0]["tablets"])
        for t in range(self.tablets):
            await self.meta_cas(shard_key(t), initial_shard(t, self.initial_nodes, int(rec[0]["replication"])), 0)
        await self.load_catalog()

    async def load_catalog(self) -> None:
        """Reload the master's member records (addresses, UUIDs, states) and placements (up sets)."""
        members = await asyncio.to_thread(self.store.list, "members/")
        for key, v in members.items():
            m = key.split("/", 1)[1]
            self.members[m] = v.value
            self.node_addrs[m] = (v.value["host"], int(v.value["port"]))
            self.uuids[m] = v.value["uuid"]
        placements = await asyncio.to_thread(self.store.list, "placement/")
        self.placements = {int(k.split("/", 1)[1]): v.value for k, v in placements.items()}

    async def _hello(self, node: str) -> None:
        host, port = self.node_addrs[node]
        try:
            reply = await self.pool.call(host, port, "hello", None, {}, timeout=HELLO_TIMEOUT_S)
        except Exception:
            return
        if reply["uuid"] != self.uuids.get(node):
            return  # not joined yet, or another incarnation answers at this address
        now = time.monotonic()
        self.last_ok[node] = now
        self.info[node] = (now, reply["tablets"])

    async def heartbeat(self) -> None:
        """One round of ``hello`` to every member that has joined and not left."""
        started = time.monotonic()
        await asyncio.gather(*(self._hello(n) for n in self.node_ids() if n in self.uuids))
        self.round_started = started

    def fresh(self, node: str, tablet: int, since: float) -> dict[str, Any] | None:
        """The node's report on ``tablet`` if it was heard after ``since``."""
        got = self.info.get(node)
        if got is None or got[0] <= since:
            return None
        return got[1].get(str(tablet), {})

    # --- decisions --------------------------------------------------------------------------------------

    async def tick(self) -> None:
        """Heartbeat, reload the shard records, and start what each tablet needs."""
        await self.load_catalog()
        await self.heartbeat()
        recs = await asyncio.to_thread(self.store.list, "shards/")
        now = time.monotonic()
        for key, rec in recs.items():
            t = int(key.split("/", 1)[1])
            self.shards[t] = (rec.value, rec.version)
            if self.seen.get(t, (None, 0.0))[0] != rec.version:
                self.seen[t] = (rec.version, now)
            task = self.busy.get(t)
            if (task is not None and not task.done()) or self.cooldown.get(t, 0) > now:
                continue
            action = self.decide(t, rec.value, now)
            if action is not None:
                self.busy[t] = self._start_action(t, action.__qualname__, self._run(t, action))

    def decide(self, t: int, meta: dict[str, Any], now: float) -> Any:
        """What tablet ``t`` needs now, as a coroutine to run, or None."""
        seen_at = self.seen[t][1]
        if meta["status"] == "new" or (meta["status"] == "election" and not meta.get("created", True)):
            # Give every member a moment to come up, so that all of them get a replica at once.
            everyone = all(n in self.last_ok for n in meta["ensemble"])
            return election.elect(self, t) if everyone or now - self.started > NEW_TABLET_WAIT_S else None
        if meta["status"] == "election" or meta.get("reconfig"):
            return election.elect(self, t) if now - seen_at > self.stall_timeout else None
        leader = meta["leader"]
        if not self.alive(leader):
            return election.elect(self, t)
        report = self.fresh(leader, t, seen_at)
        if report is None:
            return None
        if report.get("status") != "leader" or report.get("epoch") != meta["epoch"]:
            return election.elect(self, t)
        following = set(report.get("followers", []))
        for m in meta["ensemble"]:
            if m == leader or m in following or not self.alive(m):
                self.lagging.pop((t, m), None)
                continue
            since = self.lagging.setdefault((t, m), now)
            if now - since > LAGGING_GRACE_S:
                self.lagging.pop((t, m), None)
                rep = report if m == leader else self.fresh(m, t, 0.0)
                if rep is not None and rep.get("status") in ("deleted", "damaged"):
                    continue  # a lost replica: the migration planner replaces it
                return election.late_join(self, t, meta, m)
        return migration.plan(self, t, meta)

    async def _run(self, t: int, coro: Any) -> None:
        try:
            ok = await coro
        except Exception as e:
            report_unplanned(f"tablet {t}'s action", e)
            self.emit("action_failed", tablet=t, error=f"{type(e).__name__}: {e}")
            ok = False
        if ok is False:
            self.cooldown[t] = time.monotonic() + random.uniform(0.2, 1.0)

    def _start_action(self, t: int, name: str, coro: Any) -> asyncio.Task[Any]:
        """Log ``action_started`` for tablet ``t`` and run ``coro`` as a task that logs ``action_ended``
        before it is done (so no tick sees the tablet free before the log does); the self-race checker reads
        both, for the loop's actions and requested reconfigurations alike."""
        self.emit("action_started", tablet=t, action=name)
        return asyncio.create_task(self._ended(t, coro))

    async def _ended(self, t: int, coro: Any) -> Any:
        try:
            return await coro
        finally:
            self.emit("action_ended", tablet=t)

    async def run(self, stop: asyncio.Event) -> None:
        """Bootstrap, then tick until ``stop`` is set."""
        await self.bootstrap()
        while not stop.is_set():
            started = time.monotonic()
            try:
                await self.tick()
            except Exception as e:
                report_unplanned("the operator's tick", e)
                self.emit("tick_failed", error=f"{type(e).__name__}: {e}")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(),
                                       max(0.0, HEARTBEAT_S - (time.monotonic() - started)))  # pragma: no mutate
        for task in self.busy.values():
            task.cancel()
        await asyncio.gather(*self.busy.values(), return_exceptions=True)
        await self.pool.close()

    # --- RPC for clients and admins ---------------------------------------------------------------------

    async def dispatch(self, method: str, to: str | None, params: dict[str, Any]) -> Any:
        """``routing``, ``status`` and ``reconfig`` (tablet, op, old, new; ``crash_at``, a test hook: exit at
        that point of this reconfiguration)."""
        if method == "routing":
            # Clients and the harness address nodes by process name: the live member of that name.
            nodes = self.addrs(self.node_ids())
            by_name = {str(self.name_of(m)): a for m, a in nodes.items()}
            return {"tablet_count": self.tablets,
                    "tablets": {str(t): {"leader": self.name_of(m["leader"]), "leader_member": m["leader"],
                                         "epoch": m["epoch"], "status": m["status"],
                                         "ensemble": [self.name_of(n) for n in m["ensemble"]]}
                                for t, (m, _) in sorted(self.shards.items())},
                    "nodes": {**nodes, **by_name}}
        if method == "status":
            return {"operator": self.id, "bugs": bugs.active(),
                    "alive": {n: self.alive(n) for n in self.node_ids()},
                    "commits": {n: {t: r.get("commit") for t, r in got[1].items()}
                                for n, got in self.info.items() if self.alive(n)},
                    "tablets": {str(t): {**m, "up": self.placements.get(t, {}).get("up")}
                                for t, (m, _) in sorted(self.shards.items())}}
        if method == "reconfig":
            t = int(params["tablet"])
            task = self.busy.get(t)
            if task is not None and not task.done():
                raise RpcError("busy", f"tablet {t} has an operation in progress")
            armed = params.get("crash_at")
            if armed is not None and armed not in CRASH_POINTS:
                raise RpcError("bad_request", f"unknown crash point {armed!r}")
            run = self._start_action(t, "reconfigure", reconfig.reconfigure(self, t, params["op"], params.get("old"),
                                                                            params.get("new")))
            self.busy[t] = run
            if armed is not None and armed not in self.crash_at:
                # Test hook, like --crash-at but for this one reconfiguration: a fault stalls it on purpose.
                self.crash_at.add(armed)
                run.add_done_callback(lambda _: self.crash_at.discard(armed))
            try:
                return await asyncio.shield(run)
            except reconfig.ReconfigRefused as e:
                raise RpcError("refused", str(e)) from e
            except RpcError as e:
                raise RpcError("reconfig_failed", f"{e.code}: {e.message}") from e
            except Exception as e:
                report_unplanned(f"the reconfiguration of tablet {t}", e)
                raise RpcError("reconfig_failed", f"{type(e).__name__}: {e}") from e
        raise RpcError("unknown_method", f"no method {method!r}")


async def serve(op: Operator, host: str, port: int) -> None:
    """Run the operator and its RPC server until SIGTERM/SIGINT."""
    import signal

    server = RpcServer(op.dispatch)
    await server.start(host, port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(json.dumps({"operator": op.id, "host": host, "port": server.port}), flush=True)
    await op.run(stop)
    await server.close()
