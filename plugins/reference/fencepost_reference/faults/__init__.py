"""Fault packages aimed at the reference system's protocol windows, each one file.

They reach the cluster through its capabilities (:mod:`harness.capabilities`) and the system's own
admin and RPC calls. ``wipe`` and ``lose-unsynced`` here replace the generic ones: a wipe, a corrupt file
and a torn write each take one replica's data, so they take turns through one guard per cluster
(:mod:`.guard`), because taking a second replica's before the first is repaired is taking a majority's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from fencepost import Nemesis

_MODULES = ("wipe", "corrupt", "lose_unsynced", "operator", "failover", "catch_up_partition", "lagging_contract",
            "cancelled_copy", "config_race", "stalled_swap", "lossy_link", "copy_failover")


def _factory(module: str) -> Callable[[], Nemesis]:
    def make() -> Nemesis:
        package: Nemesis = importlib.import_module(f"{__name__}.{module}").package()
        return package

    return make


FAULTS: dict[str, Callable[[], Nemesis]] = {m.replace("_", "-"): _factory(m) for m in _MODULES}
"""Package name (``--nemesis`` spelling) -> a factory of a fresh instance."""
