"""Files in containers: a stopped container's data directory edited on the harness's side, and its output kept.

Docker's archive API copies a folder out of a container and back in, running or not, but cannot delete
a file, so :func:`edit_data` empties the volume with a throwaway container of the same image first and
then puts the edited copy back whole: whatever the change deleted stays deleted.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.backends import docker_objects as objs


def save_logs(container: Any, path: Path) -> None:
    """Append the container's output to ``path`` (before it is removed, or at collection)."""
    wrapped = container.get_wrapped_container()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        fh.write(wrapped.logs(stdout=True, stderr=True))


def edit_data(client: Any, wrapped: Any, image: str, data_dir: str, volume: str, run_id: str,
              change: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """Run ``change`` on a copy of the stopped container's ``data_dir`` and make the volume hold the result."""
    stream, _ = wrapped.get_archive(data_dir)
    with tempfile.TemporaryDirectory(prefix="fencepost-edit-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            tar.extractall(tmp, filter="tar")
        folder = Path(tmp) / Path(data_dir).name
        result = change(folder)
        client.containers.run(image, ["find", data_dir, "-mindepth", "1", "-delete"], remove=True,
                              network_mode="none", volumes={volume: {"bind": data_dir, "mode": "rw"}},
                              labels=objs.labels(run_id))
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            for path in sorted(folder.iterdir()):
                tar.add(str(path), arcname=path.name)
        wrapped.put_archive(data_dir, out.getvalue())
    return result
