"""The reference system passes the plugin conformance kit, as any plugin should."""

from __future__ import annotations

import pytest

from fencepost.testing import SystemConformance


@pytest.mark.slow
class TestReference(SystemConformance):
    """Every check of the kit, against the reference system on the local backend."""

    system = "reference"
