"""Open registries: systems, workloads, fault packages and standard checkers, found through entry points.

Every extension is a callable named under an entry-point group in some installed package's metadata
(``pyproject.toml``'s ``[project.entry-points."fencepost.workloads"]``, say), so a user adds one by
installing a package, never by editing Fencepost:

======================  ===========================================================================
group                   the callable
======================  ===========================================================================
``fencepost.systems``   ``() -> SystemPlugin`` (:mod:`harness.plugin_api`), called once per run
``fencepost.backends``  ``() -> Backend`` (:mod:`harness.backends.backend`), called once per run
``fencepost.workloads`` ``(TestConfig) -> Workload``
``fencepost.nemeses``   ``() -> Nemesis``: a generic fault package
``fencepost.checkers``  ``() -> Checker``: a history checker every run gets
``fencepost.models``    ``(init, nil_read) -> Model``: a model for the linearizability checker (``--model``)
``fencepost.commands``  a click command, a subcommand of ``fencepost``
``fencepost.reports``   ``(run_dir) -> path``: renders a run's report after it is checked
``fencepost.benches``   a module whose ``main(runs, args)`` ends with one JSON line (``fencepost bench``)
======================  ===========================================================================

A system's own fault packages (:meth:`SystemPlugin.faults`) come with the system and beat a generic
package of the same name. ``fencepost.testing_systems`` holds systems as ``fencepost.systems`` does, for
testing tools (the fake): they run when named and are never listed, counted or chosen as installed systems.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from harness.capabilities import CAPABILITIES
from harness.checker_protocol import Checker
from harness.config import TestConfig
from harness.plugin_api import ExplainsGaps, HasOptions, SystemOption, SystemPlugin
from harness.protocols import Nemesis, Workload
from harness.system_choice import SYSTEMS_GROUP as SYSTEMS
from harness.system_choice import TESTING_SYSTEMS_GROUP as TESTING_SYSTEMS
from harness.system_choice import installed_systems, installed_testing_systems

BACKENDS = "fencepost.backends"
WORKLOADS = "fencepost.workloads"
NEMESES = "fencepost.nemeses"
CHECKERS = "fencepost.checkers"
MODELS = "fencepost.models"
COMMANDS = "fencepost.commands"
REPORTS = "fencepost.reports"
BENCHES = "fencepost.benches"


class Refused(ValueError):
    """A test asks for something its system or backend cannot do; the message is one line."""


def group(name: str) -> dict[str, EntryPoint]:
    """The entry points of group ``name``, by name (the first installed one wins a clash)."""
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=name):
        found.setdefault(ep.name, ep)
    return found


def _load(group_name: str, what: str, name: str) -> Any:
    eps = group(group_name)
    if name not in eps:
        raise Refused(f"unknown {what} {name!r}; available: {', '.join(sorted(eps)) or 'none installed'}")
    return eps[name].load()


# --- systems ----------------------------------------------------------------------------------------

def system_names(testing: bool = False) -> list[str]:
    """The installed systems; with ``testing``, the installed testing systems instead (the fake: run when named,
    never chosen by default)."""
    return installed_testing_systems() if testing else installed_systems()


def default_system() -> str:
    """The system to run when none is named (:func:`harness.system_choice.default_system`).

    Raises:
        Refused: none is configured and not exactly one is installed.
    """
    from harness.system_choice import NoSystemChosen
    from harness.system_choice import default_system as choose

    try:
        return choose()
    except NoSystemChosen as e:
        raise Refused(str(e)) from None


def load_system(name: str | None = None) -> SystemPlugin:
    """A fresh plugin instance of system ``name`` (one per run: it may keep the run's state); with None or
    "", the default system (:func:`default_system`).

    Raises:
        Refused: there is no such system, or none was named and none can be chosen.
    """
    name = name or default_system()
    testing = group(TESTING_SYSTEMS)
    if name in testing and name not in group(SYSTEMS):  # a testing system runs when named
        plugin = testing[name].load()()
    else:
        plugin = _load(SYSTEMS, "system", name)()
    if not isinstance(plugin, SystemPlugin):
        raise Refused(f"system {name!r} does not satisfy the SystemPlugin protocol (harness.plugin_api)")
    return plugin


def system_options(system: object) -> dict[str, SystemOption]:
    """The options ``system`` declares (:class:`harness.plugin_api.HasOptions`), by name."""
    return {o.name: o for o in system.options()} if isinstance(system, HasOptions) else {}


def resolve_options(system: SystemPlugin, given: Mapping[str, Any], workload: object = None) -> dict[str, Any]:
    """Every option ``system`` declares, and ``workload`` if it declares options too (the same
    :class:`HasOptions` shape), at its default unless ``given`` (text or values) names it.

    Raises:
        Refused: ``given`` names an option neither declares, or a value of the wrong type.
    """
    declared = {**(system_options(workload) if isinstance(workload, HasOptions) else {}), **system_options(system)}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        offered = ", ".join(sorted(declared)) or "none"
        raise Refused(f"system {system.name} has no option {', '.join(unknown)}; its options: {offered}")
    try:
        return {name: o.parse(given[name]) if name in given else o.default for name, o in declared.items()}
    except ValueError as e:
        raise Refused(str(e)) from None


def parse_option_args(args: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` command-line arguments (``--option``) as a mapping; a later one wins.

    Raises:
        Refused: an argument has no ``=`` or no name.
    """
    out: dict[str, str] = {}
    for arg in args:
        name, sep, value = arg.partition("=")
        if not sep or not name.strip():
            raise Refused(f"--option takes NAME=VALUE, not {arg!r}")
        out[name.strip()] = value
    return out


# --- backends ---------------------------------------------------------------------------------------

def backend_names() -> list[str]:
    """The installed backends."""
    return sorted(group(BACKENDS))


def load_backend(name: str) -> Any:
    """A fresh instance of backend ``name`` (:class:`harness.backends.backend.Backend`).

    Raises:
        Refused: there is no such backend.
    """
    return _load(BACKENDS, "backend", name)()


# --- workloads --------------------------------------------------------------------------------------

def workload_names() -> list[str]:
    """Every installed workload."""
    return sorted(group(WORKLOADS))


def load_workload(name: str, config: TestConfig) -> Workload:
    """Workload ``name`` for ``config``.

    Raises:
        Refused: there is no such workload.
    """
    workload = _load(WORKLOADS, "workload", name)(config)
    if not isinstance(workload, Workload):
        raise Refused(f"workload {name!r} does not satisfy the Workload protocol (harness.protocols)")
    return workload


# --- fault packages ---------------------------------------------------------------------------------

def nemesis_names(system: SystemPlugin | None = None) -> list[str]:
    """The generic fault packages, and ``system``'s own."""
    return sorted(set(group(NEMESES)) | set(system.faults() if system is not None else ()))


def load_nemesis(name: str, system: SystemPlugin | None = None) -> Nemesis:
    """A fresh instance of fault package ``name``: the system's own if it has one by that name, else the
    generic one; a package with a ``for_system`` hook is told the system.

    Raises:
        Refused: there is no such package.
    """
    own = system.faults() if system is not None else {}
    if name in own:
        package = own[name]()
    else:
        eps = group(NEMESES)
        if name not in eps:
            raise Refused(f"unknown nemesis {name!r}; available: {', '.join(nemesis_names(system))}")
        package = eps[name].load()()
    if system is not None and hasattr(package, "for_system"):
        package.for_system(system)
    if not isinstance(package, Nemesis):
        raise Refused(f"nemesis {name!r} does not satisfy the Nemesis protocol (harness.protocols)")
    return package


def needs_of(packages: Iterable[Nemesis]) -> frozenset[str]:
    """Every capability the packages need."""
    return frozenset(c for p in packages for c in getattr(p, "needs", ()))


# --- checkers and models ----------------------------------------------------------------------------

def standard_checkers() -> list[Checker]:
    """The installed history checkers every run gets (statistics, exceptions, latency, availability, logs)."""
    return [ep.load()() for _, ep in sorted(group(CHECKERS).items())]


# --- refusals before anything starts -----------------------------------------------------------------

def refuse_unsupported(system: SystemPlugin, available: frozenset[str], packages: dict[str, Nemesis],
                       workload: Workload, why_not: Any = None) -> None:
    """Raise :class:`Refused` with one line when the test asks for a workload or a fault its run cannot do.

    Args:
        system: the system under test.
        available: the run's capabilities (the system's, less what the backend cannot do).
        packages: the test's fault packages by name.
        workload: the test's workload.
        why_not: ``capability -> reason`` from the backend, for capabilities the system has but the
            backend cannot carry out here.
    """
    if workload.name not in system.workloads:
        raise Refused(f"system {system.name} does not run workload {workload.name!r}; it runs "
                      f"{', '.join(system.workloads)}")
    for name, package in packages.items():
        for capability in sorted(getattr(package, "needs", ())):
            if capability in available:
                continue
            if capability not in CAPABILITIES:
                raise Refused(f"nemesis {name} needs {capability!r}, which is not a capability")
            if capability in system.capabilities:
                reason = why_not(capability) if why_not is not None else None
                raise Refused(f"nemesis {name} needs the {capability} capability, which is not available here"
                              + (f": {reason}" if reason else ""))
            reason = system.not_offered.get(capability) if isinstance(system, ExplainsGaps) else None
            raise Refused(f"nemesis {name} needs the {capability} capability, which system {system.name} "
                          f"does not offer" + (f": {reason}" if reason else
                                               f" (it offers {', '.join(sorted(system.capabilities)) or 'none'})"))
