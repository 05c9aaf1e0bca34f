"""The open registries: what is installed is found by entry point, and what a run cannot do is refused in one
line before anything starts."""

from __future__ import annotations

import pytest

from harness import registry
from harness.config import TestConfig
from harness.launch import prepare
from harness.testing import FakeSystem, MemoryBackend


def test_the_installed_extensions_are_found_by_entry_point() -> None:
    assert "reference" in registry.system_names()
    assert {"local", "docker"} <= set(registry.backend_names())
    assert {"register", "set", "log", "bank"} <= set(registry.workload_names())
    assert {"kill", "pause", "partition", "clock", "lose-unsynced", "membership"} <= set(registry.nemesis_names())
    assert {"stats", "exceptions", "perf", "availability", "log-pattern", "client-crash", "recovery"} == {
        c.name for c in registry.standard_checkers()}
    assert {"test", "check", "systems", "report", "serve", "cluster"} <= set(registry.group(registry.COMMANDS))


def test_a_systems_own_fault_beats_the_generic_one_and_adds_to_the_list() -> None:
    reference = registry.load_system("reference")
    assert "failover" in registry.nemesis_names(reference) and "failover" not in registry.nemesis_names()
    assert type(registry.load_nemesis("wipe", reference)).__module__ == "fencepost_reference.faults.wipe"


def test_unknown_names_are_refused_with_what_is_available() -> None:
    with pytest.raises(registry.Refused, match=r"unknown system 'nope'; available: .*reference"):
        registry.load_system("nope")
    with pytest.raises(registry.Refused, match="unknown workload 'nope'"):
        registry.load_workload("nope", TestConfig())
    with pytest.raises(registry.Refused, match="unknown backend 'nope'"):
        registry.load_backend("nope")


def test_a_fault_needing_a_capability_the_system_lacks_is_refused_naming_it() -> None:
    test = TestConfig(workload="register", nemesis=["lose-unsynced"])
    with pytest.raises(registry.Refused) as refused:
        prepare(test, system=FakeSystem(), backend=MemoryBackend())
    message = str(refused.value)
    assert "nemesis lose-unsynced needs the power-loss capability" in message and "system fake" in message
    assert "\n" not in message


def test_a_capability_the_backend_cannot_carry_out_is_refused_with_the_backends_reason() -> None:
    from harness.backends.docker import DockerBackend

    with pytest.raises(registry.Refused, match="clock capability, which is not available here: clock faults "
                                               "need the local backend"):
        prepare(TestConfig(nemesis=["clock"], backend="docker"), backend=DockerBackend())


def test_a_workload_the_system_does_not_run_is_refused() -> None:
    with pytest.raises(registry.Refused, match="system fake does not run workload 'bank'"):
        prepare(TestConfig(workload="bank"), system=FakeSystem(), backend=MemoryBackend())


def test_a_workload_declares_options_that_the_command_line_sets():
    """``-o consistency=...`` reaches a transactional workload: prepare resolves the workload's declared options
    beside the system's, and an option neither declares is still refused."""
    test = TestConfig(system="fake", backend="memory", workload="list-append", nemesis=[],
                      options={"consistency": "snapshot-isolation"})
    prepare(test, system=FakeSystem(), backend=MemoryBackend())
    assert test.options["consistency"] == "snapshot-isolation"
    with pytest.raises(registry.Refused, match="no-such"):
        prepare(TestConfig(system="fake", backend="memory", workload="list-append", nemesis=[],
                           options={"no-such": "1"}), system=FakeSystem(), backend=MemoryBackend())
