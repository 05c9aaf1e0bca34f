"""A base for the tiny systems backend tests start: processes and nothing else (no client, checker, fault
or bug), so a test writes only its ``processes``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.cluster_view import ClusterView
from harness.config import TestConfig


class ProcessOnly:
    """The plugin protocol's other members, empty: the cluster is ready once its processes listen."""

    workloads: tuple[str, ...] = ()

    async def ready(self, cluster: ClusterView, timeout: float) -> None:
        """Nothing to wait for beyond the ports."""

    def client(self, workload: Any, cluster: ClusterView) -> Any:
        """No workload runs on it."""
        raise NotImplementedError

    def checkers(self, test: TestConfig) -> list[Any]:
        """None."""
        return []

    def faults(self) -> Mapping[str, Any]:
        """None."""
        return {}

    def bugs(self) -> Mapping[str, Any]:
        """None."""
        return {}

    def image_packages(self) -> tuple[str, ...]:
        """The packages the other docker tests' systems ask for, so their debootstrapped base serves too."""
        return ("etcd-server",)
