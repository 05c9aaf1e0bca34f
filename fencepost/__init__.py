"""Fencepost's public API: everything a system plugin imports from the framework, in one module.

A plugin (one package, registered under the ``fencepost.systems`` entry point) imports from here and from
its own system, never from ``harness`` or the other framework packages; an import-linter contract holds
the shipped plugins to that, and the API reference page is generated from these names' docstrings.

* **The plugin contract**: :class:`SystemPlugin`, and the records it hands back: :class:`ProcessSpec`
  (built from the backend's :class:`Layout`), :class:`Recipe` and :class:`Bug`; the roles :data:`NODE`,
  :data:`CONTROL` and :data:`SERVICE`; the system's own options (:class:`SystemOption`, read from
  ``test.options``); and the small optional protocols a system may add (:class:`Preflight`,
  :class:`ExplainsGaps`, :class:`Transitions`, :class:`HasMembership`, :class:`HasOptions`,
  :class:`DeclaresRoles`, :class:`ImagePackages`, :class:`LogPatterns`, ...).
* **Operations**: :class:`Client` (and :class:`WorkerBound`), :class:`Invocation` and :class:`Outcome`
  (ok, fail or info), the :class:`Workload` that generates them.
* **The cluster** as clients and faults see it: :class:`ClusterView`, and :mod:`capabilities` (the names,
  and the :class:`Processes`, :class:`Network`, :class:`Clock`, :class:`Disk`, :class:`Primaries` and
  :class:`Membership` protocols).
* **Faults**: :class:`Nemesis` and :class:`FaultSpec`, with the target choosers the generic packages use.
* **Checking**: :class:`Checker`, :class:`CheckContext` and the history's :class:`Op`.
* **Tools** for plugins' clients, faults, benches and commands: :class:`BlockingCalls` (a blocking client
  library's calls on a worker's own thread, with a timeout), :func:`poll_until`, :func:`running`,
  :func:`run_test`, :func:`fail`, :func:`nearest_rank` (a bench's latency quantiles), the iptables and reaping
  helpers.

The testing tools (a fake system, an in-memory backend, the conformance kit) are in
:mod:`fencepost.testing`.
"""

from __future__ import annotations

from harness import capabilities
from harness.backends import iptables
from harness.backends.docker_objects import engine_unavailable as docker_unavailable
from harness.backends.docker_objects import reap as reap_docker
from harness.backends.local import LocalBackend
from harness.backends.reaper import reap_store
from harness.benches.figures import nearest_rank
from harness.blocking import BlockingCalls
from harness.capabilities import (
    CLOCK,
    DISK,
    MEMBERSHIP,
    NETWORK,
    POWER_LOSS,
    PRIMARIES,
    PROCESSES,
    CapabilityMissing,
    Clock,
    Disk,
    Membership,
    Network,
    Primaries,
    Processes,
)
from harness.checker_protocol import UNKNOWN, CheckContext, Checker, Validity, merge_validity
from harness.cli.errors import fail
from harness.cluster import running
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.history.op import NEMESIS, Call, Op, OpType
from harness.history.pairing import pair_calls
from harness.launch import run_test
from harness.plugin_api import (
    Bug,
    Collects,
    DeclaresRoles,
    DefaultCampaign,
    ExplainsGaps,
    GuardsWipes,
    HasCode,
    HasMembership,
    HasOptions,
    ImagePackages,
    LogPatterns,
    Mutable,
    Preflight,
    Recipe,
    Rejoins,
    SystemOption,
    SystemPlugin,
    Transitions,
    declared_roles,
)
from harness.polling import poll_until
from harness.process_spec import CONTROL, NODE, ROLES, SERVICE, Layout, ProcessSpec
from harness.protocols import (
    Client,
    FaultSpec,
    Invocation,
    Nemesis,
    OpSource,
    Outcome,
    OutcomeObserver,
    WorkerBound,
    Workload,
)
from harness.registry import load_backend, load_nemesis, load_system, load_workload
from harness.targets import LEADER_AND_CONTROL, PROCESS_TARGETS, busiest_leader, choose_nodes, complete_grudge

__all__ = [
    "CLOCK",
    "CONTROL",
    "DISK",
    "LEADER_AND_CONTROL",
    "MEMBERSHIP",
    "NEMESIS",
    "NETWORK",
    "NODE",
    "POWER_LOSS",
    "PRIMARIES",
    "PROCESSES",
    "PROCESS_TARGETS",
    "ROLES",
    "SERVICE",
    "UNKNOWN",
    "BlockingCalls",
    "Bug",
    "Call",
    "CapabilityMissing",
    "CheckContext",
    "Checker",
    "Client",
    "Clock",
    "ClusterView",
    "Collects",
    "DeclaresRoles",
    "DefaultCampaign",
    "Disk",
    "ExplainsGaps",
    "FaultSpec",
    "GuardsWipes",
    "HasCode",
    "HasMembership",
    "HasOptions",
    "ImagePackages",
    "Invocation",
    "Layout",
    "LocalBackend",
    "LogPatterns",
    "Membership",
    "Mutable",
    "Nemesis",
    "Network",
    "Op",
    "OpSource",
    "OpType",
    "Outcome",
    "OutcomeObserver",
    "Preflight",
    "Primaries",
    "ProcessSpec",
    "Processes",
    "Recipe",
    "Rejoins",
    "SystemOption",
    "SystemPlugin",
    "TestConfig",
    "Transitions",
    "Validity",
    "WorkerBound",
    "Workload",
    "busiest_leader",
    "capabilities",
    "choose_nodes",
    "complete_grudge",
    "declared_roles",
    "docker_unavailable",
    "fail",
    "iptables",
    "load_backend",
    "load_nemesis",
    "load_system",
    "load_workload",
    "merge_validity",
    "nearest_rank",
    "pair_calls",
    "poll_until",
    "reap_docker",
    "reap_store",
    "run_test",
    "running",
]
