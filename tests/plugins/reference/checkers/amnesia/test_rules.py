"""Each amnesia rule, once broken and once kept, on crafted histories, event logs and dumps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fencepost_reference.checkers.amnesia import AmnesiaChecker
from fencepost_reference.checkers.amnesia.evidence import Evidence, load_evidence, wipes_in
from fencepost_reference.checkers.amnesia.rules import (
    acknowledged_writes_survive,
    committed_entries_stay_on_disk,
    deleted_keys_stay_deleted,
    epochs_never_go_down,
    one_leader_per_epoch,
    replicas_agree_below_commit,
    wiped_nodes_change_identity,
)

from harness.checker_protocol import CheckContext
from harness.history.op import NEMESIS, Op, OpType
from tests.checkers.histories import CallSpec, sequential
from tests.plugins.reference.checkers.event_runs import one_node_run


def hist(*calls: CallSpec) -> list[Op]:
    """Sequential calls, 10 ns apart."""
    return sequential(*calls, step_ns=10)


def dump(uuid: str, tablets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"uuid": uuid, "tablets": tablets}


def replica(kv: dict[str, Any], status: str = "leader", epoch: int = 1, commit: int = 0,
            entries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"status": status, "epoch": epoch, "commit": commit, "applied": commit, "kv": kv, "entries": entries or []}


def ev(source: str, event: str, ts: float, **fields: Any) -> dict[str, Any]:
    return {"source": source, "node": fields.pop("node", source), "event": event, "ts": ts, **fields}


# Rule 1 -------------------------------------------------------------------------------------------------

WRITES = hist((0, "write", 1, 10, "ok", 10), (0, "write", 1, 11, "ok", 11), (1, "append", "l", "x", "ok", None))


def test_rule1_kept_when_the_last_acknowledged_write_survives() -> None:
    e = Evidence(dumps={"n1": dump("u1", {"0": replica({"1": 11, "l": ["x"]})})})
    assert acknowledged_writes_survive(WRITES, e) == []


def test_rule1_broken_by_a_stale_final_value_and_a_lost_append() -> None:
    e = Evidence(dumps={"n1": dump("u1", {"0": replica({"1": 10, "l": []})})})
    found = acknowledged_writes_survive(WRITES, e)
    assert sorted(v["rule"] for v in found) == ["1 lost append", "1 stale final state"]
    stale = next(v for v in found if v["rule"] == "1 stale final state")
    assert stale["op"] == 2 and "was lost" in stale["explanation"]


def test_rule1_broken_by_a_missing_key() -> None:
    e = Evidence(dumps={"n1": dump("u1", {"0": replica({})})})
    assert [v["rule"] for v in acknowledged_writes_survive(WRITES[:4], e)] == ["1 lost write"]


# Rules 2 and 6 --------------------------------------------------------------------------------------------

def test_rule2_kept_across_a_restart_and_operator_requests_do_not_count() -> None:
    events = [ev("n1", "node_started", 1, uuid="u1"), ev("n1", "fenced", 2, tablet=0, epoch=3),
              ev("op1", "fence_failed", 3, node="n1", tablet=0, epoch=9),
              ev("n1", "node_started", 4, uuid="u1"), ev("n1", "tablet_loaded", 5, tablet=0, epoch=3)]
    assert epochs_never_go_down([], Evidence(events=events)) == []


def test_rule2_broken_when_a_restart_forgets_the_epoch() -> None:
    events = [ev("n1", "node_started", 1, uuid="u1"), ev("n1", "epoch_adopted", 2, tablet=0, epoch=5),
              ev("n1", "node_started", 4, uuid="u1"), ev("n1", "tablet_loaded", 5, tablet=0, epoch=4)]
    found = epochs_never_go_down([], Evidence(events=events))
    assert [v["rule"] for v in found] == ["2 epoch went down"]
    assert (found[0]["from"], found[0]["to"]) == (5, 4)


def test_rule2_allows_a_new_uuid_to_start_over() -> None:
    events = [ev("n1", "node_started", 1, uuid="u1"), ev("n1", "fenced", 2, tablet=0, epoch=5),
              ev("n1", "node_started", 4, uuid="u2"), ev("n1", "fenced", 5, tablet=0, epoch=1)]
    assert epochs_never_go_down([], Evidence(events=events)) == []


def test_rule6_kept_when_a_tombstone_keeps_its_epoch() -> None:
    events = [ev("n1", "node_started", 1, uuid="u1"), ev("n1", "fenced", 2, tablet=0, epoch=5),
              ev("n1", "tablet_tombstoned", 3, tablet=0, epoch=5), ev("n1", "fence_refused", 4, tablet=0, epoch=5)]
    assert epochs_never_go_down([], Evidence(events=events)) == []


def test_rule6_broken_when_a_tombstone_forgets_its_epoch() -> None:
    events = [ev("n1", "node_started", 1, uuid="u1"), ev("n1", "tablet_tombstoned", 3, tablet=0, epoch=5),
              ev("n1", "fenced", 4, tablet=0, epoch=2)]
    assert [v["rule"] for v in epochs_never_go_down([], Evidence(events=events))] == ["6 tombstone forgot its epoch"]


# n3's own lines from a copy-failover run (seed 1): its replica of tablet 3 adopted epoch 2 from the new leader
# while its copy (downloaded at epoch 1) waited to merge; under copy-overwrites-epoch the copy ended at epoch 1.
COPY_FAILOVER_RUN_START = 1795527186.888035
COPY_FAILOVER_N3 = [
    {"ts": 1795527187.155177, "node": "n3", "event": "node_started", "uuid": "17ea8d8a-0ba8-4dd4-86b1-f8a509ee5fa0",
     "member": "n3", "pid": 7848, "bugs": ["copy-overwrites-epoch"]},
    {"ts": 1795527195.261062, "node": "n3", "event": "copy_started", "tablet": 3, "session": 2, "source": "n4",
     "epoch": -1},
    {"ts": 1795527195.513195, "node": "n3", "event": "epoch_adopted", "tablet": 3, "epoch": 1, "status": "copying"},
    {"ts": 1795527197.27269, "node": "n3", "event": "epoch_adopted", "tablet": 3, "epoch": 2, "status": "copying"},
    {"ts": 1795527201.271828, "node": "n3", "event": "tablet_loaded", "tablet": 3, "state": "READY", "epoch": 1,
     "head": [1, 181], "commit": 181, "was": "fenced"},
    {"ts": 1795527201.271865, "node": "n3", "event": "tablet_state", "tablet": 3, "state": "READY", "was": "COPYING",
     "why": "copied", "session": 2},
    {"ts": 1795527201.271879, "node": "n3", "event": "copy_done", "tablet": 3, "session": 2, "epoch": 1,
     "remote_epoch": 1, "local_epoch": 2, "head": [1, 181], "commit": 181},
    {"ts": 1795527201.784006, "node": "n3", "event": "fenced", "tablet": 3, "epoch": 2, "head": [1, 181],
     "commit": 181},
]


def _copied_at(epoch: int) -> list[dict[str, Any]]:
    """The run's lines with the copy ending at ``epoch`` (2: what the correct system logged in that run)."""
    return [{**e, "epoch": epoch} if e["event"] in ("tablet_loaded", "copy_done") else e for e in COPY_FAILOVER_N3]


