"""The nodes' final state dumps (``nodes/<node>/dump.json``), as the reference system's checkers read them.

After the heal the plugin writes each node's per-tablet state there
(:meth:`fencepost_reference.plugin.ReferencePlugin.collect`); a file that is not an object with
``tablets`` is skipped. The amnesia, convergence, replica-state and log-matching checkers read them
through here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fencepost import UNKNOWN

DUMP_FILE = "dump.json"
NO_DUMPS: dict[str, Any] = {"valid": UNKNOWN, "explanation": "No node dumped its state, so there was nothing to judge."}
"""The verdict of a checker of the dumps when no node dumped its state (copy it before changing it)."""


def node_dumps(nodes_dir: Path) -> dict[str, dict[str, Any]]:
    """``{node: its dump}`` for every ``nodes_dir/<node>/dump.json``, in node order (empty without any)."""
    dumps: dict[str, dict[str, Any]] = {}
    for path in sorted(nodes_dir.glob(f"*/{DUMP_FILE}")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "tablets" in data:
            dumps[path.parent.name] = data
    return dumps


def run_dumps(run_dir: Path | None) -> dict[str, dict[str, Any]]:
    """:func:`node_dumps` of a run folder's ``nodes``; empty without a run folder."""
    return node_dumps(run_dir / "nodes") if run_dir is not None else {}


def tablets(dump: Mapping[str, Any]) -> Mapping[str, Any]:
    """A dump's ``{tablet: state}`` (empty when it has none)."""
    found = dump.get("tablets")
    return found if isinstance(found, dict) else {}
