from __future__ import annotations

import re
from pathlib import Path

from harness.history.op import NEMESIS, Op, OpType
from reports.timeline import timeline_html
from reports.timeline_view import TimelineView
from tests.reports.sample_runs import sample_history

MS = 1_000_000


def test_writes_one_lane_per_process_with_the_nemesis_last(tmp_path: Path) -> None:
    history = sample_history()
    result = TimelineView().draw(history, {"name": "demo"}, tmp_path)
    processes = len({op.process for op in history})
    assert result == {"valid": True, "html": "timeline.html", "processes": processes, "ops": len(history),
                      "summary": f"{len(history)} ops from {processes} processes"}
    html = (tmp_path / "timeline.html").read_text(encoding="utf-8")
    lanes = re.findall(r'<span class="lane-name">([^<]+)</span>', html)
    assert lanes[-1] == "nemesis"
    assert len(lanes) == len({op.process for op in history})
    assert lanes[:2] == ["process 0", "process 1"]
    assert "network partition" in html and "process kill" in html
    assert "<script" not in html


def test_bars_show_outcomes_and_escape_values() -> None:
    history = [
        Op(0, 0, 0, OpType.INVOKE, "write", value="<b>x</b>"), Op(1, 10 * MS, 0, OpType.OK, "write", value="<b>x</b>"),
        Op(2, 11 * MS, 1, OpType.INVOKE, "read"), Op(3, 20 * MS, 1, OpType.FAIL, "read", error="nope"),
        Op(4, 21 * MS, 2, OpType.INVOKE, "read"),
        Op(5, 22 * MS, NEMESIS, OpType.INVOKE, "start-partition"), Op(6, 23 * MS, NEMESIS, OpType.INFO,
                                                                         "start-partition"),
    ]
    html = timeline_html(history, "t")
    assert "bar bar-ok" in html and "bar bar-fail" in html and "bar bar-info unfinished" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert "error   nope" in html
    assert "never stopped" in html


def test_without_a_run_dir_nothing_is_written() -> None:
    result = TimelineView().draw(sample_history(), {}, None)
    assert result["valid"] is True and result["html"] is None
