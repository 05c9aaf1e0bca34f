"""Damage a tablet's files inside a stopped node container's data volume (the corrupt fault on docker).

WAL damage goes through the Docker archive API: the WAL is read out, damaged, and written back. The
archive API cannot delete a file, so lost consensus metadata is deleted by a throwaway container of
the node image mounting the same volume; the node is then started and must exit for disk loss, after
which the administrator's step of the Kudu seed follows: a wipe (a new volume, so a new UUID).
"""

from __future__ import annotations

import contextlib
import io
import random
import tarfile
from typing import Any

from harness.backends import docker_objects as objs
from harness.backends.file_damage import HEADER, METADATA, damage_bytes
from system.node import EXIT_DISK_LOSS

TABLETS = "/data/tablets"
EXIT_WAIT_S = 60


def _pick_wal(container: Any, rng: random.Random) -> tuple[tarfile.TarInfo, bytes] | None:
    """A random non-empty ``tablets/<t>/wal`` of ``container`` (stopped) and its bytes, or None."""
    stream, _ = container.get_archive(TABLETS)
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        wals = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith("/wal") and m.size > HEADER.size),
                      key=lambda m: m.name)
        if not wals:
            return None
        member = rng.choice(wals)
        extracted = tar.extractfile(member)
        assert extracted is not None
        return member, extracted.read()


def _folder(member: tarfile.TarInfo) -> str:
    """The tablet folder in the container: member.name is "tablets/<t>/wal"."""
    return "/data/" + member.name.rsplit("/", 1)[0]


def damage_container_wal(container: Any, kind: str, rng: random.Random) -> dict[str, Any]:
    """Pick a non-empty ``/data/tablets/<t>/wal`` in ``container`` (stopped), damage it, write it back."""
    picked = _pick_wal(container, rng)
    if picked is None:
        return {"kind": kind, "file": None}
    member, data = picked
    damaged, done = damage_bytes(data, kind, rng)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo("wal")
        info.size = len(damaged)
        info.mode = member.mode
        tar.addfile(info, io.BytesIO(damaged))
    container.put_archive(_folder(member), out.getvalue())
    return {**done, "file": _folder(member) + "/wal"}


def lose_metadata(backend: Any, name: str, rng: random.Random) -> dict[str, Any]:
    """Delete a tablet's consensus metadata in node ``name``'s stopped container, start it, and expect it
    to exit for disk loss; then wipe it, as an administrator would (:class:`DockerBackend` internals)."""
    wrapped = backend.containers[name].get_wrapped_container()
    picked = _pick_wal(wrapped, rng)
    if picked is None:
        backend._start_sync(name)
        return {"kind": "delete-metadata", "file": None}
    path = f"{_folder(picked[0])}/{METADATA}"
    backend._client.containers.run(backend.image, ["rm", path], remove=True, network_mode="none",
                                   volumes={backend._volume_for(name): {"bind": "/data", "mode": "rw"}},
                                   labels=objs.labels(backend.run_id))
    wrapped.start()
    done: dict[str, Any] = {"kind": "delete-metadata", "file": path, "exit": None}
    with contextlib.suppress(Exception):  # still running after the wait: it did not refuse to serve
        done["exit"] = int(wrapped.wait(timeout=EXIT_WAIT_S)["StatusCode"])
    if done["exit"] == EXIT_DISK_LOSS:
        old = backend.uuids.get(name)
        backend._wipe_sync(name)
        done |= {"reformatted": [name], "old_uuids": {name: old}, "new_uuids": {name: backend.uuids.get(name)}}
    elif done["exit"] is not None:
        backend._start_sync(name)
    else:
        backend._apply_rules(name)
    return done
