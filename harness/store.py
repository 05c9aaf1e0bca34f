"""The run store: one folder per run, holding everything needed to re-check or re-render it.

Layout::

    STORE/<test-name>/<UTC timestamp>/
        test.json        the full test config, seed included
        history.jsonl    one op per line, flushed per op
        results.json     checker results and the merged verdict
        fencepost.log    the harness's own log
        nodes/<node>/    node logs and data dumps
        report.html      the report, with its plots beside it
    STORE/latest -> <test-name>/<UTC timestamp>
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.history.formats import load_history
from harness.history.jsonl import JsonlWriter
from harness.history.op import Op

DEFAULT_STORE = "store"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._+-]+")


def _timestamp(now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%dT%H%M%S.%fZ")[:-4] + "Z"  # milliseconds


def safe_name(name: str) -> str:
    """A test name made safe to use as a folder name."""
    cleaned = _SAFE_NAME.sub("-", name).strip("-.")
    return cleaned or "test"


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunDir:
    """One run's folder and the paths of what it holds."""

    path: Path

    @property
    def name(self) -> str:
        """The test name (the parent folder's name)."""
        return self.path.parent.name

    @property
    def timestamp(self) -> str:
        """The UTC start timestamp (the folder's name)."""
        return self.path.name

    @property
    def test_json(self) -> Path:
        """The test config file."""
        return self.path / "test.json"

    @property
    def history_path(self) -> Path:
        """The history, one op per line."""
        return self.path / "history.jsonl"

    @property
    def results_json(self) -> Path:
        """The checker results."""
        return self.path / "results.json"

    @property
    def log_path(self) -> Path:
        """The harness's log."""
        return self.path / "fencepost.log"

    @property
    def report_path(self) -> Path:
        """The HTML report."""
        return self.path / "report.html"

    def node_dir(self, node: str) -> Path:
        """The folder for one node's logs and dumps, created on demand."""
        d = self.path / "nodes" / safe_name(node)
        d.mkdir(parents=True, exist_ok=True)
        return d

    def write_config(self, config: dict[str, Any]) -> None:
        """Write test.json atomically."""
        _write_json_atomic(self.test_json, config)

    def read_config(self) -> dict[str, Any]:
        """Read test.json."""
        data: dict[str, Any] = json.loads(self.test_json.read_text(encoding="utf-8"))
        return data

    def write_results(self, results: dict[str, Any]) -> None:
        """Write results.json atomically."""
        _write_json_atomic(self.results_json, results)

    def read_results(self) -> dict[str, Any] | None:
        """Read results.json, or None if the run never got that far."""
        if not self.results_json.exists():
            return None
        data: dict[str, Any] = json.loads(self.results_json.read_text(encoding="utf-8"))
        return data

    def history_writer(self) -> JsonlWriter:
        """A writer appending to history.jsonl, flushed per op."""
        return JsonlWriter(self.history_path)

    def read_history(self) -> list[Op]:
        """Read and validate history.jsonl. A torn last line from a killed writer is dropped."""
        return load_history(self.history_path, "jsonl", allow_torn_tail=True)


class RunStore:
    """The folder that holds every run.

    Args:
        root: the store's folder; created on first use.
    """

    def __init__(self, root: str | Path = DEFAULT_STORE) -> None:
        self.root = Path(root)

    def create_run(self, test_name: str, config: dict[str, Any]) -> RunDir:
        """Make a new run folder, write its test.json, and point ``latest`` at it."""
        base = self.root / safe_name(test_name)
        base.mkdir(parents=True, exist_ok=True)
        stamp = _timestamp()
        path = base / stamp
        n = 1
        while True:
            try:
                path.mkdir()
                break
            except FileExistsError:
                n += 1
                path = base / f"{stamp}-{n}"
        run = RunDir(path)
        (path / "nodes").mkdir()
        run.write_config(config)
        run.log_path.touch()
        self._point_latest(run)
        return run

    def _point_latest(self, run: RunDir) -> None:
        link = self.root / "latest"
        tmp = self.root / f".latest.{os.getpid()}"
        target = os.path.relpath(run.path, self.root)
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(target, tmp)
        os.replace(tmp, link)

    def latest(self) -> RunDir | None:
        """The newest run, or None if the store is empty."""
        link = self.root / "latest"
        return RunDir(link.resolve()) if link.is_symlink() and link.resolve().is_dir() else None

    def runs(self) -> Iterator[RunDir]:
        """Every run in the store, oldest first within each test, tests in name order."""
        if not self.root.is_dir():
            return
        for test_dir in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.is_symlink()):
            for run_path in sorted(p for p in test_dir.iterdir() if p.is_dir()):
                if (run_path / "test.json").exists():
                    yield RunDir(run_path)
