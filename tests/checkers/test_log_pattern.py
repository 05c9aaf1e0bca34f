from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from checkers.log_pattern import LogPatternChecker, line_time
from harness import registry
from harness.checker_protocol import CheckContext
from harness.detection import detection
from harness.plugin_api import LogPatterns

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


# --- JVM logs, a plugin's own patterns, and each match's time ------------------------------------------

UNCAUGHT = """\
2026-12-01 17:45:08,001 INFO  [main] o.e.kv.Server - serving on 0.0.0.0:7000
Exception in thread "raft-apply-1" java.lang.IllegalStateException: applied index 41 after 42
\tat org.example.kv.raft.StateMachine.apply(StateMachine.java:212)
\tat org.example.kv.raft.Applier.run(Applier.java:88)
\tat java.base/java.lang.Thread.run(Thread.java:1583)
"""
OOM = """\
2026-12-01T17:45:09.123Z ERROR [pool-2-thread-7] o.e.kv.Handler - put failed
java.lang.OutOfMemoryError: Java heap space
\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)
\tat org.example.kv.wal.Segment.grow(Segment.java:77)
"""
CAUSED_BY_ERROR = """\
2026/12/01 17:45:10.500000 WARN decode failed, retrying
java.lang.RuntimeException: decode failed
\tat org.example.kv.Codec.decode(Codec.java:40)
Caused by: java.lang.StackOverflowError
\tat org.example.kv.Codec.walk(Codec.java:55)
\tat org.example.kv.Codec.walk(Codec.java:57)
\t... 1021 more
"""
JUL_SEVERE = """\
Dec 01, 2026 5:45:11 PM org.example.kv.Server start
SEVERE: could not open the write-ahead log
java.nio.file.AccessDeniedException: /data/wal
\tat java.base/sun.nio.fs.UnixException.translateToIOException(UnixException.java:90)
"""
HANDLED = """\
2026-12-01 17:45:12,000 WARN  [replicator-n3] o.e.kv.Replicator - peer n3 unreachable, will retry
java.net.ConnectException: Connection refused
\tat java.base/sun.nio.ch.Net.connect0(Native Method)
\tat org.example.kv.Replicator.send(Replicator.java:120)
2026-12-01 17:45:12,100 INFO  [main] o.e.kv.Server - Exception in request 17 handled, replying 503
2026-12-01 17:45:12,150 WARN  [main] o.e.kv.Pool - Exception in thread "pool-1-thread-2" caught, replaced
2026-12-01 17:45:12,200 INFO  [main] o.e.kv.Server - a java.lang.OutOfMemoryError writes a heap dump to /data
"""
START = datetime(2026, 12, 1, 17, 45, 0).timestamp()  # naive: this machine's local time, as the logs' are


def _jvm_run(run: Path, text: str, start: float | None = START) -> Path:
    (run / "nodes" / "n1").mkdir(parents=True, exist_ok=True)
    (run / "nodes" / "n1" / "n1.log").write_text(text, encoding="utf-8")
    if start is not None:
        (run / "timing.json").write_text(json.dumps({"start_wall_s": start}))
    return run


@pytest.mark.parametrize(("log", "pattern", "line", "stack"), [
    (UNCAUGHT, "uncaught", 2, "Applier.run(Applier.java:88)"),
    (OOM, "jvm-error", 2, "Segment.grow(Segment.java:77)"),
    (CAUSED_BY_ERROR, "jvm-error", 4, "... 1021 more"),
    (JUL_SEVERE, "severe", 2, "UnixException.translateToIOException"),
])
def test_a_jvm_crash_is_invalid_with_its_stack_as_its_text(tmp_path: Path, log: str, pattern: str, line: int,
                                                           stack: str) -> None:
    result = LogPatternChecker().check([], CheckContext(run_dir=_jvm_run(tmp_path, "INFO up\n" + log)))
    assert result["valid"] is False, result
    hit = next(m for m in result["matches"] if m["pattern"] == pattern)
    assert (hit["file"], hit["line"]) == ("nodes/n1/n1.log", line + 1)
    assert stack in hit["text"]
    assert result["counts"][pattern] == 1  # the stack's lines are its own, not matches of their own
    assert pattern in result["explanation"]


