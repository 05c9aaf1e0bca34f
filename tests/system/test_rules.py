"""The protocol rules, one function each, on textbook cases."""

from __future__ import annotations

from system import bugs, rules
from system.rules import NO_ENTRY


def meta(ensemble: list[str], reconfig: dict | None = None) -> dict:
    return {"epoch": 5, "status": "election", "leader": None, "ensemble": ensemble, "reconfig": reconfig}


def test_entry_ids_compare_epoch_first() -> None:
    assert (1, 2) < (2, 1)
    assert rules.eid([3, 4]) == (3, 4)
    assert rules.eid(None) == NO_ENTRY


def test_choose_leader_takes_highest_head_within_final_ensemble() -> None:
    heads = {"a": (2, 10), "b": (3, 5), "c": (3, 9)}
    assert rules.choose_leader(heads, ["a", "b", "c"]) == "c"
    # c is not in the final ensemble (a completed swap removed it): choose among the rest
    assert rules.choose_leader(heads, ["a", "b", "d"]) == "b"
    assert rules.choose_leader({"x": (1, 1)}, ["a"]) is None


def test_choose_leader_ties_follow_ensemble_order() -> None:
    heads = {"a": (1, 1), "b": (1, 1), "c": (1, 1)}
    assert rules.choose_leader(heads, ["b", "c", "a"]) == "b"


def test_fencing_and_final_ensembles_for_stalled_reconfigurations() -> None:
    swap_prepare = meta(["a", "b", "c"], {"op": "swap", "old": "c", "new": "d", "phase": "prepare"})
    assert rules.fencing_ensemble(swap_prepare) == ["a", "b", "c", "d"]
    assert rules.final_ensemble(swap_prepare) == ["a", "b", "c"]
    swap_commit = meta(["a", "b", "c"], {"op": "swap", "old": "c", "new": "d", "phase": "commit"})
    assert rules.fencing_ensemble(swap_commit) == ["a", "b", "c", "d"]
    assert rules.final_ensemble(swap_commit) == ["a", "b", "d"]
    expand = meta(["a", "b", "c"], {"op": "expand", "old": None, "new": "d", "phase": "commit"})
    assert rules.final_ensemble(expand) == ["a", "b", "c", "d"]
    contract = meta(["a", "b", "c"], {"op": "contract", "old": "c", "new": None, "phase": "commit"})
    assert rules.fencing_ensemble(contract) == ["a", "b", "c"]
    assert rules.final_ensemble(contract) == ["a", "b"]


def test_fence_quorum_needs_majorities_of_fencing_current_and_final() -> None:
    m = meta(["a", "b", "c"])
    assert not rules.fence_quorum_reached(["a"], m)
    assert rules.fence_quorum_reached(["a", "c"], m)
    swap = meta(["a", "b", "c"], {"op": "swap", "old": "c", "new": "d", "phase": "commit"})
    assert not rules.fence_quorum_reached(["a", "b"], swap)  # 2 of 4 fenced
    assert rules.fence_quorum_reached(["a", "c", "d"], swap)
    assert rules.fence_quorum_reached(["a", "b", "d"], swap)
    contract = meta(["a", "b", "c"], {"op": "contract", "old": "c", "new": None, "phase": "commit"})
    assert not rules.fence_quorum_reached(["a", "c"], contract)  # 1 of the final {a, b}
    assert rules.fence_quorum_reached(["a", "b"], contract)


def test_a_reconfiguration_in_prepare_needs_only_a_majority_of_the_current_ensemble() -> None:
    # The clean default campaign at seed 7 (c32e897): a swap c -> d failed in PREPARE (d held a tombstone)
    # and a had lost its data; b and c stayed up, and the election asked for 3 of a-d for good.
    swap = meta(["a", "b", "c"], {"op": "swap", "old": "c", "new": "d", "phase": "prepare"})
    assert rules.fence_quorum_reached(["b", "c"], swap)
    assert not rules.fence_quorum_reached(["b", "d"], swap)  # d is no member until COMMIT
    assert rules.fencing_ensemble(swap) == ["a", "b", "c", "d"]  # d is still fenced where it answers
    expand = meta(["a", "b", "c"], {"op": "expand", "old": None, "new": "d", "phase": "prepare"})
    assert rules.fence_quorum_reached(["a", "c"], expand) and not rules.fence_quorum_reached(["a", "d"], expand)
    # In COMMIT the leader may already count the new ensemble: the fencing ensemble's majority stays.
    assert not rules.fence_quorum_reached(["b", "c"], {**swap, "reconfig": {**swap["reconfig"], "phase": "commit"}})


