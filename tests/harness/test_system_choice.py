"""The framework names no system: a command without --system runs the configured one, or the only one."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.registry import system_names
from harness.system_choice import ENV, NoSystemChosen, default_system


def test_the_environment_then_the_nearest_pyproject_then_the_only_installed_system(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "deep").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.fencepost]\nsystem = "etcd"\n')
    assert default_system(["etcd", "reference"], cwd=project / "deep", environ={}) == "etcd"
    assert default_system(["etcd", "reference"], cwd=project, environ={ENV: "toy-kv"}) == "toy-kv"
    lone = tmp_path / "lone"
    lone.mkdir()
    assert default_system(["toy-kv"], cwd=lone, environ={}) == "toy-kv"
    (lone / "pyproject.toml").write_text('[project]\nname = "mine"\n')  # the nearest one chooses nothing
    assert default_system(["toy-kv"], cwd=lone, environ={}) == "toy-kv"


def test_several_systems_and_none_chosen_is_one_line_naming_them_and_how_to_choose(tmp_path: Path) -> None:
    with pytest.raises(NoSystemChosen) as e:
        default_system(["etcd", "reference"], cwd=tmp_path, environ={})
    assert "etcd, reference" in str(e.value) and "--system" in str(e.value) and ENV in str(e.value)
    with pytest.raises(NoSystemChosen, match="no system is installed"):
        default_system([], cwd=tmp_path, environ={})


def test_fencepost_test_outside_a_configured_project_asks_which_system(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV, raising=False)
    refused = CliRunner().invoke(cli, ["test", "--plan", "--seed", "1"])
    assert refused.exit_code == 3, refused.output
    installed = ", ".join(sorted(system_names()))  # every installed system is named (etcd, reference, ...)
    assert f"({installed})" in refused.output and len(refused.output.strip().splitlines()) == 1
    monkeypatch.setenv(ENV, "etcd")
    planned = CliRunner().invoke(cli, ["test", "--plan", "--seed", "1"])
    assert planned.exit_code == 0, planned.output
    assert "Plan of etcd-register-default" in planned.output
