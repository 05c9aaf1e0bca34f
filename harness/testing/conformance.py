"""A conformance kit: a pytest class that any system plugin subclasses to check itself against the plugin API.

In the plugin's own tests::

    from harness.testing.conformance import SystemConformance

    class TestMySystem(SystemConformance):
        system = "my-system"      # its name under the fencepost.systems entry point

pytest then runs, against a real cluster on :attr:`SystemConformance.backend`: the plugin satisfies the
protocol and declares only known capabilities, workloads and faults; its processes are described
consistently; a cluster starts, serves and leaves no process behind; every workload it claims runs
clean; kills (and partitions, where the machine allows iptables) leave it correct; and every fault it
cannot do is refused before anything starts, naming the missing capability. Each check is one test
method, so a plugin can skip one by overriding it.

A plugin whose system runs the transactional workloads (list-append, rw-register) subclasses
:class:`TransactionalConformance` the same way: its client completes transactions as the client contract says
(reads filled in, writes kept), a read sees what committed before it, and under contention ``ok`` and ``fail``
say truly whether a transaction committed (:mod:`harness.testing.txn_checks`). It runs against the fake too
(``system = "fake"``, ``backend = "memory"``), so the kit covers transactions without a database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import ClassVar

import pytest

from harness import capabilities as caps
from harness import registry
from harness.cluster import Cluster, offered
from harness.config import TestConfig
from harness.launch import prepare, run_test
from harness.plugin_api import NODE, ROLES, HasCode, SystemPlugin, default_workload
from harness.protocols import Client, Nemesis, Workload
from harness.testing import txn_checks

TxnCheck = Callable[[str, Callable[[], Client], Cluster], Awaitable[None]]
"""A transactional check: ``(workload, make_client, cluster)``, awaited on a started cluster."""


class _Kit:
    """What both kits share: the system under test, its backend, and a short test of it."""

    system: ClassVar[str] = ""
    """The plugin's name under the ``fencepost.systems`` entry point."""
    backend: ClassVar[str] = "local"
    """The backend the cluster checks run on."""
    time_limit: ClassVar[float] = 6.0
    """Seconds of workload in each short run."""
    nodes: ClassVar[int] = 3

    def plugin(self) -> SystemPlugin:
        """A fresh instance of the plugin under test."""
        if not self.system:
            pytest.fail(f"{type(self).__name__} must set the class attribute `system`")
        return registry.load_system(self.system)

    def config(self, **fields: object) -> TestConfig:
        """A short test of the system on the kit's backend."""
        base: dict[str, object] = {"system": self.system, "backend": self.backend, "nodes": self.nodes,
                                   "time_limit": self.time_limit, "nemesis_interval": 2.0, "recovery": 2.0,
                                   "seed": 1, "rate": 100.0, "workload": default_workload(self.plugin())}
        return TestConfig(**{**base, **fields})  # type: ignore[arg-type]


