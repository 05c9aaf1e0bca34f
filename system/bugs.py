"""Registry of deliberate protocol bugs, switched on with ``--bug NAME`` (repeatable).

Each bug breaks exactly one rule of the replication protocol, at the one function that owns the rule,
so the harness can prove that its checkers catch the anomaly. With no ``--bug`` the system is correct.

A rule site reads ``if bugs.enabled("gap-ack"): ...``; processes call :func:`configure` once at start
with the names they were given. The environment variable ``FENCEPOST_BUGS`` (comma separated) is read
too, so child processes can inherit a bug without new flags.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# Name -> where it lives, what it breaks, and the real bug it mirrors.
BUGS: dict[str, str] = {
    "ack-before-fsync": "wal.Wal.sync: a replica counts and acknowledges entries before they are fsynced, so an"
                        " entry is acknowledged before a majority holds it durable. Mirrors Oxia #1176.",
    "metadata-no-fsync": "statefile.write_consensus_meta: the node writes its epoch and fence state (consensus"
                         " metadata) without fsync, so a power loss can roll the epoch back. Mirrors Kudu"
                         " KUDU-2195.",
    "forget-epoch-on-tombstone": "rules.tombstone_keeps_epoch: deleting a replica drops its consensus metadata, so"
                                 " the tombstone forgets its epoch. Mirrors the Kudu tablet-copy seed's amnesia.",
    "copy-overwrites-epoch": "rules.merge_consensus_meta: tablet copy adopts the remote epoch even when the local"
                             " one is higher. Mirrors the Kudu tablet-copy seed (a copy must never lower the epoch).",
    "no-uuid-check": "node.dispatch, rules.rejoin_as_old_identity: nodes accept RPCs addressed to another UUID, so"
                     " a wiped node rejoins under its old name and UUID. Mirrors Scylla's host-id amnesia.",
    "leader-not-highest-head": "rules.choose_leader: the election picks the lowest head among the fenced nodes"
                               " instead of the highest. Mirrors Oxia #579.",
    "commit-prior-epoch": "rules.can_commit: entries of earlier epochs commit directly on a majority, as in Raft's"
                          " figure 8.",
    "fence-current-ensemble-only": "rules.fencing_ensemble, rules.fence_quorum_reached: an election during a"
                                   " stalled swap fences only a majority of the current ensemble, not the new node,"
                                   " which allows split brain. Mirrors Oxia's ensemble-change fencing.",
    "count-pre-voter-acks": "rules.voting_members: catch-up (PRE_VOTER) replicas count toward the majority."
                            " Mirrors a Kudu bug.",
    "contract-below-commit": "rules.safe_to_contract: a contract is applied without waiting for the commit index"
                             " to pass the removed node's head. Mirrors Oxia's shrink-ensemble rule.",
    "stale-leader-reads": "leader.read: reads are served without confirming leadership with a quorum. Mirrors a"
                          " Ceph stale-read bug.",
    "gap-ack": "rules.continues_log: a follower with a gap in its log acknowledges later entries. Mirrors Oxia"
               " #1239.",
    "stale-copy-session": "rules.session_open: a copy from a closed migration session is applied. Mirrors Scylla's"
                          " topology guards.",
    "no-cas-config-change": "rules.config_change_allowed: a config change skips the committed-config-id check."
                            " Mirrors Kudu KUDU-1129.",
    "become-leader-before-followers": "rules.fence_quorum_reached: a node reports itself leader before its"
                                      " followers are added (before a fence majority). Mirrors Oxia #621.",
}

_enabled: set[str] = set()


class UnknownBug(ValueError):
    """A ``--bug`` name that is not in the registry."""


def configure(names: Iterable[str]) -> None:
    """Enable exactly ``names`` (plus any in ``FENCEPOST_BUGS``); raise UnknownBug for a bad name."""
    wanted = {n.strip() for n in names if n.strip()}
    wanted |= {n.strip() for n in os.environ.get("FENCEPOST_BUGS", "").split(",") if n.strip()}
    unknown = sorted(wanted - set(BUGS))
    if unknown:
        raise UnknownBug(f"unknown bug(s): {', '.join(unknown)}; known: {', '.join(sorted(BUGS))}")
    _enabled.clear()
    _enabled.update(wanted)


def enabled(name: str) -> bool:
    """True when bug ``name`` was switched on; a name missing from the registry is a programming error."""
    if name not in BUGS:
        raise UnknownBug(f"unknown bug {name!r}")
    return name in _enabled


def active() -> list[str]:
    """The enabled bug names, sorted (for logs and ``dump``)."""
    return sorted(_enabled)
