"""The run-level linearizability checker: pairs a run's history and checks it against a model.

It wraps :func:`checkers.linearizability.check_calls` in the :class:`checkers.api.Checker` protocol,
checks every key (all violations, not only the first), and keeps each counterexample in the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from checkers.api import CheckContext
from checkers.linearizability import check_calls
from checkers.models import make_model
from harness.history.op import Op
from harness.history.pairing import pair_calls


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
        """Check every key; the result lists invalid and unknown keys and each counterexample."""
        calls = pair_calls(history)
        res = check_calls(calls, make_model(self.model, self.init), timeout=self.timeout, all_violations=True)
        return {
            "valid": res.valid,
            "model": res.model,
            "ops": res.ops,
            "partitions": res.partitions,
            "invalid_keys": res.invalid_keys,
            "unknown_keys": res.unknown_keys,
            "counterexamples": [dataclasses.asdict(f.counterexample) for f in res.failures if f.counterexample],
        }