class SystemConformance(_Kit):
    """Subclass with ``system = "<name>"``; pytest collects the checks below for it."""

    def test_the_plugin_satisfies_the_api(self) -> None:
        """The protocol, known capabilities and workloads, loadable faults, and bugs with usable recipes."""
        plugin = self.plugin()
        assert isinstance(plugin, SystemPlugin)
        assert plugin.name == self.system and plugin.description
        assert set(plugin.capabilities) <= set(caps.CAPABILITIES), set(plugin.capabilities) - set(caps.CAPABILITIES)
        assert plugin.workloads and set(plugin.workloads) <= set(registry.workload_names())
        for name, make in plugin.faults().items():
            package = make()
            assert isinstance(package, Nemesis) and package.name == name
            assert set(getattr(package, "needs", ())) <= set(caps.CAPABILITIES)
        for name, bug in plugin.bugs().items():
            assert bug.name == name and bug.what
            assert bug.recipe.workload in plugin.workloads
            assert set(bug.recipe.nemesis) <= set(registry.nemesis_names(plugin))
        if isinstance(plugin, HasCode):
            assert all(Path(folder).is_dir() for folder in plugin.code().values())

    def test_processes_are_described_consistently(self, tmp_path: Path) -> None:
        """Unique names, known roles, at least one data node, ports and data directories as laid out."""
        from harness.testing.memory import MemoryLayout, NodeStates

        specs = self.plugin().processes(self.config(), MemoryLayout(tmp_path, NodeStates()))
        names = [s.name for s in specs]
        assert len(names) == len(set(names)), names
        assert all(s.role in ROLES for s in specs) and any(s.role == NODE for s in specs)
        assert all(isinstance(s.port, int) and s.argv for s in specs)

    def test_a_cluster_starts_serves_and_leaves_no_process(self, tmp_path: Path) -> None:
        """Every autostarted process runs once the system says it is ready, and none after teardown."""
        cluster = Cluster(self.config(), self.plugin(), registry.load_backend(self.backend))
        try:
            asyncio.run(cluster.start(tmp_path))
            assert all(cluster.backend.processes.running(s.name) for s in cluster.specs.values() if s.autostart)
        finally:
            asyncio.run(cluster.stop())
        assert not any(cluster.backend.processes.running(name) for name in cluster.specs)

    def test_every_workload_runs_clean(self, tmp_path: Path) -> None:
        """Each workload the system claims completes operations and is valid without faults."""
        for workload in self.plugin().workloads:
            outcome = run_test(self.config(workload=workload), tmp_path / "store")
            assert outcome.ok_ops > 0, f"{workload}: no operation completed ok"
            assert outcome.valid is True, f"{workload}: see {outcome.report or outcome.run.path}"

    def test_kills_leave_it_correct(self, tmp_path: Path) -> None:
        """A run under kill faults stays valid (systems without the processes capability skip this)."""
        if caps.PROCESSES not in self.plugin().capabilities:
            pytest.skip("the system does not offer the processes capability")
        outcome = run_test(self.config(nemesis=["kill"]), tmp_path / "store")
        assert outcome.valid is True, f"see {outcome.report or outcome.run.path}"

    def test_partitions_leave_it_correct(self, tmp_path: Path) -> None:
        """A run under partitions stays valid, where the backend can partition here."""
        plugin, backend = self.plugin(), registry.load_backend(self.backend)
        if caps.NETWORK not in offered(plugin, backend):
            pytest.skip(backend.unavailable(caps.NETWORK) or "the system does not offer the network capability")
        outcome = run_test(self.config(nemesis=["partition"]), tmp_path / "store")
        assert outcome.valid is True, f"see {outcome.report or outcome.run.path}"

    def test_faults_it_cannot_do_are_refused_before_anything_starts(self) -> None:
        """Every fault needing a capability the system lacks is refused in one line naming that capability."""
        plugin = self.plugin()
        for name in registry.nemesis_names(plugin):
            missing = caps.missing(registry.load_nemesis(name, plugin).needs, plugin.capabilities)
            if not missing:
                continue
            with pytest.raises(registry.Refused, match=missing[0]) as refused:
                prepare(self.config(nemesis=[name]))
            assert "\n" not in str(refused.value) and name in str(refused.value)


