"""The mutants of a system's protocol modules, as cosmic-ray generates them.

cosmic-ray finds every position where one of its operators can change the code and applies one of
them by ``(operator, occurrence)``: the occurrence counts that operator's positions in the module, in
the order of a walk over the parse tree. A mutant's id names exactly that, with the module's path
relative to the code root, e.g. ``system/rules.py:ReplaceComparisonOperator_Lt_Gt:2`` (cosmic-ray's
``core/`` operators drop the prefix). Ids stay the same while the module's code does.

Two kinds of position are left out: those inside type annotations (never evaluated under
``from __future__ import annotations``, and never protocol logic), and lines marked
``# pragma: no mutate``. Operators that need arguments (cosmic-ray's variable replacer and inserter)
are not used.
"""

from __future__ import annotations

import copy
import difflib
import fnmatch
import functools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

CORE = "core/"
PRAGMA = "pragma: no mutate"
INSTALL_HINT = "mutation testing needs cosmic-ray: pip install 'fencepost[mutate]' (or make setup)"

Position = tuple[int, int]
REPLACEMENT_EXCEPTION = "CosmicRayTestingException"
"""The exception cosmic-ray's ExceptionReplacer puts in an ``except`` clause in place of the one it names."""
_REPLACEMENT_CLASS = (f"\n\nclass {REPLACEMENT_EXCEPTION}(Exception):  # added by fencepost mutate\n"
                      '    """Raised by nothing: the except clause that names it catches nothing."""\n')


class EngineMissing(RuntimeError):
    """cosmic-ray is not installed."""


@dataclass(frozen=True)
class Mutant:
    """One mutation of one module.

    Attributes:
        module: the module's path relative to the code root, with ``/`` (``system/rules.py``).
        operator: cosmic-ray's operator name (``core/ReplaceComparisonOperator_Lt_Gt``).
        occurrence: cosmic-ray's occurrence of that operator in the module.
        line: the first line the mutation changes (1-based).
        original: that line before the mutation, stripped.
        mutated: that line after it, stripped (empty when the mutation removes the line).
    """

    module: str
    operator: str
    occurrence: int
    line: int
    original: str
    mutated: str

    @property
    def operator_short(self) -> str:
        """The operator's name without cosmic-ray's ``core/`` provider prefix."""
        return self.operator[len(CORE):] if self.operator.startswith(CORE) else self.operator

    @property
    def id(self) -> str:
        """``module:operator:occurrence``: stable while the module's code stays the same."""
        return f"{self.module}:{self.operator_short}:{self.occurrence}"

    def describe(self) -> str:
        """``module:line: original -> mutated``, for one line of output."""
        return f"{self.module}:{self.line}: {self.original}  ->  {self.mutated or '(line removed)'}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with the id."""
        return {"id": self.id, **asdict(self)}


def _cosmic_ray() -> Any:
    try:
        import cosmic_ray.plugins
    except ImportError as e:
        raise EngineMissing(INSTALL_HINT) from e
    return cosmic_ray.plugins


@functools.cache
def operator_names() -> tuple[str, ...]:
    """cosmic-ray's operators that take no arguments, by name, sorted."""
    plugins = _cosmic_ray()
    return tuple(sorted(n for n in plugins.operator_names() if not plugins.get_operator(n).arguments()))


def make_operator(name: str) -> Any:
    """A fresh instance of cosmic-ray's operator ``name``."""
    return _cosmic_ray().get_operator(name)()


def _annotation_spans(tree: Any) -> list[tuple[Position, Position]]:
    """Where the type annotations of a parse tree are: parameters', return values' and variables'."""
    from cosmic_ray.ast import ast_nodes

    spans = []
    for node in ast_nodes(tree):
        annotations = []
        if node.type == "funcdef":
            annotations.append(node.annotation)
            annotations += [p.annotation for p in node.get_params()]
        elif node.type == "annassign":
            annotations.append(node.children[1])
        spans += [(a.start_pos, a.end_pos) for a in annotations if a is not None]
    return spans


def _shown(lines: Sequence[str], node: Any, operator: Any, index: int) -> tuple[int, str, str]:
    """``(line, original, mutated)``: the first line that mutation ``index`` of ``node`` changes, before and
    after. The mutation is made on a copy of the node alone (the module is not parsed again); operators only
    read a node's parent, so the copy shares it."""
    clone = copy.deepcopy(node, {id(node.parent): node.parent})  # the clone keeps its place in the tree
    new = operator.mutate(clone, index)
    code = new.get_code() if new is not None else ""  # with its prefix, which replaces the node's
    (l1, c1), (l2, c2) = node.get_start_pos_of_prefix(), node.end_pos
    before = list(lines[l1 - 1:l2])
    after = (lines[l1 - 1][:c1] + code + lines[l2 - 1][c2:]).split("\n")
    for tag, i1, _i2, j1, _j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        was = before[i1] if i1 < len(before) else ""
        return l1 + min(i1, len(before) - 1), was.strip(), after[j1].strip() if tag != "delete" else ""
    return l1, before[0].strip(), after[0].strip()


