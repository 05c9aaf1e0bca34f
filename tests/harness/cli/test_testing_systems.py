"""The fake is installed as a testing system: it runs when named (on the memory backend), and is never listed,
counted or chosen as an installed system."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import registry, system_choice
from harness.cli.main import cli
from harness.system_choice import ENV, default_system


def test_the_fake_is_a_testing_system_run_by_name_and_never_the_default(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert "fake" in system_choice.installed_testing_systems() and "fake" not in system_choice.installed_systems()
    assert registry.system_names(testing=True) == system_choice.installed_testing_systems()
    assert registry.load_system("fake").name == "fake"
    assert "memory" in registry.backend_names()
    monkeypatch.delenv(ENV, raising=False)
    # with one real system installed and the fake beside it, that one is still "the only installed system"
    assert default_system(["toy-kv"], cwd=tmp_path, environ={}) == "toy-kv"
    monkeypatch.chdir(tmp_path)
    assert "fake" not in CliRunner().invoke(cli, ["test", "--plan", "--seed", "1"]).output


def test_systems_lists_testing_systems_only_when_asked() -> None:
    plain = CliRunner().invoke(cli, ["systems"])
    assert plain.exit_code == 0, plain.output
    assert not any(line.startswith("fake") for line in plain.stdout.splitlines())
    assert "testing systems not listed: fake (--testing lists them)" in plain.stderr
    listed = CliRunner().invoke(cli, ["systems", "--testing", "--json"])
    assert listed.exit_code == 0, listed.output
    fake = next(s for s in map(json.loads, listed.stdout.splitlines()) if s["name"] == "fake")
    assert fake["testing"] is True and {"list-append", "rw-register"} <= set(fake["workloads"])
    assert "snapshot-isolation" in fake["bugs"]
    text = CliRunner().invoke(cli, ["systems", "--testing"]).stdout
    assert "\nfake  (testing system) an in-memory" in text


def test_the_fake_on_another_backend_is_refused_in_one_line() -> None:
    refused = CliRunner().invoke(cli, ["test", "--system", "fake", "--nemesis", "none", "--workload", "list-append"])
    assert refused.exit_code == 3
    assert refused.output.strip().count("\n") == 0
    assert "runs only on the memory backend (--backend memory)" in refused.output