class TransactionalConformance(_Kit):
    """Subclass with ``system = "<name>"`` for a system that runs list-append or rw-register; pytest collects the
    transactional client's checks below, each on a fresh cluster on :attr:`backend`, for each of those workloads
    the system claims."""

    keys: ClassVar[tuple[int, ...]] = (1, 2, 3)
    """The keys the checks use (a fresh cluster each time, so any keys the client can store)."""

    def txn_workloads(self) -> list[str]:
        """The transactional workloads the system claims; the checks skip a system that claims none."""
        claimed = [w for w in self.plugin().workloads if w in txn_checks.WRITE_F]
        if not claimed:
            pytest.skip(f"system {self.system} runs neither list-append nor rw-register")
        return claimed

    def on_cluster(self, tmp_path: Path, check: TxnCheck) -> None:
        """For each transactional workload the system claims: start a cluster, await
        ``check(workload, make_client, cluster)``, tear the cluster down."""
        for workload in self.txn_workloads():
            config = self.config(workload=workload)
            plugin = self.plugin()
            config.options = registry.resolve_options(plugin, config.options)
            load = registry.load_workload(workload, config)
            cluster = Cluster(config, plugin, registry.load_backend(self.backend))

            async def scenario(workload: str = workload, cluster: Cluster = cluster, load: Workload = load,
                               plugin: SystemPlugin = plugin) -> None:
                try:
                    await cluster.start(tmp_path / workload)
                    await check(workload, lambda: plugin.client(load, cluster), cluster)
                finally:
                    await cluster.stop()

            asyncio.run(scenario())

    def test_a_transaction_completes_with_its_reads_filled_in(self, tmp_path: Path) -> None:
        """A transaction that writes a key and reads it back commits, its ok carrying the micro-ops completed:
        its read sees its own write, and a later transaction's read sees it committed."""
        self.on_cluster(tmp_path, self._reads_filled_in)

    async def _reads_filled_in(self, workload: str, make_client: Callable[[], Client], cluster: Cluster) -> None:
        write_f, (k1, k2, _) = txn_checks.WRITE_F[workload], self.keys
        empty: list[int] | None = [] if workload == "list-append" else None
        one: list[int] | int = [1] if workload == "list-append" else 1
        for micro_ops, reads in (([[write_f, k1, 1], ["r", k1, None]], (one,)),
                                 ([["r", k1, None], ["r", k2, None]], (one, empty))):
            outcome, tries = await txn_checks.commit(make_client, cluster, micro_ops)
            assert outcome.type == "ok", f"{workload}: {micro_ops} never committed: {[*tries, outcome]}"
            why = txn_checks.shape_problems(micro_ops, outcome, workload)
            assert not why, f"{workload}: {why}"
            got = tuple(txn_checks.read_value(m, workload) for m in outcome.value if m[0] == "r")
            assert got == reads, f"{workload}: {micro_ops} read {got}, not {reads}"

    def test_reads_see_committed_writes_in_order(self, tmp_path: Path) -> None:
        """Two transactions write one key in turn; a read then sees both appends in order (list-append), or
        the second write (rw-register)."""
        self.on_cluster(tmp_path, self._reads_in_order)

    async def _reads_in_order(self, workload: str, make_client: Callable[[], Client], cluster: Cluster) -> None:
        write_f, key = txn_checks.WRITE_F[workload], self.keys[0]
        want = [1, 2] if workload == "list-append" else 2
        for value in (1, 2):
            outcome, tries = await txn_checks.commit(make_client, cluster, [[write_f, key, value]])
            assert outcome.type == "ok", f"{workload}: the write of {value} never committed: {[*tries, outcome]}"
        read = [["r", key, None]]
        outcome, tries = await txn_checks.commit(make_client, cluster, read)
        assert outcome.type == "ok", f"{workload}: the read never committed: {[*tries, outcome]}"
        why = txn_checks.shape_problems(read, outcome, workload)
        assert not why, f"{workload}: {why}"
        got = txn_checks.read_value(outcome.value[0], workload)
        assert got == want, f"{workload}: read {got!r} after committed writes of 1 then 2, not {want!r}"

    def test_contended_outcomes_say_truly_what_committed(self, tmp_path: Path) -> None:
        """Clients at once read and write the same few keys; then ok writes are in the final state and fail
        writes are not (a client that reports an abort as ok, or a commit as fail, breaks the contract)."""
        self.on_cluster(tmp_path, self._contended)

    async def _contended(self, workload: str, make_client: Callable[[], Client], cluster: Cluster) -> None:
        seen = await txn_checks.contend(make_client, cluster, workload, self.keys)
        assert not seen.problems, f"{workload}: {seen.problems[:5]}"
        assert any(how == "ok" for _, _, how in seen.writes), f"{workload}: no transaction committed"
        why = txn_checks.visibility_problems(seen, workload)
        assert not why, f"{workload}: {why[:5]}"
