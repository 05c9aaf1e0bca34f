"""The master's records: members (nodes) and placements (up sets), and the join decision."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from system import rules
from system.metadata import MetadataStore


def member_key(member: str) -> str:
    """The metadata key of a member record."""
    return f"members/{member}"


def placement_key(tablet: int) -> str:
    """The metadata key of a tablet's placement (up set)."""
    return f"placement/{tablet:05d}"


class JoinRefused(Exception):
    """A definite refusal of a join; ``code`` is the RPC error code."""

    def __init__(self, code: str, message: str, **data: Any) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class Catalog:
    """Blocking access to the master's records (callers run it in a thread)."""

    def __init__(self, store: MetadataStore) -> None:
        self.store = store

    def members(self) -> dict[str, tuple[dict[str, Any], int]]:
        """Every member record (left ones too) with its version."""
        return {k.split("/", 1)[1]: (v.value, v.version) for k, v in self.store.list("members/").items()}

    def placements(self) -> dict[int, tuple[dict[str, Any], int]]:
        """Every placement record with its version."""
        return {int(k.split("/", 1)[1]): (v.value, v.version) for k, v in self.store.list("placement/").items()}

    def shards(self) -> dict[int, dict[str, Any]]:
        """The operator's shard records (acting sets, migrations)."""
        return {int(k.split("/", 1)[1]): v.value for k, v in self.store.list("shards/").items()}

    def set_state(self, member: str, new: str, why: str, **extra: Any) -> bool:
        """Move a member to state ``new`` if the node state machine allows it (compare-and-set)."""
        for _ in range(10):
            rec = self.store.get(member_key(member))
            if rec is None:
                return False
            if rec.value["state"] == new:
                return True
            if not rules.node_transition_allowed(rec.value["state"], new):
                return False
            value = {**rec.value, **extra, "state": new, "since": time.time(), "why": why}
            if self.store.cas(member_key(member), value, rec.version) is not None:
                return True
        return False

    def join(self, uuid: str, name: str, host: str, port: int) -> dict[str, Any]:
        """The join decision (Scylla seed): refuse a removed or existing UUID; accept a new one as a new
        member, retiring (``left``) any live member of the same name, whose disk it must have replaced."""
        for _ in range(10):
            members = self.members()
            refusal = rules.join_refusal([m for m, _ in members.values()], uuid)
            if refusal is not None:
                mine = next(m for m, _ in members.values() if m["uuid"] == uuid)
                raise JoinRefused(refusal, f"uuid {uuid} is {mine['state']} (member {mine['member']})",
                                  member=mine["member"])
            same_name = [m for m, _ in members.values() if m["name"] == name]
            live = [m for m in same_name if m["state"] != "left"]
            if live and rules.rejoin_as_old_identity():
                old = live[0]
                return {"member": old["member"], "uuid": old["uuid"], "how": "rejoined under the old identity"}
            for old in live:
                self.set_state(old["member"], "left", f"replaced by {uuid}: its disk was lost", replaced_by=uuid)
            member = name if not same_name else f"{name}~{len(same_name) + 1}"
            rec = {"member": member, "name": name, "uuid": uuid, "host": host, "port": int(port), "state": "none",
                   "since": time.time(), "why": "joined"}
            if self.store.cas(member_key(member), rec, 0) is not None:
                return {"member": member, "uuid": uuid, "how": "joined as a new member",
                        "replaced": [o["member"] for o in live]}
        raise JoinRefused("busy", "the catalog kept changing; retry")


async def in_thread(fn: Any, *args: Any) -> Any:
    """Run a blocking catalog call in a worker thread."""
    return await asyncio.to_thread(fn, *args)
