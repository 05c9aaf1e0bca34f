"""The matrix command's results page names: one page per system, campaign and backend."""

from __future__ import annotations

from harness.cli.matrix_cmd import page_name


def test_the_same_matrix_on_two_backends_gets_two_pages() -> None:
    # The clean default campaign ran on both backends at c5a7903; with one name, the Docker run's page
    # would have replaced the local one's.
    assert page_name("reference", "local", "register") == "matrix-reference-default-register"
    assert page_name("reference", "docker", "register") == "matrix-reference-default-register-docker"
    assert page_name("etcd", "local", None) == "matrix-etcd"
