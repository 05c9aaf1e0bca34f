"""The matrix command's results page names: one page per system, campaign, bugs or clean, and backend."""

from __future__ import annotations

from harness.cli.matrix_cmd import page_name


def test_the_same_matrix_on_two_backends_gets_two_pages() -> None:
    # The clean default campaign ran on both backends at c5a7903; with one name, the Docker run's page
    # would have replaced the local one's.
    assert page_name("reference", "local", "register") == "matrix-reference-default-register"
    assert page_name("reference", "docker", "register") == "matrix-reference-default-register-docker"
    assert page_name("etcd", "local", None) == "matrix-etcd"
    # ... and a clean-only run does not replace the page of the same campaign against the bugs.
    assert page_name("reference", "local", "register", clean_only=True) == "matrix-reference-default-register-clean"
    assert (page_name("reference", "docker", "register", clean_only=True)
            == "matrix-reference-default-register-clean-docker")
