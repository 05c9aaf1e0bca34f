"""The reference system's transitions, as the default campaign waits for them."""

from __future__ import annotations

from typing import Any

from fencepost_reference.plugin import BEHIND_ENTRIES, follower_behind, plugin


def status(commits: dict[str, dict[str, int]], state: str = "steady") -> dict[str, Any]:
    return {"commits": commits,
            "tablets": {"0": {"status": state, "leader": "n1", "ensemble": ["n1", "n2", "n3"]}}}


def test_a_follower_is_behind_only_past_the_threshold_of_a_steady_tablet() -> None:
    top = 100
    assert not follower_behind(status({"n1": {"0": top}, "n2": {"0": top - BEHIND_ENTRIES}, "n3": {"0": top}}))
    assert follower_behind(status({"n1": {"0": top}, "n2": {"0": top - BEHIND_ENTRIES - 1}, "n3": {"0": top}}))
    # A follower the operator has not heard from (dead, or partitioned off) has no commit: not counted.
    assert not follower_behind(status({"n1": {"0": top}, "n3": {"0": top}}))
    # While the tablet elects, its leader's commit says nothing.
    assert not follower_behind(status({"n1": {"0": top}, "n2": {"0": 0}}, state="election"))


def test_the_reference_system_names_its_transitions() -> None:
    assert plugin().transitions() == ["election", "reconfiguration", "copy", "follower-behind"]
