"""etcd as a Fencepost system: Debian's etcd 3.4 binary, one member per node, driven through its v3 API.

Each member ``nK`` serves clients on its own address and port and talks to its peers on a second port;
every URL is on that address, so partitions cut exactly the links they name. Setup waits until every
member answers and they agree on a leader. A wiped member rejoins as etcd requires (:mod:`.readmission`):
it is removed, added again as a new member, and started with an empty data directory and
``--initial-cluster-state existing``; it never comes back under its old identity.

Capabilities: processes, network, disk and power-loss (etcd fsyncs, and runs on the lazy filesystem in
its cached mode, since bbolt maps its database), primaries (the leader, from etcd's status API) and
membership (member add and remove while the test runs). Not clock: etcd is a Go program, which reads
the clock through the vDSO rather than libc, so libfaketime cannot move it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fencepost import NODE, Bug, Layout, ProcessSpec
from fencepost import capabilities as caps
from fencepost_etcd.gateway import Definite, Gateway, Indefinite
from fencepost_etcd.readmission import Readmission

if TYPE_CHECKING:
    from fencepost import Checker, Client, ClusterView, Nemesis, TestConfig, Workload

MISSING = "etcd is not installed (apt-get install -y etcd-server)"
CLIENT_PORT, PEER_PORT = 0, 1
"""Layout port indexes."""
CAUGHT_UP = 100
"""A member within this many applied entries of the others has caught up."""
NOT_NOW = ("etcdserver: unhealthy cluster", "etcdserver: re-configuration failed due to not enough started members")
"""etcd's refusals of a reconfiguration that would be unsafe just now."""


