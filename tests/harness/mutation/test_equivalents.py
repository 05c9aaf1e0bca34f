"""The equivalents file: the repository's entries match the code; a changed or vanished mutant's entry is stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness import registry
from harness.mutation.equivalents import Equivalent, entry_toml, load, review
from harness.mutation.mutants import Mutant


def test_the_reference_systems_file_matches_its_code(reference_mutants: list[Mutant]) -> None:
    plugin: Any = registry.load_system("reference")
    path = plugin.equivalent_mutants()
    entries = load(path)
    assert entries, f"{path} lists no mutant"
    equivalent, stale = review(entries, reference_mutants)
    assert not stale, [f"{s.entry.id}: {s.why}" for s in stale]
    assert all(e.reason for e in equivalent.values())


def test_a_changed_line_or_a_vanished_mutant_is_stale(tmp_path: Path, reference_mutants: list[Mutant]) -> None:
    m = next(x for x in reference_mutants if x.id == "system/rules.py:NumberReplacer:11")
    path = tmp_path / "equivalent.toml"
    path.write_text(entry_toml(m, "reviewed")
                    + entry_toml(Mutant(m.module, m.operator, 10_000, 1, "x", "y"), "gone")
                    + '[[mutant]]\nid = "system/rules.py:NumberReplacer:10"\nline = "return n // 2 + 1"\n'
                      'mutated = "return n // 2 + 7"\nreason = "the code changed since"\n')
    equivalent, stale = review(load(path), reference_mutants)
    assert list(equivalent) == [m.id] and equivalent[m.id].reason == "reviewed"
    assert {s.entry.id: s.why for s in stale} == {
        "system/rules.py:NumberReplacer:10000": "no such mutant in the code now",
        "system/rules.py:NumberReplacer:10": "the code changed: the mutant now turns `return n // 2 + 1` into "
                                             "`return n // 2 + 2`"}


def test_a_missing_file_lists_nothing_and_a_bad_one_is_named(tmp_path: Path) -> None:
    assert load(None) == [] and load(tmp_path / "none.toml") == []
    bad = tmp_path / "bad.toml"
    bad.write_text('[[mutant]]\nid = "a"\nline = "x"\nmutated = "y"\n')
    with pytest.raises(ValueError, match=r"bad\.toml:1: entry 1 \(a\) lacks reason"):
        load(bad)
    bad.write_text("[[mutant]\n")
    with pytest.raises(ValueError, match=r"bad\.toml"):
        load(bad)


def test_an_entry_with_quotes_reads_back() -> None:
    m = Mutant("system/x.py", "core/AddNot", 0, 3, 'if a == "b\\\\":', 'if not a == "b\\\\":')
    path_text = entry_toml(m, 'says "why"')
    import tomllib

    item = tomllib.loads(path_text)["mutant"][0]
    assert Equivalent(item["id"], item["line"], item["mutated"], item["reason"]) == \
        Equivalent(m.id, m.original, m.mutated, 'says "why"')
