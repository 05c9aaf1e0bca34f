from __future__ import annotations

from pathlib import Path

from checkers.log_pattern import LogPatternChecker
from harness.checker_protocol import CheckContext

TRACEBACK = """\
2024-05-01 12:00:08,002 ERROR n1 request handler failed
Traceback (most recent call last):
  File "system/replica.py", line 88, in handle
KeyError: 'lease'
"""


def _node_log(run: Path, node: str, text: str) -> None:
    (run / "nodes" / node).mkdir(parents=True, exist_ok=True)
    (run / "nodes" / node / "node.log").write_text(text, encoding="utf-8")


def test_a_traceback_in_a_node_log_is_invalid_and_shown_with_its_place(tmp_path: Path) -> None:
    _node_log(tmp_path, "n1", "INFO start\n" + TRACEBACK)
    _node_log(tmp_path, "n2", "INFO fine\n")
    result = LogPatternChecker().check([], CheckContext(run_dir=tmp_path))
    assert result["valid"] is False
    assert result["files"] == 2
    assert result["counts"]["traceback"] == 1 and result["counts"]["error"] == 1
    tb = next(m for m in result["matches"] if m["pattern"] == "traceback")
    assert (tb["file"], tb["line"]) == ("nodes/n1/node.log", 3)
    assert "KeyError: 'lease'" in tb["text"]
    assert "traceback" in result["explanation"]


def test_error_lines_alone_are_counted_but_valid(tmp_path: Path) -> None:
    _node_log(tmp_path, "n1", "ERROR n1 peer n3 unreachable\nINFO ok\nERROR again\n")
    result = LogPatternChecker().check([], CheckContext(run_dir=tmp_path))
    assert result["valid"] is True
    assert result["counts"]["error"] == 2


def test_error_lines_can_be_made_fatal_and_patterns_replaced(tmp_path: Path) -> None:
    _node_log(tmp_path, "n1", "ERROR n1 peer n3 unreachable\nWAL corrupt at 42\n")
    assert LogPatternChecker(fatal=["error"]).check([], CheckContext(run_dir=tmp_path))["valid"] is False
    custom = LogPatternChecker(patterns={"corrupt": r"corrupt"}, fatal=["corrupt"])
    result = custom.check([], CheckContext(run_dir=tmp_path))
    assert result["counts"] == {"corrupt": 1} and result["valid"] is False


def test_no_run_dir_is_unknown_and_no_logs_is_valid(tmp_path: Path) -> None:
    assert LogPatternChecker().check([], CheckContext())["valid"] == "unknown"
    result = LogPatternChecker().check([], CheckContext(run_dir=tmp_path))
    assert result["valid"] is True and result["files"] == 0
