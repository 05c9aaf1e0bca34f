"""The workers' record of how a client's operation ended: outcome, error, and a crash when it raised."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from checkers.client_crash import ClientCrashChecker
from harness.checker_protocol import CheckContext
from harness.client_workers import Tally, client_worker, invoke_and_record
from harness.detection import detection
from harness.generator import RateLimiter
from harness.history.formats import load_history
from harness.history.op import OpType
from harness.protocols import Invocation, Outcome
from harness.recorder import Recorder


class Scripted:
    """A client whose every invoke does what ``script`` says next: return an outcome, or raise."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script

    async def invoke(self, op: Invocation) -> Outcome:
        step = self.script.pop(0)
        if isinstance(step, BaseException):
            raise step  # RAISED_AT
        if step == "sleep":
            await asyncio.sleep(5)
        if step == "none":
            return None  # type: ignore[return-value]  # a client that forgot to return
        return Outcome("ok", op.value) if step == "ok" else Outcome("fail", None, "refused")


RAISED_AT = next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                 if line.endswith("# RAISED_AT"))


def record(tmp_path: Path, script: list[Any]) -> Path:
    path = tmp_path / "history.jsonl"
    recorder = Recorder(path)
    holder = [Scripted(list(script))]

    async def run() -> None:
        for i in range(len(script)):
            await invoke_and_record(holder, i, Invocation("write", 0, i), recorder, 0.2, Tally())

    asyncio.run(run())
    recorder.close()
    return path


def test_a_raised_programming_error_is_recorded_as_a_crash_and_judged(tmp_path: Path) -> None:
    path = record(tmp_path, ["ok", "fail", ConnectionResetError("peer went away"), "sleep", "none",
                             KeyError("n2~2")])
    done = [op for op in load_history(path) if op.type is not OpType.INVOKE]
    assert [op.type for op in done] == [OpType.OK, OpType.FAIL, OpType.INFO, OpType.INFO, OpType.INFO, OpType.INFO]
    assert [op.extra.get("crash", {}).get("type") for op in done] == [
        None, None, "ConnectionResetError", None, "AttributeError", "KeyError"]
    assert [op.extra.get("crash", {}).get("programming") for op in done] == [None, None, False, None, True, True]
    assert done[5].extra["crash"]["at"].endswith(f"test_workers.py:{RAISED_AT}")  # where the client raised it
    assert done[3].error == "timeout"

    history = load_history(path)
    result = ClientCrashChecker().check(history, CheckContext())
    assert result["valid"] is False and result["count"] == 2
    assert [(c["type"], c["index"]) for c in result["crashes"]] == [("AttributeError", done[4].index),
                                                                     ("KeyError", done[5].index)]
    assert "1 x AttributeError at " in result["explanation"]
    # The first evidence is the first crashed operation, in test time.
    found = detection({"client-crash": result}, history)
    assert found["first_anomaly_s"] == round(done[4].time / 1e9, 3)


def test_refusals_lost_connections_and_timeouts_are_no_crash(tmp_path: Path) -> None:
    path = record(tmp_path, ["ok", "fail", ConnectionRefusedError("no"), TimeoutError(), "sleep"])
    result = ClientCrashChecker().check(load_history(path), CheckContext())
    assert result["valid"] is True and result["count"] == 0


class BoundClient:
    """A client that notes in ``log`` which worker it was bound to when it was opened and closed; every op is
    info."""

    def __init__(self, log: list[tuple[str, int | None]]) -> None:
        self.log = log
        self.worker: int | None = None

    def bind(self, worker: int) -> None:
        self.worker = worker

    async def open(self, cluster: Any) -> None:
        self.log.append(("open", self.worker))

    async def invoke(self, op: Invocation) -> Outcome:
        return Outcome("info", None, "timeout")

    async def close(self) -> None:
        self.log.append(("close", self.worker))


class ThreeOps:
    """Three writes for each worker, then nothing."""

    def __init__(self) -> None:
        self.left = {1: 3, 4: 3}

    def next_op(self, worker: int) -> Invocation | None:
        if self.left[worker] == 0:
            return None
        self.left[worker] -= 1
        return Invocation("write", worker, self.left[worker])


def test_a_worker_binds_every_client_it_opens_to_itself_before_opening_it(tmp_path: Path) -> None:
    log: list[tuple[str, int | None]] = []
    recorder = Recorder(tmp_path / "history.jsonl")
    source = ThreeOps()

    async def run() -> None:
        deadline = time.monotonic() + 10
        await asyncio.gather(*(client_worker(w, 5, lambda: BoundClient(log), source, None, recorder,  # type: ignore[arg-type]
                                             RateLimiter(0), deadline, 1.0, Tally()) for w in (1, 4)))

    asyncio.run(run())
    recorder.close()
    # each info reopens the client: an opening, three reopenings, each bound to the worker it serves
    assert sorted(log) == sorted([("open", 1)] * 4 + [("close", 1)] * 4 + [("open", 4)] * 4
                                             + [("close", 4)] * 4)
