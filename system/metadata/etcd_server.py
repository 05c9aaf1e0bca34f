"""Start and stop a single-member etcd server for the metadata store (Debian's ``etcd-server``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.request


def etcd_binary() -> str | None:
    """The path of the ``etcd`` binary, or None if it is not installed."""
    return shutil.which("etcd") or next((p for p in ("/usr/bin/etcd", "/usr/sbin/etcd") if os.path.exists(p)), None)


def start_etcd(data_dir: str, host: str, client_port: int, peer_port: int, log_path: str,
               timeout: float = 30.0) -> subprocess.Popen[bytes]:
    """Start etcd with its data under ``data_dir`` and wait until its gateway answers."""
    binary = etcd_binary()
    if binary is None:
        raise FileNotFoundError("etcd is not installed (apt-get install -y etcd-server)")
    os.makedirs(data_dir, exist_ok=True)
    url = f"http://{host}:{client_port}"
    peer = f"http://{host}:{peer_port}"
    log = open(log_path, "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        [binary, "--name", "fencepost", "--data-dir", data_dir, "--listen-client-urls", url,
         "--advertise-client-urls", url, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
         "--initial-cluster", f"fencepost={peer}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"etcd exited with {proc.returncode}; see {log_path}")
        try:
            req = urllib.request.Request(url + "/v3/kv/range", data=b'{"key":"AA=="}', method="POST")
            with urllib.request.urlopen(req, timeout=1):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    proc.wait()
    raise TimeoutError(f"etcd did not answer on {url} within {timeout}s")
