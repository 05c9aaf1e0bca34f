from __future__ import annotations

from checkers.exceptions import ExceptionsChecker, error_class
from harness.checker_protocol import CheckContext
from harness.history.op import Op, OpType


def test_error_classes_group_similar_errors() -> None:
    assert error_class("ConnectionRefusedError: [Errno 111] Connection refused") == "ConnectionRefusedError"
    assert error_class("timeout after 502 ms") == error_class("timeout after 17 ms") == "timeout after N ms"
    assert error_class(["not-leader", 3]) == "not-leader"
    assert error_class({"type": "unavailable", "node": "n1"}) == "unavailable"
    assert error_class("") == "(empty)"


def test_groups_fail_and_info_errors_by_class_most_common_first() -> None:
    history: list[Op] = []
    errors = ["timeout after 500 ms", "ConnectionRefusedError: [Errno 111] refused", "timeout after 501 ms"]
    for p, err in enumerate(errors):
        history.append(Op(len(history), len(history), p, OpType.INVOKE, "write", value=p))
        history.append(Op(len(history), len(history), p, OpType.INFO if "timeout" in err else OpType.FAIL, "write",
                          error=err))
    history.append(Op(len(history), len(history), 9, OpType.INVOKE, "read"))
    history.append(Op(len(history), len(history), 9, OpType.OK, "read", value=1, error="ignored on ok"))
    result = ExceptionsChecker().check(history, CheckContext())
    assert result["valid"] is True
    assert result["count"] == 3
    first, second = result["groups"]
    assert (first["error"], first["count"], first["by_type"], first["by_f"]) == (
        "timeout after N ms", 2, {"info": 2}, {"write": 2})
    assert first["example"]["error"] == "timeout after 500 ms"
    assert (second["error"], second["by_type"]) == ("ConnectionRefusedError", {"fail": 1})
