"""A system's own options are declared by its plugin and reach it through the test config."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fencepost_reference.plugin import ReferencePlugin

from harness import registry
from harness.cli.main import cli
from harness.config import TestConfig
from harness.plugin_api import SystemOption
from harness.testing import FakeSystem


def test_declared_defaults_fill_in_and_given_text_takes_the_options_type() -> None:
    plugin = ReferencePlugin()
    assert registry.resolve_options(plugin, {}) == {"tablets": 4}
    assert registry.resolve_options(plugin, {"tablets": "2"}) == {"tablets": 2}
    assert registry.resolve_options(FakeSystem(), {}) == {}
    with pytest.raises(registry.Refused, match="has no option shards; its options: tablets"):
        registry.resolve_options(plugin, {"shards": "2"})
    with pytest.raises(registry.Refused, match="option tablets takes an int, not 'two'"):
        registry.resolve_options(plugin, {"tablets": "two"})
    with pytest.raises(registry.Refused, match="has no option tablets; its options: none"):
        registry.resolve_options(FakeSystem(), {"tablets": "2"})
    flag = SystemOption("fsync", True)
    assert flag.parse("off") is False and flag.parse("yes") is True and flag.parse(False) is False
    with pytest.raises(ValueError):
        flag.parse("maybe")


def test_the_command_line_takes_options_and_refuses_unknown_ones_in_one_line() -> None:
    runner = CliRunner()
    bad = runner.invoke(cli, ["test", "--system", "reference", "--plan", "-o", "shards=2"])
    assert bad.exit_code == 3 and "its options: tablets" in bad.output, bad.output
    malformed = runner.invoke(cli, ["test", "--system", "reference", "--plan", "--option", "tablets"])
    assert malformed.exit_code == 3 and "NAME=VALUE" in malformed.output, malformed.output
    good = runner.invoke(cli, ["test", "--system", "reference", "--plan", "-o", "tablets=2", "-n", "kill"])
    assert good.exit_code == 0, good.output
    listed = runner.invoke(cli, ["systems", "--json"])
    reference = next(json.loads(line) for line in listed.output.splitlines() if '"reference"' in line)
    assert reference["options"] == [{"name": "tablets", "default": 4, "help": reference["options"][0]["help"]}]


def test_a_run_records_every_option_it_ran_with() -> None:
    from harness.launch import prepare

    config = TestConfig(system="reference", nemesis=["kill"])
    prepare(config)
    assert config.options == {"tablets": 4}
    assert json.loads(json.dumps(config.to_dict()))["options"] == {"tablets": 4}
