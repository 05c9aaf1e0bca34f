"""``fencepost bench spark``'s CPU figure counts this process and its children, waited for or not."""

from __future__ import annotations

import os
import time

from checkers.spark.bench import tree_cpu


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_tree_cpu_counts_children_alive_and_exited() -> None:
    before = tree_cpu()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        _spin(0.4)
        os.write(w, b"x")
        time.sleep(30)
        os._exit(0)
    os.read(r, 1)
    alive = tree_cpu() - before  # the child has spun and still runs
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    _spin(0.2)
    total = tree_cpu() - before
    assert alive >= 0.35
    assert total >= 0.55