def module_mutants(module: str, source: str, operators: Iterable[str] | None = None) -> list[Mutant]:
    """Every mutant of ``source`` (the code of ``module``, its path relative to the code root), in
    line order."""
    from cosmic_ray.ast import ast_nodes, get_ast

    tree = get_ast(source)
    lines = source.split("\n")
    skipped_lines = {i + 1 for i, text in enumerate(lines) if PRAGMA in text}
    spans = _annotation_spans(tree)
    nodes = list(ast_nodes(tree))
    found = []
    for name in operators if operators is not None else operator_names():
        operator = make_operator(name)
        occurrence = 0
        for node in nodes:
            for index, (start, _end) in enumerate(operator.mutation_positions(node)):
                if start[0] not in skipped_lines and not any(s <= start < e for s, e in spans):
                    line, original, mutated = _shown(lines, node, operator, index)
                    found.append(Mutant(module, name, occurrence, line, original, mutated))
                occurrence += 1
    return sorted(found, key=lambda m: (m.line, m.operator, m.occurrence))


def code_root(code: Mapping[str, Path]) -> Path:
    """The folder that holds every code folder at its relative path (``{"system": /repo/system}``: /repo).

    Raises:
        ValueError: a folder does not end with its relative path, or two disagree on the root.
    """
    roots = set()
    for rel, folder in code.items():
        parts = Path(rel).parts
        path = Path(folder).resolve()
        if not parts or path.parts[-len(parts):] != parts:
            raise ValueError(f"code folder {path} does not end with {rel}")
        roots.add(path.parents[len(parts) - 1])
    if len(roots) != 1:
        raise ValueError(f"code folders under {len(roots)} roots: {', '.join(sorted(map(str, roots)))}")
    return roots.pop()


def relative_modules(modules: Iterable[Path], code: Mapping[str, Path]) -> dict[str, Path]:
    """``{module relative to the code root: its file}`` for every mutable module (``.py`` files of a
    folder named among them), sorted.

    Raises:
        ValueError: a module is missing or lies outside every code folder.
    """
    root = code_root(code)
    folders = [Path(f).resolve() for f in code.values()]
    out: dict[str, Path] = {}
    for module in modules:
        path = Path(module).resolve()
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            if not f.is_file():
                raise ValueError(f"mutable module {f} does not exist")
            if not any(f.is_relative_to(folder) for folder in folders):
                raise ValueError(f"mutable module {f} is not under the system's code folders")
            out[f.relative_to(root).as_posix()] = f
    return dict(sorted(out.items()))


def enumerate_mutants(modules: Mapping[str, Path]) -> list[Mutant]:
    """Every mutant of every module (``{relative path: file}``), module by module, in line order."""
    return [m for rel, path in modules.items() for m in module_mutants(rel, path.read_text(encoding="utf-8"))]


def module_matches(module: str, pattern: str) -> bool:
    """Whether ``module`` (a relative path) matches ``pattern``: a glob over the whole path, or over its tail
    (``rules.py`` and ``operator/*`` match ``system/rules.py`` and ``system/operator/election.py``)."""
    return fnmatch.fnmatchcase(module, pattern) or fnmatch.fnmatchcase(module, f"*/{pattern}")


def module_of(mutant_id: str) -> str:
    """The module a mutant id names (its part before the first ``:``)."""
    return mutant_id.split(":", 1)[0]


def select(mutants: Sequence[Mutant], *, modules: Sequence[str] = (), ids: Sequence[str] = ()) -> list[Mutant]:
    """The mutants whose module matches one of ``modules`` (all when empty) and, when ``ids`` are given,
    whose id is one of them, in the given order.

    Raises:
        ValueError: an id that names no mutant.
    """
    chosen = [m for m in mutants if not modules or any(module_matches(m.module, p) for p in modules)]
    if ids:
        known = {m.id for m in mutants}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ValueError(f"no such mutant: {', '.join(unknown)} (see `fencepost mutate --list`)")
        wanted = set(ids)
        chosen = [m for m in chosen if m.id in wanted]
    return chosen


def sample(mutants: Sequence[Mutant], n: int | None, seed: int) -> list[Mutant]:
    """A seeded random sample of ``n`` mutants, in their given order (all of them when ``n`` is None or
    at least their number). The same mutants and seed give the same sample."""
    if n is None or n >= len(mutants):
        return list(mutants)
    picked = sorted(random.Random(seed).sample(range(len(mutants)), n))
    return [mutants[i] for i in picked]


def mutate_source(mutant: Mutant, source: str) -> str:
    """``source`` (the module's code) with ``mutant`` applied, by cosmic-ray.

    cosmic-ray's ExceptionReplacer names :data:`REPLACEMENT_EXCEPTION` in an ``except`` clause so that the
    clause catches nothing, but leaves the name undefined: the clause would then raise NameError whenever an
    exception reached it, a louder change than the mutant means. So the mutated module gets the class at its
    end (no line moves; except clauses look names up when they run, after the module has loaded).

    Raises:
        ValueError: the mutant does not apply to this code (it changed since the mutant was listed).
    """
    from cosmic_ray.mutating import mutate_code

    mutated = mutate_code(source, make_operator(mutant.operator), mutant.occurrence)
    if mutated is None or mutated == source:
        raise ValueError(f"mutant {mutant.id} does not apply to the code of {mutant.module}")
    mutated = str(mutated)
    if REPLACEMENT_EXCEPTION in mutated and REPLACEMENT_EXCEPTION not in source:
        mutated = mutated.rstrip("\n") + "\n" + _REPLACEMENT_CLASS
    return mutated


def unified_diff(mutant: Mutant, before: str, after: str, context: int = 2) -> str:
    """The mutation as a unified diff of the module."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{mutant.module}", f"b/{mutant.module}", n=context))
