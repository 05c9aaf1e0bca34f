"""The amnesia-safety rules. Each takes the history and the evidence and returns its violations.

A violation is a dict with ``rule`` (its number and name), ``explanation`` (words a reviewer can
follow, naming the ops and events involved) and the facts behind it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from fencepost import NEMESIS, Call, Op, OpType, pair_calls
from fencepost_reference.checkers.amnesia.evidence import Evidence

Violation = dict[str, Any]
WRITE_FS = {"write": "write", "put": "write", "cas": "cas"}
APPEND_FS = {"append", "add"}


def _secs(ns: int | None) -> str:
    return "?" if ns is None else f"{ns / 1e9:.3f} s"


def faults_around(history: Sequence[Op], t_ns: int, window_ns: int = 5_000_000_000) -> list[str]:
    """Fault events within ``window_ns`` of ``t_ns``, as ``"start-kill at 3.2 s"``."""
    return [f"{op.f} at {_secs(op.time)}" for op in history
            if op.process == NEMESIS and op.type is not OpType.INVOKE and abs(op.time - t_ns) <= window_ns]


def authoritative_state(ev: Evidence) -> dict[str, Any]:
    """Each tablet's final key-value state: from its leader in the highest epoch, else its most-applied replica."""
    best: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}
    for dump in ev.dumps.values():
        for tablet, state in dump.get("tablets", {}).items():
            if not isinstance(state, dict) or "kv" not in state:
                continue
            rank = (1 if state.get("status") == "leader" else 0, int(state.get("epoch") or -1),
                    int(state.get("applied") or -1))
            if tablet not in best or rank > best[tablet][0]:
                best[tablet] = (rank, state)
    merged: dict[str, Any] = {}
    for _, state in best.values():
        merged.update(state["kv"])
    return merged


def _written_value(call: Call) -> Any:
    if call.f == "cas":
        return call.input[1] if isinstance(call.input, list) and len(call.input) == 2 else None
    return call.input


def acknowledged_writes_survive(history: Sequence[Op], ev: Evidence) -> list[Violation]:
    """Rule 1: every acknowledged write is in the final state, or was provably overwritten by a later one.

    Written values are unique per key. The final value of a key must not come from a write that completed
    before an acknowledged write to the same key was invoked (that write would then be lost), and a key
    with an acknowledged write must not be missing from the final state.
    """
    if not ev.dumps:
        return []
    final = authoritative_state(ev)
    writes: dict[str, list[Call]] = defaultdict(list)
    deleted: set[str] = set()
    out: list[Violation] = []
    for call in pair_calls(history):
        if call.f in APPEND_FS and call.outcome is OpType.OK:
            held = final.get(str(call.key))
            if not isinstance(held, list) or call.input not in held:
                around = ", ".join(faults_around(history, call.return_time)) or "none"
                out.append({"rule": "1 lost append", "key": str(call.key), "op": call.invoke.index,
                            "acked_at_ns": call.return_time, "at_ns": call.return_time,
                            "explanation": f"{call.f} of {call.input!r} to {call.key!r} (op {call.invoke.index}) was "
                            f"acknowledged at {_secs(call.return_time)} but is missing from the final state. "
                            f"Faults around it: {around}."})
        elif call.f in WRITE_FS and call.outcome is not OpType.FAIL:
            writes[str(call.key)].append(call)
        elif call.f == "delete" and call.outcome is not OpType.FAIL:
            deleted.add(str(call.key))
    for key, calls in writes.items():
        if key in deleted:
            continue  # rule 7 judges keys that were deleted
        acked = [c for c in calls if c.outcome is OpType.OK]
        if not acked:
            continue
        if key not in final:
            w = max(acked, key=lambda c: c.return_time)
            around = ", ".join(faults_around(history, w.return_time)) or "none"
            out.append({"rule": "1 lost write", "key": key, "op": w.invoke.index, "acked_at_ns": w.return_time,
                        "at_ns": w.return_time,
                        "explanation": f"Key {key!r}: {w.f} of {_written_value(w)!r} (op {w.invoke.index}, process "
                        f"{w.process}) was acknowledged at {_secs(w.return_time)}, but the key is absent from the "
                        f"final state. Faults around it: {around}."})
            continue
        value = final[key]
        writer = next((c for c in calls if _written_value(c) == value), None)
        if writer is None:
            continue  # a value nobody wrote is the linearizability checker's business
        newer = [c for c in acked if c.call_time > writer.return_time and writer.outcome is OpType.OK]
        if newer:
            w = min(newer, key=lambda c: c.call_time)
            out.append({"rule": "1 stale final state", "key": key, "op": w.invoke.index,
                        "acked_at_ns": w.return_time, "at_ns": w.return_time, "final_value": value,
                        "explanation": f"Key {key!r} ends holding {value!r}, written by op {writer.invoke.index} "
                        f"(acknowledged at {_secs(writer.return_time)}); but {w.f} of {_written_value(w)!r} (op "
                        f"{w.invoke.index}) began later, at {_secs(w.call_time)}, and was acknowledged at "
                        f"{_secs(w.return_time)}: it was lost. Faults around it: "
                        f"{', '.join(faults_around(history, w.return_time)) or 'none'}."})
    return out


