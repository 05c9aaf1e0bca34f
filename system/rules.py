"""Every rule of the replication protocol, each in one pure function.

Nodes and the operator call these and nothing else to make a protocol decision, so a deliberate bug
(:mod:`system.bugs`) is one line here. Entry ids are ``(epoch, offset)`` pairs compared epoch first;
``NO_ENTRY`` is the head of an empty log.

Shard metadata (see :mod:`system.operator.shard`) is a dict with ``epoch``, ``status``, ``leader``,
``ensemble`` and ``reconfig`` (``None`` or ``{"op": "swap"|"expand"|"contract", "old", "new",
"phase": "prepare"|"commit"}``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from system import bugs

EntryId = tuple[int, int]
NO_ENTRY: EntryId = (-1, -1)


def eid(value: Sequence[int] | None) -> EntryId:
    """An entry id from its JSON form (a two-item list), or NO_ENTRY for None."""
    if value is None:
        return NO_ENTRY
    return (int(value[0]), int(value[1]))


def majority(n: int) -> int:
    """How many members of an ensemble of ``n`` make a majority."""
    return n // 2 + 1


# --- Election -------------------------------------------------------------------------------------------


def fencing_ensemble(meta: Mapping[str, Any]) -> list[str]:
    """The nodes an election must fence: the ensemble plus the new node of a stalled swap or expand.

    Including the new node stops a stalled swap from leaving two disjoint majorities replicating.
    """
    nodes = list(meta["ensemble"])
    rc = meta.get("reconfig")
    if rc and rc["op"] in ("swap", "expand") and rc["new"] not in nodes:
        if bugs.enabled("fence-current-ensemble-only"):
            return nodes
        nodes.append(rc["new"])
    return nodes


def final_ensemble(meta: Mapping[str, Any]) -> list[str]:
    """The ensemble an election completes to: a reconfiguration stalled in COMMIT is applied, one
    stalled in PREPARE is abandoned. Leader and followers are chosen only from this ensemble."""
    nodes = list(meta["ensemble"])
    rc = meta.get("reconfig")
    if not rc or rc["phase"] != "commit":
        return nodes
    if rc["op"] in ("swap", "contract"):
        nodes = [n for n in nodes if n != rc["old"]]
    if rc["op"] in ("swap", "expand") and rc["new"] not in nodes:
        nodes.append(rc["new"])
    return nodes


def fence_quorum_reached(responded: Iterable[str], meta: Mapping[str, Any]) -> bool:
    """True once the fence responses cover a majority of the fencing ensemble, and (defensively) a
    majority of both the current and the final ensemble, so every quorum that could have committed
    an entry under either configuration has been fenced and reported its head.

    A reconfiguration still in PREPARE has changed no commit quorum: the leader applies the new ensemble
    only in COMMIT, after the record says so, and streams to the new node only then. A majority of the
    current ensemble is then enough (the new node is still fenced when it answers). Demanding one of the
    fencing ensemble too left a tablet leaderless for good when the swap failed in PREPARE (its new node
    held a tombstone, or was down) and one member had lost its data: in the clean default campaign every
    election then asked all four nodes of the fencing ensemble for 3 fences, with only two of them up."""
    got = set(responded)
    if bugs.enabled("become-leader-before-followers"):
        return len(got) >= 1
    groups = [fencing_ensemble(meta), list(meta["ensemble"]), final_ensemble(meta)]
    if (meta.get("reconfig") or {}).get("phase") == "prepare":
        groups = groups[1:]
    if bugs.enabled("fence-current-ensemble-only"):
        groups = groups[:2]  # the election thinks in the current ensemble only
    return all(len(got & set(group)) >= majority(len(group)) for group in groups)


def choose_leader(heads: Mapping[str, EntryId], final: Sequence[str], avoid: Sequence[str] = ()) -> str | None:
    """The new leader: the node of the final ensemble with the highest head index (ties: the first in
    ensemble order, which spreads the leaders of new tablets across nodes). Among equal heads a node
    not in ``avoid`` is preferred (a leader being moved away), never at the price of a lower head."""
    candidates = [n for n in final if n in heads]
    if not candidates:
        return None
    if bugs.enabled("leader-not-highest-head"):
        return min(candidates, key=lambda n: heads[n])
    best = max(heads[n] for n in candidates)
    top = [n for n in candidates if heads[n] == best]
    return next((n for n in top if n not in avoid), top[0])


def fence_allowed(node_epoch: int, node_status: str, request_epoch: int) -> bool:
    """A node accepts a fence for a newer epoch, or a repeat of the one that fenced it."""
    return request_epoch > node_epoch or (request_epoch == node_epoch and node_status == "fenced")


# --- Truncation ------------------------------------------------------------------------------------------


def truncation_point(leader_log_epochs: Sequence[int], follower_head: EntryId) -> EntryId | None:
    """Where a follower must truncate before its follow cursor starts, or None if it need not.

    ``leader_log_epochs[o]`` is the epoch of the leader's entry at offset ``o``. A follower keeps the
    entries whose ids are at or below the returned id.
    - Follower head epoch below the leader head epoch: it may hold dirty entries; cut to the highest
      leader entry at or below the follower's head epoch (and not above the follower's head).
    - Follower head above the leader head: cut to the leader's head.
    """
    leader_head = (leader_log_epochs[-1], len(leader_log_epochs) - 1) if leader_log_epochs else NO_ENTRY
    if follower_head[0] < leader_head[0]:
        point = NO_ENTRY
        for off in range(min(len(leader_log_epochs) - 1, follower_head[1]), -1, -1):
            if leader_log_epochs[off] <= follower_head[0]:
                point = (leader_log_epochs[off], off)
                break
        return min(point, follower_head)
    if follower_head > leader_head:
        return leader_head
    return None


def kept_prefix(log_ids: Sequence[EntryId], point: EntryId) -> int:
    """How many entries a follower keeps when truncating to ``point``: those with ids at or below it."""
    n = 0
    while n < len(log_ids) and log_ids[n] <= point:
        n += 1
    return n


# --- Replication and commit -------------------------------------------------------------------------------


def continues_log(follower_head: EntryId, prev: EntryId) -> bool:
    """A follower appends a batch only if the batch continues its log exactly at its head: the
    leader's id for the entry before the batch equals the follower's head (no gap, no overlap)."""
    if bugs.enabled("gap-ack"):
        return True
    return follower_head == prev


def can_commit(candidate: int, candidate_epoch: int, current_epoch: int, confirmed: Sequence[int],
               ensemble_size: int) -> bool:
    """May the leader commit up to offset ``candidate``?

    - a majority of the ensemble has confirmed it (``confirmed`` holds the leader's own durable head
      and each follower's last confirmed offset; a confirmed offset implies its whole log prefix);
    - its epoch is the current epoch: earlier epochs' entries commit only indirectly, under a later one.
    """
    acks = sum(1 for c in confirmed if c >= candidate)
    if acks < majority(ensemble_size):
        return False
    return candidate_epoch == current_epoch or bugs.enabled("commit-prior-epoch")


def commit_candidate(confirmed: Sequence[int], ensemble_size: int) -> int:
    """The highest offset a majority has confirmed (-1 if none)."""
    q = majority(ensemble_size)
    ranked = sorted(confirmed, reverse=True)
    return ranked[q - 1] if len(ranked) >= q else -1


def safe_to_contract(commit: int, confirmed_remaining: Sequence[int], new_size: int) -> bool:
    """A contract may drop a node only if the commit index, recomputed over the remaining ensemble,
    is not lower than it is now (else some committed entries would fall below a majority)."""
    if bugs.enabled("contract-below-commit"):
        return True
    return commit_candidate(confirmed_remaining, new_size) >= commit


# --- Pre-voters (catch-up members) ------------------------------------------------------------------------


def voting_members(ensemble: Sequence[str], pre_voters: Iterable[str]) -> list[str]:
    """The members whose acknowledgements count toward the commit majority: the ensemble only.

    A PRE_VOTER (a replica being backfilled before promotion, Kudu seed) receives entries but never
    counts: the majority is of the ensemble, so counting a catch-up member's acknowledgement toward it
    could commit an entry that a minority of voters holds (the leader and the catch-up member alone).
    """
    members = list(ensemble)
    if bugs.enabled("count-pre-voter-acks"):
        members += [p for p in pre_voters if p not in members]
    return members


# --- Tablet copy and tombstones (Kudu seed) ---------------------------------------------------------------

READY, DELETED, COPYING, DOES_NOT_EXIST = "READY", "DELETED", "COPYING", "DOES_NOT_EXIST"


def copy_start_error(state: str, expected_state: str, caller_epoch: int, local_epoch: int,
                     last_entry: Sequence[int] | None, local_last: Sequence[int] | None) -> str | None:
    """StartTabletCopy's checks, in the seed's order; an error code, or None to go ahead.

    - a copy already running: ``already_in_progress``;
    - the caller's view of our state is not our state: ``illegal_state``;
    - the caller's epoch is below ours (a stale leader or operator): ``stale_epoch``;
    - the caller named our last entry id and it is not ours: ``illegal_state``.
    """
    if state == COPYING:
        return "already_in_progress"
    if state != expected_state:
        return "illegal_state"
    if caller_epoch < local_epoch:
        return "stale_epoch"
    if last_entry is not None and (local_last is None or list(last_entry) != list(local_last)):
        return "illegal_state"
    return None


def merge_consensus_meta(local: Mapping[str, Any] | None, remote: Mapping[str, Any]) -> dict[str, Any]:
    """Merge a downloaded consensus metadata record with the local one (Kudu seed).

    1. the highest epoch wins; 2. when the local epoch is at least the remote one, the local vote and
    fence knowledge (status, leader) for that epoch is kept; 3. the remote membership is adopted.
    """
    remote_epoch = int(remote.get("epoch", -1))
    if local is None:
        return {"epoch": remote_epoch, "status": "fenced", "leader": None, "members": list(remote.get("members", []))}
    local_epoch = int(local.get("epoch", -1))
    if bugs.enabled("copy-overwrites-epoch") or remote_epoch > local_epoch:
        merged = {"epoch": remote_epoch, "status": "fenced", "leader": None}
    else:
        merged = {"epoch": local_epoch, "status": "fenced", "leader": local.get("leader")}
    merged["members"] = list(remote.get("members", []))
    return merged


def tombstone_keeps_epoch(epoch: int) -> int:
    """The epoch a tombstoned replica keeps: the one it had, so stale leaders are still refused.

    Under bug ``forget-epoch-on-tombstone`` the consensus metadata is dropped and the epoch with it."""
    return -1 if bugs.enabled("forget-epoch-on-tombstone") else epoch


def tablet_files_lost(superblock: bool, consensus_meta: bool, data: bool) -> str | None:
    """Why a tablet's files at startup mean disk loss (Kudu seed: losing consensus metadata is
    catastrophic), or None when they are consistent.

    A superblock without its consensus metadata, or data files (a WAL, a snapshot) without a superblock,
    means the epoch this replica promised is gone: started under its UUID it would come back at epoch
    -1 and take an old leader's entries or votes. The node must stay offline instead."""
    if superblock and not consensus_meta:
        return "consensus metadata missing"
    if data and not superblock:
        return "data files without a superblock"
    return None


