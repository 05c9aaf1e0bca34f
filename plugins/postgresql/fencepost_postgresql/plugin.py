"""PostgreSQL as a Fencepost system: Debian's PostgreSQL binaries, a primary with streaming hot standbys.

``n1`` is the primary; ``n2``, ``n3`` (and more with ``--nodes``) are hot standbys, each seeded by
``pg_basebackup`` from the primary and streaming from it through a replication slot of its own. Every
server runs as the unprivileged ``postgres`` user (``initdb`` and ``postgres`` refuse root), with its data
directory inside the run folder; each node gets its own address and port. The node launcher
(:mod:`fencepost_postgresql_node`) prepares a data directory and then becomes the server, so kills and
pauses reach ``postgres`` itself.

Capabilities: processes (kill, then restart with crash recovery; pause), network (partitions between the
standbys and the primary; :mod:`.client_partition` cuts clients from nodes), power loss (the lazy
filesystem under each node's data directory), primaries (the primary, which never changes: PostgreSQL
has no failover of its own) and clock (libfaketime reaches the server, which reads the time through
libc: a test shows ``now()`` move). Not disk: a wiped or corrupted primary loses what it acknowledged by
design, with no replica to take over; not membership.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fencepost_postgresql_node.binaries import newest_bin_dir

from fencepost import NODE, Bug, Layout, ProcessSpec
from fencepost import capabilities as caps

if TYPE_CHECKING:
    from fencepost import Checker, Client, ClusterView, Nemesis, TestConfig, Workload

MISSING = "PostgreSQL is not installed (apt-get install -y postgresql)"
NO_USER = "there is no postgres user to run PostgreSQL as (apt-get install -y postgresql creates it)"
PRIMARY = "n1"
TABLES = {"list-append": "CREATE TABLE IF NOT EXISTS la (k int PRIMARY KEY, v text)",
          "rw-register": "CREATE TABLE IF NOT EXISTS rw (k int PRIMARY KEY, v int)"}
"""Each workload's table."""
SETTINGS = ("wal_level=replica", "max_wal_senders=16", "max_replication_slots=16", "hot_standby=on",
            "hot_standby_feedback=on", "wal_sender_timeout=5s", "wal_receiver_timeout=5s",
            "wal_retrieve_retry_interval=1s", "shared_buffers=16MB", "max_connections=200", "fsync=on",
            "full_page_writes=on", "log_min_messages=warning", "log_connections=off",
            "idle_in_transaction_session_timeout=30s")
"""Every server's settings: streaming replication with slots, quick to notice a lost link, small."""
START_TIMEOUT_S = 240.0
"""How long a node may take to open its port at setup: ``initdb`` and ``pg_basebackup`` write about 40 MB each,
which take tens of seconds through the lazy filesystem of a power-loss run."""
UNSAFE_SETTINGS = {"async-commit": ("synchronous_commit=off", "wal_writer_delay=200ms")}
"""The server settings a mode switches on."""


