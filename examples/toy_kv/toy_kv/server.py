"""A toy primary-backup key-value store, standard library only: ``python -m toy_kv.server``.

One process per node. The first node is the primary: it takes every write, keeps its data in memory,
and relies on the backups for durability. A write is sent to every backup, each of which appends it to
its log and fsyncs before it answers; only when every backup has it does the primary apply it and
acknowledge it. The second node, the standby, serves every read: it holds every acknowledged write,
because no write is acknowledged before it has it, and it applies writes in the primary's order.

A primary that cannot reach a backup stops taking writes, and when every backup answers again it
resyncs: it takes the standby's state (which may hold a write whose outcome its client never learned)
and installs it on the other backups. A restarted primary does the same before it takes writes.

Replies are exact: ``{"ok": true}`` (done), ``{"ok": false, "error": ...}`` (definitely not done: refused
before anything was sent, or a compare that failed) and ``{"ok": null, "error": ...}`` (unknown: some
backup may have the write).

``--bug async-replication`` makes the primary acknowledge a write as soon as it applied it, and ship
writes to the backups in the background every two seconds: the standby then serves reads that miss
writes already acknowledged, and a resync loses them.

Protocol: one JSON object per line over TCP. Clients: ``read`` (to the standby), ``write``, ``cas``,
``add`` (to a set). The primary to the backups: ``apply`` (seq, key, value), ``state``, ``install``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

REPLICATION_TIMEOUT_S = 1.0
BATCH_S = 2.0


class Node:
    """One node's state: its data, the last sequence number it holds, and (on the primary) its backups."""

    def __init__(self, name: str, data_dir: str, peers: dict[str, tuple[str, int]], primary: str,
                 bugs: set[str]) -> None:
        self.name, self.dir, self.peers, self.primary, self.bugs = name, data_dir, peers, primary, bugs
        self.backups = [p for p in peers if p != primary]
        self.data: dict[str, Any] = {}
        self.seq = 0
        self.serving = False
        self.lock = asyncio.Lock()
        self.pending: list[dict[str, Any]] = []
        os.makedirs(data_dir, exist_ok=True)
        if name != primary:
            self._load()

    # --- a backup's durable state -------------------------------------------------------------------

    def _path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _load(self) -> None:
        try:
            with open(self._path("snapshot.json")) as fh:
                snap = json.load(fh)
            self.data, self.seq = snap["data"], snap["seq"]
        except (OSError, ValueError, KeyError):
            pass
        try:
            with open(self._path("log.jsonl")) as fh:
                for line in fh:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        break  # a torn last line: never acknowledged
                    if entry["seq"] > self.seq:
                        self.data[entry["key"]], self.seq = entry["value"], entry["seq"]
        except OSError:
            pass

    def _append(self, entry: dict[str, Any]) -> None:
        with open(self._path("log.jsonl"), "a") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _install(self, seq: int, data: dict[str, Any]) -> None:
        tmp = self._path("snapshot.json.tmp")
        with open(tmp, "w") as fh:
            json.dump({"seq": seq, "data": data}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self._path("snapshot.json"))
        with open(self._path("log.jsonl"), "w") as fh:
            fh.flush()
            os.fsync(fh.fileno())
        self.data, self.seq = dict(data), seq

    def backup_request(self, req: dict[str, Any]) -> dict[str, Any]:
        """A backup's answer to the primary."""
        op = req.get("op")
        if op == "apply":
            if req["seq"] > self.seq:
                self._append({"seq": req["seq"], "key": req["key"], "value": req["value"]})
                self.data[req["key"]], self.seq = req["value"], req["seq"]
            return {"ok": True}
        if op == "read":  # the standby serves every read
            return {"ok": True, "value": self.data.get(str(req.get("key")))}
        if op == "state":
            return {"ok": True, "seq": self.seq, "data": self.data}
        if op == "install":
            self._install(req["seq"], req["data"])
            return {"ok": True}
        return {"ok": False, "error": f"unknown op {op!r}"}

    # --- the primary --------------------------------------------------------------------------------

    async def call(self, peer: str, req: dict[str, Any]) -> dict[str, Any]:
        """One request to a peer, bounded by the replication timeout."""
        host, port = self.peers[peer]

        async def go() -> dict[str, Any]:
            reader, writer = await asyncio.open_connection(host, port)
            try:
                writer.write(json.dumps(req).encode() + b"\n")
                await writer.drain()
                answer: dict[str, Any] = json.loads(await reader.readline())
                return answer
            finally:
                writer.close()

        return await asyncio.wait_for(go(), REPLICATION_TIMEOUT_S)

    async def resync(self) -> None:
        """Take the first backup's state and install it on every backup; then serve. Retries until every
        backup answers."""
        while True:
            try:
                state = await self.call(self.backups[0], {"op": "state"})
                seq, data = state["seq"], state["data"]
                for backup in self.backups[1:]:
                    await self.call(backup, {"op": "install", "seq": seq, "data": data})
            except (OSError, TimeoutError, ValueError, KeyError):
                await asyncio.sleep(0.2)
                continue
            async with self.lock:
                self.data, self.seq, self.pending = dict(data), seq, []
                self.serving = True
            return

    def step_down(self) -> None:
        """Stop serving until a resync."""
        if self.serving:
            self.serving = False
            asyncio.get_running_loop().create_task(self.resync())

    async def replicate(self, entries: list[dict[str, Any]]) -> bool:
        """Send ``entries`` to every backup; whether every backup has them all."""
        async def to(backup: str) -> bool:
            try:
                for entry in entries:
                    if not (await self.call(backup, {"op": "apply", **entry})).get("ok"):
                        return False
                return True
            except (OSError, TimeoutError, ValueError):
                return False

        return all(await asyncio.gather(*(to(b) for b in self.backups)))

    async def shipper(self) -> None:
        """(async-replication) Ship the pending writes every two seconds, and step down on a failure."""
        while True:
            await asyncio.sleep(BATCH_S)
            batch, self.pending = self.pending, []
            if batch and self.serving and not await self.replicate(batch):
                self.step_down()

    async def client_request(self, req: dict[str, Any]) -> dict[str, Any]:
        """The primary's answer to a client."""
        op, key = req.get("op"), str(req.get("key"))
        if not self.serving:
            return {"ok": False, "error": "unavailable"}
        if op == "read":
            return {"ok": True, "value": self.data.get(key)}
        async with self.lock:
            if not self.serving:
                return {"ok": False, "error": "unavailable"}
            current = self.data.get(key)
            if op == "write":
                value = req.get("value")
            elif op == "cas":
                if current != req.get("expected"):
                    return {"ok": False, "error": "mismatch"}
                value = req.get("value")
            elif op == "add":
                value = [*(current or []), req.get("value")]
            else:
                return {"ok": False, "error": f"unknown op {op!r}"}
            seq = self.seq + 1
            entry = {"seq": seq, "key": key, "value": value}
            if "async-replication" in self.bugs:
                self.pending.append(entry)
            elif not await self.replicate([entry]):
                self.step_down()
                return {"ok": None, "error": "a backup did not confirm the write"}
            self.data[key], self.seq = value, seq
            return {"ok": True}


