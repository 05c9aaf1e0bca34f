"""Prepare a PostgreSQL node's data directory, then become its server (``exec``: the same pid).

Run as root by the backend, once per start of the node:

1. The data directory is given to the server's user (Debian's ``postgres``): PostgreSQL refuses to run as
   root and refuses a data directory it does not own.
2. An empty directory is filled: on the primary by ``initdb`` (trust authentication on the run's loopback
   block, replication allowed); on a standby by ``pg_basebackup`` from the primary, retried until the
   primary answers, with a replication slot named after the node and ``-R`` (``standby.signal`` and
   ``primary_conninfo``), so the standby streams from the primary and the slot keeps the WAL it still needs.
   A directory that already holds a cluster is started as it is: a restart is crash recovery.
3. ``setpriv`` drops to the server's user and ``exec``\\ s ``postgres`` with the settings given. When the data
   directory's parents are closed to that user (a test's temporary folder under a root-only directory), the
   server keeps one capability, ``CAP_DAC_READ_SEARCH``, to reach it; nothing else changes.

libfaketime, when the backend preloads it for clock faults, is moved past ``setpriv``: a library preloaded
into this root launcher makes a semaphore the unprivileged server may not open, and breaks the launcher's
sleeps. So the launcher first runs itself again without it (:func:`unfaked`), and sets it again only for
``postgres`` (through ``env``, which ``exec``\\ s it in turn).
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

from fencepost_postgresql_node.binaries import newest_bin_dir

BASEBACKUP_PATIENCE_S = 90.0
"""How long a standby keeps trying to copy the primary before it gives up (and the node's start fails)."""
FAKED = "FENCEPOST_POSTGRESQL_FAKETIME"
"""Where the launcher keeps libfaketime's settings between its re-exec without the library and the server's."""
FAKETIME_KEYS = ("LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE", "FAKETIME_NO_CACHE", "FAKETIME_DONT_FAKE_MONOTONIC")


def parse(argv: list[str]) -> argparse.Namespace:
    """The launcher's arguments."""
    p = argparse.ArgumentParser(prog="fencepost_postgresql_node")
    p.add_argument("--role", choices=("primary", "standby"), required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--bin", required=True, help="the folder of PostgreSQL's binaries, or auto (the newest installed)")
    p.add_argument("--user", default="postgres")
    p.add_argument("--primary", default="", help="HOST:PORT of the primary (a standby's source)")
    p.add_argument("--setting", action="append", default=[], help="NAME=VALUE, passed to postgres as -c")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Prepare, then exec the server; exit 3 with one line when the directory cannot be prepared."""
    if "faketime" in os.environ.get("LD_PRELOAD", ""):
        unfaked()
    a = parse(sys.argv[1:] if argv is None else argv)
    try:
        user = pwd.getpwnam(a.user)
    except KeyError:
        sys.exit(f"fencepost-postgresql: no user {a.user!r} to run PostgreSQL as (apt-get install -y postgresql)")
    if a.bin == "auto":
        a.bin = newest_bin_dir()
        if a.bin is None:
            sys.exit("fencepost-postgresql: PostgreSQL is not installed here (apt-get install -y postgresql)")
    if not (Path(a.bin) / "postgres").is_file():
        sys.exit(f"fencepost-postgresql: no PostgreSQL server at {a.bin}/postgres (apt-get install -y postgresql)")
    data = Path(a.data)
    data.mkdir(parents=True, exist_ok=True)
    os.chown(data, user.pw_uid, user.pw_gid)
    os.chmod(data, 0o700)
    drop = privileges(user, data)
    if not (data / "PG_VERSION").is_file():
        try:
            if a.role == "primary":
                initdb(a, drop)
            else:
                basebackup(a, drop)
        except RuntimeError as e:
            print(f"fencepost-postgresql: {a.name}: {e}", file=sys.stderr, flush=True)
            sys.exit(3)
    settings = [f"listen_addresses={a.host}", f"port={a.port}", "unix_socket_directories=", *a.setting]
    server = [str(Path(a.bin) / "postgres"), "-D", str(data)]
    for s in settings:
        server += ["-c", s]
    faked = json.loads(os.environ.pop(FAKED, "[]"))
    argv = [*drop, *(["env", *faked] if faked else []), *server]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(argv[0], argv)


def unfaked() -> None:
    """Run this launcher again, in place (``exec``: the same pid), without libfaketime: under it the
    launcher's own sleeps fail (``EINVAL``), and its semaphore is root's. What the library needs is kept in
    :data:`FAKED` for the server's ``exec``."""
    faked = [f"{k}={os.environ.pop(k)}" for k in FAKETIME_KEYS if k in os.environ]
    os.environ.pop("FAKETIME_SHARED", None)
    os.environ[FAKED] = json.dumps(faked)
    os.execv(sys.executable, [sys.executable, "-m", "fencepost_postgresql_node", *sys.argv[1:]])


def privileges(user: pwd.struct_passwd, data: Path) -> list[str]:
    """The ``setpriv`` prefix that runs a command as ``user`` (with the one capability it needs to reach
    ``data`` when a parent folder is closed to it)."""
    drop = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups"]
    if not all(p.stat().st_mode & stat.S_IXOTH for p in data.resolve().parents):
        drop += ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    return [*drop, "--"]


def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL tool (without libfaketime: :func:`unfaked` took it out of the environment); its output
    is kept for the error."""
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def initdb(a: argparse.Namespace, drop: list[str]) -> None:
    """A new cluster in the primary's data directory, reachable (and replicable) from the loopback block."""
    done = run([*drop, str(Path(a.bin) / "initdb"), "-D", a.data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                "--locale=C.UTF-8"], 120)
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {last_line(done)}")
    hba = Path(a.data) / "pg_hba.conf"
    with hba.open("a") as f:
        f.write("host all all 127.0.0.0/8 trust\nhost replication all 127.0.0.0/8 trust\n"
                "host all all 0.0.0.0/0 trust\nhost replication all 0.0.0.0/0 trust\n")
        f.flush()
        os.fsync(f.fileno())


def basebackup(a: argparse.Namespace, drop: list[str]) -> None:
    """Copy the primary into the standby's empty data directory, with a replication slot of its own."""
    host, _, port = a.primary.rpartition(":")
    deadline = time.monotonic() + BASEBACKUP_PATIENCE_S
    create = True
    while True:
        argv = [*drop, str(Path(a.bin) / "pg_basebackup"), "-h", host, "-p", port, "-U", "postgres", "-D", a.data,
                "-X", "stream", "-R", "-S", a.name, "--no-password", "-c", "fast"]
        done = run([*argv, "-C"] if create else argv, 120)
        if done.returncode == 0:
            return
        if "already exists" in done.stderr:
            create = False
        elif "does not exist" in done.stderr and "replication slot" in done.stderr:
            create = True
        empty(Path(a.data))
        if time.monotonic() > deadline:
            raise RuntimeError(f"pg_basebackup from {a.primary} failed for {BASEBACKUP_PATIENCE_S:g} s: "
                               f"{last_line(done)}")
        time.sleep(0.5)


def empty(data: Path) -> None:
    """Remove what a failed copy left in ``data`` (the directory itself stays, with its owner)."""
    for child in data.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def last_line(done: subprocess.CompletedProcess[str]) -> str:
    """Why a tool failed, in one line: its first line that says so (an error, a FATAL or PANIC line, "could
    not ..."), else its last. Everything it printed goes to the node's log first."""
    sys.stderr.write(done.stdout + done.stderr)
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    says = [line for line in lines if any(w in line for w in ("FATAL", "PANIC", "ERROR", "error", "could not"))]
    return (says or lines or [f"exit {done.returncode}"])[0]


if __name__ == "__main__":
    main()
