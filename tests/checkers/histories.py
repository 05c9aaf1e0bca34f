"""Build small crafted histories for checker tests."""

from __future__ import annotations

from typing import Any

from harness.history.op import Op, OpType

CallSpec = tuple[Any, str, Any, Any, str, Any]
"""(process, f, key, input, outcome, output)."""


def sequential(*calls: CallSpec, step_ns: int = 1) -> list[Op]:
    """Calls run one after another: each invocation is followed at once by its completion."""
    ops: list[Op] = []
    for proc, f, key, value, outcome, output in calls:
        ops.append(Op(len(ops), len(ops) * step_ns, proc, OpType.INVOKE, f, key, value))
        ops.append(Op(len(ops), len(ops) * step_ns, proc, OpType(outcome), f, key, output))
    return ops
