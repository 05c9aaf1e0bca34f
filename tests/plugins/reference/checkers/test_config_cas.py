"""The config compare-and-set checker, on the records the config-race fault writes.

The two records below are the answers the master gave in real runs (``fencepost test --nemesis
config-race --seed 1``, with and without ``--bug no-cas-config-change``).
"""

from __future__ import annotations

from typing import Any

from fencepost_reference.checkers.config_cas import ConfigCasChecker

from harness.checker_protocol import CheckContext
from harness.detection import detection
from harness.history.op import NEMESIS, Op, OpType

CORRECT: list[dict[str, Any]] = [{"method": "remove_replica", "tablet": 3, "config_id": 1, "node": "n1",
            "result": {"tablet": 3, "up": ["n2", "n3"], "rf": 2, "config_id": 2, "already": False}},
           {"method": "remove_replica", "tablet": 3, "config_id": 1, "node": "n2", "error": "stale_config",
            "committed": 2}]
BUGGY = [{"method": "remove_replica", "tablet": 3, "config_id": 1, "node": "n1",
          "result": {"tablet": 3, "up": ["n2", "n3"], "rf": 2, "config_id": 2, "already": False}},
         {"method": "remove_replica", "tablet": 3, "config_id": 1, "node": "n2",
          "result": {"tablet": 3, "up": ["n3"], "rf": 1, "config_id": 3, "already": False}}]


def race(calls: list[dict[str, Any]], at_s: float = 3.0) -> list[Op]:
    t = int(at_s * 1e9)
    value = {"target": "remove-two", "tablet": 3, "config_id": 1, "up": ["n1", "n2", "n3"], "calls": calls}
    return [Op(0, t, NEMESIS, OpType.INVOKE, "start-config-race", value={"target": "remove-two"}),
            Op(1, t + 1000, NEMESIS, OpType.INFO, "start-config-race", value=value)]


def test_one_applied_change_and_one_refusal_is_valid() -> None:
    result = ConfigCasChecker().check(race(CORRECT), CheckContext())
    assert result == {"valid": True, "checked": 2, "violations": []}


def test_a_change_applied_over_an_unseen_config_is_caught_and_timed() -> None:
    history = race(BUGGY, at_s=3.0)
    result = ConfigCasChecker().check(history, CheckContext())
    assert result["valid"] is False
    rules = sorted(v["rule"] for v in result["violations"])
    assert rules == ["change applied over an unseen config", "two changes applied from one config"]
    unseen = next(v for v in result["violations"] if v["rule"] == "change applied over an unseen config")
    assert (unseen["named_config_id"], unseen["new_config_id"]) == (1, 3)
    assert "remove_replica(node=n2)" in unseen["explanation"] and "['n3']" in unseen["explanation"]
    found = detection({"config-cas": result}, history)
    assert found["checkers"] == ["config-cas"] and found["first_anomaly_s"] == 3.0


def test_a_refusal_of_a_change_that_named_the_committed_config_is_caught() -> None:
    # The master refused as stale a change naming config 1 while it held config 1: both changes refused.
    refused = [{**CORRECT[1], "node": node, "committed": 1} for node in ("n1", "n2")]
    result = ConfigCasChecker().check(race(refused), CheckContext())
    assert result["valid"] is False and result["checked"] == 2
    assert [v["rule"] for v in result["violations"]] == ["change refused over the config it named"] * 2
    assert "remove_replica(node=n1)" in result["violations"][0]["explanation"]


def test_idempotent_repeats_and_runs_without_races_are_not_judged() -> None:
    repeat = [{**CORRECT[0], "result": {**CORRECT[0]["result"], "already": True, "config_id": 5}}]
    assert ConfigCasChecker().check(race(repeat), CheckContext())["valid"] is True
    assert ConfigCasChecker().check([], CheckContext()) == {"valid": True, "checked": 0, "violations": []}
