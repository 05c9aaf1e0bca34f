"""Each local run claims its own loopback block, and a block is free again when its claimant ends."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness.backends.addresses import AddressBlock, claim_block


def test_two_claims_get_different_blocks_and_a_release_frees_one(tmp_path: Path) -> None:
    a = claim_block(tmp_path, random.Random(1))
    b = claim_block(tmp_path, random.Random(1))  # the same starting point: the second must move on
    try:
        assert a.prefix != b.prefix and a.host(1).startswith("127.") and not a.host(1).startswith("127.0.0.")
        assert b.host(254).endswith(".254")
        with pytest.raises(ValueError):
            a.host(255)
        a.release()
        again = claim_block(tmp_path, random.Random(1))
        assert again.prefix == a.prefix
        again.release()
    finally:
        a.release()
        b.release()


def test_a_block_held_by_another_process_is_not_given_and_is_free_once_it_exits(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", f"""
import random, sys, time
from pathlib import Path
from harness.backends.addresses import claim_block
b = claim_block(Path({str(tmp_path)!r}), random.Random(7))
print(b.prefix, flush=True)
time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        held = holder.stdout.readline().strip()
        mine = claim_block(tmp_path, random.Random(7))
        assert mine.prefix != held
        mine.release()
    finally:
        holder.kill()
        holder.communicate()
    after = claim_block(tmp_path, random.Random(7))  # the kernel let go of the dead holder's lock
    assert isinstance(after, AddressBlock) and after.prefix == held
    after.release()
