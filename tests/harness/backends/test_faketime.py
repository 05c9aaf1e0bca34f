"""libfaketime really moves a child Python's wall clock, and only the wall clock, when the offset file changes."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends import faketime

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(faketime.why_unavailable() is not None, reason=f"{faketime.why_unavailable()}")

# The child prints one JSON line per request line on stdin: its wall and monotonic clocks.
CHILD = """
import asyncio, json, sys, threading, time
for line in sys.stdin:
    if line.strip() == "wait":  # a timed wait in a thread must still time out
        t0 = time.monotonic(); threading.Event().wait(0.2)
        print(json.dumps({"waited": time.monotonic() - t0}), flush=True)
    elif line.strip() == "loop":  # asyncio timers and worker threads keep working
        async def main():
            t0 = time.monotonic()
            for _ in range(20):
                await asyncio.sleep(0.01)
                await asyncio.to_thread(len, "x")
            return time.monotonic() - t0
        print(json.dumps({"loop": asyncio.run(main())}), flush=True)
    else:
        print(json.dumps({"wall": time.time(), "mono": time.monotonic()}), flush=True)
"""


def env_for(tmp_path: Path, node: str = "n1") -> dict[str, str]:
    env = dict(os.environ)
    env.update({k: v.format(dir=str(tmp_path), node=node) for k, v in faketime.node_env().items()})
    return env


class Child:
    """A Python child under libfaketime that answers clock questions over a pipe."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True)

    def ask(self, what: str = "clock") -> dict[str, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        answer: dict[str, float] = json.loads(self.proc.stdout.readline())
        return answer

    def offsets(self) -> tuple[float, float]:
        """(child wall - our wall, child monotonic - our monotonic), both measured around one request."""
        w0, m0 = time.time(), time.monotonic()
        got = self.ask()
        w1, m1 = time.time(), time.monotonic()
        return got["wall"] - (w0 + w1) / 2, got["mono"] - (m0 + m1) / 2

    def close(self) -> None:
        """End of input: the child exits normally, so libfaketime removes its /dev/shm files itself."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        faketime.remove_leftovers([self.proc.pid])


@pytest.fixture
def child(tmp_path: Path) -> Iterator[Child]:
    c = Child(env_for(tmp_path))
    try:
        yield c
    finally:
        c.close()


def test_the_env_points_each_node_at_its_own_offset_file() -> None:
    env = faketime.node_env()
    assert env["LD_PRELOAD"] == faketime.library() and env["FAKETIME_NO_CACHE"] == "1"
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"
    assert env["FAKETIME_TIMESTAMP_FILE"].format(dir="/c", node="n2") == "/c/clock/n2.rc"


def test_a_missing_library_is_named_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FENCEPOST_LIBFAKETIME", "/nonexistent/libfaketime.so.1")
    with pytest.raises(faketime.FaketimeUnavailable, match=r"apt-get install -y libfaketime"):
        faketime.node_env()
    assert "apt-get install -y libfaketime" in str(faketime.why_unavailable())


def test_offsets_round_trip_and_are_written_atomically(tmp_path: Path) -> None:
    path = faketime.clock_file(tmp_path, "n1")
    assert faketime.read_offset(path) == 0.0
    for seconds in (5.0, -120.25, 0.0, 0.001):
        faketime.write_offset(path, seconds)
        assert faketime.read_offset(path) == pytest.approx(seconds)
    assert faketime.format_offset(-1.5) == "-1.500" and faketime.format_offset(2) == "+2.000"
    assert [p.name for p in path.parent.iterdir()] == ["n1.rc"]  # no temp file left
    with pytest.raises(ValueError, match=r"starts with \+ or -"):
        faketime.parse_offset("5")


def test_rewriting_the_file_moves_the_wall_clock_at_once_and_never_the_monotonic(tmp_path: Path, child: Child) -> None:
    path = faketime.clock_file(tmp_path, "n1")
    wall, _ = child.offsets()
    assert abs(wall) < 0.5  # no file yet: real time
    for seconds in (5.0, -90.0, 0.25, 0.0):
        faketime.write_offset(path, seconds)
        wall, mono = child.offsets()
        assert wall == pytest.approx(seconds, abs=0.1), f"offset {seconds}"
        assert abs(mono) < 0.1, "the monotonic clock must not move"


def test_timed_waits_and_asyncio_keep_working_while_the_clock_strobes(tmp_path: Path, child: Child) -> None:
    path = faketime.clock_file(tmp_path, "n1")
    stop = threading.Event()

    def flip() -> None:
        for i in range(10_000):
            if stop.is_set():
                break
            faketime.write_offset(path, 30.0 if i % 2 else -30.0)
            stop.wait(0.003)

    flipper = threading.Thread(target=flip)
    flipper.start()
    try:
        assert 0.19 < child.ask("wait")["waited"] < 2.0
        assert child.ask("loop")["loop"] < 5.0
        assert abs(child.offsets()[0]) == pytest.approx(30.0, abs=0.5)
    finally:
        stop.set()
        flipper.join()


def test_a_killed_childs_shm_files_are_removed_and_a_clean_exit_leaves_none(tmp_path: Path) -> None:
    killed = subprocess.Popen([sys.executable, "-c", "import time, sys; time.time(); sys.stdin.read()"],
                              env=env_for(tmp_path), stdin=subprocess.PIPE)
    clean = subprocess.Popen([sys.executable, "-c", "import time; time.time()"], env=env_for(tmp_path))
    assert clean.wait(30) == 0
    try:
        deadline = time.monotonic() + 10
        while not (faketime.SHM_DIR / f"faketime_shm_{killed.pid}").exists():
            assert time.monotonic() < deadline, "libfaketime made no shared memory segment"
            time.sleep(0.05)
        assert faketime.remove_leftovers([killed.pid]) == []  # still alive: kept
    finally:
        killed.kill()
        killed.wait(10)
        assert killed.stdin is not None
        killed.stdin.close()
    assert faketime.remove_leftovers([killed.pid]) == [f"faketime_shm_{killed.pid}", f"sem.faketime_sem_{killed.pid}"]
    assert not (faketime.SHM_DIR / f"faketime_shm_{clean.pid}").exists()


def _calls_time_sleep(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(n, ast.Attribute) and n.attr == "sleep" and isinstance(n.value, ast.Name)
               and n.value.id == "time" for n in ast.walk(tree))


def test_no_module_a_node_loads_calls_time_sleep() -> None:
    """time.sleep raises EINVAL under libfaketime with an unfaked monotonic clock: the node must not use it."""
    out = subprocess.run([sys.executable, "-c", "import sys, system.node; print('\\n'.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=REPO, check=True).stdout.split()
    modules = [m for m in out if m == "system" or m.startswith("system.")]
    assert "system.replica" in modules
    files = [REPO / (m.replace(".", "/") + ".py") for m in modules]
    offenders = [str(f.relative_to(REPO)) for f in files if f.exists() and _calls_time_sleep(f)]
    assert offenders == []


def test_time_sleep_fails_under_faketime_which_is_why_the_node_avoids_it(tmp_path: Path) -> None:
    """Documents the libfaketime 0.9.10 caveat the module names; if a newer one fixes it, this says so."""
    run = subprocess.run([sys.executable, "-c", "import time; time.sleep(0.01)"], env=env_for(tmp_path),
                         capture_output=True, text=True, timeout=30)
    if run.returncode == 0:
        pytest.skip("this libfaketime sleeps fine: the caveat in harness.backends.faketime no longer applies")
    assert "Invalid argument" in run.stderr