class PostgresPlugin:
    """A PostgreSQL primary with streaming hot standbys (3 nodes by default)."""

    name = "postgresql"
    description = "PostgreSQL (Debian's binaries): a primary with streaming hot standbys, through psycopg 3"
    workloads = ("list-append", "rw-register")
    capabilities = frozenset({caps.PROCESSES, caps.NETWORK, caps.POWER_LOSS, caps.PRIMARIES, caps.CLOCK})
    not_offered = {
        caps.DISK: "a wiped or corrupted PostgreSQL primary loses what it acknowledged by design (there is no "
                   "failover to a replica), so disk faults would only show that",
        caps.MEMBERSHIP: "PostgreSQL has no membership changes of its own (standbys are added by hand)",
    }
    """Why it lacks a capability, for the one-line refusal."""

    def __init__(self) -> None:
        self.bugs_on: frozenset[str] = frozenset()
        self.workload = "list-append"
        self.addresses: dict[str, tuple[str, int]] = {}

    def image_packages(self) -> tuple[str, ...]:
        """Debian's PostgreSQL, which each node runs."""
        return ("postgresql",)

    def code(self) -> Mapping[str, Path]:
        """The node launcher, which each node's process runs before it becomes ``postgres``."""
        here = Path(__file__).resolve().parent.parent / "fencepost_postgresql_node"
        return {"fencepost_postgresql_node": here}

    def unavailable(self, backend: str) -> str | None:
        """Why PostgreSQL cannot run on ``backend`` here (the local backend needs its binaries, the postgres
        user, and root to start servers as that user)."""
        if backend != "local":
            return None
        if newest_bin_dir() is None:
            return MISSING
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return NO_USER
        if os.geteuid() != 0:
            return "PostgreSQL nodes are started as the postgres user, which needs root: run as root"
        if shutil.which("setpriv") is None:
            return "setpriv is missing (apt-get install -y util-linux)"
        return None

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        """The primary and the standbys, each through the node launcher."""
        self.bugs_on = frozenset(test.bug)
        self.workload = test.workload
        names = [f"n{i + 1}" for i in range(test.nodes)]
        self.addresses = {n: (layout.host(n), layout.port(n)) for n in names}
        binaries = newest_bin_dir() if layout.backend == "local" else "auto"  # found inside the node's image
        settings = [*SETTINGS, *(s for bug in sorted(self.bugs_on) for s in UNSAFE_SETTINGS.get(bug, ()))]
        primary = "{}:{}".format(*self.addresses[PRIMARY])
        specs = []
        for n in names:
            host, port = self.addresses[n]
            data = layout.data_dir(n)
            argv = [layout.python, "-m", "fencepost_postgresql_node", "--role",
                    "primary" if n == PRIMARY else "standby", "--name", n, "--data", data, "--host", host,
                    "--port", str(port), "--bin", str(binaries), "--primary", primary]
            for s in settings:
                argv += ["--setting", s]
            specs.append(ProcessSpec(n, NODE, tuple(argv), port, data_dir=data, discard_data=True,
                                     start_timeout=START_TIMEOUT_S))
        return specs

    async def ready(self, cluster: ClusterView, timeout: float) -> None:
        """Wait until the primary takes writes (creating the workload's table) and every standby streams
        from it and answers reads."""
        from fencepost_postgresql import sql

        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                await sql.execute(cluster.address(PRIMARY), TABLES.get(self.workload, TABLES["list-append"]))
                streaming = await sql.streaming(cluster.address(PRIMARY))
                standbys = [n for n in cluster.nodes() if n != PRIMARY]
                if set(standbys) <= streaming:
                    for n in standbys:
                        await sql.execute(cluster.address(n), "SELECT 1")
                    return
                last = f"standbys streaming: {sorted(streaming)} of {standbys}"
            except sql.Unreachable as e:
                last = e
            await asyncio.sleep(0.3)
        raise TimeoutError(f"PostgreSQL was not ready within {timeout:g} s: {last}")

    async def primaries(self, cluster: ClusterView) -> list[str]:
        """The primary: ``n1``, always (PostgreSQL never promotes a standby by itself)."""
        return [PRIMARY]

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A psycopg client for ``workload``, at the mode's isolation level."""
        from fencepost_postgresql.client import PostgresClient

        return PostgresClient(workload.name, isolation(self.bugs_on),
                              standby_reads="standby-reads" in self.bugs_on)

    def checkers(self, test: TestConfig) -> list[Checker]:
        """None of its own: the transactional checker judges the workloads' histories."""
        return []

    def faults(self) -> Mapping[str, Callable[[], Nemesis]]:
        """``client-partition``: clients cut off from a node while the nodes still reach each other."""
        from fencepost_postgresql.client_partition import package

        return {"client-partition": package}

    def bugs(self) -> Mapping[str, Bug]:
        """repeatable-read, read-committed, standby-reads and async-commit."""
        from fencepost_postgresql.recipes import BUGS

        return BUGS

    def log_patterns(self) -> Mapping[str, str]:
        """What a node's log says when it fails: PostgreSQL's PANIC and FATAL lines."""
        return {"panic": r"\bPANIC:", "fatal": r"\bFATAL:"}

    def fatal_log_patterns(self) -> tuple[str, ...]:
        """A PANIC (the server stopped itself: it found damage it cannot go on with). A FATAL line is counted,
        not fatal: it is a session or a standby's stream ending, which faults cause."""
        return ("panic",)


def isolation(bugs: frozenset[str]) -> str:
    """The isolation level the mode's transactions run at."""
    if "read-committed" in bugs:
        return "READ COMMITTED"
    if "repeatable-read" in bugs:
        return "REPEATABLE READ"
    return "SERIALIZABLE"


def plugin() -> PostgresPlugin:
    """A fresh PostgreSQL plugin (the ``fencepost.systems`` entry point)."""
    return PostgresPlugin()
