from __future__ import annotations

import json
import re
from pathlib import Path

from reports import shading
from reports.shading import fault_style, recorded_styles, register_fault_style


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


def test_a_run_renders_in_the_colours_it_recorded(tmp_path: Path) -> None:
    (tmp_path / "faults.json").write_text(json.dumps({"gremlin": {"color": "#010203", "label": "gremlins"},
                                                      "partition": {"color": "#0a0b0c"}, "broken": 3}))
    recorded = recorded_styles(tmp_path)
    assert set(recorded) == {"gremlin", "partition"}
    assert fault_style("gremlin", recorded).color == "#010203"
    assert fault_style("gremlin-loud", recorded).color == "#010203"
    assert fault_style("partition", recorded).label == "network partition"
    assert fault_style("partition", recorded).color == "#0a0b0c"
    assert recorded_styles(tmp_path / "missing") == {} and recorded_styles(None) == {}


def test_the_runtime_records_each_package_colour(tmp_path: Path) -> None:
    from harness.lifecycle import fault_styles

    class Gremlin:
        name = "gremlin"
        color = "#123123"

    assert fault_styles({"gremlin": Gremlin()}) == {"gremlin": {"color": "#123123"}}  # type: ignore[dict-item]
