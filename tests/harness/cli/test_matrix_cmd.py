"""The matrix command's results page names: one page per system, campaign, bugs or clean, and backend."""

from __future__ import annotations

from harness.cli.matrix_cmd import page_name, page_title


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


def test_a_clean_only_page_says_so_in_its_title() -> None:
    # The clean default campaign's page, regenerated at 5a45a3c, came out titled as the page of the same
    # campaign against the bugs.
    assert page_title("reference", "local", "register") == "Detection matrix: reference, default campaign (register)"
    assert (page_title("reference", "docker", "register", clean_only=True)
            == "Detection matrix: reference, default campaign (register), clean system, docker backend")
    assert page_title("etcd", "local", None) == "Detection matrix: etcd"
