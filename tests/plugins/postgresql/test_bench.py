"""``fencepost bench postgresql`` runs both sides on fresh clusters and ends with one JSON line of figures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.plugins.postgresql.kit import WHY_NOT

KEYS = {"bench", "runs", "seconds", "concurrency", "nodes", "harness_over_bare", "all_valid",
        *(f"{side}_{figure}" for side in ("bare", "harness")
          for figure in ("ok_per_s", "p50_ms", "p99_ms", "ok", "fail", "info", "deadlocks"))}


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", "bench", "postgresql", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.skipif(WHY_NOT is not None, reason=f"PostgreSQL: {WHY_NOT}")
def test_a_short_bench_ends_with_its_figures() -> None:
    done = bench("--runs", "1", "--seconds", "3", "--concurrency", "4")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(figures) == KEYS
    assert figures["bench"] == "postgresql" and figures["runs"] == 1 and figures["concurrency"] == 4
    assert figures["bare_ok"] > 0 and figures["harness_ok"] > 0
    assert figures["bare_ok_per_s"] > 0 and figures["harness_ok_per_s"] > 0
    assert figures["harness_over_bare"] > 0
    assert 0 < figures["harness_p50_ms"] <= figures["harness_p99_ms"]
    assert figures["all_valid"] is True


def test_bad_arguments_are_one_line_and_exit_3() -> None:
    done = bench("--seconds", "0")
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == ["fencepost: error: fencepost bench postgresql: argument --seconds: "
                                                "'0' must be above 0"]
