from __future__ import annotations

from harness.history.faults import FaultWindow, fault_windows, faults_at
from harness.history.op import NEMESIS, Op, OpType


def _nemesis(*events: tuple[int, str, str]) -> list[Op]:
    """(time, type, f) nemesis events, plus a client op at t=100 to set the history's end."""
    ops = [Op(i, t, NEMESIS, OpType(ty), f) for i, (t, ty, f) in enumerate(events)]
    ops.append(Op(len(ops), 100, 0, OpType.INVOKE, "read"))
    return ops


def test_a_window_runs_from_the_start_completion_to_the_stop_completion() -> None:
    ops = _nemesis((10, "invoke", "start-partition"), (12, "info", "start-partition"),
                   (40, "invoke", "stop-partition"), (45, "ok", "stop-partition"))
    assert fault_windows(ops) == [FaultWindow("partition", 12, 45, False)]


def test_an_unstopped_fault_or_an_unfinished_stop_lasts_to_the_end() -> None:
    ops = _nemesis((10, "invoke", "start-kill"), (11, "info", "start-kill"),
                   (20, "invoke", "start-partition"), (21, "info", "start-partition"),
                   (30, "invoke", "stop-partition"))
    windows = fault_windows(ops)
    assert windows == [FaultWindow("kill", 11, 100, True), FaultWindow("partition", 21, 100, True)]
    assert faults_at(windows, 50) == ["kill", "partition"]
    assert faults_at(windows, 5) == []


def test_a_failed_start_opens_nothing_and_a_failed_stop_closes_nothing() -> None:
    ops = _nemesis((10, "invoke", "start-pause"), (11, "fail", "start-pause"),
                   (20, "invoke", "start-clock"), (21, "info", "start-clock"),
                   (30, "invoke", "stop-clock"), (31, "fail", "stop-clock"),
                   (60, "invoke", "stop-clock"), (61, "info", "stop-clock"))
    assert fault_windows(ops) == [FaultWindow("clock", 21, 61, False)]


def test_a_start_that_ended_in_an_error_opens_its_window_at_its_invocation() -> None:
    ops = _nemesis((10, "invoke", "start-partition"), (30, "info", "start-partition"))
    ops[1] = Op(1, 30, NEMESIS, OpType.INFO, "start-partition", error="cancelled: the run ended while it acted")
    assert fault_windows(ops) == [FaultWindow("partition", 10, 100, True)]  # it may have cut from 10 on


def test_overlapping_windows_of_one_fault_match_first_in_first_out() -> None:
    ops = _nemesis((1, "invoke", "start-partition"), (2, "info", "start-partition"),
                   (3, "invoke", "start-partition"), (4, "info", "start-partition"),
                   (5, "invoke", "stop-partition"), (6, "info", "stop-partition"))
    assert fault_windows(ops) == [FaultWindow("partition", 2, 6, False), FaultWindow("partition", 4, 100, True)]


def test_client_ops_and_other_nemesis_functions_are_ignored() -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "start-partition"), Op(1, 1, 0, OpType.OK, "start-partition"),
           Op(2, 2, NEMESIS, OpType.INVOKE, "heal"), Op(3, 3, NEMESIS, OpType.INFO, "heal")]
    assert fault_windows(ops) == []
    assert fault_windows([]) == []
