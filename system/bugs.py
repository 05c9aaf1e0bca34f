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

# Name -> (where it lives, what it breaks). "wired" says the rule site already checks it.
BUGS: dict[str, str] = {
    "ack-before-fsync": "wal/replica: a replica counts and acknowledges entries before they are fsynced",
    "metadata-no-fsync": "metadata.sqlite_store: the metadata store commits without fsync (synchronous=OFF)",
    "leader-not-highest-head": "rules.choose_leader: the operator picks the lowest head instead of the highest",
    "commit-prior-epoch": "rules.can_commit: entries of earlier epochs commit directly on a majority",
    "fence-current-ensemble-only": "rules.fencing_ensemble: the new node of a stalled swap/expand is not fenced",
    "contract-below-commit": "rules.safe_to_contract: a contract is applied even if it lowers the commit index",
    "stale-leader-reads": "leader.read: reads are served without confirming leadership with a quorum",
    "gap-ack": "rules.continues_log: a follower acknowledges a batch that leaves a gap in its log",
    "become-leader-before-followers": "rules.fence_quorum_reached: the leader is chosen before a fence majority",
    "no-uuid-check": "node.dispatch, rules.rejoin_as_old_identity: nodes accept RPCs addressed to another UUID, and a"
                     " wiped node rejoins under its old name and UUID",
    "forget-epoch-on-tombstone": "rules.tombstone_keeps_epoch: deleting a replica drops its consensus metadata",
    "copy-overwrites-epoch": "rules.merge_consensus_meta: tablet copy adopts the remote epoch even when the local"
                             " one is higher",
    "count-pre-voter-acks": "rules.voting_members: catch-up (PRE_VOTER) replicas count toward the majority",
    "stale-copy-session": "rules.session_open: a copy from a closed migration session is applied",
    "no-cas-config-change": "rules.config_change_allowed: a config change skips the committed-config-id check",
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
