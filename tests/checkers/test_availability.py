from __future__ import annotations

from checkers.availability import AvailabilityChecker
from harness.checker_protocol import CheckContext
from harness.history.op import NEMESIS, Op, OpType

S = 1_000_000_000


def _history() -> list[Op]:
    """Ok calls before 2 s and after 4 s, failures inside a partition from 2 s to 4 s."""
    raw: list[tuple[int, object, str, str]] = [
        (0, 0, "invoke", "read"), (S // 10, 0, "ok", "read"),
        (S, 1, "invoke", "read"), (S + 1, 1, "ok", "read"),
        (2 * S, NEMESIS, "invoke", "start-partition"), (2 * S + 5, NEMESIS, "info", "start-partition"),
        (2 * S + 10, 0, "invoke", "write"), (2 * S + 20, 0, "fail", "write"),
        (3 * S, 1, "invoke", "write"), (3 * S + 50, 1, "info", "write"),
        (3 * S + 60, 0, "invoke", "read"), (3 * S + 70, 0, "ok", "read"),
        (4 * S, NEMESIS, "invoke", "stop-partition"), (4 * S + 5, NEMESIS, "info", "stop-partition"),
        (5 * S, 0, "invoke", "read"), (5 * S + 1, 0, "ok", "read"),
    ]
    return [Op(i, t, p, OpType(ty), f) for i, (t, p, ty, f) in enumerate(raw)]  # type: ignore[arg-type]


def test_tallies_outcomes_inside_and_outside_fault_windows() -> None:
    result = AvailabilityChecker().check(_history(), CheckContext())
    assert result["valid"] is True
    part = result["by_fault"]["partition"]
    assert (part["calls"], part["ok"], part["fail"], part["info"]) == (3, 1, 1, 1)
    assert part["ok_fraction"] == round(1 / 3, 4)
    assert part["windows"] == 1 and part["seconds"] == 2.0
    assert part["ok_per_s"] == 0.5  # one ok completion in 2 s of partition
    assert result["by_fault"]["none"]["ok_fraction"] == 1.0
    assert result["by_fault"]["none"]["ok_per_s"] == 1.0  # three in the other 3 s
    assert result["summary"] == "without faults: 100% ok, 1 ok/s; during partition: 33% ok, 0.5 ok/s"
    assert result["longest_outage_faults"] == ["partition"]
    assert result["longest_outage_s"] > 1.5


def test_a_floor_on_the_ok_fraction_makes_a_poor_fault_window_invalid() -> None:
    result = AvailabilityChecker(min_ok_fraction=0.5).check(_history(), CheckContext())
    assert result["valid"] is False
    assert "partition" in result["explanation"] and "33.3%" in result["explanation"]
    assert AvailabilityChecker(min_ok_fraction=0.3).check(_history(), CheckContext())["valid"] is True


def test_a_fault_window_with_no_invocations_still_shows_its_outage() -> None:
    raw: list[tuple[int, object, str, str]] = [
        (0, 0, "invoke", "read"), (S, 0, "ok", "read"),
        (S, NEMESIS, "invoke", "start-kill"), (S + 1, NEMESIS, "info", "start-kill"),
        (S + 2, 0, "invoke", "read"), (3 * S, 0, "ok", "read"),
        (3 * S, NEMESIS, "invoke", "stop-kill"), (3 * S + 1, NEMESIS, "info", "stop-kill"),
    ]
    history = [Op(i, t, p, OpType(ty), f) for i, (t, p, ty, f) in enumerate(raw)]  # type: ignore[arg-type]
    kill = AvailabilityChecker().check(history, CheckContext())["by_fault"]["kill"]
    assert kill["windows"] == 1 and kill["calls"] == 1 and kill["ok_per_s"] == 0.5
