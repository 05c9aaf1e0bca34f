"""Fencepost's pytest plugin, registered through the ``pytest11`` entry point.

Options: ``--fencepost-system``, ``--fencepost-option NAME=VALUE`` (the system's own options, as
``fencepost test --option`` takes them), ``--fencepost-backend``, ``--fencepost-time-limit``,
``--fencepost-store``, ``--fencepost-nightly`` (tests marked ``nightly`` are skipped without it).
Fixtures: ``cluster`` (a running, ready :class:`harness.cluster.Cluster` of the chosen system on the
chosen backend), ``run_test`` (runs a test config and returns its :class:`harness.launch.RunOutcome`) and
``campaign_settings`` (the options and campaign id, for tests that drive runs themselves, such as the bug
matrix). Markers: ``campaign``, ``nightly``, ``docker``, ``spark``.

A campaign is a parametrized matrix of workload x nemesis::

    @pytest.mark.campaign
    @pytest.mark.parametrize("nemesis", [["kill"], ["partition"]])
    def test_register(run_test, nemesis):
        outcome = run_test(workload="register", nemesis=nemesis)
        assert outcome.valid is True, f"see {outcome.report}"
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.cluster import Cluster
    from harness.launch import RunOutcome

MARKERS = (
    "campaign: a fault campaign against a system under test",
    "nightly: long runs for the nightly CI job",
    "docker: needs a Docker engine",
    "spark: needs PySpark and Java",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add Fencepost's command-line options to pytest."""
    group = parser.getgroup("fencepost", "Fencepost fault campaigns")
    group.addoption("--fencepost-system", default=None,
                    help="system under test for campaign tests (`fencepost systems`; default: each test's own, "
                         "else as `fencepost test` chooses it)")
    group.addoption("--fencepost-option", action="append", default=[], metavar="NAME=VALUE",
                    help="one of the system's own options for campaign tests (repeatable)")
    group.addoption("--fencepost-backend", default="local",
                    help="backend for campaign tests: local or docker")
    group.addoption("--fencepost-time-limit", type=float, default=None,
                    help="seconds each campaign test runs its workload (overrides the test's own)")
    group.addoption("--fencepost-store", default=None, help="run store directory for campaign tests")
    group.addoption("--fencepost-nightly", action="store_true", default=False,
                    help="also run the tests marked nightly (the whole bug matrix; hours)")


def pytest_configure(config: pytest.Config) -> None:
    """Register Fencepost's markers so ``--strict-markers`` accepts them anywhere."""
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Remove the iptables chains that a killed harness left behind (their owner pid is gone), so its
    partitions do not cut the loopback addresses this session's clusters use."""
    from harness.backends.iptables import reap_dead_chains

    for chain in reap_dead_chains():
        print(f"fencepost: removed iptables chain {chain}, left by a harness that no longer runs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``nightly`` tests unless ``--fencepost-nightly`` was given."""
    if config.getoption("fencepost_nightly"):
        return
    skip = pytest.mark.skip(reason="nightly: run with --fencepost-nightly")
    for item in items:
        if "nightly" in item.keywords:
            item.add_marker(skip)


def _campaign_id(request: pytest.FixtureRequest) -> str:
    """One id per test function per pytest session, so a parametrized matrix forms one campaign."""
    stash_key = "fencepost_campaign_started"
    started = getattr(request.config, stash_key, None)
    if started is None:
        import datetime as dt

        started = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        setattr(request.config, stash_key, started)
    return f"{request.node.module.__name__.rsplit('.', 1)[-1]}.{request.function.__name__}-{started}"


@pytest.fixture
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    """A running, ready 3-node cluster of ``--fencepost-system`` on ``--fencepost-backend``, torn down
    afterwards; drive it with ``asyncio.run(cluster.processes.kill("n1"))`` and the like."""
    import asyncio

    from harness import registry
    from harness.cluster import Cluster
    from harness.config import TestConfig

    opts = request.config.option
    test = TestConfig(system=opts.fencepost_system or registry.default_system(), backend=opts.fencepost_backend,
                      options=registry.parse_option_args(opts.fencepost_option))
    c = Cluster(test, registry.load_system(test.system), registry.load_backend(test.backend))
    try:
        asyncio.run(c.start(tmp_path / "cluster"))
        yield c
    finally:
        asyncio.run(c.stop())


@dataclass(frozen=True)
class CampaignSettings:
    """Where and how this test's campaign runs (from the ``--fencepost-*`` options).

    Attributes:
        system: the system under test.
        backend: local or docker.
        store: the run store.
        time_limit: the override of each test's own time limit, if given.
        campaign: the campaign id runs should carry, so the store's index groups them.
        options: the system's own options (``--fencepost-option``), as text.
    """

    backend: str
    store: Path
    time_limit: float | None
    campaign: str
    system: str = ""
    options: dict[str, str] = field(default_factory=dict)


@pytest.fixture
def campaign_settings(request: pytest.FixtureRequest, tmp_path: Path) -> CampaignSettings:
    """The backend, store, time limit override and campaign id for tests that drive runs themselves."""
    opts = request.config.option
    store = Path(opts.fencepost_store) if opts.fencepost_store else tmp_path / "store"
    from harness import registry

    return CampaignSettings(opts.fencepost_backend, store, opts.fencepost_time_limit, _campaign_id(request),
                            opts.fencepost_system or registry.default_system(),
                            registry.parse_option_args(opts.fencepost_option))


@pytest.fixture
def run_test(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., RunOutcome]:
    """A function that runs a test from ``TestConfig`` fields and returns its outcome.

    The backend, time limit, store and system options come from the ``--fencepost-*`` options when given
    (a system option given there wins over the test's own).
    """
    from harness import registry
    from harness.config import TestConfig
    from harness.launch import run_test as run

    opts = request.config.option
    store = Path(opts.fencepost_store) if opts.fencepost_store else tmp_path / "store"
    campaign = _campaign_id(request)

    def go(**fields: Any) -> RunOutcome:
        fields.setdefault("backend", opts.fencepost_backend)
        if opts.fencepost_system is not None:
            fields.setdefault("system", opts.fencepost_system)
        if opts.fencepost_time_limit is not None:
            fields["time_limit"] = opts.fencepost_time_limit
        fields["options"] = {**(fields.get("options") or {}), **registry.parse_option_args(opts.fencepost_option)}
        extra = dict(fields.pop("extra", {}) or {})
        extra.setdefault("campaign", campaign)
        extra.setdefault("case", request.node.name)
        return run(TestConfig(**fields, extra=extra), store)

    return go
