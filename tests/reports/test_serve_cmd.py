"""``fencepost serve`` serves the store on 127.0.0.1 until interrupted; a busy port exits 3."""

from __future__ import annotations

import http.client
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from harness.store import RunStore
from tests.reports.sample_runs import make_run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def wait_until_up(port: int, proc: subprocess.Popen[str], limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited early: {proc.returncode}")
        try:
            get(port, "/favicon.ico")
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("serve did not start")


def test_serves_the_index_and_stops_cleanly_on_interrupt(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    make_run(store)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli.main", "serve", "--store", str(store.root),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_up(port, proc)
        status, body = get(port, "/")
        assert status == 200 and b"register-partition" in body and b'data-verdict="valid"' in body
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert f"http://127.0.0.1:{port}/" in err


def test_a_busy_port_or_missing_store_exits_3(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "harness.cli.main", "serve", "--store", str(tmp_path),
                              "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3 and "already in use" in out.stderr
    out = subprocess.run([sys.executable, "-m", "harness.cli.main", "serve", "--store", str(tmp_path / "none")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3 and "no such store directory" in out.stderr
