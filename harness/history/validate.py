"""Check that a stream of ops is a well-formed history, naming ``file:line`` for each problem.

Rules (Jepsen semantics):

* indices are unique and increasing; times never go backwards;
* a completion (ok, fail, info) follows an invocation by the same process, with the same ``f``;
* a process does not invoke while its previous op is still open;
* a process whose op ended in ``info`` never invokes again.

The nemesis process is exempt from the pairing rules: Jepsen records its fault events as ``info`` ops.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from harness.history.errors import Problem
from harness.history.op import NEMESIS, Op, OpType


class Validator:
    """Validate ops one at a time, so a history is checked while it is read.

    Args:
        path: the file name used in problems.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._index_lines: dict[int, int] = {}
        self._last_index = -1
        self._last_time = -1
        self._open: dict[object, tuple[int, str]] = {}
        self._crashed: dict[object, int] = {}

    def feed(self, line: int, op: Op) -> Iterator[Problem]:
        """Check one op read at ``line``; yield a problem for each rule it breaks."""
        p = self.path
        first = self._index_lines.get(op.index)
        if first is not None:
            yield Problem(p, line, f"duplicate index {op.index} (first used at line {first})")
        elif op.index <= self._last_index:
            yield Problem(p, line, f"index {op.index} is not greater than the previous index {self._last_index}")
        else:
            self._index_lines[op.index] = line
            self._last_index = op.index
        if op.time < self._last_time:
            yield Problem(p, line, f"time goes backwards: {op.time} after {self._last_time}")
        else:
            self._last_time = op.time
        if op.process == NEMESIS:
            return
        proc = op.process
        if op.type is OpType.INVOKE:
            busy = self._open.get(proc)
            if busy is not None:
                yield Problem(p, line, f"process {proc} invokes while its op from line {busy[0]} is still open")
            crashed = self._crashed.get(proc)
            if crashed is not None:
                yield Problem(p, line, f"process {proc} invokes again after its op ended in info at line {crashed}")
            self._open[proc] = (line, op.f)
            return
        opened = self._open.pop(proc, None)
        if opened is None:
            yield Problem(p, line, f"{op.type.value} completion for process {proc} without an invocation")
            return
        if opened[1] != op.f:
            yield Problem(p, line, f"completion f '{op.f}' does not match the invocation's '{opened[1]}' "
                          f"at line {opened[0]}")
        if op.type is OpType.INFO:
            self._crashed[proc] = line


def validate(path: str, ops: Iterable[tuple[int, Op]]) -> list[Problem]:
    """All problems in ``(line, op)`` pairs, in order."""
    validator = Validator(path)
    return [problem for line, op in ops for problem in validator.feed(line, op)]
