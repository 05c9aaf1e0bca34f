"""The rules of part 2 (tablet copy, tombstones, sessions, config changes, joins), and their bug switches."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from system import bugs, rules


@pytest.fixture(autouse=True)
def no_bugs() -> Iterator[None]:
    bugs.configure([])
    yield
    bugs.configure([])


def test_copy_start_checks_follow_the_seed() -> None:
    assert rules.copy_start_error("COPYING", "DELETED", 5, 3, None, None) == "already_in_progress"
    assert rules.copy_start_error("READY", "DELETED", 5, 3, None, None) == "illegal_state"
    assert rules.copy_start_error("DELETED", "DELETED", 2, 3, None, None) == "stale_epoch"
    assert rules.copy_start_error("DELETED", "DELETED", 3, 3, [1, 4], [1, 5]) == "illegal_state"
    assert rules.copy_start_error("DELETED", "DELETED", 3, 3, [1, 5], [1, 5]) is None
    assert rules.copy_start_error("DOES_NOT_EXIST", "DOES_NOT_EXIST", 0, -1, None, None) is None


def test_consensus_merge_keeps_the_higher_local_epoch_and_adopts_remote_membership() -> None:
    local = {"epoch": 9, "status": "deleted", "leader": "n1"}
    remote = {"epoch": 7, "members": ["n2", "n3", "n4"]}
    merged = rules.merge_consensus_meta(local, remote)
    assert merged["epoch"] == 9 and merged["leader"] == "n1" and merged["members"] == ["n2", "n3", "n4"]
    assert rules.merge_consensus_meta(local, {"epoch": 11, "members": ["n2"]})["epoch"] == 11
    assert rules.merge_consensus_meta(None, remote)["epoch"] == 7
    bugs.configure(["copy-overwrites-epoch"])
    assert rules.merge_consensus_meta(local, remote)["epoch"] == 7


def test_tombstones_keep_their_epoch_unless_the_bug_drops_it() -> None:
    assert rules.tombstone_keeps_epoch(6) == 6
    bugs.configure(["forget-epoch-on-tombstone"])
    assert rules.tombstone_keeps_epoch(6) == -1


def test_sessions_below_the_barrier_are_closed() -> None:
    assert rules.session_open(5, 5) and not rules.session_open(5, 4)
    bugs.configure(["stale-copy-session"])
    assert rules.session_open(5, 4)


def test_pre_voters_do_not_count_toward_the_majority() -> None:
    assert rules.voting_members(["a", "b", "c"], ["d"]) == ["a", "b", "c"]
    bugs.configure(["count-pre-voter-acks"])
    assert rules.voting_members(["a", "b", "c"], ["d"]) == ["a", "b", "c", "d"]


def test_config_changes_need_the_committed_config_id() -> None:
    assert rules.config_change_allowed(4, 4)
    assert not rules.config_change_allowed(4, 3) and not rules.config_change_allowed(4, None)
    bugs.configure(["no-cas-config-change"])
    assert rules.config_change_allowed(4, 3)


def test_node_states_and_joins() -> None:
    assert rules.node_transition_allowed("none", "bootstrapping")
    assert rules.node_transition_allowed("normal", "decommissioning")
    assert not rules.node_transition_allowed("left", "normal")
    assert not rules.node_transition_allowed("normal", "bootstrapping")
    members = [{"uuid": "a", "state": "left"}, {"uuid": "b", "state": "normal"}]
    assert rules.join_refusal(members, "a") == "removed"
    assert rules.join_refusal(members, "b") == "already_member"
    assert rules.join_refusal(members, "c") is None
    assert not rules.rejoin_as_old_identity()
    bugs.configure(["no-uuid-check"])
    assert rules.rejoin_as_old_identity()


def test_leader_choice_prefers_not_to_keep_a_leader_being_moved_but_never_loses_entries() -> None:
    assert rules.choose_leader({"a": (2, 5), "b": (2, 5)}, ["a", "b"], avoid=("a",)) == "b"
    assert rules.choose_leader({"a": (2, 6), "b": (2, 5)}, ["a", "b"], avoid=("a",)) == "a"
