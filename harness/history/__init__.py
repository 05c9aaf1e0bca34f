"""Operation histories: the op model, pairing, formats and validation."""

from harness.history.op import Call, Op, OpType, Process
from harness.history.errors import HistoryError, Problem

__all__ = ["Call", "HistoryError", "Op", "OpType", "Problem", "Process"]
