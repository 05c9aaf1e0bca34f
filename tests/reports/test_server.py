from __future__ import annotations

import http.client
import shutil
from collections.abc import Iterator

import pytest

from harness.store import RunStore
from reports.render import write_report
from reports.server import StoreServer, start_in_thread
from tests.reports.sample_runs import make_run
from tests.reports.test_render import V0_RUN


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StoreServer, RunStore]]:
    tmp_path = tmp_path_factory.mktemp("serve")
    store = RunStore(tmp_path / "store")
    run = make_run(store, invalid=True, campaign="nightly-1")
    write_report(run.path)
    shutil.copytree(V0_RUN, store.root / "register-basic" / V0_RUN.name)  # no report.html yet
    (tmp_path / "secret.txt").write_text("do not serve", encoding="utf-8")
    server, thread = start_in_thread(store.root)
    try:
        yield server, store
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def fetch(server: StoreServer, path: str, method: str = "GET") -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read()
    finally:
        conn.close()


def test_binds_loopback_only(served: tuple[StoreServer, RunStore]) -> None:
    server, _ = served
    assert server.server_address[0] == "127.0.0.1"
    assert server.url == f"http://127.0.0.1:{server.port}/"


def test_serves_the_index_campaign_reports_and_files(served: tuple[StoreServer, RunStore]) -> None:
    server, store = served
    status, ctype, body = fetch(server, "/")
    assert status == 200 and ctype.startswith("text/html")
    index = body.decode()
    assert "register-stale-read" in index and "register-basic" in index and "nightly-1" in index
    run = next(r for r in store.runs() if r.name == "register-stale-read")
    rel = f"/{run.name}/{run.timestamp}"
    status, _, body = fetch(server, rel + "/report.html")
    assert status == 200 and b'data-verdict="invalid"' in body
    for asset in ("/perf/latency-raw.png", "/timeline.html", "/history.jsonl", "/nodes/n1/node.log"):
        status, ctype, body = fetch(server, rel + asset)
        assert status == 200 and body, asset
    assert fetch(server, rel + "/perf/rate.png")[1] == "image/png"
    assert fetch(server, rel + "/history.jsonl")[1].startswith("text/plain")
    status, _, body = fetch(server, "/_campaign/nightly-1")
    assert status == 200 and b'id="matrix"' in body
    assert fetch(server, "/_campaign/none-such")[0] == 404


def test_renders_a_missing_report_on_the_fly_without_writing(served: tuple[StoreServer, RunStore]) -> None:
    server, store = served
    status, _, body = fetch(server, f"/register-basic/{V0_RUN.name}/report.html")
    assert status == 200 and b'data-verdict="unchecked"' in body and b"rendered on the fly" in body
    assert not (store.root / "register-basic" / V0_RUN.name / "report.html").exists()


def test_refuses_paths_outside_the_store_folders_and_other_methods(served: tuple[StoreServer, RunStore]) -> None:
    server, _ = served
    assert fetch(server, "/../secret.txt")[0] == 404
    assert fetch(server, "/%2e%2e/secret.txt")[0] == 404
    assert fetch(server, "/register-basic/")[0] == 404
    assert fetch(server, "/nope.html")[0] == 404
    assert fetch(server, "/", "POST")[0] == 501
    status, _, body = fetch(server, "/", "HEAD")
    assert status == 200 and body == b""
