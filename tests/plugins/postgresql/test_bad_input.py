"""What the PostgreSQL plugin refuses, each in one line with exit 3, before anything starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugins.postgresql.kit import WHY_NOT

pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"PostgreSQL: {WHY_NOT}")


def fencepost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize(("args", "says"), [
    (["--workload", "register"], "does not run workload 'register'"),
    (["--workload", "list-append", "--nemesis", "wipe"], "disk"),
    (["--bug", "no-such-mode"], "unknown bug"),
])
def test_a_run_it_cannot_do_is_one_line_and_exit_3(tmp_path: Path, args: list[str], says: str) -> None:
    done = fencepost("test", "--system", "postgresql", "--time-limit", "5", "--store", str(tmp_path), *args)
    lines = [line for line in done.stderr.splitlines() if "error" in line]
    assert done.returncode == 3 and len(lines) == 1 and says in lines[0], done.stderr
    assert "Traceback" not in done.stderr and not any(tmp_path.iterdir())


def test_the_launcher_without_binaries_says_so_in_one_line(tmp_path: Path) -> None:
    code = str(Path(__file__).resolve().parents[3] / "plugins" / "postgresql")
    done = subprocess.run([sys.executable, "-m", "fencepost_postgresql_node", "--role", "primary", "--name", "n1",
                           "--data", str(tmp_path / "d"), "--host", "127.0.0.1", "--port", "1",
                           "--bin", str(tmp_path / "nothing")], capture_output=True, text=True, timeout=60,
                          cwd=code, env={**os.environ, "PYTHONPATH": code})
    assert done.returncode != 0 and done.stderr.strip().count("\n") == 0, done.stderr
    assert "no PostgreSQL server at" in done.stderr


@pytest.mark.slow
def test_a_port_in_use_is_named_by_the_servers_own_line(tmp_path: Path) -> None:
    import dataclasses
    import socket

    from fencepost_postgresql.plugin import PostgresPlugin

    from harness.config import TestConfig
    from harness.launch import prepare, run_test

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]

        class OnABusyPort(PostgresPlugin):
            def processes(self, test, layout):
                spec = super().processes(test, layout)[0]
                argv = list(spec.argv)
                argv[argv.index("--host") + 1], argv[argv.index("--port") + 1] = "127.0.0.1", str(port)
                return [dataclasses.replace(spec, argv=tuple(argv), port=port)]

        config = TestConfig(system="postgresql", workload="list-append", nodes=1, time_limit=2)
        with pytest.raises(RuntimeError, match=r"n1 exited with 1 .*FATAL:  could not create any TCP/IP sockets"):
            run_test(config, tmp_path, prepared=prepare(config, system=OnABusyPort()))
