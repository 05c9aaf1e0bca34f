"""The metadata store: compare-and-set on versioned records (SQLite always, etcd when installed)."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from system.launcher import pick_port
from system.metadata import MetadataStore, open_store
from system.metadata.etcd_server import etcd_binary, start_etcd
from system.metadata.sqlite_store import SqliteStore


def exercise(store: MetadataStore) -> None:
    assert store.get("shards/1") is None
    assert store.cas("shards/1", {"epoch": 1}, 1) is None  # does not exist yet
    assert store.cas("shards/1", {"epoch": 1}, 0) == 1
    assert store.cas("shards/1", {"epoch": 9}, 0) is None  # already exists
    assert store.cas("shards/1", {"epoch": 2}, 1) == 2
    assert store.cas("shards/1", {"epoch": 3}, 1) is None  # stale version
    rec = store.get("shards/1")
    assert rec is not None and rec.value == {"epoch": 2} and rec.version == 2
    store.cas("shards/2", {"epoch": 0}, 0)
    store.cas("nodes/n1", {"uuid": "u"}, 0)
    assert sorted(store.list("shards/")) == ["shards/1", "shards/2"]


def test_sqlite_cas(tmp_path: Path) -> None:
    store = open_store(f"sqlite://{tmp_path / 'm.db'}")
    try:
        exercise(store)
    finally:
        store.close()


RACER = """
import sys
from system.metadata import open_store
s = open_store(sys.argv[1])
wins = 0
for _ in range(200):
    while True:
        rec = s.get("counter")
        if s.cas("counter", rec.value + 1, rec.version) is not None:
            wins += 1
            break
print(wins)
"""


def test_sqlite_cas_is_linearizable_across_processes(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'm.db'}"
    store = open_store(url)
    store.cas("counter", 0, 0)
    procs = [subprocess.Popen([sys.executable, "-c", RACER, url], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [int(o) for o in outs] == [200, 200, 200]
    rec = store.get("counter")
    assert rec is not None and rec.value == 600 and rec.version == 601
    store.close()


def _open_and_write(url: str, name: str, barrier: Any, results: Any) -> None:
    # SqliteStore is imported up front: an import after the barrier spreads the opens too far apart.
    barrier.wait()
    try:
        store = SqliteStore(url[len("sqlite://"):])
        results.put((name, store.cas("seen/" + name, 1, 0)))
        store.close()
    except Exception as e:  # reported to the test, which fails on it
        results.put((name, repr(e)))


def test_sqlite_opens_a_fresh_file_from_many_processes_at_once(tmp_path: Path) -> None:
    """Operators start together on a fresh file; switching it to WAL must not fail any of them."""
    ctx = multiprocessing.get_context("fork")
    failures = []
    for round_ in range(30):
        url = f"sqlite://{tmp_path / f'm{round_}.db'}"
        barrier, results = ctx.Barrier(3), ctx.Queue()
        procs = [ctx.Process(target=_open_and_write, args=(url, str(i), barrier, results)) for i in range(3)]
        for p in procs:
            p.start()
        got = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        failures += [(round_, name, out) for name, out in got if out != 1]
    assert failures == []


def test_etcd_cas(tmp_path: Path) -> None:
    if etcd_binary() is None:
        pytest.skip("etcd is not installed: apt-get install -y etcd-server")
    port = pick_port(["127.0.0.1"])
    proc = start_etcd(str(tmp_path / "etcd"), "127.0.0.1", port, pick_port(["127.0.0.1"]), str(tmp_path / "etcd.log"))
    try:
        store = open_store(f"etcd://127.0.0.1:{port}")
        exercise(store)
    finally:
        proc.terminate()
        proc.wait(10)


def test_unknown_url_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown metadata URL"):
        open_store("zk://x")


def test_cluster_on_etcd_metadata_fails_over(tmp_path: Path) -> None:
    if etcd_binary() is None:
        pytest.skip("etcd is not installed: apt-get install -y etcd-server")
    from system.launcher import Cluster

    from .conftest import do_ops, run, shard, wait_for

    with Cluster.start(str(tmp_path / "c"), nodes=3, tablets=1, metadata="etcd", stall_timeout=1.0) as c:
        assert c.metadata_url.startswith("etcd://")
        r0 = c.wait_ready()["tablets"]["0"]
        assert run(do_ops(c, [("put", ("k", 1))]))[0].type == "ok"
        c.kill(r0["leader"])
        wait_for(lambda: (m := shard(c, 0))["status"] == "steady" and m["leader"] != r0["leader"], what="failover")
        assert run(do_ops(c, [("get", ("k",))]))[0].value == 1
        store = open_store(c.metadata_url)
        rec = store.get("shards/00000")
        assert rec is not None and rec.value["epoch"] > r0["epoch"]
