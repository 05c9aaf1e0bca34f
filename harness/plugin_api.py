"""The plugin API: what a system under test gives Fencepost, as typing.Protocols and small records.

A system is one Python package registered under the ``fencepost.systems`` entry-point group; the
entry point names a callable that returns a :class:`SystemPlugin`. The plugin describes the processes
each node runs (:class:`ProcessSpec`, built from the :class:`Layout` the backend hands it, so the same
description runs as local processes or in containers), makes clients for the workloads it supports,
says which capabilities (:mod:`harness.capabilities`) it offers, and brings its own checkers, fault
packages and known-unsafe modes. Optional protocols below add what only some systems have: who leads
(:class:`harness.capabilities.Primaries`), a membership State, a rejoin step after a wipe, extra
artifacts to collect, its own log patterns.

The framework never imports a plugin: it finds them through the entry points.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness.process_spec import CONTROL, NODE, ROLES, SERVICE, Layout, ProcessSpec

if TYPE_CHECKING:
    from harness.checker_protocol import Checker
    from harness.cluster_view import ClusterView
    from harness.config import TestConfig
    from harness.protocols import Client, Nemesis, Workload

__all__ = [
    "CONTROL", "NODE", "ROLES", "SERVICE", "Bug", "Collects", "DeclaresRoles", "DefaultCampaign", "ExplainsGaps",
    "GuardsWipes", "HasCode", "HasMembership", "HasOptions", "ImagePackages", "Layout", "LogPatterns", "Mutable",
    "Preflight", "ProcessSpec", "Recipe", "Rejoins", "SystemOption", "SystemPlugin", "Transitions", "declared_roles",
]

@dataclass(frozen=True)
class Recipe:
    """How to expose one known-unsafe mode: the test that the mode fails.

    Attributes:
        workload: the workload name.
        nemesis: the fault packages.
        time_limit: seconds of workload.
        interval: mean seconds between fault actions.
        why: which fault opens the window the mode needs, and which checker should see it.
        settings: other TestConfig fields (concurrency, rate, nodes, ...).
        targets: narrows fault packages' target choices, e.g. ``{"partition": ("leader-alone",)}``.
        clean_twin: whether the recipe without the mode is a test of the correct system (the false-alarm
            check of ``fencepost matrix``); False when the mode is the workload itself (etcd's lock).
    """

    workload: str
    nemesis: tuple[str, ...]
    time_limit: float = 60.0
    interval: float = 2.0
    why: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    clean_twin: bool = True

    def config_fields(self) -> dict[str, Any]:
        """The TestConfig fields this recipe sets (its targets go in ``extra``)."""
        extra = {"targets": {k: list(v) for k, v in self.targets.items()}} if self.targets else {}
        return {"workload": self.workload, "nemesis": list(self.nemesis), "time_limit": self.time_limit,
                "nemesis_interval": self.interval, "extra": extra, **self.settings}


@dataclass(frozen=True)
class Bug:
    """A known-unsafe mode of a system (``--bug NAME``): an injected bug, or a documented unsafe setting.

    Attributes:
        name: what ``--bug`` takes.
        what: the rule it breaks and the real bug or behaviour it mirrors, in one line.
        recipe: the test that exposes it.
    """

    name: str
    what: str
    recipe: Recipe


@runtime_checkable
class SystemPlugin(Protocol):
    """A system under test (Jepsen's DB and client, with the system's own faults and checkers)."""

    @property
    def name(self) -> str:
        """What ``--system`` takes."""
        ...

    @property
    def description(self) -> str:
        """One line for ``fencepost systems``."""
        ...

    @property
    def workloads(self) -> Sequence[str]:
        """The workloads whose operations its clients implement."""
        ...

    @property
    def capabilities(self) -> frozenset[str]:
        """The capabilities (:data:`harness.capabilities.CAPABILITIES`) it offers faults."""
        ...

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        """Every process of a cluster for ``test``, in start order; writes any cluster-wide files first."""
        ...

    async def ready(self, cluster: ClusterView, timeout: float) -> None:
        """Wait until the cluster serves (every member healthy, a leader elected); raise TimeoutError."""
        ...

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A fresh client for one worker of ``workload``."""
        ...

    def checkers(self, test: TestConfig) -> list[Checker]:
        """The system's own checkers, which every run of it gets (white-box checkers, say)."""
        ...

    def faults(self) -> Mapping[str, Callable[[], Nemesis]]:
        """The system's own fault packages by name (a name here beats a generic package of the same name)."""
        ...

    def bugs(self) -> Mapping[str, Bug]:
        """Its known-unsafe modes by name, for ``--bug`` and ``--list-bugs``."""
        ...


@runtime_checkable
class ExplainsGaps(Protocol):
    """A system that says why it lacks a capability, for the one-line refusal of a fault that needs it
    (etcd: no clock, since Go reads the time through the vDSO, which libfaketime cannot move)."""

    @property
    def not_offered(self) -> Mapping[str, str]:
        """Capability -> why this system does not offer it."""
        ...


@runtime_checkable
class Preflight(Protocol):
    """A system that can tell, before anything starts, that it cannot run here (a binary is missing)."""

    def unavailable(self, backend: str) -> str | None:
        """Why the system cannot run on ``backend`` (the backend's name, a ``str``: ``"local"``, ``"docker"``)
        on this machine, in one line; None when it can."""
        ...


@runtime_checkable
class GuardsWipes(Protocol):
    """A system that must not lose a member's disk at some moments (while the last one still catches up)."""

    async def wipe_refusal(self, cluster: ClusterView) -> str | None:
        """Why no member may be wiped now, in words; None when one may."""
        ...


@runtime_checkable
class Transitions(Protocol):
    """A system that can say when it is in the middle of a protocol transition (an election, a
    reconfiguration, a copy), so that the default campaign can strike then (:mod:`harness.transitions`)."""

    def transitions(self) -> Sequence[str]:
        """The kinds of transition it can observe."""
        ...

    async def in_transition(self, cluster: ClusterView, kind: str) -> bool:
        """Whether a transition of ``kind`` is under way now."""
        ...


@runtime_checkable
class DefaultCampaign(Protocol):
    """A system with settings of its own for the default campaign (more nodes, say). It declares what its
    cluster needs; the framework decides the campaign: the faults and classics follow from its capabilities
    and roles, and the workload shape (``concurrency``, ``rate``: :mod:`harness.workload_shape`) is the same
    for every system, so those two are ignored here."""

    def default_settings(self) -> Mapping[str, Any]:
        """TestConfig fields the default campaign uses unless the command line says otherwise (not
        ``concurrency`` or ``rate``)."""
        ...


@runtime_checkable
class HasMembership(Protocol):
    """A system whose members can be added and removed while a test runs."""

    def membership(self) -> Any:
        """The run's membership State (:class:`harness.capabilities.Membership`), the same one every call."""
        ...


@runtime_checkable
class Rejoins(Protocol):
    """A system with its own step between a wipe's erase and restart (etcd: member remove, then add)."""

    async def rejoin(self, cluster: ClusterView, node: str) -> Sequence[str]:
        """Prepare the cluster for ``node`` to come back empty; return extra arguments for its next start."""
        ...


@runtime_checkable
class Collects(Protocol):
    """A system with more to keep than its processes' logs and observation files (state dumps, say)."""

    async def collect(self, cluster: ClusterView, run_dir: Path) -> None:
        """Write what it keeps under ``run_dir/nodes/<name>/`` while the cluster still runs."""
        ...


@runtime_checkable
class HasCode(Protocol):
    """A system whose processes run its own code (Python packages, scripts) rather than installed binaries."""

    def code(self) -> Mapping[str, Path]:
        """Its code folders, each by its path relative to the code root (``{"system": .../system}``): the
        local backend runs them in place, and the docker backend copies them into its image."""
        ...


@dataclass(frozen=True)
class SystemOption:
    """One option a system declares for its tests (``--option NAME=VALUE``; :attr:`TestConfig.options`).

    Attributes:
        name: what ``--option`` takes before the ``=``.
        default: the value a test runs with when the option is not given; its type (bool, int, float or
            str) is the option's.
        help: one line for ``fencepost systems``.
    """

    name: str
    default: bool | int | float | str
    help: str = ""

    def parse(self, value: Any) -> bool | int | float | str:
        """``value`` (text from a command line, or a value from a config) as the option's type.

        Raises:
            ValueError: it is not one, in words.
        """
        kind = type(self.default)
        if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
            return value
        text = str(value).strip()
        if kind is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
        else:
            try:
                return kind(text)
            except ValueError:
                pass
        article = "an" if kind is int else "a"
        raise ValueError(f"option {self.name} takes {article} {kind.__name__}, not {text!r}")


@runtime_checkable
class HasOptions(Protocol):
    """A system with options of its own (the reference store's number of tablets)."""

    def options(self) -> Sequence[SystemOption]:
        """The options its tests take, each with its default."""
        ...


@runtime_checkable
class DeclaresRoles(Protocol):
    """A system that says which roles its processes play (:data:`NODE`, :data:`CONTROL`, :data:`SERVICE`).

    A system that does not say runs data nodes only; fault packages offer targets by what is declared (the
    leader together with the control plane only where there is one).
    """

    @property
    def roles(self) -> frozenset[str]:
        """The roles its clusters' processes play."""
        ...


def default_workload(system: object) -> str:
    """The workload a test of ``system`` runs when none is named: ``register`` where the system runs it (every
    key-value store), else the first it lists (a transactional database runs list-append)."""
    offered = list(getattr(system, "workloads", ()) or ())
    return "register" if "register" in offered or not offered else str(offered[0])


def declared_roles(system: object) -> frozenset[str]:
    """The roles ``system``'s processes play: what it declares (:class:`DeclaresRoles`), else data nodes only."""
    return frozenset(system.roles) if isinstance(system, DeclaresRoles) else frozenset({NODE})


@runtime_checkable
class ImagePackages(Protocol):
    """A system whose processes need Debian packages in the Docker backend's node image (a server binary,
    say: etcd's plugin asks for ``etcd-server``)."""

    def image_packages(self) -> Sequence[str]:
        """Debian package names, installed on top of the image's python3, iptables and iproute2."""
        ...


@runtime_checkable
class Mutable(Protocol):
    """A system that names the modules holding its protocol code, for mutation testing (``fencepost mutate``).

    The modules lie under its :meth:`HasCode.code` folders: each mutant is applied to a scratch copy of
    those folders, never to the system's own files.
    """

    def mutable_modules(self) -> Sequence[Path]:
        """The source files whose mutants ``fencepost mutate`` runs (absolute paths, under the code folders)."""
        ...

    def equivalent_mutants(self) -> Path | None:
        """The reviewed list of equivalent mutants (TOML, kept in the repository, each with its reason), or
        None; the file need not exist yet."""
        ...


@runtime_checkable
class LogPatterns(Protocol):
    """A system whose nodes' logs show failures in words of their own, for the log-pattern checker
    (:mod:`checkers.log_pattern`), beside its defaults (tracebacks, panics, FATAL, JVM errors and SEVERE)."""

    def log_patterns(self) -> Mapping[str, str]:
        """Pattern name -> regular expression, matched against each line of the nodes' logs; a default's name
        (``error``, ``severe``...) replaces that pattern."""
        ...

    def fatal_log_patterns(self) -> Collection[str]:
        """The pattern names (its own or the defaults') whose matches make the run invalid; the others' matches
        are counted and shown. A default it replaces is fatal only if named here."""
        ...
