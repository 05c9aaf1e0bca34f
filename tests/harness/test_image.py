"""The node image: tagged by the system's code hash, rebuilt only when it changes, runnable offline."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fencepost_reference.plugin import ReferencePlugin

from harness.backends import docker_objects as objs
from harness.backends import image

FENCEPOST = [sys.executable, "-m", "harness.cli.main"]


CODE = ReferencePlugin().code()


def test_the_code_hash_follows_the_code_folders_and_not_their_caches(tmp_path: Path) -> None:
    system = tmp_path / "system"
    shutil.copytree(CODE["system"], system, ignore=shutil.ignore_patterns("__pycache__"))
    code = {"system": system}
    first = image.code_hash(code)
    assert first == image.code_hash(code) == image.code_hash(CODE)
    (system / "__pycache__").mkdir(exist_ok=True)
    (system / "__pycache__" / "x.cpython-311.pyc").write_text("junk")
    assert image.code_hash(code) == first
    node = system / "node.py"
    node.write_text(node.read_text() + "\n# changed\n")
    assert image.code_hash(code) != first
    (system / "notes.txt").write_text("a file the system reads")
    assert image.code_hash(code) not in (first, image.code_hash(CODE))
    assert image.node_tag(code).startswith("fencepost-node:")
    assert image.code_hash({}) != first  # a system with no code of its own runs on the base


def test_the_offline_base_comes_from_the_mirror_apt_uses() -> None:
    assert image.apt_mirror().startswith(("http://", "https://"))
    assert image.base_tag().startswith("fencepost-base:bookworm-")


DOCKER_REASON = objs.engine_unavailable()


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(DOCKER_REASON is not None, reason=f"docker tests need a Docker engine: {DOCKER_REASON}")
def test_image_build_is_cached_by_the_code_hash_and_runs_the_system() -> None:
    first = subprocess.run([*FENCEPOST, "image", "build"], capture_output=True, text=True, timeout=1200)
    assert first.returncode == 0, first.stderr
    again = subprocess.run([*FENCEPOST, "image", "build"], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "is up to date" in again.stdout, again.stdout
    tag = image.node_tag(CODE, image.packages_for(ReferencePlugin().image_packages()))
    with objs.client() as c:
        out = c.containers.run(tag, ["sh", "-c", "python3 -c 'import system.node, system.operator, system.master' "
                                                 "&& iptables --version && ip -V"], remove=True)
    assert b"iptables v" in out


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(DOCKER_REASON is not None, reason=f"docker tests need a Docker engine: {DOCKER_REASON}")
def test_offline_build_uses_the_debootstrapped_base() -> None:
    packages = ReferencePlugin().image_packages()  # the base the docker campaigns use, so no second debootstrap
    result = image.build_image(CODE, offline=True, force=True, packages=packages)
    assert result.built and result.base == image.base_tag(image.packages_for(packages))
    assert result.tag == image.node_tag(CODE, image.packages_for(packages))


def test_the_images_packages_come_from_the_system_on_top_of_the_base() -> None:
    assert image.packages_for(()) == image.BASE_PACKAGES
    etcd = image.packages_for(("etcd-server", "iptables"))
    assert etcd == (*image.BASE_PACKAGES, "etcd-server")
    assert "etcd-server" not in image._dockerfile("python:3.11-slim", True, image.packages_for(()))
    assert "etcd-server" in image._dockerfile("python:3.11-slim", True, etcd)
    assert image.base_tag(image.BASE_PACKAGES) != image.base_tag(etcd)
    assert image.code_hash(CODE, image.BASE_PACKAGES) != image.code_hash(CODE, etcd)
    assert ReferencePlugin().image_packages() == ("etcd-server",)  # its etcd metadata store
