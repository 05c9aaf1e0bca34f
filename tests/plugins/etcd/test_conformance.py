"""etcd passes the plugin conformance kit."""

from __future__ import annotations

import shutil

import pytest

from fencepost.testing import SystemConformance

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("etcd") is None, reason="etcd is not installed")]


class TestEtcd(SystemConformance):
    """Every check of the kit, against etcd on the local backend."""

    system = "etcd"
