"""One mutation campaign: each mutant in its own scratch copy, its runs, its class; the campaign's files.

A mutant's seeds stop at its first catch (one caught run decides it). With packages to run alone, a
scored mutant (neither equivalent nor broken) then runs under each of them, again stopping at a
catch. Every run lands in the store as part of the campaign: results.json gets ``campaign`` and
``case`` (the mutant's id, with ``[package]`` for a run of one package alone), so the store's index
groups them, and ``mutant.json`` beside it names the mutant. The campaign's summary is rewritten after
every mutant as ``STORE/mutation/<campaign>.json``, with its page beside it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from harness.mutation.classify import EQUIVALENT, SCORED, UNKNOWN, MutantResult, classify
from harness.mutation.equivalents import Equivalent
from harness.mutation.mutants import Mutant, mutate_source, unified_diff
from harness.mutation.runner import CAUGHT, RunResult, annotate, run_one
from harness.mutation.scratch import Session
from harness.mutation.summary import DEFAULT_LABEL, summarize, write_page
from harness.store import safe_name

PAGES_DIR = "mutation"


def without_nemesis(args: Sequence[str]) -> list[str]:
    """``fencepost test`` options without any ``--nemesis``/``-n``."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in ("--nemesis", "-n"):
            skip = True
        elif not a.startswith("--nemesis="):
            out.append(a)
    return out


class Campaign:
    """Runs mutants one at a time (a context manager: holds the scratch session).

    Args:
        code: the system's code folders by their path relative to the code root.
        sources: each mutable module's code as the mutants were listed from it.
        args: ``fencepost test`` options (the system and time limit included; not the seed or store).
        store: the run store.
        campaign: the campaign's name.
        seeds: the test seeds of each mutant.
        deadline_s: a run still going after this long is stopped (its outcome: timeout).
        packages: fault packages to run each scored mutant under alone (``--per-package``).
        package_args: more ``fencepost test`` options for those runs (the default campaign's settings).
        nemesis_given: whether ``args`` name the faults (else the runs are the system's default campaign).
    """

    def __init__(self, *, code: Mapping[str, Path], sources: Mapping[str, str], args: Sequence[str], store: Path,
                 campaign: str, seeds: Sequence[int], deadline_s: float, packages: Sequence[str] = (),
                 package_args: Sequence[str] = (), nemesis_given: bool = False) -> None:
        self.session = Session(code)
        self.sources = dict(sources)
        self.args = list(args)
        self.store = store
        self.campaign = campaign
        self.seeds = list(seeds)
        self.deadline_s = deadline_s
        self.packages = list(packages)
        self.package_args = list(package_args)
        self.label = ",".join(self._given_nemesis()) if nemesis_given else DEFAULT_LABEL
        self.results: list[MutantResult] = []
        self.baseline_runs: list[RunResult] = []
        self.page_path: Path | None = None
        self.data_path = store / PAGES_DIR / f"{safe_name(campaign)}.json"

    def _given_nemesis(self) -> list[str]:
        for i, a in enumerate(self.args):
            if a in ("--nemesis", "-n") and i + 1 < len(self.args):
                return [self.args[i + 1]]
            if a.startswith("--nemesis="):
                return [a.split("=", 1)[1]]
        return []

    def __enter__(self) -> Campaign:
        self.session.__enter__()
        self.store.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.session.__exit__(kind, error, tb)

    def _run(self, root: Path, seed: int, package: str | None, case: str, mutant: str | None) -> RunResult:
        args = self.args if package is None else [*without_nemesis(self.args), *self.package_args, "--nemesis", package]
        log = self.session.dir / f"run-{os.getpid()}.log"
        result = run_one(root, args, seed, self.store, package=package, deadline_s=self.deadline_s, log_path=log,
                         on_start=self.session.track)
        if result.run is not None:
            annotate(Path(result.run), {"campaign": self.campaign, "case": case, "mutant": mutant,
                                        "package": package})
        return result

    def _runs(self, root: Path, package: str | None, case: str, mutant: str | None) -> list[RunResult]:
        runs = []
        for seed in self.seeds:
            runs.append(self._run(root, seed, package, case, mutant))
            if runs[-1].outcome == CAUGHT:
                break
        return runs

    def baseline(self, on_run: Callable[[RunResult], None] | None = None) -> list[RunResult]:
        """Run the campaign at every seed on an unmutated scratch copy (case ``baseline``)."""
        root = self.session.copy()
        try:
            for seed in self.seeds:
                self.baseline_runs.append(self._run(root, seed, None, "baseline (no mutation)", None))
                if on_run is not None:
                    on_run(self.baseline_runs[-1])
        finally:
            self.session.discard(root)
        return self.baseline_runs

    def run(self, mutant: Mutant, equivalent: Equivalent | None = None) -> MutantResult:
        """Classify one mutant: not run when it is listed equivalent; else its runs in a scratch copy."""
        if equivalent is not None:
            result = MutantResult(mutant, EQUIVALENT, equivalent.reason)
            self.results.append(result)
            return result
        source = self.sources[mutant.module]
        try:
            mutated = mutate_source(mutant, source)
        except ValueError as e:
            result = MutantResult(mutant, UNKNOWN, str(e))
            self.results.append(result)
            return result
        root = self.session.copy()
        try:
            self.session.write(root, mutant.module, mutated)
            runs = self._runs(root, None, mutant.id, mutant.id)
            status, why = classify(runs)
            if status in SCORED:
                for package in self.packages:
                    runs += self._runs(root, package, f"{mutant.id} [{package}]", mutant.id)
        finally:
            self.session.discard(root)
        result = MutantResult(mutant, status, why, unified_diff(mutant, source, mutated), runs)
        self.results.append(result)
        return result

    def write(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """Write the summary so far (``STORE/mutation/<campaign>.json``) and its page; return the summary."""
        summary = summarize(self.results, label=self.label, packages=self.packages, **context)
        self.data_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.data_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(summary, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, self.data_path)
        summary["data"] = str(self.data_path)
        self.page_path = write_page(summary, self.data_path.parent)
        summary["page"] = str(self.page_path) if self.page_path is not None else None
        return summary
