"""What Jepsen concluded, read from a run folder's results.edn."""

from __future__ import annotations

from pathlib import Path

from harness.history.jepsen_store import compare, find_history, jepsen_verdict, results_beside


def test_a_single_knossos_analysis_and_an_unknown_one(tmp_path: Path) -> None:
    path = tmp_path / "results.edn"
    path.write_text("{:linear {:valid? true, :analyzer :linear, :configs ()}, :perf {:valid? true}, :valid? true}")
    assert jepsen_verdict(str(path)) == {"results": str(path), "valid": True, "linearizable": True,
                                         "invalid_keys": []}
    path.write_text("{:workload {:valid? :unknown, :analyzer :wgl, :error \"timed out\"}, :valid? :unknown}")
    got = compare(True, jepsen_verdict(str(path)))
    assert got["linearizable"] == "unknown" and got["agree"] is False
    assert got["note"] == "DISAGREE: Fencepost says valid, Jepsen's linearizability verdict is unknown"


def test_without_a_knossos_analysis_the_whole_verdict_is_compared(tmp_path: Path) -> None:
    path = tmp_path / "results.edn"
    path.write_text("{:stats {:valid? false}, :valid? false}")
    got = compare(True, jepsen_verdict(str(path)))
    assert got["linearizable"] is None and got["compared"] == "verdict" and got["agree"] is False


def test_an_unreadable_results_file_is_said_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "results.edn"
    path.write_text("{:valid? true")
    got = compare(False, jepsen_verdict(str(path)))
    assert set(got) == {"results", "error"} and "cannot read" in got["error"]


def test_finding_the_history_and_results(tmp_path: Path) -> None:
    assert find_history(str(tmp_path)) is None
    (tmp_path / "history.jsonl").write_text("")
    assert find_history(str(tmp_path)) == str(tmp_path / "history.jsonl")
    (tmp_path / "history.edn").write_text("")
    assert find_history(str(tmp_path)) == str(tmp_path / "history.edn")
    assert results_beside(str(tmp_path / "history.edn")) is None
    (tmp_path / "results.edn").write_text("{}")
    assert results_beside(str(tmp_path / "history.edn")) == str(tmp_path / "results.edn")