def test_rule2_broken_by_a_copy_that_merges_below_an_epoch_adopted_while_copying(tmp_path: Path) -> None:
    run = one_node_run(tmp_path, _copied_at(1), COPY_FAILOVER_RUN_START, node="n3")
    found = epochs_never_go_down([], load_evidence(run, []))
    assert [(v["rule"], v["tablet"], v["from"], v["to"]) for v in found] == [("2 epoch went down", 3, 2, 1)] * 2
    assert "(epoch_adopted), then epoch 1 (copy_done)" in found[1]["explanation"]
    assert round(found[0]["at_ns"] / 1e9, 1) == 14.4


def test_rule2_kept_when_the_copy_keeps_the_epoch_adopted_while_copying(tmp_path: Path) -> None:
    run = one_node_run(tmp_path, _copied_at(2), COPY_FAILOVER_RUN_START, node="n3")
    assert epochs_never_go_down([], load_evidence(run, [])) == []


# Rule 3 --------------------------------------------------------------------------------------------------

def test_rule3_kept_with_one_leader_per_epoch() -> None:
    events = [ev("n1", "became_leader", 1, tablet=0, epoch=1), ev("n2", "became_leader", 2, tablet=0, epoch=2),
              ev("n2", "became_leader", 3, tablet=1, epoch=1)]
    assert one_leader_per_epoch([], Evidence(events=events)) == []


