"""Operation histories: the op model, pairing, formats and validation."""

from harness.history.errors import HistoryError, Problem
from harness.history.op import Call, Op, OpType, Process

__all__ = ["Call", "HistoryError", "Op", "OpType", "Problem", "Process"]
