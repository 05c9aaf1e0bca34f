"""The docker backend's node image: the system's code on a base with python3, iptables, iproute2 and the
Debian packages the system asks for (:class:`harness.plugin_api.ImagePackages`: etcd-server, say).

The image is tagged ``fencepost-node:<hash>``, the hash being over every ``system/**/*.py`` file (path
and bytes) and the package list, so it is rebuilt only when the system's code (or that list) changes.
Its base is either an image from a registry (``python:3.11-slim`` unless named otherwise; iptables,
iproute2 and the system's packages are installed on top), or, when no registry answers, a minimal Debian made here with
debootstrap from the mirror apt already uses and loaded with ``docker import``
(``fencepost-base:<suite>-<hash>``, cached like the node image).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import socket
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from tarfile import TarInfo
from typing import Any

CODE_ROOT = "/opt/fencepost"
"""Where a system's code folders go in the image (the containers' working directory and PYTHONPATH)."""
NODE_REPO = "fencepost-node"
BASE_REPO = "fencepost-base"
SUITE = "bookworm"
BASE_PACKAGES = ("python3", "iptables", "iproute2")
"""What every node image has: the interpreter the harness's own helpers run with, and the network tools."""
DEFAULT_MIRROR = "http://deb.debian.org/debian"
REGISTRY = ("registry-1.docker.io", 443)
LABEL = "fencepost.image"
Say = Callable[[str], None]


class ImageBuildError(RuntimeError):
    """The image could not be built; the message says why in one line."""


@dataclass
class BuiltImage:
    """What :func:`build_image` did: the tag, whether it built anything, the base used, and seconds spent."""

    tag: str
    built: bool
    base: str
    seconds: float


