"""The convergence checker and the settling it reads: whole, caught-up clusters pass; stuck ones do not."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from fencepost_reference.checkers.convergence import ConvergenceChecker
from fencepost_reference.settle import SETTLED_FILE, settle, unsettled

from harness.checker_protocol import CheckContext
from system.wire import RpcServer


def status(**tablet: Any) -> dict[str, Any]:
    meta = {"status": "steady", "leader": "n1", "ensemble": ["n1", "n2", "n3"], "reconfig": None, "migration": None}
    return {"alive": {"n1": True, "n2": True, "n3": True, "n4": True},
            "commits": {"n1": {"0": 40}, "n2": {"0": 40}, "n3": {"0": 40}},
            "tablets": {"0": {**meta, **tablet}}}


def test_a_whole_caught_up_cluster_is_settled() -> None:
    assert unsettled(status(), 3) == []


def test_what_keeps_a_cluster_from_settling_is_named() -> None:
    assert unsettled(status(status="election", leader=None), 3) == ["tablet 0 is election with leader None"]
    assert "reconfiguration in progress" in unsettled(status(reconfig={"op": "swap"}), 3)[0]
    assert "fewer than 3" in unsettled(status(ensemble=["n1", "n2"]), 3)[0]
    behind = status()
    behind["commits"]["n3"]["0"] = 12
    assert unsettled(behind, 3) == ["tablet 0: member n3 has commit index 12, its leader n1 40"]
    # The damage guard's view: a follower behind its leader is whole enough, a stalled swap is not.
    assert unsettled(behind, 3, commits_agree=False) == []
    assert "reconfiguration in progress" in unsettled(status(reconfig={"op": "swap"}), 3, commits_agree=False)[0]
    dead = status()
    dead["alive"]["n2"] = False
    assert unsettled(dead, 3) == ["tablet 0: member n2 is not alive"]


def write_run(run: Path, settled: bool, reasons: list[str], heads: dict[str, list[int]],
              recorded: list[str] | None = None) -> None:
    nodes = run / "nodes"
    nodes.mkdir(parents=True)
    record = status(ensemble=recorded or ["n1", "n2", "n3~2"])
    (nodes / SETTLED_FILE).write_text(json.dumps({"settled": settled, "seconds": 1.5, "patience_s": 30.0,
                                                  "reasons": reasons, "status": record}))
    for node, head in heads.items():
        me: dict[str, object] = {"status": "leader" if node == "n1" else "follower", "head": head, "commit": head[1]}
        if node == "n1":
            me["ensemble"] = ["n1", "n2", "n3~2"]
        (nodes / node).mkdir()
        (nodes / node / "dump.json").write_text(json.dumps({"tablets": {"0": me}}))


def test_settled_and_agreeing_replicas_are_valid(tmp_path: Path) -> None:
    write_run(tmp_path, True, [], {"n1": [3, 40], "n2": [3, 40], "n3": [3, 40]})
    assert ConvergenceChecker().check([], CheckContext(run_dir=tmp_path))["valid"] is True


def test_a_rejoined_member_that_stayed_behind_is_invalid(tmp_path: Path) -> None:
    write_run(tmp_path, True, [], {"n1": [3, 40], "n2": [3, 40], "n3": [3, 17]})
    result = ConvergenceChecker().check([], CheckContext(run_dir=tmp_path))
    assert result["valid"] is False
    assert "tablet 0: member n3~2 has head [3, 17], its leader n1 [3, 40]" in result["disagreements"]


def test_a_cluster_that_never_settled_is_invalid_with_its_reasons(tmp_path: Path) -> None:
    write_run(tmp_path, False, ["tablet 0 has a migration in progress: {}"], {"n1": [3, 40], "n2": [3, 40]})
    result = ConvergenceChecker().check([], CheckContext(run_dir=tmp_path))
    assert result["valid"] is False and "migration in progress" in result["explanation"]


def test_without_the_settling_record_it_cannot_judge(tmp_path: Path) -> None:
    assert ConvergenceChecker().check([], CheckContext(run_dir=tmp_path))["valid"] == "unknown"


def test_a_leader_replicating_to_another_ensemble_than_recorded_is_invalid(tmp_path: Path) -> None:
    # A swap the leader applied without dropping the old member (mutant leader.py `op is not "swap"`): the
    # record says n1, n2, n4 while the leader still counts n3~2, so its commit quorum is not the fenced one.
    write_run(tmp_path, True, [], {"n1": [3, 40], "n2": [3, 40], "n3": [3, 40]}, recorded=["n1", "n2", "n4"])
    result = ConvergenceChecker().check([], CheckContext(run_dir=tmp_path))
    assert result["valid"] is False
    assert ("tablet 0: leader n1 replicates to ['n1', 'n2', 'n3~2'], the control plane recorded ['n1', 'n2', 'n4']"
            in result["disagreements"])


def test_settling_waits_until_the_status_has_agreed_for_a_while(tmp_path: Path) -> None:
    """An operator whose first report predates the final write's commit: it shows the members agreeing, then
    (fresh) a member one commit behind, then agreeing again. One agreeing poll is not settled; the record
    keeps the status that held (the clock campaign at 499761f: its dumps, taken right after one agreeing
    poll, had n3 one commit behind)."""
    behind = status()
    behind["commits"]["n3"]["0"] = 39
    script = [status(), behind, *[status() for _ in range(20)]]
    polls: list[float] = []

    async def handler(method: str, to: str | None, params: dict[str, Any]) -> Any:
        assert method == "status"
        polls.append(time.monotonic())
        return script[min(len(polls) - 1, len(script) - 1)]

    async def go() -> dict[str, Any]:
        server = RpcServer(handler)
        await server.start("127.0.0.1", 0)
        try:
            return await settle([("127.0.0.1", server.port)], 3, tmp_path / SETTLED_FILE, patience=10, stable=1.0)
        finally:
            await server.close()

    record = asyncio.run(go())
    assert record["settled"] is True and record["reasons"] == []
    assert len(polls) >= 4  # agree, behind, then agreeing polls spanning the stable second
    assert polls[-1] - polls[2] >= 1.0
    assert json.loads((tmp_path / SETTLED_FILE).read_text())["settled"] is True
