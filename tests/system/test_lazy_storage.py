"""A local cluster on lazy storage: mounted before nodes start, survives a power loss of one node, unmounted at stop."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from system.launcher import Cluster, is_cluster_process, stop_from_file
from system.lazy_storage import fuse_mounts_under
from tests.system.conftest import do_ops, run

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
                                 reason="needs /dev/fuse and fusermount3")]


def test_nodes_run_on_lazy_storage_and_survive_a_power_loss(make_cluster: Callable[..., Cluster],
                                                             tmp_path: Path) -> None:
    c = make_cluster(nodes=3, tablets=1, storage="lazy")
    c.wait_ready(60.0)
    assert sorted(fuse_mounts_under(c.dir)) == sorted(c.procs[n].info["data"] for n in c.node_addrs)
    assert os.path.exists(os.path.join(c.dir, "storage", "n1", "instance.json"))
    results = run(do_ops(c, [("put", (f"k{i}", f"v{i}")) for i in range(20)]))
    assert all(r.type == "ok" for r in results)
    stats = c.mounts["n1"].stats()
    assert stats["fsyncs"] > 0 and stats["writes"] > 0
    for node in ("n1", "n2"):  # a majority loses power, one after the other
        c.kill(node)
        lost = c.drop_unsynced(node, tear=True, seed=1)
        assert set(lost) >= {"dropped_writes", "undone_names", "torn"}
        c.launch(node)
    c.wait_ready(60.0)
    reads = run(do_ops(c, [("get", (f"k{i}",)) for i in range(20)], timeout=20.0))
    assert [r.value for r in reads] == [f"v{i}" for i in range(20)]
    desc = c.description()
    assert desc["storage"] == "lazy" and desc["mounts"]["n1"]["pid"] is not None
    c.stop()
    assert fuse_mounts_under(c.dir) == []
    assert all(m.pid is None for m in c.mounts.values())


def test_wipe_data_gives_an_empty_disk(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=1, storage="lazy")
    c.wait_ready(60.0)
    old = c.node_uuid("n3")
    c.kill("n3")
    c.wipe_data("n3")
    c.launch("n3")
    c.write_description()
    new = c.node_uuid("n3")
    assert new is not None and new != old
    c.kill("n3")
    c.drop_unsynced("n3")  # the old disk's files never come back
    c.launch("n3")
    c.write_description()
    assert c.node_uuid("n3") == new


def test_cluster_down_unmounts_a_detached_cluster(tmp_path: Path) -> None:
    c = Cluster.start(str(tmp_path / "d"), nodes=3, tablets=1, storage="lazy", detach=True)
    try:
        c.wait_ready(60.0)
        pids = stop_from_file(c.dir)
        assert pids
        assert fuse_mounts_under(c.dir) == []
        assert not any(is_cluster_process(p) for p in pids)
    finally:
        c.stop()
    assert fuse_mounts_under(str(tmp_path)) == []
