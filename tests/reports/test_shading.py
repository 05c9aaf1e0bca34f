from __future__ import annotations

import re

from reports import shading
from reports.shading import fault_style, register_fault_style


def test_built_in_faults_have_distinct_colours_and_labels() -> None:
    styles = [fault_style(f) for f in ("partition", "kill", "pause", "clock")]
    assert len({s.color for s in styles}) == 4
    assert fault_style("partition").label == "network partition"


def test_a_variant_takes_its_family_style_and_an_unknown_fault_a_stable_colour() -> None:
    assert fault_style("partition-majority").color == fault_style("partition").color
    assert "partition-majority" in fault_style("partition-majority").label
    a, b = fault_style("gremlins"), fault_style("gremlins")
    assert a == b and re.fullmatch(r"#[0-9a-f]{6}", a.color)


def test_a_package_registers_a_style_without_editing_the_registry() -> None:
    try:
        register_fault_style("bitflip", "#123456", "bit flips")
        assert fault_style("bitflip").color == "#123456"
        assert fault_style("bitflip-wal").label == "bit flips (bitflip-wal)"
        register_fault_style("partition", "#000000")
        assert fault_style("partition").color == "#000000"
    finally:
        shading._registry.pop("bitflip", None)
        shading._registry.pop("partition", None)
    assert fault_style("partition").color != "#000000"


def test_a_nemesis_package_colour_is_used_without_registration() -> None:
    from nemesis import registry

    for name in registry.available():
        package = registry.load(name)
        assert fault_style(package.name).color == package.color
