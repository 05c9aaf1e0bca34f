"""The struck faults the report lists: when each struck, and what it did or why it broke off."""

from __future__ import annotations

from harness.history.op import NEMESIS, Op, OpType
from reports.schedule_view import struck_faults


def test_a_start_that_broke_off_is_listed_from_its_invocation_with_its_error() -> None:
    history = [
        Op(0, 1_000_000_000, NEMESIS, OpType.INVOKE, "start-kill", value={"target": "one"}),
        Op(1, 1_500_000_000, NEMESIS, OpType.INFO, "start-kill", value={"target": "one", "killed": ["n2"]}),
        Op(2, 4_000_000_000, NEMESIS, OpType.INVOKE, "start-partition", value={"target": "leader-deposed"}),
        Op(3, 9_000_000_000, NEMESIS, OpType.INFO, "start-partition", value={"target": "leader-deposed"},
           error="cancelled: the run ended while it acted"),
    ]
    kill, partition = struck_faults(history)
    assert (kill.at_s, kill.did) == (1.5, 'killed: ["n2"]')
    assert (partition.at_s, partition.did) == (4.0, "error: cancelled: the run ended while it acted")


def test_the_classics_say_which_ran_which_did_not_act_and_which_were_left_out_or_not_offered() -> None:
    from reports.schedule_view import classic_views

    config = {"extra": {"classics": {
        "offered": [{"classic": "kill-leader", "package": "kill", "target": "leader"},
                    {"classic": "kill-all", "package": "kill", "target": "all"},
                    {"classic": "partition-leader", "package": "partition", "target": "leader-deposed"},
                    {"classic": "pause-leader", "package": "pause", "target": "leader"}],
        "not_offered": [{"classic": "clock-jump", "why": "system x does not offer the clock capability"}]}}}
    planned = [{"at": 1.0, "duration": 2.0, "package": "kill", "target": "leader", "seed": 1, "classic": "kill-leader"},
               {"at": 4.0, "duration": 2.0, "package": "partition", "target": "leader-deposed", "seed": 2,
                "classic": "partition-leader"},
               {"at": 8.0, "duration": 2.0, "package": "pause", "target": "leader", "seed": 3,
                "classic": "pause-leader"}]
    history = [
        Op(0, 1_000_000_000, NEMESIS, OpType.INVOKE, "start-kill",
           value={"target": "leader", "classic": "kill-leader"}),
        Op(1, 1_200_000_000, NEMESIS, OpType.INFO, "start-kill", value={"target": "leader", "killed": ["n1"]}),
        Op(2, 4_000_000_000, NEMESIS, OpType.INVOKE, "start-partition",
           value={"target": "leader-deposed", "classic": "partition-leader"}),
        Op(3, 9_000_000_000, NEMESIS, OpType.INFO, "start-partition",
           value={"target": "leader-deposed", "skipped": "no leader known within 5 s"}),
    ]
    views = {v.classic: v for v in classic_views(config, planned, struck_faults(history))}
    assert [v.classic for v in views.values()] == ["kill-leader", "kill-all", "partition-leader", "pause-leader",
                                                    "clock-jump"]
    assert views["kill-leader"].status == "ran" and "1.2 s" in views["kill-leader"].detail
    assert "n1" in views["kill-leader"].detail
    assert views["partition-leader"].status == "did not act" and "no leader known" in views["partition-leader"].detail
    assert views["pause-leader"].status == "did not strike"
    assert views["kill-all"].status == "left out" and "too short" in views["kill-all"].detail
    assert views["clock-jump"].status == "not offered" and "clock capability" in views["clock-jump"].detail
    assert {v.status for v in classic_views(config, planned, None)} >= {"planned"}, "no history: only planned"
    assert classic_views({"extra": {}}, planned, None) == [], "a run that recorded no classics lists none"