def test_rule3_broken_by_two_leaders_in_one_epoch() -> None:
    events = [ev("n1", "became_leader", 1, tablet=0, epoch=4), ev("n3", "became_leader", 2, tablet=0, epoch=4)]
    found = one_leader_per_epoch([], Evidence(events=events))
    assert found[0]["nodes"] == ["n1", "n3"] and "both became leader" in found[0]["explanation"]


# Rule 4 --------------------------------------------------------------------------------------------------

LOG = [{"e": 1, "o": 0, "v": {"op": "put", "key": "a", "value": 1}},
       {"e": 1, "o": 1, "v": {"op": "put", "key": "a", "value": 2}}]


def test_rule4_kept_when_uncommitted_tails_differ() -> None:
    dirty = [LOG[0], {"e": 1, "o": 1, "v": {"op": "put", "key": "a", "value": 99}}]
    e = Evidence(dumps={"n1": dump("u1", {"0": replica({}, commit=1, entries=LOG)}),
                        "n2": dump("u2", {"0": replica({}, "follower", commit=0, entries=dirty)})})
    assert replicas_agree_below_commit([], e) == []


def test_rule4_broken_by_a_committed_entry_that_differs() -> None:
    other = [LOG[0], {"e": 2, "o": 1, "v": {"op": "put", "key": "a", "value": 3}}]
    e = Evidence(dumps={"n1": dump("u1", {"0": replica({}, commit=1, entries=LOG)}),
                        "n2": dump("u2", {"0": replica({}, "follower", commit=1, entries=other)})})
    found = replicas_agree_below_commit([], e)
    assert found[0]["offset"] == 1 and found[0]["nodes"] == ["n1", "n2"]


# Rule 5 --------------------------------------------------------------------------------------------------

WIPE = [Op(0, 1_000_000_000, NEMESIS, OpType.INVOKE, "start-wipe"),
        Op(1, 2_000_000_000, NEMESIS, OpType.INFO, "start-wipe", value={"wiped": ["n2"], "old_uuids": {"n2": "old"}})]


def test_rule5_kept_when_the_wiped_node_comes_back_as_someone_new() -> None:
    e = Evidence(events=[ev("n2", "node_started", 105.0, uuid="new")], dumps={"n2": dump("new", {})},
                 wipes=[(2_000_000_000, "n2", "old")], start_wall_s=100.0)
    assert wiped_nodes_change_identity(WIPE, e) == []


def test_rule5_broken_when_the_wiped_node_answers_under_its_old_uuid() -> None:
    e = Evidence(events=[ev("n2", "node_started", 105.0, uuid="old")], dumps={"n2": dump("old", {})},
                 wipes=[(2_000_000_000, "n2", "old")], start_wall_s=100.0)
    assert [v["rule"] for v in wiped_nodes_change_identity(WIPE, e)] == ["5 wiped node kept its identity"]


def test_rule5_goes_by_the_node_s_log_order_not_its_clock() -> None:
    # Seed 9 of the clean default campaign at 3cb0304: n1 restarted under a clock 10.3 s ahead shortly
    # before its wipe, so that start was stamped after the wipe; the new disk's start came later in its log.
    e = Evidence(events=[ev("n2", "node_started", 101.0, uuid="old"), ev("n2", "node_started", 104.0, uuid="old"),
                         ev("n2", "node_started", 102.1, uuid="new"), ev("n2", "joined", 102.2, uuid="new")],
                 dumps={"n2": dump("new", {})}, wipes=[(2_000_000_000, "n2", "old")], start_wall_s=100.0)
    assert wiped_nodes_change_identity(WIPE, e) == []


def test_rule5_broken_when_the_wiped_node_joins_under_its_old_uuid() -> None:
    # A wiped node starts under a new UUID; under bug no-uuid-check the master hands the old one back at join.
    e = Evidence(events=[ev("n2", "node_started", 101.0, uuid="old"), ev("n2", "node_started", 102.1, uuid="new"),
                         ev("n2", "joined", 102.2, uuid="old")],
                 dumps={"n2": dump("new", {})}, wipes=[(2_000_000_000, "n2", "old")], start_wall_s=100.0)
    [found] = wiped_nodes_change_identity(WIPE, e)
    assert "joined again" in found["explanation"] and found["at_ns"] == 2_200_000_000


# Rule 8 --------------------------------------------------------------------------------------------------

POWER_LOSS = [Op(0, 1_000_000_000, NEMESIS, OpType.INVOKE, "start-lose-unsynced"),
              Op(1, 1_100_000_000, NEMESIS, OpType.INFO, "start-lose-unsynced", value={"nodes": ["n1", "n3"]})]