async def serve(node: Node, host: str, port: int) -> None:
    """Serve clients (on the primary) and the primary (on a backup) until killed."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                req = json.loads(line)
                is_primary = node.name == node.primary
                answer = await node.client_request(req) if is_primary else node.backup_request(req)
                writer.write(json.dumps(answer).encode() + b"\n")
                await writer.drain()
        except (OSError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, host, port)
    if node.name == node.primary:
        asyncio.get_running_loop().create_task(node.resync())
        if "async-replication" in node.bugs:
            asyncio.get_running_loop().create_task(node.shipper())
    async with server:
        await server.serve_forever()


def main() -> None:
    """Parse the command line and serve."""
    p = argparse.ArgumentParser(prog="python -m toy_kv.server")
    p.add_argument("--name", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--peers", required=True, help="n1=HOST:PORT,n2=HOST:PORT,...; the first is the primary")
    p.add_argument("--bug", action="append", default=[])
    a = p.parse_args()
    peers = {}
    for item in a.peers.split(","):
        name, addr = item.split("=")
        host, port = addr.rsplit(":", 1)
        peers[name] = (host, int(port))
    node = Node(a.name, a.data, peers, next(iter(peers)), set(a.bug))
    asyncio.run(serve(node, a.host, a.port))


if __name__ == "__main__":
    main()