class EtcdPlugin:
    """A cluster of etcd members (3 by default, ``--nodes 5`` for five)."""

    name = "etcd"
    description = "etcd 3.4 (Debian's etcd-server), one member per node, through its v3 JSON gateway"
    workloads = ("register", "set", "lock")
    capabilities = frozenset({caps.PROCESSES, caps.NETWORK, caps.DISK, caps.POWER_LOSS, caps.PRIMARIES,
                              caps.MEMBERSHIP})
    not_offered = {caps.CLOCK: "etcd is a Go program: it reads the clock through the vDSO, not libc, so "
                               "libfaketime cannot move it"}
    """Why it lacks a capability, for the one-line refusal."""

    def __init__(self) -> None:
        self.peer_urls: dict[str, str] = {}
        self.client_urls: dict[str, str] = {}
        self.bugs_on: frozenset[str] = frozenset()
        self._membership: Any = None
        self.readmission = Readmission(self)

    def image_packages(self) -> tuple[str, ...]:
        """Debian's etcd 3.4, which each member runs."""
        return ("etcd-server",)

    def unavailable(self, backend: str) -> str | None:
        """Why etcd cannot run on ``backend`` here (the local backend needs the etcd binary)."""
        if backend == "local" and shutil.which("etcd") is None:
            return MISSING
        return None

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        """One etcd member per node, each with its own address, client and peer ports, and data directory."""
        names = [f"n{i + 1}" for i in range(test.nodes)]
        hosts = {n: layout.host(n) for n in names}
        self.client_urls = {n: f"http://{hosts[n]}:{layout.port(n, CLIENT_PORT)}" for n in names}
        self.peer_urls = {n: f"http://{hosts[n]}:{layout.port(n, PEER_PORT)}" for n in names}
        self.bugs_on = frozenset(test.bug)
        initial = ",".join(f"{n}={self.peer_urls[n]}" for n in names)
        token = f"fencepost-{secrets.token_hex(4)}"
        specs = []
        for n in names:
            data = layout.data_dir(n)
            argv = ("etcd", "--name", n, "--data-dir", data, "--listen-client-urls", self.client_urls[n],
                    "--advertise-client-urls", self.client_urls[n], "--listen-peer-urls", self.peer_urls[n],
                    "--initial-advertise-peer-urls", self.peer_urls[n], "--initial-cluster", initial,
                    "--initial-cluster-state", "new", "--initial-cluster-token", token, "--logger", "zap",
                    "--log-outputs", "stderr")
            specs.append(ProcessSpec(n, NODE, argv, layout.port(n, CLIENT_PORT), data_dir=data, mmap=True))
        return specs

    async def ready(self, cluster: ClusterView, timeout: float) -> None:
        """Wait until every member answers its status and they agree on a leader."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                statuses = await asyncio.gather(*(self._status(cluster, n) for n in cluster.nodes()))
                leaders = {s.get("leader") for s in statuses}
                if len(leaders) == 1 and leaders != {"0"} and None not in leaders:
                    return
                last = leaders
            except (Definite, Indefinite) as e:
                last = e
            await asyncio.sleep(0.2)
        raise TimeoutError(f"etcd did not elect a leader within {timeout:g} s: {last}")

    async def _status(self, cluster: ClusterView, node: str) -> dict[str, Any]:
        g = self.gateway(cluster, node, timeout=2.0)
        try:
            return await g.status()
        finally:
            await g.close()

    def gateway(self, cluster: ClusterView, node: str, timeout: float = 5.0) -> Gateway:
        """A gateway to ``node``'s client URL (close it after use)."""
        host, port = cluster.address(node)
        return Gateway(f"http://{host}:{port}", timeout)

    async def any_member(self, cluster: ClusterView, call: Callable[[Gateway], Any],
                         exclude: Sequence[str] = ()) -> Any:
        """``call`` on the first member (not in ``exclude``) that answers it.

        Raises:
            Definite: none did, and each certainly had no effect.
            Indefinite: none did, and one may have had an effect.
        """
        last: Exception | None = None
        unknown = False
        for node in cluster.nodes():
            if node in exclude:
                continue
            g = self.gateway(cluster, node, timeout=3.0)
            try:
                return await call(g)
            except (Definite, Indefinite) as e:
                last, unknown = e, unknown or isinstance(e, Indefinite)
            finally:
                await g.close()
        raise (Indefinite if unknown else Definite)(f"no member answered: {last}")

    async def patiently(self, cluster: ClusterView, call: Callable[[Gateway], Any], exclude: Sequence[str],
                        patience: float) -> Any:
        """:meth:`any_member`, retried for ``patience`` seconds while etcd refuses a reconfiguration as
        unsafe just now ("unhealthy cluster": its leader has not been connected to every member for five
        seconds, as just after a member started; "not enough started members").

        Raises:
            Definite: it was refused for another reason, or for ``patience`` seconds.
            Indefinite: no member answered.
        """
        deadline = time.monotonic() + patience
        while True:
            try:
                return await self.any_member(cluster, call, exclude)
            except (Definite, Indefinite) as e:
                if not any(why in str(e) for why in NOT_NOW) or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)

    async def member_ids(self, cluster: ClusterView, exclude: Sequence[str] = ()) -> dict[str, str]:
        """Member name -> id, from the member list (a member added but not started yet is keyed by its peer URL)."""
        members = await self.any_member(cluster, lambda g: g.members(), exclude)
        by_url = {url: n for n, url in self.peer_urls.items()}
        return {m.get("name") or by_url.get((m.get("peerURLs") or [""])[0], ""): str(m["ID"]) for m in members}

    async def primaries(self, cluster: ClusterView) -> list[str]:
        """The leader's name, from a member's status and the member list."""
        with contextlib.suppress(Definite, Indefinite):
            status = await self.any_member(cluster, lambda g: g.status())
            ids = await self.member_ids(cluster)
            leader = next((n for n, i in ids.items() if i == str(status.get("leader"))), None)
            return [leader] if leader else []
        return []

    async def rejoin(self, cluster: ClusterView, node: str) -> Sequence[str]:
        """Bring the wiped ``node`` back as a new member (:mod:`.readmission`): it is started here, and serves
        once this returns its start arguments. If that cannot be done within the patience, it is left to the
        membership heal, which brings every pending member back, and the error says how far it got."""
        self.readmission.pending.add(node)
        return await self.readmission.bring_back(cluster, node)

    async def wipe_refusal(self, cluster: ClusterView) -> str | None:
        """Why no member may lose its disk now: one has not come back from a wipe or remove, one does not
        answer, they disagree on the leader, or one is still more than ``CAUGHT_UP`` entries behind (the
        last wiped member catching up)."""
        if self.readmission.pending:
            return f"members {sorted(self.readmission.pending)} have not come back yet"
        try:
            statuses = await asyncio.gather(*(self._status(cluster, n) for n in cluster.nodes()))
        except (Definite, Indefinite) as e:
            return f"a member does not answer: {e}"
        if len({s.get("leader") for s in statuses}) != 1:
            return "the members disagree on the leader"
        applied = [int(s.get("raftAppliedIndex") or 0) for s in statuses]
        if max(applied) - min(applied) > CAUGHT_UP:
            return f"a member is still catching up (applied indexes {applied})"
        return None

    # --- clients, checkers, faults, bugs ------------------------------------------------------------

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client bound to the next member, in turn."""
        from fencepost_etcd.client import EtcdClient

        return EtcdClient(workload.name, serializable="serializable-reads" in self.bugs_on)

    def checkers(self, test: TestConfig) -> list[Checker]:
        """None of its own: etcd is judged by the black-box checkers."""
        return []

    def faults(self) -> Mapping[str, Callable[[], Nemesis]]:
        """None of its own: the generic faults reach it through its capabilities."""
        return {}

    def bugs(self) -> Mapping[str, Bug]:
        """serializable-reads and lock."""
        from fencepost_etcd.recipes import BUGS

        return BUGS

    def membership(self) -> Any:
        """The run's membership State (member add and remove)."""
        from fencepost_etcd.membership import EtcdMembership

        if self._membership is None:
            self._membership = EtcdMembership(self)
        return self._membership


def plugin() -> EtcdPlugin:
    """A fresh etcd plugin (the ``fencepost.systems`` entry point)."""
    return EtcdPlugin()
