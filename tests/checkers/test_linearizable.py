from __future__ import annotations

from pathlib import Path

from checkers.linearizable import HTML_NAME, LinearizableChecker
from harness.checker_protocol import CheckContext
from tests.checkers.histories import sequential as ops


def test_a_stale_read_is_explained_and_drawn(tmp_path: Path) -> None:
    history = ops((0, "write", 7, 1, "ok", 1), (1, "read", 7, None, "ok", 1), (0, "write", 7, 2, "ok", 2),
                  (1, "read", 7, None, "ok", 1), (0, "write", 8, 5, "ok", 5), (1, "read", 8, None, "ok", 5))
    result = LinearizableChecker("cas-register").check(history, CheckContext(test={"name": "t"}, run_dir=tmp_path))
    assert result["valid"] is False
    assert result["invalid_keys"] == [7]
    assert result["keys"] == {"7": {"valid": False}}
    assert "read" in result["explanation"]
    assert result["html"] == HTML_NAME
    page = (tmp_path / HTML_NAME).read_text()
    assert page.startswith("<!DOCTYPE html>") and "Key 7" in page


def test_a_linearizable_history_is_valid_and_writes_no_page(tmp_path: Path) -> None:
    history = ops((0, "write", 1, 1, "ok", 1), (1, "cas", 1, [1, 2], "ok", [1, 2]), (0, "read", 1, None, "ok", 2),
                  (1, "cas", 1, [1, 3], "fail", [1, 3]))
    result = LinearizableChecker("cas-register").check(history, CheckContext(run_dir=tmp_path))
    assert result["valid"] is True and "html" not in result
    assert not (tmp_path / HTML_NAME).exists()
