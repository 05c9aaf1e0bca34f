"""A real standalone Spark cluster on this machine: one master and one worker, for tests and demos.

PySpark ships ``bin/spark-class``, which starts the master and worker JVMs. :class:`LocalCluster`
starts both on 127.0.0.1 on free ports, waits until the worker has registered, and stops both
(and nothing else) when closed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package (or ``SPARK_HOME``)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalCluster:
    """A standalone master and one worker on 127.0.0.1.

    Attributes:
        master_url: ``spark://127.0.0.1:PORT``, for ``--spark-master``.
        cores: the worker's cores.
        memory: the worker's memory, such as ``2g``.
    """

    def __init__(self, *, cores: int = 2, memory: str = "2g", start_timeout: float = 120.0) -> None:
        self.cores, self.memory, self.start_timeout = cores, memory, start_timeout
        self.port, self.ui_port = _free_port(), _free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self._procs: list[subprocess.Popen[bytes]] = []
        self._dir = tempfile.mkdtemp(prefix="fencepost-spark-cluster-")

    def _spawn(self, name: str, *args: str) -> None:
        env = dict(os.environ, SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                   PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable),
                   SPARK_WORKER_DIR=os.path.join(self._dir, "work"), SPARK_LOG_DIR=self._dir)
        log = open(os.path.join(self._dir, f"{name}.log"), "wb")  # noqa: SIM115 - the child keeps it
        try:
            self._procs.append(subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], env=env,
                                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        finally:
            log.close()

    def start(self) -> LocalCluster:
        """Start the master, then the worker; return once the worker is alive at the master."""
        self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui_port))
        self._wait(lambda s: True, "master")
        self._spawn("worker", "org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1",
                    "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(_free_port()))
        self._wait(lambda s: int(s.get("aliveworkers", 0)) >= 1, "worker")
        return self

    def _wait(self, ready: Callable[[dict[str, Any]], bool], what: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            for p in self._procs:
                if p.poll() is not None:
                    raise RuntimeError(f"the Spark {what} exited ({p.returncode}); logs in {self._dir}")
            with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(
                    f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as r:
                if ready(json.load(r)):
                    return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the Spark {what} did not start in {self.start_timeout:.0f} s; logs in {self._dir}")

    def status(self) -> dict[str, object]:
        """The master's JSON status (workers, cores, applications)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
            return dict(json.load(r))

    def stop(self) -> None:
        """Stop the worker, then the master; wait for both JVMs to exit."""
        for p in reversed(self._procs):
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._procs.clear()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
