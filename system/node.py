"""A data node: hosts tablet replicas and does exactly what the operator and tablet leaders ask.

Run: ``python -m system.node --id n1 --host 127.0.0.2 --port 7001 --data DIR [--master H:P --cluster-file F]
[--reformat] [--bug NAME]... [--crash-at POINT]... [--copy-delay S]``

On first start it writes ``DIR/instance.json`` with a fresh UUID (:mod:`system.identity`) and asks the
master to join (:mod:`system.join`). A directory whose instance file or consensus metadata is missing or
corrupt is disk loss: the node exits with code 3 and says why, unless ``--reformat`` lets it take a new
UUID. Every RPC except ``hello`` must name the UUID in its ``to`` field, or it is refused with
``wrong_node``. ``hello`` is the heartbeat of the operator and the master. The node has no failure
detection; it contacts other nodes only as a tablet leader (truncate, add_entries, confirm) and as the
destination of a tablet copy (copy_source).

RPC methods (params always include ``tablet`` unless noted):
- operator: ``hello`` (none), ``fence`` (epoch, create), ``become_leader`` (epoch, follower_map,
  ensemble, nodes), ``add_follower`` (epoch, node, head, addr), ``prepare_reconfig`` (epoch, op, old),
  ``commit_reconfig`` (epoch, op, old, new, new_head, addr), ``install_snapshot`` (epoch, entries,
  commit), ``dump`` (tablet optional), ``delete_tablet`` (epoch: tombstone), ``start_tablet_copy``
  (source, session, epoch, current_state, last_entry), ``close_sessions`` (below: a session barrier),
  ``add_pre_voter``/``remove_pre_voter`` (epoch, node, addr) on a leader
- node to node: ``copy_source`` (session), served by the copy's source
- test hook: ``set_copy_delay`` (seconds, no tablet): what ``--copy-delay`` sets, for copies that start later;
  saved in the data directory, so it outlasts a restart
- leader to follower: ``truncate`` (epoch, leader, point), ``add_entries`` (epoch, leader, prev,
  entries, commit), ``confirm`` (epoch)
- clients, on the leader: ``put`` (key, value), ``get`` (key), ``delete`` (key), ``cas`` (key,
  expected, new), ``append`` (key, value), ``read`` (key)

SIGTERM or SIGINT stops it cleanly: connections close, unwritten entries are flushed, state saved.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from system import bugs, identity, statefile, superblock, tablet_copy
from system.events import EventLog
from system.failures import watch
from system.join import Joiner
from system.leader import LeaderRole, become_leader
from system.replica import TabletReplica
from system.rules import eid
from system.superblock import DiskLoss
from system.wire import RpcError, RpcPool, RpcServer

MAX_VALUE_BYTES = 1024 * 1024
CLIENT_OPS = ("put", "get", "delete", "cas", "append", "read")
CRASH_POINTS = ("copy:after-download", "copy:after-wal")
EXIT_DISK_LOSS = 3


COPY_DELAY_FILE = "copy_delay.json"
"""Where ``set_copy_delay`` saves the delay (in the data directory); read at start when ``--copy-delay`` is 0."""


def _saved_copy_delay(data_dir: str) -> float:
    """The copy delay ``set_copy_delay`` saved in ``data_dir`` (0 without one, or an unreadable one)."""
    try:
        saved = statefile.read_json(os.path.join(data_dir, COPY_DELAY_FILE))
        return float(saved["seconds"]) if isinstance(saved, dict) else 0.0
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


class Node:
    """The node's tablets and its RPC dispatch."""

    def __init__(self, node_id: str, data_dir: str, ident: identity.Identity, events: EventLog,
                 crash_at: tuple[str, ...] = (), copy_delay: float = 0.0) -> None:
        self.id = node_id
        self.dir = data_dir
        self.ident = ident
        self.uuid = ident.uuid
        self.events = events
        self.crash_at = set(crash_at)
        self.copy_delay = copy_delay or _saved_copy_delay(data_dir)
        self.events.emit("node_started", uuid=self.uuid, member=self.member, pid=os.getpid(), bugs=bugs.active())
        self.pool = RpcPool()
        self.guards = tablet_copy.SessionGuards(os.path.join(data_dir, "sessions.json"))
        self.tablets: dict[int, TabletReplica] = {}
        self.background: set[asyncio.Task[Any]] = set()
        for name in sorted(os.listdir(os.path.join(data_dir, "tablets"))):
            if name.isdigit():
                t = int(name)
                state, note = superblock.startup(data_dir, t, self.tablet_dir(t))
                if note:
                    self.events.emit("tablet_state", tablet=t, state=state, was=None, why=note)
                if state != "DOES_NOT_EXIST":
                    self.tablets[t] = TabletReplica.load(t, self.tablet_dir(t), self.member, self.events)
        self.handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            name[4:]: getattr(self, name) for name in dir(self) if name.startswith("rpc_")
        }

    @property
    def member(self) -> str:
        """The member id replicas use for this node: the master's name for it, the process id until joined."""
        return self.ident.member or self.id

    def set_identity(self, ident: identity.Identity) -> None:
        """Adopt what the master said at join (member id; an old UUID only under bug no-uuid-check)."""
        self.ident = ident
        self.uuid = ident.uuid
        for r in self.tablets.values():
            r.node_id = self.member

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` in the background until it ends or the node stops (tablet copies)."""
        task = watch(asyncio.create_task(coro), "a background task (tablet copy)")
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def crash_point(self, name: str) -> None:
        """Test hook: exit abruptly here if ``--crash-at name`` was given."""
        if name in self.crash_at:
            self.events.emit("crash_point", point=name)
            os._exit(99)

    def tablet_dir(self, t: int) -> str:
        """Where tablet ``t``'s files live."""
        return os.path.join(self.dir, "tablets", str(t))

    async def dispatch(self, method: str, to: str | None, params: dict[str, Any]) -> Any:
        """Check the addressee, then run the named handler."""
        handler = self.handlers.get(method)
        if handler is None:
            raise RpcError("unknown_method", f"no method {method!r}")
        if method != "hello" and to != self.uuid and not bugs.enabled("no-uuid-check"):
            raise RpcError("wrong_node", f"request for {to!r} reached node {self.id} ({self.uuid})")
        return await handler(params)

    def replica(self, params: dict[str, Any]) -> TabletReplica:
        """The replica named by ``params['tablet']``; ``unknown_tablet`` if this node has none."""
        t = params["tablet"]
        if not isinstance(t, int) or isinstance(t, bool):
            raise RpcError("bad_request", "tablet must be an integer")
        r = self.tablets.get(t)
        if r is None:
            raise RpcError("unknown_tablet", f"node {self.id} has no replica of tablet {t}")
        return r

    def leader_role(self, params: dict[str, Any]) -> LeaderRole:
        """The leader role for the tablet, or a ``not_leader`` refusal with a hint."""
        r = self.replica(params)
        r.check_serving()
        if r.status != "leader" or r.role is None or r.role.stopped:
            raise RpcError("not_leader", f"node {self.id} is {r.status} for tablet {r.tablet}", leader=r.leader_id)
        return r.role

    # --- operator -------------------------------------------------------------------------------------

    async def rpc_hello(self, params: dict[str, Any]) -> Any:
        """Heartbeat: identity and a summary of every tablet."""
        return {"id": self.id, "uuid": self.uuid, "member": self.member, "bugs": bugs.active(),
                "tablets": {str(t): r.summary() for t, r in self.tablets.items()}}

    async def rpc_fence(self, params: dict[str, Any]) -> Any:
        """Fence Request (``create`` makes an empty replica first, for a brand-new tablet)."""
        t = params["tablet"]
        if t not in self.tablets and params.get("create") and isinstance(t, int):
            self.tablets[t] = TabletReplica.create(t, self.tablet_dir(t), self.member, self.events)
        return await self.replica(params).fence(int(params["epoch"]))

    async def rpc_become_leader(self, params: dict[str, Any]) -> Any:
        """Become Leader Request (``pre_voters``: catch-up members of a migration in flight)."""
        fmap = {n: eid(h) for n, h in params["follower_map"].items()}
        return await become_leader(self.replica(params), int(params["epoch"]), fmap, list(params["ensemble"]),
                                   dict(params["nodes"]), self.pool, dict(params.get("pre_voters") or {}))

    async def rpc_add_pre_voter(self, params: dict[str, Any]) -> Any:
        """Add a catch-up (PRE_VOTER) member: the leader streams to it, but its acks do not count."""
        role = self.leader_role(params)
        if int(params["epoch"]) != role.replica.epoch:
            raise RpcError("stale_epoch", f"leader is at epoch {role.replica.epoch}", epoch=role.replica.epoch)
        role.add_pre_voter(params["node"], dict(params["addr"]))
        return {"ok": True}

    async def rpc_remove_pre_voter(self, params: dict[str, Any]) -> Any:
        """Drop a catch-up member (a cancelled migration)."""
        self.leader_role(params).remove_pre_voter(params["node"])
        return {"ok": True}

    async def rpc_delete_tablet(self, params: dict[str, Any]) -> Any:
        """Tombstone this node's replica (it keeps its consensus metadata for ever)."""
        return await self.replica(params).delete(int(params["epoch"]))

    async def rpc_start_tablet_copy(self, params: dict[str, Any]) -> Any:
        """StartTabletCopy (see :mod:`system.tablet_copy`)."""
        return await tablet_copy.start_tablet_copy(self, params)

    async def rpc_copy_source(self, params: dict[str, Any]) -> Any:
        """Serve a tablet copy: consensus metadata, WAL and commit index of a READY replica."""
        return tablet_copy.source_snapshot(self.replica(params))

    async def rpc_set_copy_delay(self, params: dict[str, Any]) -> Any:
        """Test hook: set ``--copy-delay`` at run time (0 to 60 s), so a fault can slow one copy. Logged
        (``copy_delay_set``) only when it changes, so a fault may re-assert it on every poll; ``changed``
        says whether this call changed it (a node restarted meanwhile had lost it)."""
        delay = params.get("seconds")
        if not isinstance(delay, int | float) or isinstance(delay, bool) or not 0 <= delay <= 60:
            raise RpcError("bad_request", "seconds must be a number from 0 to 60")
        changed = float(delay) != self.copy_delay
        self.copy_delay = float(delay)
        if changed:
            # Saved durably, so that a restart or a power loss of the node (another fault's) keeps it, as the
            # argument would: in the default campaign a copy-triggered power loss once restarted the
            # destination of a slowed copy, and the copy it restarted ran at full speed.
            await asyncio.to_thread(statefile.write_atomic, os.path.join(self.dir, COPY_DELAY_FILE),
                                    {"seconds": self.copy_delay})
            self.events.emit("copy_delay_set", seconds=self.copy_delay)
        return {"copy_delay": self.copy_delay, "changed": changed}

    async def rpc_close_sessions(self, params: dict[str, Any]) -> Any:
        """Session barrier: every migration session of the tablet below ``below`` is closed here."""
        t = int(params["tablet"])
        async with self.guards.lock(t):  # waits for a copy already applying under an older session
            below = await asyncio.to_thread(self.guards.close_below, t, int(params["below"]))
            self.events.emit("sessions_closed", tablet=t, below=below)
        return {"closed_below": below}

    async def rpc_add_follower(self, params: dict[str, Any]) -> Any:
        """Add Follower Request (a late fence response, or a recovered node)."""
        role = self.leader_role(params)
        if int(params["epoch"]) != role.replica.epoch:
            raise RpcError("stale_epoch", f"leader is at epoch {role.replica.epoch}", epoch=role.replica.epoch)
        role.add_follower(params["node"], eid(params["head"]), dict(params["addr"]))
        return {"ok": True}

    async def rpc_prepare_reconfig(self, params: dict[str, Any]) -> Any:
        """Prepare Reconfiguration Request."""
        return await self.leader_role(params).prepare_reconfig(int(params["epoch"]), params["op"],
                                                               params.get("old"), bool(params.get("promote")))

    async def rpc_commit_reconfig(self, params: dict[str, Any]) -> Any:
        """Commit Reconfiguration Request."""
        head = params.get("new_head")
        return self.leader_role(params).commit_reconfig(int(params["epoch"]), params["op"], params.get("old"),
                                                        params.get("new"), eid(head) if head else None,
                                                        params.get("addr"))

    async def rpc_install_snapshot(self, params: dict[str, Any]) -> Any:
        """Snapshot Request: creates the replica if needed."""
        t = params["tablet"]
        if t not in self.tablets and isinstance(t, int):
            self.tablets[t] = TabletReplica.create(t, self.tablet_dir(t), self.member, self.events)
        return await self.replica(params).install_snapshot(int(params["epoch"]), list(params["entries"]),
                                                           int(params["commit"]))

    async def rpc_dump(self, params: dict[str, Any]) -> Any:
        """Per-tablet state, log and key-value state, for checkers."""
        t = params.get("tablet")
        tablets = {t: self.replica(params)} if t is not None else self.tablets
        return {"id": self.id, "uuid": self.uuid, "member": self.member,
                "tablets": {str(k): r.dump() for k, r in tablets.items()}}

    # --- leader to follower ---------------------------------------------------------------------------

    async def rpc_truncate(self, params: dict[str, Any]) -> Any:
        """Truncate Request."""
        return await self.replica(params).truncate(int(params["epoch"]), params["leader"], eid(params["point"]))

    async def rpc_add_entries(self, params: dict[str, Any]) -> Any:
        """Add Entry Request (a batch, or a probe when ``prev`` is null)."""
        prev = params.get("prev")
        return await self.replica(params).add_entries(int(params["epoch"]), params["leader"],
                                                      eid(prev) if prev is not None else None,
                                                      list(params["entries"]), int(params["commit"]))

    async def rpc_confirm(self, params: dict[str, Any]) -> Any:
        """Leadership confirmation for a linearizable read."""
        return self.replica(params).confirm(int(params["epoch"]))

    # --- clients --------------------------------------------------------------------------------------

    @staticmethod
    def _check_value(params: dict[str, Any], *names: str) -> None:
        for n in names:
            if len(json.dumps(params.get(n))) > MAX_VALUE_BYTES:
                raise RpcError("value_too_large", f"{n} exceeds {MAX_VALUE_BYTES} bytes")

    @staticmethod
    def _key(params: dict[str, Any]) -> str:
        key = params["key"]
        if not isinstance(key, str):
            raise RpcError("bad_request", "key must be a string")
        return key

    async def _write(self, params: dict[str, Any], op: dict[str, Any]) -> Any:
        result = await self.leader_role(params).write(op)
        if not result.get("ok"):
            raise RpcError(result.get("error", "failed"), "", value=result.get("value"))
        return result.get("value")

    async def rpc_put(self, params: dict[str, Any]) -> Any:
        """Client put."""
        self._check_value(params, "value")
        return await self._write(params, {"op": "put", "key": self._key(params), "value": params.get("value")})

    async def rpc_delete(self, params: dict[str, Any]) -> Any:
        """Client delete."""
        return await self._write(params, {"op": "delete", "key": self._key(params)})

    async def rpc_cas(self, params: dict[str, Any]) -> Any:
        """Client compare-and-set; a mismatch is the definite error ``cas_mismatch``."""
        self._check_value(params, "expected", "new")
        return await self._write(params, {"op": "cas", "key": self._key(params), "expected": params.get("expected"),
                                          "new": params.get("new")})

    async def rpc_append(self, params: dict[str, Any]) -> Any:
        """Client append to the list under ``key``; returns its position in the list."""
        self._check_value(params, "value")
        return await self._write(params, {"op": "append", "key": self._key(params), "value": params.get("value")})

    async def rpc_get(self, params: dict[str, Any]) -> Any:
        """Client linearizable get."""
        return await self.leader_role(params).read(self._key(params))

    async def rpc_read(self, params: dict[str, Any]) -> Any:
        """Client linearizable read of the list under ``key`` (the log workload)."""
        value = await self.leader_role(params).read(self._key(params))
        return value if isinstance(value, list) else []

    async def checkpoint_loop(self) -> None:
        """Persist moved commit indexes in the background."""
        while True:
            await asyncio.sleep(0.5)
            for r in list(self.tablets.values()):
                with contextlib.suppress(Exception):
                    await r.persist_commit_if_moved()

    async def close(self) -> None:
        """Stop background copies and every replica, and close connections."""
        for task in list(self.background):
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)
        for r in self.tablets.values():
            await r.close()
        await self.pool.close()
        self.events.emit("node_stopped")
        self.events.close()


def open_node(a: argparse.Namespace) -> Node:
    """Verify the data directory (reformatting on disk loss if asked) and open the node.

    Raises DiskLoss when the node must stay offline."""
    events = EventLog(os.path.join(a.data, "events.jsonl"), a.id)
    try:
        ident = identity.check(a.data, a.id)
        return Node(a.id, a.data, ident, events, tuple(a.crash_at), a.copy_delay)
    except DiskLoss as e:
        events.emit("disk_loss", reason=str(e), reformat=a.reformat)
        if not a.reformat:
            events.close()
            raise
        ident = identity.reformat(a.data, a.id)
        events.emit("reformatted", uuid=ident.uuid)
        return Node(a.id, a.data, ident, events, tuple(a.crash_at), a.copy_delay)


async def serve(a: argparse.Namespace) -> None:
    """Run a node until SIGTERM/SIGINT."""
    node = open_node(a)
    node.pool.source = a.host  # replicate from our own address, so per-link partitions apply
    server = RpcServer(node.dispatch)
    await server.start(a.host, a.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    checkpoint = watch(asyncio.create_task(node.checkpoint_loop()), "the checkpoint loop")
    joiner = Joiner(node, a.master, a.cluster_file, a.host, a.port, stop) if a.master else None
    join_task = watch(asyncio.create_task(joiner.run()), "the join loop") if joiner else None
    print(json.dumps({"node": a.id, "uuid": node.uuid, "host": a.host, "port": server.port}), flush=True)
    await stop.wait()
    checkpoint.cancel()
    if join_task is not None:
        join_task.cancel()
    await server.close()
    await node.close()
    if joiner is not None and joiner.refused:
        sys.exit(4)


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the node."""
    p = argparse.ArgumentParser(prog="python -m system.node", description=__doc__.splitlines()[0])
    p.add_argument("--id", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--data", required=True, help="data directory")
    p.add_argument("--master", default=None, help="host:port of the master to join")
    p.add_argument("--cluster-file", default=None, help="JSON file with the cluster id and secret token")
    p.add_argument("--reformat", action="store_true", help="on disk loss, take a new UUID instead of staying offline")
    p.add_argument("--bug", action="append", default=[], choices=sorted(bugs.BUGS))
    p.add_argument("--crash-at", action="append", default=[], choices=CRASH_POINTS)
    p.add_argument("--copy-delay", type=float, default=0.0, help="test hook: seconds a tablet copy pauses")
    a = p.parse_args(argv)
    bugs.configure(a.bug)
    os.makedirs(a.data, exist_ok=True)
    profile_dir = os.environ.get("FENCEPOST_PROFILE_DIR")
    try:
        if profile_dir:  # a development aid: cProfile the whole node, stats written on a clean stop
            import cProfile

            with cProfile.Profile(time.process_time) as prof:
                asyncio.run(serve(a))
            prof.dump_stats(os.path.join(profile_dir, f"{a.id}.prof"))
        else:
            asyncio.run(serve(a))
    except DiskLoss as e:
        print(f"node {a.id}: disk loss, staying offline: {e}; start with --reformat to join as a new node",
              file=sys.stderr, flush=True)
        sys.exit(EXIT_DISK_LOSS)
    sys.exit(0)


if __name__ == "__main__":
    main()
