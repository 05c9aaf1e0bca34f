"""Network partitions on loopback addresses with iptables, in a chain owned by one run.

Every rule lives in a chain named ``FP-<run tag>`` jumped to from OUTPUT, so healing is flushing the
chain and cleaning up is deleting it; a killed harness's chains are found by their prefix and reaped.
Loopback traffic passes OUTPUT once per packet, so a DROP there cuts both the SYN and any reply.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence

CHAIN_PREFIX = "FP-"


class IptablesUnavailable(RuntimeError):
    """iptables cannot be used here: not installed, or not running as root."""


def why_unavailable() -> str | None:
    """None if iptables can be used, else the reason in one line."""
    if shutil.which("iptables") is None:
        return "iptables is not installed (apt-get install -y iptables): network faults are disabled"
    if os.geteuid() != 0:
        return "network faults need root for iptables: run as root, or leave out the partition nemesis"
    try:
        _run("-w", "-L", "OUTPUT", "-n")
    except IptablesUnavailable as e:
        return str(e)
    return None


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run iptables with ``args``; raise IptablesUnavailable if it cannot run (or fails, with ``check``)."""
    try:
        result = subprocess.run(["iptables", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise IptablesUnavailable(f"iptables failed: {e}") from None
    if check and result.returncode != 0:
        raise IptablesUnavailable(f"iptables {' '.join(args)}: {result.stderr.strip()}")
    return result


class Partitioner:
    """Apply and heal grudges between addresses, in the chain ``FP-<tag>``.

    Args:
        tag: a short id unique to the run (iptables chain names hold at most 28 characters).
        addresses: node name -> IP address.
    """

    def __init__(self, tag: str, addresses: Mapping[str, str]) -> None:
        self.chain = (CHAIN_PREFIX + tag)[:28]
        self.addresses = dict(addresses)
        self._installed = False

    def install(self) -> None:
        """Create the chain and the jump to it."""
        _run("-w", "-N", self.chain, check=False)
        if _run("-w", "-C", "OUTPUT", "-j", self.chain, check=False).returncode != 0:
            _run("-w", "-I", "OUTPUT", "-j", self.chain)
        self._installed = True

    def apply(self, grudge: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
        """Replace the current rules with ``grudge``; return the (source, destination) pairs dropped."""
        if not self._installed:
            self.install()
        self.heal()
        pairs = sorted({(a, b) for a, others in grudge.items() for b in others}
                       | {(b, a) for a, others in grudge.items() for b in others})
        for a, b in pairs:
            _run("-w", "-A", self.chain, "-s", self.addresses[a], "-d", self.addresses[b], "-j", "DROP")
        return pairs

    def heal(self) -> None:
        """Remove every rule (keep the chain)."""
        if self._installed:
            _run("-w", "-F", self.chain)

    def remove(self) -> None:
        """Delete the chain and its jump. Safe to call twice."""
        delete_chain(self.chain)
        self._installed = False


TABLES = ("filter", "nat")
"""The tables a run's chains live in: filter for drops and resets, nat for links sent through a proxy."""


def delete_chain(chain: str) -> None:
    """Remove the jumps to ``chain`` from OUTPUT and delete the chain, in every table, ignoring what is
    already gone."""
    if shutil.which("iptables") is None:
        return
    for table in TABLES:
        while _run("-w", "-t", table, "-D", "OUTPUT", "-j", chain, check=False).returncode == 0:
            pass
        _run("-w", "-t", table, "-F", chain, check=False)
        _run("-w", "-t", table, "-X", chain, check=False)


def leftover_chains() -> list[str]:
    """Chains a Fencepost run created and did not remove (in any table)."""
    if shutil.which("iptables") is None or os.geteuid() != 0:
        return []
    out = "\n".join(_run("-w", "-t", table, "-S", check=False).stdout for table in TABLES)
    return sorted({line.split()[1] for line in out.splitlines()
                   if line.startswith("-N ") and line.split()[1].startswith(CHAIN_PREFIX)})
