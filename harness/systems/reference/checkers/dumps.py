"""The nodes' final state dumps (``nodes/<node>/dump.json``), as the reference system's checkers read them.

After the heal the plugin writes each node's per-tablet state there
(:meth:`harness.systems.reference.plugin.ReferencePlugin.collect`); a file that is not an object with
``tablets`` is skipped. The amnesia, convergence and replica-state checkers read them through here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DUMP_FILE = "dump.json"


def node_dumps(nodes_dir: Path) -> dict[str, dict[str, Any]]:
    """``{node: its dump}`` for every ``nodes_dir/<node>/dump.json``, in node order (empty without any)."""
    dumps: dict[str, dict[str, Any]] = {}
    for path in sorted(nodes_dir.glob(f"*/{DUMP_FILE}")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "tablets" in data:
            dumps[path.parent.name] = data
    return dumps


def tablets(dump: Mapping[str, Any]) -> Mapping[str, Any]:
    """A dump's ``{tablet: state}`` (empty when it has none)."""
    found = dump.get("tablets")
    return found if isinstance(found, dict) else {}
