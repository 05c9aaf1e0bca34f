"""Check that a stream of ops is a well-formed history, naming ``file:line`` for each problem.

Rules (Jepsen semantics):

* indices strictly increase (so are unique); times never go backwards (unless time is advisory, as in
  Jepsen's EDN: then each step back is counted, and :meth:`Validator.warnings` reports them);
* a completion (ok, fail, info) follows an invocation by the same process, with the same ``f``;
* a process does not invoke while its previous op is still open;
* a process whose op ended in ``info`` never invokes again.

The nemesis process is exempt from the pairing rules: Jepsen records its fault events as ``info`` ops.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.history.errors import Problem
from harness.history.op import NEMESIS, Op, OpType

_INVOKE = OpType.INVOKE
_INFO = OpType.INFO


class Validator:
    """Validate ops one at a time, so a history is checked while it is read.

    Args:
        path: the file name used in problems.
        strict_time: time going backwards is a problem; when False it is only counted (advisory time).
    """

    def __init__(self, path: str, *, strict_time: bool = True) -> None:
        self.path = path
        self.strict_time = strict_time
        self.time_steps_back = 0
        """Ops whose time is below the previous op's (counted when time is advisory)."""
        self._first_step_back: Problem | None = None
        self._last_index_line = 0
        self._last_index = -1
        self._last_time = -1
        self._open: dict[object, tuple[int, str]] = {}
        self._crashed: dict[object, int] = {}

    def feed(self, line: int, op: Op) -> list[Problem]:
        """Check one op read at ``line``; return a problem for each rule it breaks (usually none)."""
        # The well-formed case in one pass; anything else is decided by _check, before any change.
        index, time, proc = op.index, op.time, op.process
        if index > self._last_index and time >= self._last_time and type(proc) is int:
            if op.type is _INVOKE:
                if proc not in self._open and proc not in self._crashed:
                    self._last_index, self._last_index_line, self._last_time = index, line, time
                    self._open[proc] = (line, op.f)
                    return []
            else:
                opened = self._open.get(proc)
                if opened is not None and opened[1] == op.f:
                    self._last_index, self._last_index_line, self._last_time = index, line, time
                    del self._open[proc]
                    if op.type is _INFO:
                        self._crashed[proc] = line
                    return []
        return self._check(line, op)

    def _check(self, line: int, op: Op) -> list[Problem]:
        """Every rule, with a message for each one broken."""
        found: list[Problem] = []
        p = self.path
        index = op.index
        if index > self._last_index:  # the common case
            self._last_index, self._last_index_line = index, line
        elif index == self._last_index:
            found.append(Problem(p, line, f"duplicate index {index} (first used at line {self._last_index_line})"))
        else:
            found.append(Problem(p, line, f"index {index} is not greater than the previous index {self._last_index}"))
        if op.time < self._last_time:
            if self.strict_time:
                found.append(Problem(p, line, f"time goes backwards: {op.time} after {self._last_time}"))
            else:
                self.time_steps_back += 1
                if self._first_step_back is None:
                    self._first_step_back = Problem(p, line, f"{op.time} after {self._last_time}")
                self._last_time = op.time
        else:
            self._last_time = op.time
        proc = op.process
        if proc == NEMESIS:
            return found
        if op.type is OpType.INVOKE:
            busy = self._open.get(proc)
            if busy is not None:
                found.append(Problem(p, line, f"process {proc} invokes while its op from line {busy[0]} is still open"))
            crashed = self._crashed.get(proc)
            if crashed is not None:
                found.append(
                    Problem(p, line, f"process {proc} invokes again after its op ended in info at line {crashed}")
                )
            self._open[proc] = (line, op.f)
            return found
        opened = self._open.pop(proc, None)
        if opened is None:
            found.append(Problem(p, line, f"{op.type.value} completion for process {proc} without an invocation"))
            return found
        if opened[1] != op.f:
            found.append(Problem(p, line, f"completion f '{op.f}' does not match the invocation's '{opened[1]}' "
                                 f"at line {opened[0]}"))
        if op.type is OpType.INFO:
            self._crashed[proc] = line
        return found


    def warnings(self) -> list[Problem]:
        """What is worth saying but did not make the history malformed: advisory time going backwards,
        as one warning at the first ``file:line`` with the count."""
        first = self._first_step_back
        if first is None:
            return []
        n = self.time_steps_back
        return [Problem(first.path, first.line, f"time goes backwards here ({first.message}) and at {n} "
                                                f"op{'s' if n != 1 else ''} in all; ops are ordered by position, "
                                                f"as Jepsen does")]


def validate(path: str, ops: Iterable[tuple[int, Op]]) -> list[Problem]:
    """All problems in ``(line, op)`` pairs, in order."""
    validator = Validator(path)
    return [problem for line, op in ops for problem in validator.feed(line, op)]
