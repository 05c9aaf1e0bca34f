"""Fencepost's pytest plugin, registered through the ``pytest11`` entry point.

It adds the ``--fencepost-*`` options and the campaign markers. Fixtures that start clusters and run
tests arrive with the harness.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add Fencepost's command-line options to pytest."""
    group = parser.getgroup("fencepost", "Fencepost fault campaigns")
    group.addoption("--fencepost-backend", default="local", help="backend for campaign tests: local or docker")
    group.addoption(
        "--fencepost-time-limit", type=float, default=None, help="seconds each campaign test runs its workload"
    )
    group.addoption("--fencepost-store", default=None, help="run store directory for campaign tests")


def pytest_configure(config: pytest.Config) -> None:
    """Register Fencepost's markers so ``--strict-markers`` accepts them anywhere."""
    for line in (
        "campaign: a fault campaign against the reference system",
        "nightly: long runs for the nightly CI job",
        "docker: needs a Docker engine",
        "spark: needs PySpark and Java",
    ):
        config.addinivalue_line("markers", line)