def test_a_handled_exception_at_warn_or_info_and_a_mention_of_an_error_are_not_fatal(tmp_path: Path) -> None:
    result = LogPatternChecker().check([], CheckContext(run_dir=_jvm_run(tmp_path, HANDLED)))
    assert result["valid"] is True, result
    assert not any(result["counts"].values()) and result["matches"] == []


def test_an_error_line_before_a_jvm_error_is_counted_and_the_error_is_fatal(tmp_path: Path) -> None:
    result = LogPatternChecker().check([], CheckContext(run_dir=_jvm_run(tmp_path, OOM)))
    assert result["counts"]["error"] == 1 and result["counts"]["jvm-error"] == 1
    error = next(m for m in result["matches"] if m["pattern"] == "error")
    assert "java.lang.OutOfMemoryError: Java heap space" in error["text"]  # a logged throwable is the line's


@pytest.mark.parametrize(("stamp", "when"), [
    ("2026-12-01T17:45:09.123Z", datetime(2026, 12, 1, 17, 45, 9, 123000, tzinfo=UTC)),
    ("2026-12-01T18:45:09.123+01:00", datetime(2026, 12, 1, 17, 45, 9, 123000, tzinfo=UTC)),
    ("2026-12-01T12:45:09-0500", datetime(2026, 12, 1, 17, 45, 9, tzinfo=UTC)),
    ("2026-12-01 17:45:09,123", datetime(2026, 12, 1, 17, 45, 9, 123000)),
    ("2026-12-01 17:45:09.123456789", datetime(2026, 12, 1, 17, 45, 9, 123456)),
    ("2026/12/01 17:45:09", datetime(2026, 12, 1, 17, 45, 9)),
    ("2026/12/01 17:45:09.250000", datetime(2026, 12, 1, 17, 45, 9, 250000)),
    ("Dec 01, 2026 5:45:09 PM", datetime(2026, 12, 1, 17, 45, 9)),
    ("Dec 1, 2026 12:05:09 AM", datetime(2026, 12, 1, 0, 5, 9)),
])
def test_each_timestamp_format_is_read_and_a_naive_one_is_local_time(stamp: str, when: datetime) -> None:
    assert line_time(f"{stamp} ERROR [main] o.e.kv.Server - boom") == pytest.approx(when.timestamp())
    assert line_time(f'{{"level":"warn","ts":"{stamp}","msg":"x"}}') == pytest.approx(when.timestamp())


def test_a_line_without_a_timestamp_near_its_start_has_none() -> None:
    assert line_time("panic: runtime error: index out of range [3] with length 3") is None
    assert line_time("INFO [main] o.e.kv.Server - the lease taken at 2026-12-01 17:45:09 ran out") is None
    assert line_time("2026-13-45 17:45:09 a month that is no month") is None


def test_each_match_gets_its_time_and_the_earliest_fatal_one_is_the_first_evidence(tmp_path: Path) -> None:
    early_error = "2026-12-01 17:45:01,000 ERROR [main] o.e.kv.Server - peer n3 unreachable\n"
    result = LogPatternChecker().check([], CheckContext(run_dir=_jvm_run(
        tmp_path, early_error + CAUSED_BY_ERROR + UNCAUGHT + JUL_SEVERE)))
    times = {m["pattern"]: m.get("time_s") for m in result["matches"]}
    assert times == {"error": 1.0, "jvm-error": 10.5, "uncaught": 8.001, "severe": 11.0}
    assert result["first_anomaly_s"] == 8.001  # the earliest fatal match, not the earlier ERROR line
    assert detection({"log-pattern": result}, [])["first_anomaly_s"] == 8.001