def epochs_never_go_down(history: Sequence[Op], ev: Evidence) -> list[Violation]:
    """Rules 2 and 6: for each node UUID and tablet, the epoch it reports never decreases, restarts and
    tombstones included (a tombstoned replica keeps its last epoch)."""
    uuid_of_node: dict[str, str] = {}
    last: dict[tuple[str, Any], tuple[int, dict[str, Any]]] = {}
    out: list[Violation] = []
    for e in ev.events:
        node = str(e.get("source"))
        if e.get("node") != node:
            continue  # an operator's event about a node: the epoch it names is a request, not the node's own
        if e.get("event") == "node_started" and e.get("uuid"):
            uuid_of_node[node] = str(e["uuid"])
            continue
        if "epoch" not in e or "tablet" not in e or node not in uuid_of_node:
            continue
        epoch = e["epoch"]
        tombstoning = "tombstoned" in str(e.get("event"))  # a tombstone at epoch -1 forgot the epoch it held
        if not isinstance(epoch, int) or (epoch < 0 and not tombstoning):
            continue
        k = (uuid_of_node[node], e["tablet"])
        prev = last.get(k)
        if prev is not None and epoch < prev[0]:
            before = prev[1]
            tomb = tombstoning or "tomb" in str(before.get("event")) or "delet" in str(before.get("event"))
            rule = "6 tombstone forgot its epoch" if tomb else "2 epoch went down"
            out.append({"rule": rule, "node": node, "uuid": k[0], "tablet": k[1], "from": prev[0], "to": epoch,
                        "at_ns": ev.history_ns(float(e.get("ts", 0))),
                        "explanation": f"Node {node} (uuid {k[0][:8]}) reported epoch {prev[0]} for tablet {k[1]} "
                        f"({before.get('event')}), then epoch {epoch} ({e.get('event')}): a node must never "
                        f"forget an epoch it adopted{', even after deleting the replica' if tomb else ''}."})
        if prev is None or epoch >= prev[0]:
            last[k] = (epoch, e)
    return out


def one_leader_per_epoch(history: Sequence[Op], ev: Evidence) -> list[Violation]:
    """Rule 3: at most one node became leader (and so accepted writes) for each (tablet, epoch)."""
    leaders: dict[tuple[Any, int], set[str]] = defaultdict(set)
    second_at: dict[tuple[Any, int], int | None] = {}
    for e in ev.events:
        if e.get("event") == "became_leader" and "tablet" in e and "epoch" in e and e.get("source") == e.get("node"):
            k = (e["tablet"], e["epoch"])
            leaders[k].add(str(e.get("source")))
            if len(leaders[k]) == 2 and k not in second_at:
                second_at[k] = ev.history_ns(float(e.get("ts", 0)))
    return [{"rule": "3 two leaders in one epoch", "tablet": t, "epoch": ep, "nodes": sorted(nodes),
             "at_ns": second_at.get((t, ep)),
             "explanation": f"Tablet {t}, epoch {ep}: {' and '.join(sorted(nodes))} both became leader. Fencing "
             f"must make the epoch's leader unique, or both can acknowledge conflicting writes."}
            for (t, ep), nodes in sorted(leaders.items(), key=repr) if len(nodes) > 1]