def code_files(code: Mapping[str, Path]) -> list[tuple[str, Path]]:
    """``(path in the image, file)`` for every file of the code folders (no ``__pycache__``), sorted."""
    files = []
    for rel, folder in code.items():
        for path in Path(folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.append((f"{rel}/{path.relative_to(folder).as_posix()}", path))
    return sorted(files)


def packages_for(extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The image's Debian packages: :data:`BASE_PACKAGES`, then ``extra`` (a system's) in order, each once."""
    return tuple(dict.fromkeys((*BASE_PACKAGES, *extra)))


def code_hash(code: Mapping[str, Path], packages: Sequence[str] = BASE_PACKAGES) -> str:
    """12 hex digits over every file of the code folders (path in the image and content) and the package list."""
    h = hashlib.sha256(" ".join(packages).encode() + b"\0")
    for arcname, path in code_files(code):
        h.update(arcname.encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def node_tag(code: Mapping[str, Path], packages: Sequence[str] = BASE_PACKAGES) -> str:
    """The node image tag for the code as it is now, on a base with ``packages``."""
    return f"{NODE_REPO}:{code_hash(code, packages)}"


def base_tag(packages: Sequence[str] = BASE_PACKAGES) -> str:
    """The tag of the debootstrapped base (changes only with the suite or the package list)."""
    digest = hashlib.sha256(" ".join((SUITE, *packages)).encode()).hexdigest()[:8]
    return f"{BASE_REPO}:{SUITE}-{digest}"


def apt_mirror() -> str:
    """The Debian mirror apt uses here (deb822 or one-line sources), else deb.debian.org."""
    files = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for f in files:
        with contextlib.suppress(OSError):
            for line in f.read_text().splitlines():
                m = re.match(r"\s*(?:URIs:|deb)\s+(?:\[[^]]*\]\s+)?(\S+)", line)
                if m and "security" not in m.group(1) and m.group(1).startswith(("http://", "https://")):
                    return m.group(1).rstrip("/")
    return DEFAULT_MIRROR


def registry_reachable(timeout: float = 3.0) -> bool:
    """Does Docker Hub's registry accept a TCP connection?"""
    try:
        with socket.create_connection(REGISTRY, timeout=timeout):
            return True
    except OSError:
        return False


def _has_image(client: Any, tag: str) -> bool:
    import docker.errors

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def _dockerfile(base: str, online: bool, packages: Sequence[str]) -> str:
    wanted = " ".join(p for p in packages if p != "python3")  # a registry base brings its own python3
    install = (f"RUN apt-get update && apt-get install -y --no-install-recommends {wanted} "
               "&& rm -rf /var/lib/apt/lists/*\n") if online else ""
    return (f"FROM {base}\n{install}"
            f"COPY code {CODE_ROOT}\n"
            f"WORKDIR {CODE_ROOT}\n"
            f"ENV PYTHONPATH={CODE_ROOT} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1\n"
            'CMD ["python3", "-c", "pass"]\n')


def _context(base: str, online: bool, code: Mapping[str, Path], packages: Sequence[str]) -> bytes:
    """The build context as a tar: the Dockerfile and the code folders under ``code/``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = _dockerfile(base, online, packages).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        keep = TarInfo("code")
        keep.type = tarfile.DIRTYPE
        keep.mode = 0o755
        tar.addfile(keep)
        for arcname, path in code_files(code):
            tar.add(str(path), arcname=f"code/{arcname}")
    return buf.getvalue()


def debootstrap_base(client: Any, say: Say, packages: Sequence[str] = BASE_PACKAGES) -> str:
    """Make the minimal Debian base with ``packages`` with debootstrap and ``docker import`` it (cached by tag)."""
    tag = base_tag(packages)
    if _has_image(client, tag):
        say(f"base {tag} is already built")
        return tag
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("no registry answers and debootstrap is not installed (apt-get install -y debootstrap)")
    if os.geteuid() != 0:
        raise ImageBuildError("building the offline base with debootstrap needs root")
    mirror = apt_mirror()
    say(f"debootstrap {SUITE} (minbase, {', '.join(packages)}) from {mirror}")
    with tempfile.TemporaryDirectory(prefix="fencepost-rootfs-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(packages)}", SUITE, str(rootfs), mirror]
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            raise ImageBuildError("debootstrap took more than 15 minutes") from None
        if result.returncode != 0:
            tail = (result.stdout + result.stderr).strip().splitlines()[-3:]
            raise ImageBuildError(f"debootstrap failed ({result.returncode}): {' | '.join(tail)}")
        for junk in ("usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info", "var/cache/apt",
                     "var/lib/apt/lists"):
            shutil.rmtree(rootfs / junk, ignore_errors=True)
        archive = Path(tmp) / "rootfs.tar"
        tar = subprocess.run(["tar", "-C", str(rootfs), "-cf", str(archive), "."], capture_output=True, text=True,
                             timeout=600)
        if tar.returncode != 0:
            raise ImageBuildError(f"tar of the rootfs failed: {tar.stderr.strip()}")
        say(f"docker import {tag}")
        repo, _, version = tag.partition(":")
        client.api.import_image_from_file(str(archive), repository=repo, tag=version,
                                          changes=[f"LABEL {LABEL}=base"])
    return tag


def _online_base(client: Any, base: str, say: Say) -> str | None:
    """The registry base, pulled if needed; None when it cannot be had."""
    if _has_image(client, base):
        return base
    if not registry_reachable():
        say("no registry answers: building the base offline")
        return None
    say(f"pulling {base}")
    try:
        client.images.pull(base)
    except Exception as e:
        say(f"pulling {base} failed ({type(e).__name__}: {str(e)[:120]}): building the base offline")
        return None
    return base


@contextlib.contextmanager
def docker_client() -> Iterator[Any]:
    """A docker client that is always closed."""
    import docker

    try:
        client = docker.from_env(timeout=120)
    except Exception as e:
        raise ImageBuildError(f"no Docker engine answers: {e}") from None
    try:
        yield client
    finally:
        client.close()


def build_image(code: Mapping[str, Path], base: str = "python:3.11-slim", offline: bool = False,
                say: Say | None = None, force: bool = False, packages: Sequence[str] = ()) -> BuiltImage:
    """Build the node image for ``code`` (a system's code folders), with the system's Debian ``packages`` on
    top of :data:`BASE_PACKAGES`, unless it exists; return what was done."""
    out: Say = say or (lambda _line: None)
    started = time.monotonic()
    wanted = packages_for(packages)
    tag = node_tag(code, wanted)
    with docker_client() as client:
        if not force and _has_image(client, tag):
            return BuiltImage(tag, False, "", time.monotonic() - started)
        chosen = None if offline else _online_base(client, base, out)
        online = chosen is not None
        if chosen is None:
            chosen = debootstrap_base(client, out, wanted)
        out(f"building {tag} from {chosen}")
        try:
            # The low-level call: the high-level one leaves its build-log stream unclosed.
            context = _context(chosen, online, code, wanted)
            stream = client.api.build(fileobj=io.BytesIO(context), custom_context=True, tag=tag, rm=True,
                                      forcerm=True, labels={LABEL: "node"}, decode=True)
            errors = [chunk["error"] for chunk in stream if "error" in chunk]
        except Exception as e:
            raise ImageBuildError(f"docker build of {tag} failed: {e}") from None
        if errors or not _has_image(client, tag):
            raise ImageBuildError(f"docker build of {tag} failed: {' '.join(errors).strip()[:300]}")
    return BuiltImage(tag, True, chosen, time.monotonic() - started)


def ensure_image(code: Mapping[str, Path], say: Say | None = None, packages: Sequence[str] = ()) -> str:
    """The node image tag for ``code`` and the system's ``packages`` as they are now, building it first if
    needed."""
    return build_image(code, say=say, packages=packages).tag
