"""The run-level linearizability checker: pairs a run's history and checks it against a model.

It wraps :func:`checkers.linearizability.check_calls` in the :class:`harness.checker_protocol.Checker` protocol,
checks every key (all violations, not only the first), explains each counterexample in words, and
writes the interactive counterexample page ``linearizability.html`` into the run folder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from checkers.linearizability import check_calls
from checkers.linearizability.explain import explain_all
from checkers.models import make_model
from harness.checker_protocol import CheckContext
from harness.history.op import Op
from harness.history.pairing import pair_calls

HTML_NAME = "linearizability.html"


class LinearizableChecker:
    """Linearizability of the client ops (nemesis ops are ignored) against a named model.

    Args:
        model: a model name from :data:`checkers.models.MODELS`.
        init: the model's initial value (None: the model's default).
        timeout: seconds before the verdict becomes unknown.
    """

    name = "linearizable"

    def __init__(self, model: str, init: Any = None, timeout: float = 120.0) -> None:
        self.model = model
        self.init = init
        self.timeout = timeout

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Check every key; the result lists invalid and unknown keys, explains and links each counterexample."""
        calls = pair_calls(history)
        res = check_calls(calls, make_model(self.model, self.init), timeout=self.timeout, all_violations=True)
        counterexamples = [f.counterexample for f in res.failures if f.counterexample is not None]
        keys: dict[str, dict[str, bool | str]] = {str(k): {"valid": False} for k in res.invalid_keys}
        keys.update({str(k): {"valid": "unknown"} for k in res.unknown_keys})
        out: dict[str, Any] = {
            "valid": res.valid,
            "model": res.model,
            "ops": res.ops,
            "partitions": res.partitions,
            "invalid_keys": res.invalid_keys,
            "unknown_keys": res.unknown_keys,
            "keys": keys,
            "counterexamples": [dataclasses.asdict(c) for c in counterexamples],
        }
        if res.valid is True:
            out["explanation"] = f"All {res.partitions} keys are linearizable ({res.ops} operations)."
        elif counterexamples:
            out["explanation"] = explain_all(counterexamples)
        else:
            out["explanation"] = (f"The search ran out of time on {len(res.unknown_keys)} key(s) "
                                  f"after {self.timeout:g} s: the verdict is unknown, never valid.")
        if counterexamples and ctx.run_dir is not None:
            from checkers.linearizability.html import render_html

            page = render_html(f"Linearizability: {ctx.test.get('name', 'run')}", counterexamples,
                               {"verdict": "invalid", "model": res.model, "ops": res.ops,
                                "invalid keys": ", ".join(map(str, res.invalid_keys))})
            (ctx.run_dir / HTML_NAME).write_text(page, encoding="utf-8")
            out["html"] = HTML_NAME
        return out
