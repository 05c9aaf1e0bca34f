"""Read a run folder for display, tolerating whatever is missing, torn, old or new.

A run folder may come from an earlier or later Fencepost, or from a run killed half-way: test.json
may lack fields or carry unknown ones, results.json may be absent, the history may be torn or missing,
and a checker's result may be any JSON value. Loading never raises for any of this; each problem
becomes a note the report shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.history.errors import HistoryError
from harness.history.op import Op
from harness.store import RunDir

Verdict = Literal["valid", "invalid", "unknown", "unchecked"]
"""A run's or checker's verdict as a word; ``unchecked`` means no results yet."""


def verdict_of(value: Any) -> Verdict:
    """A validity value, in any form some version wrote, as a word.

    ``True``/``"true"``/``"valid"`` is valid, ``False``/``"false"``/``"invalid"`` is invalid,
    anything else (``"unknown"``, None, junk) is unknown.
    """
    if value is True or (isinstance(value, str) and value.lower() in ("true", "valid")):
        return "valid"
    if value is False or (isinstance(value, str) and value.lower() in ("false", "invalid")):
        return "invalid"
    return "unknown"


def _read_json(path: Path, notes: list[str]) -> Any:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        notes.append(f"{path.name} could not be read: {e}")
        return None


@dataclass
class RunView:
    """Everything the report shows about one run, read tolerantly.

    Attributes:
        path: the run folder.
        config: test.json (empty when missing or unreadable).
        results: results.json, or None when the run was never checked.
        history: the ops, or None when the history is missing or unreadable.
        notes: what was missing or wrong, in words.
    """

    path: Path
    config: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] | None = None
    history: list[Op] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def run(self) -> RunDir:
        """The run's folder as a :class:`RunDir`."""
        return RunDir(self.path)

    @property
    def verdict(self) -> Verdict:
        """The merged verdict, or ``unchecked`` when there are no results."""
        if self.results is None:
            return "unchecked"
        return verdict_of(self.results.get("valid", self.results.get("valid?")))

    @property
    def checker_results(self) -> dict[str, dict[str, Any]]:
        """Each checker's result, every one as a dict (a bare value becomes ``{"valid": value}``)."""
        if self.results is None:
            return {}
        raw = self.results.get("checkers", self.results.get("results"))
        if not isinstance(raw, dict):
            return {}
        out: dict[str, dict[str, Any]] = {}
        for name, result in raw.items():
            out[str(name)] = dict(result) if isinstance(result, dict) else {"valid": result}
        return out

    @property
    def name(self) -> str:
        """The test's name, from test.json, else the folder."""
        name = self.config.get("name")
        return str(name) if name else self.path.parent.name


def load_run(path: str | Path, *, with_history: bool = True) -> RunView:
    """Read a run folder; never raises for missing or malformed pieces (see :class:`RunView`)."""
    where = Path(path)
    view = RunView(where.resolve() if where.is_symlink() else where)  # STORE/latest names its run
    run = view.run
    config = _read_json(run.test_json, view.notes)
    if config is None and not run.test_json.exists():
        view.notes.append("test.json is missing: the test config is unknown")
    if isinstance(config, dict):
        view.config = config
    elif config is not None:
        view.notes.append("test.json does not hold a JSON object; ignored")
    results = _read_json(run.results_json, view.notes)
    if isinstance(results, dict):
        view.results = results
    elif results is not None:
        view.notes.append("results.json does not hold a JSON object; ignored")
    elif not run.results_json.exists():
        view.notes.append("results.json is missing: this run has not been checked")
    if with_history:
        if not run.history_path.exists():
            view.notes.append("history.jsonl is missing")
        else:
            try:
                view.history = run.read_history()
            except HistoryError as e:
                shown = "; ".join(str(p) for p in e.problems[:3])
                more = f" (and {len(e.problems) - 3} more)" if len(e.problems) > 3 else ""
                view.notes.append(f"history.jsonl could not be read: {shown}{more}")
            except (OSError, UnicodeDecodeError) as e:
                view.notes.append(f"history.jsonl could not be read: {e}")
    return view