def test_fence_current_ensemble_only_bug_fences_a_majority_of_the_old_ensemble() -> None:
    # the leader a applied the swap c -> d (its ensemble is a, b, d) and is cut off with d
    swap = meta(["a", "b", "c"], {"op": "swap", "old": "c", "new": "d", "phase": "commit"})
    assert not rules.fence_quorum_reached(["b", "c"], swap)
    bugs.configure(["fence-current-ensemble-only"])
    try:
        assert rules.fencing_ensemble(swap) == ["a", "b", "c"]
        assert rules.fence_quorum_reached(["b", "c"], swap)  # disjoint from a + d, a majority of a, b, d
    finally:
        bugs.configure([])


def test_truncation_point() -> None:
    leader = [1, 1, 2, 2, 4]  # epochs at offsets 0..4; head (4, 4)
    # follower from epoch 3 that the leader never saw: cut back to the last leader entry of epoch <= 3
    assert rules.truncation_point(leader, (3, 6)) == (2, 3)
    # follower with old-epoch entries beyond the leader's epoch-1 entries: cut to (1, 1)
    assert rules.truncation_point(leader, (1, 2)) == (1, 1)
    # follower behind within the leader's epoch of its head: start streaming, no truncation
    assert rules.truncation_point(leader, (4, 4)) is None
    assert rules.truncation_point([1, 1, 1], (1, 1)) is None
    # follower ahead of the leader: cut to the leader's head
    assert rules.truncation_point([1, 1, 1], (1, 5)) == (1, 2)
    assert rules.truncation_point([1, 1], (2, 1)) == (1, 1)
    # empty follower: nothing to cut
    assert rules.truncation_point(leader, NO_ENTRY) == NO_ENTRY


def test_kept_prefix_keeps_ids_at_or_below_point() -> None:
    log = [(1, 0), (3, 1), (3, 2)]
    assert rules.kept_prefix(log, (2, 1)) == 1
    assert rules.kept_prefix(log, (3, 1)) == 2
    assert rules.kept_prefix(log, NO_ENTRY) == 0


def test_commit_needs_majority_and_current_epoch() -> None:
    # the leader (durable 5) and one follower (confirmed 5) of three: a majority
    assert rules.can_commit(5, 7, 7, [5, 5, -1], 3)
    assert not rules.can_commit(5, 7, 7, [5, 4, -1], 3)
    # an entry of an earlier epoch on a majority still does not commit directly
    assert not rules.can_commit(5, 6, 7, [5, 5, 5], 3)
    assert rules.commit_candidate([9, 5, 2], 3) == 5
    assert rules.commit_candidate([9], 3) == -1


def test_commit_prior_epoch_bug_switch() -> None:
    bugs.configure(["commit-prior-epoch"])
    try:
        assert rules.can_commit(5, 6, 7, [5, 5, 5], 3)
    finally:
        bugs.configure([])


def test_safe_to_contract_never_lowers_the_commit_index() -> None:
    # commit 10; removing c leaves leader (12) and b (8): a 2-node ensemble's commit would be 8
    assert not rules.safe_to_contract(10, [12, 8], 2)
    assert rules.safe_to_contract(10, [12, 10], 2)


def test_fence_allowed_only_for_newer_or_repeated_epoch() -> None:
    assert rules.fence_allowed(3, "follower", 4)
    assert rules.fence_allowed(4, "fenced", 4)
    assert not rules.fence_allowed(4, "leader", 4)
    assert not rules.fence_allowed(5, "fenced", 4)


def test_continues_log() -> None:
    assert rules.continues_log((2, 7), (2, 7))
    assert not rules.continues_log((2, 7), (2, 9))
    assert not rules.continues_log((2, 7), (3, 7))


def test_bug_registry_rejects_unknown_names() -> None:
    import pytest

    with pytest.raises(bugs.UnknownBug):
        bugs.configure(["no-such-bug"])
    with pytest.raises(bugs.UnknownBug):
        bugs.enabled("no-such-bug")
    assert not bugs.enabled("gap-ack")
