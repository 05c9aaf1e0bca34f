"""Mutants: enumeration is stable, ids are readable, sampling is reproducible, the shown line is the applied one."""

from __future__ import annotations

import difflib
import random
import re
from pathlib import Path
from typing import Any

import pytest

from harness.mutation.mutants import (
    Mutant,
    code_root,
    enumerate_mutants,
    module_mutants,
    mutate_source,
    relative_modules,
    sample,
    select,
    unified_diff,
)

ID = re.compile(r"^system/[a-z_/]+\.py:[A-Za-z_]+:\d+$")


def test_the_reference_modules_are_its_protocol_code(reference_modules: dict[str, Path]) -> None:
    assert {"system/rules.py", "system/replica.py", "system/leader.py", "system/cursor.py", "system/wal.py",
            "system/client.py", "system/operator/election.py", "system/operator/reconfig.py",
            "system/operator/control.py"} <= set(reference_modules)
    assert code_root({"system": next(iter(reference_modules.values())).parent}) == \
        next(iter(reference_modules.values())).parent.parent


@pytest.mark.slow
def test_enumeration_is_stable_and_ids_are_unique_and_readable(reference_modules: dict[str, Path],
                                                               reference_mutants: list[Mutant]) -> None:
    again = enumerate_mutants(reference_modules)
    assert again == reference_mutants
    ids = [m.id for m in reference_mutants]
    assert len(ids) == len(set(ids)) and len(ids) > 1000
    assert all(ID.match(i) for i in ids)
    commit = next(m for m in reference_mutants if m.id == "system/rules.py:NumberReplacer:11")
    assert (commit.original, commit.mutated) == ("return n // 2 + 1", "return n // 2 + 0")
    assert commit.describe().startswith(f"system/rules.py:{commit.line}: return n // 2 + 1  ->  ")


def test_sampling_is_seeded_and_keeps_the_order(reference_mutants: list[Mutant]) -> None:
    a, b = sample(reference_mutants, 40, 7), sample(reference_mutants, 40, 7)
    assert a == b and len(a) == 40
    assert sample(reference_mutants, 40, 8) != a
    order = {m.id: i for i, m in enumerate(reference_mutants)}
    assert [order[m.id] for m in a] == sorted(order[m.id] for m in a)
    assert sample(reference_mutants, None, 1) == reference_mutants
    assert sample(reference_mutants[:3], 10, 1) == reference_mutants[:3]


def test_select_by_module_glob_and_by_id(reference_mutants: list[Mutant]) -> None:
    rules = select(reference_mutants, modules=["rules.py"])
    assert rules and {m.module for m in rules} == {"system/rules.py"}
    operator = select(reference_mutants, modules=["operator/*"])
    assert {m.module for m in operator} >= {"system/operator/election.py", "system/operator/control.py"}
    assert select(reference_mutants, modules=["system/wal.py"]) == [m for m in reference_mutants
                                                                     if m.module == "system/wal.py"]
    one = rules[3].id
    assert [m.id for m in select(reference_mutants, ids=[one])] == [one]
    with pytest.raises(ValueError, match="no such mutant"):
        select(reference_mutants, ids=["system/rules.py:Nothing:0"])


def test_the_shown_line_is_what_cosmic_ray_applies(reference_modules: dict[str, Path],
                                                    reference_mutants: list[Mutant]) -> None:
    by_operator: dict[str, list[Mutant]] = {}
    for m in reference_mutants:
        by_operator.setdefault(m.operator.split("_")[0], []).append(m)
    rnd = random.Random(5)
    chosen = [rnd.choice(ms) for ms in by_operator.values()] + rnd.sample(reference_mutants, 30)
    for m in chosen:
        source = reference_modules[m.module].read_text()
        mutated = mutate_source(m, source)
        before, after = source.split("\n"), mutated.split("\n")
        tag, i1, _, j1, _ = next(op for op in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
                                 if op[0] != "equal")
        assert (m.line, m.original) == (i1 + 1, before[i1].strip()), m.id
        assert m.mutated == ("" if tag == "delete" else after[j1].strip()), m.id
        diff = unified_diff(m, source, mutated)
        assert diff.startswith(f"--- a/{m.module}\n+++ b/{m.module}\n") and f"-{before[i1]}" in diff


def test_annotations_and_pragma_lines_are_not_mutated() -> None:
    source = ("from __future__ import annotations\n\n\n"
              "def f(x: int | None, y: list[int] | None = None) -> int | None:\n"
              "    z: int | None = x\n"
              "    w = x | 1  # pragma: no mutate\n"
              "    return z | 2\n")
    found = module_mutants("pkg/m.py", source, ["core/ReplaceBinaryOperator_BitOr_BitAnd"])
    assert [(m.line, m.mutated, m.occurrence) for m in found] == [(7, "return z & 2", 4)]
    assert mutate_source(found[0], source).endswith("    return z & 2\n")


def test_an_exception_replaced_in_a_handler_goes_uncaught_not_as_a_name_error() -> None:
    source = ("def f(d, k):\n"
              "    try:\n"
              "        return d[k]\n"
              "    except (KeyError, IndexError):\n"
              "        return None\n")
    [m] = [m for m in module_mutants("pkg/m.py", source, ["core/ExceptionReplacer"]) if m.occurrence == 0]
    mutated = mutate_source(m, source)
    assert mutated.split("\n")[3] == "    except (CosmicRayTestingException, IndexError):"
    assert mutated.split("\n")[:3] == source.split("\n")[:3]  # no line moves
    scope: dict[str, Any] = {}
    exec(compile(mutated, "m.py", "exec"), scope)  # the test's own code
    f = scope["f"]
    assert f({"k": 1}, "k") == 1 and f([], 3) is None  # the other handler still catches
    with pytest.raises(KeyError):  # the replaced one catches nothing: a KeyError, not a NameError
        f({}, "k")


def test_a_mutant_that_no_longer_applies_is_refused() -> None:
    m = Mutant("pkg/m.py", "core/ReplaceComparisonOperator_Lt_Gt", 3, 1, "a < b", "a > b")
    with pytest.raises(ValueError, match="does not apply"):
        mutate_source(m, "a < b\n")


def test_modules_must_lie_under_the_code_folders(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "other.py").write_text("x = 1\n")
    assert relative_modules([tmp_path / "pkg"], {"pkg": tmp_path / "pkg"}) == {"pkg/a.py": (tmp_path / "pkg/a.py")}
    with pytest.raises(ValueError, match="not under"):
        relative_modules([tmp_path / "other.py"], {"pkg": tmp_path / "pkg"})
    with pytest.raises(ValueError, match="does not exist"):
        relative_modules([tmp_path / "pkg" / "b.py"], {"pkg": tmp_path / "pkg"})
