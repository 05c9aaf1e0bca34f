"""fencepost mutate --results-page: the figures as a Markdown page beside the final JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BROKEN = "system/operator/reconfig.py:ReplaceBinaryOperator_Pow_FloorDiv:3"
"""A mutant that cannot even be imported (``**`` becomes ``//`` in a dict display): broken at start, at once."""


def test_mutate_writes_its_results_page(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "harness.cli.main", "mutate", "--mutant", BROKEN, "--seeds", "1",
                           "--time-limit", "3", "--nemesis", "none", "--no-baseline", "--store", str(tmp_path / "s"),
                           "--results-page", str(tmp_path / "results")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["mutate"]["counts"]["broken"] == 1
    page = (tmp_path / "results" / "mutate-reference.md").read_text(encoding="utf-8")
    assert "# Mutation testing: reference" in page and "| seeds | 1 |" in page
    assert json.loads(page.split("```json\n", 1)[1].split("\n```", 1)[0]) == last
    assert "(mutate-reference.md)" in (tmp_path / "results" / "index.md").read_text(encoding="utf-8")
