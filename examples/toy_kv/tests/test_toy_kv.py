"""toy-kv checks itself against Fencepost's plugin API with the conformance kit."""

from __future__ import annotations

from fencepost.testing import SystemConformance


class TestToyKv(SystemConformance):
    """Every check of the kit, against toy-kv on the local backend."""

    system = "toy-kv"