CORRUPT = [Op(0, 1_000_000_000, NEMESIS, OpType.INVOKE, "start-corrupt"),
           Op(1, 1_100_000_000, NEMESIS, OpType.INFO, "start-corrupt", value={"node": "n1", "kind": "truncate"})]


def damaged(node: str, ts: float, tablet: int = 1, log_end: int = -1, commit: int = 54) -> dict[str, Any]:
    """A node's tablet_damaged line as a restart after losing committed entries writes it."""
    return ev(node, "tablet_damaged", ts, tablet=tablet, log_end=log_end, durable_commit=commit,
              reason=f"log ends at offset {log_end}, below the durable commit index {commit}")


def test_rule8_broken_once_per_replica_when_a_power_loss_takes_committed_entries() -> None:
    e = Evidence(events=[damaged("n1", 102.0), damaged("n1", 103.0), damaged("n3", 102.0, log_end=50)],
                 start_wall_s=100.0)
    found = committed_entries_stay_on_disk(POWER_LOSS, e)
    assert [(v["node"], v["tablet"], v["durable_commit"] - v["log_end"]) for v in found] == [("n1", 1, 55),
                                                                                              ("n3", 1, 4)]
    assert found[0]["at_ns"] == 2_000_000_000
    assert "55 committed entries it had counted as fsynced vanished" in found[0]["explanation"]
    assert "start-lose-unsynced at 1.100 s" in found[0]["explanation"]


def test_rule8_excuses_files_the_nemesis_damaged_and_damage_without_offsets() -> None:
    wal_damage = ev("n2", "tablet_damaged", 102.0, tablet=0, reason="wal: bad checksum at offset 3")
    e = Evidence(events=[damaged("n1", 102.0), wal_damage], start_wall_s=100.0)
    assert committed_entries_stay_on_disk(CORRUPT, e) == []
    # Damage before the nemesis touched the node is not excused.
    early = Evidence(events=[damaged("n1", 100.5)], start_wall_s=100.0)
    assert [v["node"] for v in committed_entries_stay_on_disk(CORRUPT, early)] == ["n1"]


# n1's own lines from a lose-unsynced run under ack-before-fsync (seed 5): a power loss of n1 and n3 at
# 2.17 s; n1 came back with empty logs below the commit indexes it had checkpointed, on every tablet.
POWER_LOSS_RUN_START = 1795539248.943426
POWER_LOSS_N1 = [
    {"ts": 1795539249.153991, "node": "n1", "event": "node_started", "uuid": "204b275f-5911-4283-81c6-cb7785325ede",
     "member": "n1", "pid": 7622, "bugs": ["ack-before-fsync"]},
    {"ts": 1795539251.173514, "node": "n1", "event": "node_started", "uuid": "204b275f-5911-4283-81c6-cb7785325ede",
     "member": "n1", "pid": 7681, "bugs": ["ack-before-fsync"]},
    {"ts": 1795539251.176577, "node": "n1", "event": "tablet_damaged", "tablet": 0,
     "reason": "log ends at offset -1, below the durable commit index 0", "log_end": -1, "durable_commit": 0},
    {"ts": 1795539251.179576, "node": "n1", "event": "tablet_damaged", "tablet": 1,
     "reason": "log ends at offset -1, below the durable commit index 43", "log_end": -1, "durable_commit": 43},
]
POWER_LOSS_SEED5 = [Op(445, 2_100_000_000, NEMESIS, OpType.INVOKE, "start-lose-unsynced"),
                    Op(446, 2_174_877_873, NEMESIS, OpType.INFO, "start-lose-unsynced",
                       value={"target": "majority", "nodes": ["n1", "n3"]})]


def test_rule8_on_a_real_power_loss_under_ack_before_fsync(tmp_path: Path) -> None:
    run = one_node_run(tmp_path, POWER_LOSS_N1, POWER_LOSS_RUN_START)
    found = committed_entries_stay_on_disk(POWER_LOSS_SEED5, load_evidence(run, POWER_LOSS_SEED5))
    assert [(v["tablet"], v["durable_commit"] - v["log_end"]) for v in found] == [(0, 1), (1, 44)]
    assert round(found[0]["at_ns"] / 1e9, 2) == 2.23
    # The same restart, had its logs held what it checkpointed, is a load, not a loss.
    kept = [e for e in POWER_LOSS_N1 if e["event"] != "tablet_damaged"]
    assert committed_entries_stay_on_disk(POWER_LOSS_SEED5, load_evidence(one_node_run(tmp_path / "kept", kept,
                                                                                         POWER_LOSS_RUN_START),
                                                                            POWER_LOSS_SEED5)) == []