def replicas_agree_below_commit(history: Sequence[Op], ev: Evidence) -> list[Violation]:
    """Rule 4: replicas agree on every entry at or below the commit index (no divergence)."""
    out: list[Violation] = []
    by_tablet: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for node, dump in ev.dumps.items():
        for tablet, state in dump.get("tablets", {}).items():
            if isinstance(state, dict) and isinstance(state.get("entries"), list):
                by_tablet[tablet].append((node, state))
    for tablet, replicas in sorted(by_tablet.items()):
        ref_node, ref = max(replicas, key=lambda r: int(r[1].get("commit") or -1))
        ref_log = {int(x["o"]): x for x in ref["entries"]}
        for node, state in replicas:
            if node == ref_node:
                continue
            upto = min(int(state.get("commit") or -1), int(ref.get("commit") or -1))
            for x in state["entries"]:
                o = int(x["o"])
                if o > upto:
                    continue
                mine = ref_log.get(o)
                if mine is not None and (mine.get("e"), mine.get("v")) != (x.get("e"), x.get("v")):
                    out.append({"rule": "4 divergence", "tablet": tablet, "offset": o, "nodes": [ref_node, node],
                                "explanation": f"Tablet {tablet}, offset {o} (committed on both): {ref_node} holds "
                                f"epoch {mine.get('e')} {mine.get('v')!r} but {node} holds epoch {x.get('e')} "
                                f"{x.get('v')!r}."})
                    break
    return out


IDENTITY_EVENTS = ("node_started", "joined")
"""The events in which a node states the UUID it runs under."""


def after_the_new_disk(events: Sequence[dict[str, Any]], node: str, old: str) -> list[dict[str, Any]]:
    """``node``'s own events, in the order it logged them, from the first start under a UUID it had never
    used, after it first ran as ``old``: what it did once it lost the disk that ``old`` named (a lost disk
    always starts a new UUID first, even under a bug that hands the old one back). Empty when no such
    start was logged.

    Log order, not timestamps: a node's timestamps come from its own clock, which a clock fault moves. A
    node once restarted under a clock some seconds ahead just before its wipe; its ``node_started`` was
    stamped after the wipe, and the rule, comparing stamps, said the wiped node had come back under its
    old UUID."""
    own = [e for e in events if e.get("source") == node and e.get("event") in IDENTITY_EVENTS]
    seen: set[str] = set()
    ran_as_old = False
    for i, e in enumerate(own):
        uuid = str(e.get("uuid"))
        if ran_as_old and e.get("event") == "node_started" and uuid not in seen:
            return own[i:]
        ran_as_old = ran_as_old or uuid == old
        seen.add(uuid)
    return []


def wiped_nodes_change_identity(history: Sequence[Op], ev: Evidence) -> list[Violation]:
    """Rule 5: a node whose disk was wiped (or reformatted after a disk loss) never again runs under its
    old UUID: neither starts nor joins under it once it has started on the new disk
    (:func:`after_the_new_disk`), nor answers the final dump with it."""
    out: list[Violation] = []
    for t_ns, node, old in ev.wipes:
        if not old:
            continue
        later = [e for e in after_the_new_disk(ev.events, node, old) if e.get("uuid") == old]
        dump = ev.dumps.get(node)
        if later or (dump is not None and dump.get("uuid") == old):
            where = f"{'joined' if later[0].get('event') == 'joined' else 'started'} again" if later \
                else "answered the final dump"
            at = ev.history_ns(float(later[0].get("ts", 0))) if later else None
            out.append({"rule": "5 wiped node kept its identity", "node": node, "uuid": old, "wiped_at_ns": t_ns,
                        "at_ns": max(at, t_ns) if at is not None else None,
                        "explanation": f"Node {node} lost its disk (wiped or reformatted) at {_secs(t_ns)} but {where} "
                        f"under its old uuid {old[:8]}: a node that lost its disk must rejoin as a new node."})
    return out