def test_a_match_far_from_any_timestamp_or_a_run_without_timing_has_no_time(tmp_path: Path) -> None:
    far = "2026-12-01 17:45:01,000 INFO up\n" + "goroutine 7 [running]:\n" * 9 + "panic: assignment to nil map\n"
    result = LogPatternChecker().check([], CheckContext(run_dir=_jvm_run(tmp_path / "a", far)))
    assert result["valid"] is False and "time_s" not in result["matches"][0] and "first_anomaly_s" not in result
    result = LogPatternChecker().check([], CheckContext(run_dir=_jvm_run(tmp_path / "b", UNCAUGHT, start=None)))
    assert result["valid"] is False and "first_anomaly_s" not in result
    assert "time_s" not in result["matches"][0] and "timing.json" in result["notes"][0]


class RaftLogs:
    """A plugin's log patterns: a split brain is fatal, a slow fsync is shown, and SEVERE is only counted."""

    def log_patterns(self) -> Mapping[str, str]:
        """Its own patterns, and its SEVERE."""
        return {"split-brain": r"\btwo leaders in term \d+", "slow-fsync": r"\bfsync took \d+ms", "severe": "SEVERE"}

    def fatal_log_patterns(self) -> Collection[str]:
        """Its fatal ones."""
        return ("split-brain",)


PLUGIN_LOG = """\
2026-12-01 17:45:03,000 WARN  [raft] o.e.kv.Wal - fsync took 950ms
2026-12-01 17:45:04,250 INFO  [raft] o.e.kv.Raft - two leaders in term 7: n1 and n3
2026-12-01 17:45:05,000 SEVERE [main] o.e.kv.Server - disk almost full
"""


def test_a_plugins_own_patterns_are_merged_and_judged_as_it_says(tmp_path: Path) -> None:
    assert isinstance(RaftLogs(), LogPatterns)
    checker = LogPatternChecker().for_plugin(RaftLogs())
    result = checker.check([], CheckContext(run_dir=_jvm_run(tmp_path, PLUGIN_LOG)))
    assert result["valid"] is False
    assert {k: n for k, n in result["counts"].items() if n} == {"split-brain": 1, "slow-fsync": 1, "severe": 1}
    assert "split-brain" in result["explanation"] and "severe" not in result["explanation"]
    assert result["first_anomaly_s"] == 4.25
    assert LogPatternChecker().for_plugin(object()).patterns == LogPatternChecker().patterns


def test_a_plugins_pattern_that_is_no_regex_or_a_fatal_name_that_is_no_pattern_is_refused() -> None:
    class Broken(RaftLogs):
        def log_patterns(self) -> Mapping[str, str]:
            return {"bad": "(unclosed"}

    class Typo(RaftLogs):
        def fatal_log_patterns(self) -> Collection[str]:
            return ("split-brian",)

    with pytest.raises(ValueError, match="'bad' is not a regular expression"):
        LogPatternChecker().for_plugin(Broken())
    with pytest.raises(ValueError, match="split-brian"):
        LogPatternChecker().for_plugin(Typo())


def test_the_runs_system_is_loaded_by_name_for_its_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _jvm_run(tmp_path, PLUGIN_LOG)
    plain = LogPatternChecker().check([], CheckContext(test={"system": "reference"}, run_dir=run))
    assert "split-brain" not in plain["counts"] and "notes" not in plain  # the reference system adds none
    assert plain["counts"]["severe"] == 1 and plain["valid"] is False  # and SEVERE is the default's: fatal
    missing = LogPatternChecker().check([], CheckContext(test={"system": "no-such-system"}, run_dir=run))
    assert "split-brain" not in missing["counts"] and "'no-such-system' could not be loaded" in missing["notes"][0]

    loaded: list[str] = []

    def load_system(name: str | None = None) -> RaftLogs:
        loaded.append(str(name))
        return RaftLogs()

    monkeypatch.setattr(registry, "load_system", load_system)
    result = LogPatternChecker().check([], CheckContext(test={"system": "raft-kv"}, run_dir=run))
    assert loaded == ["raft-kv"] and result["valid"] is False and result["counts"]["split-brain"] == 1
