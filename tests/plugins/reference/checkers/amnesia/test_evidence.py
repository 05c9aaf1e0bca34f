"""Node event logs are merged by wall clock without reordering any one log: a clock fault may move a clock back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fencepost_reference.checkers.amnesia.evidence import load_evidence
from fencepost_reference.checkers.amnesia.rules import epochs_never_go_down


def write_log(run: Path, node: str, events: list[dict[str, Any]]) -> None:
    d = run / "nodes" / node
    d.mkdir(parents=True)
    (d / "events.jsonl").write_text("".join(json.dumps({"node": node, **e}) + "\n" for e in events))


def test_a_log_whose_clock_went_back_keeps_its_order_and_its_epochs_only_rise(tmp_path: Path) -> None:
    # n1's clock was bumped 60 s ahead while it adopted epoch 5, then put back before it adopted epoch 6.
    write_log(tmp_path, "n1", [{"ts": 100.0, "event": "node_started", "uuid": "u1"},
                               {"ts": 161.0, "event": "fenced", "tablet": 0, "epoch": 5},
                               {"ts": 102.0, "event": "fenced", "tablet": 0, "epoch": 6}])
    write_log(tmp_path, "n2", [{"ts": 101.0, "event": "node_started", "uuid": "u2"},
                               {"ts": 103.0, "event": "fenced", "tablet": 0, "epoch": 6}])
    ev = load_evidence(tmp_path, [])
    assert [(e["source"], e.get("epoch")) for e in ev.events if e["source"] == "n1"] == [("n1", None), ("n1", 5),
                                                                                         ("n1", 6)]
    assert [e["ts"] for e in ev.events if e["source"] == "n2"] == [101.0, 103.0]
    assert epochs_never_go_down([], ev) == []


def test_logs_with_true_clocks_interleave_by_time(tmp_path: Path) -> None:
    write_log(tmp_path, "n1", [{"ts": 1.0, "event": "a"}, {"ts": 3.0, "event": "c"}])
    write_log(tmp_path, "n2", [{"ts": 2.0, "event": "b"}, {"ts": 4.0, "event": "d"}])
    assert [e["event"] for e in load_evidence(tmp_path, []).events] == ["a", "b", "c", "d"]
