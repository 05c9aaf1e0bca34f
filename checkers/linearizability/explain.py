"""Plain-text explanations of counterexamples, for a reviewer reading a terminal or a report."""

from __future__ import annotations

from typing import Any

from checkers.linearizability.counterexample import Counterexample

MAX_PREFIX_LINES = 12
"""Prefix steps shown before the failure point; earlier ones are summarised."""


def _op_line(cex: Counterexample, i: int) -> str:
    op = cex.ops[i]
    ret = "?" if op.return_pos is None else str(op.return_pos)
    return f"process {op.process}: {op.description}  [history {op.call_pos}..{ret}]"


def explain(cex: Counterexample) -> str:
    """Explain why a partition is not linearizable, in words a reviewer can follow.

    The text gives the longest linearizable prefix found, the state it leaves, the op whose
    completion forces a decision, and for each op that could come next, why it cannot.
    """
    where = "" if cex.label is None else f" for key {cex.label!r}"
    lines = [f"Not linearizable{where} (model {cex.model}, {len(cex.ops)} ops)."]
    n = len(cex.prefix)
    lines.append(f"The longest linearizable prefix has {n} of {len(cex.ops)} ops, "
                 f"starting from {cex.initial_state}:")
    shown = cex.prefix[-MAX_PREFIX_LINES:]
    if n > len(shown):
        lines.append(f"  ... {n - len(shown)} earlier ops ...")
    for k, (i, state) in enumerate(shown, start=n - len(shown) + 1):
        lines.append(f"  {k:>3}. {_op_line(cex, i)}  => {state}")
    lines.append(f"After it the state is {cex.state}.")
    if cex.blocking is not None:
        lines.append(f"This op must be linearized before anything invoked after it completed: "
                     f"{_op_line(cex, cex.blocking)}.")
    if cex.stuck:
        lines.append("None of the ops that could come next can be linearized:")
        for s in cex.stuck:
            lines.append(f"  - {_op_line(cex, s.op)}: {s.reason}")
    return "\n".join(lines)


def explain_all(counterexamples: list[Any], limit: int = 3, witnesses: list[Any] | None = None,
                recheck: str | None = None) -> str:
    """Explain up to ``limit`` counterexamples, one after another, each partition's minimal witness
    (:mod:`checkers.linearizability.witness`) first when there is one."""
    parts = []
    if witnesses:
        from checkers.linearizability.witness_io import explain_witness

        parts = [explain_witness(w, recheck=recheck) for w in witnesses[:limit]]
    parts += [explain(c) for c in counterexamples[:limit]]
    if len(counterexamples) > limit:
        parts.append(f"... and {len(counterexamples) - limit} more non-linearizable partitions.")
    return "\n\n".join(parts)
