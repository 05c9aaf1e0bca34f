"""A run's chain is jumped to with its owner's pid, and only the chains of owners that are gone are reaped."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from harness.backends.iptables import (
    OWNER_COMMENT,
    Partitioner,
    delete_chain,
    leftover_chains,
    reap_dead_chains,
    run,
    why_unavailable,
)

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=str(why_unavailable()))
ADDRESSES = {"a": "127.0.0.250", "b": "127.0.0.251"}


@pytest.fixture
def chains() -> Iterator[list[str]]:
    """Names of the chains a test makes; whatever is left of them is deleted afterwards."""
    made: list[str] = []
    yield made
    for chain in made:
        delete_chain(chain)


def partition_in_a_process_that_exits(tag: str) -> None:
    """Apply a grudge from a child harness that then dies without cleaning up (as under SIGKILL)."""
    code = ("import os; from harness.backends.iptables import Partitioner; "
            f"Partitioner({tag!r}, {ADDRESSES!r}).apply({{'a': ['b']}}); os._exit(0)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_jump_names_its_owner(chains: list[str]) -> None:
    p = Partitioner("ipt-owner", ADDRESSES)
    chains.append(p.chain)
    p.apply({"a": ["b"]})
    jumps = [line for line in run("-w", "-S", "OUTPUT").stdout.splitlines() if line.endswith(f"-j {p.chain}")]
    assert len(jumps) == 1 and f"{OWNER_COMMENT}{os.getpid()}" in jumps[0]
    p.install()  # a second install adds no second jump
    again = [line for line in run("-w", "-S", "OUTPUT").stdout.splitlines() if line.endswith(f"-j {p.chain}")]
    assert again == jumps
    p.remove()
    assert p.chain not in leftover_chains()


def test_a_dead_harness_chain_is_reaped_and_a_live_one_is_kept(chains: list[str]) -> None:
    live = Partitioner("ipt-live", ADDRESSES)
    chains.extend([live.chain, "FP-ipt-dead", "FP-ipt-unowned"])
    live.apply({"a": ["b"]})
    partition_in_a_process_that_exits("ipt-dead")
    # A jump made before owners were noted (no comment) counts as ownerless.
    run("-w", "-N", "FP-ipt-unowned")
    run("-w", "-I", "OUTPUT", "-j", "FP-ipt-unowned")
    assert {"FP-ipt-dead", "FP-ipt-unowned", live.chain} <= set(leftover_chains())

    reaped = reap_dead_chains()

    assert {"FP-ipt-dead", "FP-ipt-unowned"} <= set(reaped)
    assert live.chain not in reaped
    left = set(leftover_chains())
    assert "FP-ipt-dead" not in left and "FP-ipt-unowned" not in left and live.chain in left
    assert "FP-ipt" not in run("-w", "-S", "OUTPUT").stdout.replace(live.chain, "")
