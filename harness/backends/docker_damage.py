"""Damage a tablet WAL inside a stopped container's data volume, through the Docker archive API."""

from __future__ import annotations

import io
import random
import tarfile
from typing import Any

from harness.backends.file_damage import HEADER, damage_bytes

TABLETS = "/data/tablets"


def damage_container_wal(container: Any, kind: str, rng: random.Random) -> dict[str, Any]:
    """Pick a non-empty ``/data/tablets/<t>/wal`` in ``container`` (stopped), damage it, write it back."""
    stream, _ = container.get_archive(TABLETS)
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        wals = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith("/wal") and m.size > HEADER.size),
                      key=lambda m: m.name)
        if not wals:
            return {"kind": kind, "file": None}
        member = rng.choice(wals)
        extracted = tar.extractfile(member)
        assert extracted is not None
        data = extracted.read()
    damaged, done = damage_bytes(data, kind, rng)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo("wal")
        info.size = len(damaged)
        info.mode = member.mode
        tar.addfile(info, io.BytesIO(damaged))
    # member.name is "tablets/<t>/wal": put the new file into that tablet's folder.
    folder = "/data/" + member.name.rsplit("/", 1)[0]
    container.put_archive(folder, out.getvalue())
    return {**done, "file": folder + "/wal"}
