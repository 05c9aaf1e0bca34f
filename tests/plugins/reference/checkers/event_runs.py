"""Build run folders holding nodes' event logs, for the white-box trace checkers' tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def one_node_run(tmp_path: Path, events: list[dict[str, Any]], start_wall_s: float, node: str = "n1") -> Path:
    """``tmp_path`` as a run folder: ``nodes/<node>/events.jsonl`` holds ``events``, and ``timing.json``
    puts the history's time zero at ``start_wall_s``."""
    folder = tmp_path / "nodes" / node
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (tmp_path / "timing.json").write_text(json.dumps({"start_wall_s": start_wall_s}))
    return tmp_path


def node_runs(tmp_path: Path, events: list[dict[str, Any]], start_wall_s: float) -> Path:
    """``tmp_path`` as a run folder in which each event is in the log of the node that wrote it
    (``nodes/<event's node>/events.jsonl``), and ``timing.json`` puts time zero at ``start_wall_s``."""
    for e in events:
        folder = tmp_path / "nodes" / e["node"]
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "events.jsonl").open("a") as f:
            f.write(json.dumps(e) + "\n")
    (tmp_path / "timing.json").write_text(json.dumps({"start_wall_s": start_wall_s}))
    return tmp_path