def deleted_keys_stay_deleted(history: Sequence[Op], ev: Evidence) -> list[Violation]:
    """Rule 7: after an acknowledged delete, no read returns a value written before the delete began."""
    calls = pair_calls(history)
    out: list[Violation] = []
    deletes = [c for c in calls if c.f == "delete" and c.outcome is OpType.OK]
    for d in deletes:
        older = {repr(_written_value(c)): c for c in calls if c.key == d.key and c.f in WRITE_FS
                 and c.outcome is OpType.OK and c.return_time < d.call_time}
        rewritten = any(c.key == d.key and c.f in WRITE_FS and c.outcome is not OpType.FAIL
                        and c.call_time > d.call_time for c in calls)
        if rewritten:
            continue
        for r in calls:
            if (r.key == d.key and r.f in ("read", "get") and r.outcome is OpType.OK and r.call_time > d.return_time
                    and r.output is not None and repr(r.output) in older):
                w = older[repr(r.output)]
                out.append({"rule": "7 deleted key came back", "key": d.key, "op": r.invoke.index,
                            "at_ns": r.return_time,
                            "explanation": f"Key {d.key!r} was deleted (op {d.invoke.index}, acknowledged at "
                            f"{_secs(d.return_time)}), yet read {r.output!r} (op {r.invoke.index}) at "
                            f"{_secs(r.call_time)}: the value op {w.invoke.index} wrote before the delete."})
                break
    return out


def _files_damaged_by_nemesis(history: Sequence[Op]) -> dict[str, int]:
    """Node -> when the nemesis first damaged its files on purpose (``start-corrupt``)."""
    first: dict[str, int] = {}
    for op in history:
        if op.process == NEMESIS and op.f == "start-corrupt" and op.type is not OpType.INVOKE:
            node = op.value.get("node") if isinstance(op.value, dict) else None
            if isinstance(node, str):
                first.setdefault(node, op.time)
    return first


def committed_entries_stay_on_disk(history: Sequence[Op], ev: Evidence) -> list[Violation]:
    """Rule 8: no node restarts to find its log shorter than the commit index it checkpointed.

    A replica checkpoints its commit index only up to its fsynced head, so a log found below the
    checkpoint lost entries that were fsynced and committed: an fsync that did not reach the disk. The
    node refuses to serve the tablet (``tablet_damaged``), so when every replica is hit nothing is served
    and no client sees the loss; this rule sees it. Nodes whose files the nemesis damaged on purpose
    are excused from then on."""
    corrupted = _files_damaged_by_nemesis(history)
    out: list[Violation] = []
    seen: set[tuple[str, Any]] = set()
    for e in ev.events:
        if e.get("event") != "tablet_damaged" or not isinstance(e.get("durable_commit"), int):
            continue
        node, t_ns = str(e.get("source")), ev.history_ns(float(e.get("ts", 0)))
        if node in corrupted and (t_ns is None or t_ns >= corrupted[node]):
            continue
        if (node, e.get("tablet")) in seen:
            continue  # it says so again at every restart
        seen.add((node, e.get("tablet")))
        lost = e["durable_commit"] - int(e.get("log_end", -1))
        around = ", ".join(faults_around(history, t_ns or 0)) or "none"
        out.append({"rule": "8 committed entries lost from disk", "node": node, "tablet": e.get("tablet"),
                    "log_end": e.get("log_end"), "durable_commit": e["durable_commit"], "at_ns": t_ns,
                    "explanation": f"Node {node} restarted at {_secs(t_ns)} with tablet {e.get('tablet')}'s log "
                    f"ending at offset {e.get('log_end')}, below the commit index {e['durable_commit']} it had "
                    f"checkpointed: {lost} committed entr{'y' if lost == 1 else 'ies'} it had counted as fsynced "
                    f"vanished from its disk (faults around: {around})."})
    return out


RULES = (acknowledged_writes_survive, epochs_never_go_down, one_leader_per_epoch, replicas_agree_below_commit,
         wiped_nodes_change_identity, deleted_keys_stay_deleted, committed_entries_stay_on_disk)
