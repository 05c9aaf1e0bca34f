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
