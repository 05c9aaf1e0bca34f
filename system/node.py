"""A data node: hosts tablet replicas and does exactly what the operator and tablet leaders ask.

Run: ``python -m system.node --id n1 --host 127.0.0.2 --port 7001 --data DIR [--bug NAME]...``

On first start it writes ``DIR/instance.json`` with a fresh UUID. Every RPC except ``hello`` must
name that UUID in its ``to`` field, or it is refused with ``wrong_node``. ``hello`` is the operator's
heartbeat and how it learns the UUID. The node has no failure detection and never contacts the
operator; it contacts other nodes only as a tablet leader (truncate, add_entries, confirm).

RPC methods (params always include ``tablet`` unless noted):
- operator: ``hello`` (none), ``fence`` (epoch, create), ``become_leader`` (epoch, follower_map,
  ensemble, nodes), ``add_follower`` (epoch, node, head, addr), ``prepare_reconfig`` (epoch, op, old),
  ``commit_reconfig`` (epoch, op, old, new, new_head, addr), ``install_snapshot`` (epoch, entries,
  commit), ``dump`` (tablet optional)
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
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from system import bugs, statefile
from system.events import EventLog
from system.leader import LeaderRole, become_leader
from system.replica import TabletReplica
from system.rules import eid
from system.wire import RpcError, RpcPool, RpcServer

MAX_VALUE_BYTES = 1024 * 1024
CLIENT_OPS = ("put", "get", "delete", "cas", "append", "read")


def load_or_create_uuid(data_dir: str, node_id: str) -> str:
    """The node's UUID from ``instance.json``, created (durably) on first start."""
    path = os.path.join(data_dir, "instance.json")
    inst = statefile.read_json(path)
    if inst is None:
        inst = {"uuid": str(uuid.uuid4()), "id": node_id}
        statefile.write_atomic(path, inst)
    return str(inst["uuid"])


class Node:
    """The node's tablets and its RPC dispatch."""

    def __init__(self, node_id: str, data_dir: str) -> None:
        self.id = node_id
        self.dir = data_dir
        os.makedirs(os.path.join(data_dir, "tablets"), exist_ok=True)
        self.uuid = load_or_create_uuid(data_dir, node_id)
        self.events = EventLog(os.path.join(data_dir, "events.jsonl"), node_id)
        self.events.emit("node_started", uuid=self.uuid, pid=os.getpid(), bugs=bugs.active())
        self.pool = RpcPool()
        self.tablets: dict[int, TabletReplica] = {}
        for name in sorted(os.listdir(os.path.join(data_dir, "tablets"))):
            if name.isdigit():
                t = int(name)
                self.tablets[t] = TabletReplica.load(t, self._tablet_dir(t), node_id, self.events)
        self.handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            name[4:]: getattr(self, name) for name in dir(self) if name.startswith("rpc_")
        }

    def _tablet_dir(self, t: int) -> str:
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
        return {"id": self.id, "uuid": self.uuid, "bugs": bugs.active(),
                "tablets": {str(t): r.summary() for t, r in self.tablets.items()}}

    async def rpc_fence(self, params: dict[str, Any]) -> Any:
        """Fence Request (``create`` makes an empty replica first, for a brand-new tablet)."""
        t = params["tablet"]
        if t not in self.tablets and params.get("create") and isinstance(t, int):
            self.tablets[t] = TabletReplica.create(t, self._tablet_dir(t), self.id, self.events)
        return await self.replica(params).fence(int(params["epoch"]))

    async def rpc_become_leader(self, params: dict[str, Any]) -> Any:
        """Become Leader Request."""
        fmap = {n: eid(h) for n, h in params["follower_map"].items()}
        return await become_leader(self.replica(params), int(params["epoch"]), fmap, list(params["ensemble"]),
                                   dict(params["nodes"]), self.pool)

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
                                                               params.get("old"))

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
            self.tablets[t] = TabletReplica.create(t, self._tablet_dir(t), self.id, self.events)
        return await self.replica(params).install_snapshot(int(params["epoch"]), list(params["entries"]),
                                                           int(params["commit"]))

    async def rpc_dump(self, params: dict[str, Any]) -> Any:
        """Per-tablet state, log and key-value state, for checkers."""
        t = params.get("tablet")
        tablets = {t: self.replica(params)} if t is not None else self.tablets
        return {"id": self.id, "uuid": self.uuid, "tablets": {str(k): r.dump() for k, r in tablets.items()}}

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
        """Stop every replica and close connections."""
        for r in self.tablets.values():
            await r.close()
        await self.pool.close()
        self.events.emit("node_stopped")
        self.events.close()


async def serve(node_id: str, host: str, port: int, data_dir: str) -> None:
    """Run a node until SIGTERM/SIGINT."""
    node = Node(node_id, data_dir)
    node.pool.source = host  # replicate from our own address, so per-link partitions apply
    server = RpcServer(node.dispatch)
    await server.start(host, port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    checkpoint = asyncio.create_task(node.checkpoint_loop())
    print(json.dumps({"node": node_id, "uuid": node.uuid, "host": host, "port": server.port}), flush=True)
    await stop.wait()
    checkpoint.cancel()
    await server.close()
    await node.close()


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the node."""
    p = argparse.ArgumentParser(prog="python -m system.node", description=__doc__.splitlines()[0])
    p.add_argument("--id", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--data", required=True, help="data directory")
    p.add_argument("--bug", action="append", default=[], choices=sorted(bugs.BUGS))
    a = p.parse_args(argv)
    bugs.configure(a.bug)
    os.makedirs(a.data, exist_ok=True)
    profile_dir = os.environ.get("FENCEPOST_PROFILE_DIR")
    if profile_dir:  # a development aid: cProfile the whole node, stats written on a clean stop
        import cProfile

        with cProfile.Profile(time.process_time) as prof:
            asyncio.run(serve(a.id, a.host, a.port, a.data))
        prof.dump_stats(os.path.join(profile_dir, f"{a.id}.prof"))
    else:
        asyncio.run(serve(a.id, a.host, a.port, a.data))
    sys.exit(0)


if __name__ == "__main__":
    main()