# Rule 7 --------------------------------------------------------------------------------------------------

def test_rule7_kept_when_reads_after_a_delete_see_nothing_or_newer_values() -> None:
    h = hist((0, "write", "k", 1, "ok", 1), (0, "delete", "k", None, "ok", True), (1, "read", "k", None, "ok", None))
    assert deleted_keys_stay_deleted(h, Evidence()) == []


def test_rule7_broken_when_a_deleted_value_comes_back() -> None:
    h = hist((0, "write", "k", 1, "ok", 1), (0, "delete", "k", None, "ok", True), (1, "read", "k", None, "ok", 1))
    found = deleted_keys_stay_deleted(h, Evidence())
    assert [v["rule"] for v in found] == ["7 deleted key came back"] and found[0]["op"] == 4


# The whole checker, from a run folder -------------------------------------------------------------------

def write_run(tmp_path: Path, final_value: int) -> Path:
    (tmp_path / "timing.json").write_text(json.dumps({"start_wall_s": 100.0}))
    for node, uuid in (("n1", "u1"), ("n2", "u2")):
        d = tmp_path / "nodes" / node
        d.mkdir(parents=True)
        (d / "events.jsonl").write_text(json.dumps({"ts": 100.1, "node": node, "event": "node_started", "uuid": uuid})
                                        + "\n" + '{"torn": ')
        state = replica({"1": final_value, "l": ["x"]}, "leader" if node == "n1" else "follower")
        (d / "dump.json").write_text(json.dumps(dump(uuid, {"0": state})))
    return tmp_path


@pytest.mark.parametrize(("final_value", "valid"), [(11, True), (10, False)])
def test_checker_reads_a_run_folder(tmp_path: Path, final_value: int, valid: bool) -> None:
    run = write_run(tmp_path, final_value)
    assert len(load_evidence(run, WRITES).events) == 2  # the torn line is skipped
    result = AmnesiaChecker().check(WRITES, CheckContext(run_dir=run))
    assert result["valid"] is valid
    assert result["explanation"]


def test_checker_is_unknown_without_evidence() -> None:
    assert AmnesiaChecker().check(WRITES, CheckContext())["valid"] == "unknown"


def test_rule6_broken_when_the_tombstone_itself_reports_no_epoch() -> None:
    events = [ev("n1", "node_started", 1, uuid="u1"), ev("n1", "fenced", 2, tablet=0, epoch=5),
              ev("n1", "tombstoned", 3, tablet=0, epoch=-1)]
    [v] = epochs_never_go_down([], Evidence(events=events))
    assert v["rule"] == "6 tombstone forgot its epoch" and (v["from"], v["to"]) == (5, -1)


def test_a_replica_that_never_held_an_epoch_may_be_tombstoned_at_minus_one() -> None:
    events = [ev("n1", "node_started", 1, uuid="u1"), ev("n1", "tombstoned", 3, tablet=0, epoch=-1)]
    assert epochs_never_go_down([], Evidence(events=events)) == []


def test_rule5_counts_a_reformat_after_a_disk_loss_as_a_lost_disk() -> None:
    # At seed 1 of the default campaign at 50e9b37 (bug no-uuid-check) corrupt's deleted metadata made n2
    # refuse its disk and start reformatted; it then ran under its old uuid, and no rule saw it.
    reformat = [Op(0, 1_000_000_000, NEMESIS, OpType.INVOKE, "start-corrupt"),
                Op(1, 2_000_000_000, NEMESIS, OpType.INFO, "start-corrupt",
                   value={"node": "n2", "kind": "delete-metadata", "reformatted": ["n2"], "old_uuids": {"n2": "old"}}),
                Op(2, 3_000_000_000, NEMESIS, OpType.INFO, "start-corrupt", value={"node": "n3", "kind": "truncate"})]
    assert wipes_in(reformat) == [(2_000_000_000, "n2", "old")]
    assert wipes_in(WIPE) == [(2_000_000_000, "n2", "old")]
    e = Evidence(events=[ev("n2", "node_started", 105.0, uuid="old")], dumps={"n2": dump("old", {})},
                 wipes=wipes_in(reformat), start_wall_s=100.0)
    assert [v["rule"] for v in wiped_nodes_change_identity(reformat, e)] == ["5 wiped node kept its identity"]