def session_open(closed_below: int, session: int) -> bool:
    """Is migration session ``session`` still open on this node? (Scylla topology guards.)

    Sessions of a tablet are numbered upward; every session below ``closed_below`` was closed by a
    barrier from the coordinator, so a copy or RPC carrying one is stale and must have no effect."""
    if bugs.enabled("stale-copy-session"):
        return True
    return session >= closed_below


# --- Config changes and joins (master) --------------------------------------------------------------------


def config_change_allowed(committed_config_id: int, caller_config_id: int | None) -> bool:
    """A config change applies only if the caller names the committed config id (compare-and-set):
    a caller that decided on a stale view is refused instead of silently overwriting a newer change."""
    if bugs.enabled("no-cas-config-change"):
        return True
    return caller_config_id is not None and int(caller_config_id) == int(committed_config_id)


NODE_STATES = ("none", "bootstrapping", "normal", "decommissioning", "left")
NODE_TRANSITIONS = {
    "none": ("bootstrapping", "left"),
    "bootstrapping": ("normal", "left"),
    "normal": ("decommissioning", "left"),
    "decommissioning": ("left",),
    "left": (),
}


def node_transition_allowed(current: str, new: str) -> bool:
    """The Scylla node state machine: none → bootstrapping → normal → decommissioning → left; any
    state may go to left (a node replaced after losing its disk); left is final."""
    return new in NODE_TRANSITIONS.get(current, ())


def join_refusal(members: Iterable[Mapping[str, Any]], uuid: str) -> str | None:
    """Why a join by ``uuid`` is refused, or None: a UUID that left (or was removed) never comes
    back, and a UUID that is already a member cannot join again."""
    for m in members:
        if m["uuid"] == uuid:
            return "removed" if m["state"] == "left" else "already_member"
    return None


def rejoin_as_old_identity() -> bool:
    """Does a node that lost its disk get its old identity back when it joins under its old name?

    Never, on the correct system (it is a new node with a new UUID). Under bug ``no-uuid-check`` the
    master hands the old UUID back, so an amnesiac node answers for the replicas it lost."""
    return bugs.enabled("no-uuid-check")
