"""Network partitions on loopback addresses with iptables, in a chain owned by one run.

Every rule lives in a chain named ``FP-<run tag>`` jumped to from OUTPUT, so healing is flushing the
chain and cleaning up is deleting it. The jump carries its owner's pid in a comment
(``fencepost-pid=N``), so the chains of a harness that was killed (SIGKILL, a lost CI job) are found
and removed by the next run's :func:`reap_dead_chains` instead of partitioning every run after it.
Loopback traffic passes OUTPUT once per packet, so a DROP there cuts both the SYN and any reply.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence

CHAIN_PREFIX = "FP-"
OWNER_COMMENT = "fencepost-pid="
"""The jump to a run's chain carries ``fencepost-pid=<pid of the harness that made it>``."""


class IptablesUnavailable(RuntimeError):
    """iptables cannot be used here: not installed, or not running as root."""


def why_unavailable() -> str | None:
    """None if iptables can be used, else the reason in one line."""
    if shutil.which("iptables") is None:
        return "iptables is not installed (apt-get install -y iptables): network faults are disabled"
    if os.geteuid() != 0:
        return "network faults need root for iptables: run as root, or leave out the partition nemesis"
    try:
        run("-w", "-L", "OUTPUT", "-n")
    except IptablesUnavailable as e:
        return str(e)
    return None


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
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
        cgroups: node name -> its cgroup v2 path (:mod:`harness.backends.cgroups`), for processes that
            send from an address that is not their own; each link is then also cut by the sender's cgroup.
    """

    def __init__(self, tag: str, addresses: Mapping[str, str], cgroups: Mapping[str, str] | None = None) -> None:
        self.chain = (CHAIN_PREFIX + tag)[:28]
        self.addresses = dict(addresses)
        self.cgroups = dict(cgroups or {})
        self._installed = False

    def install(self) -> None:
        """Create the chain and the jump to it."""
        add_jump("filter", self.chain)
        self._installed = True

    def apply(self, grudge: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
        """Replace the current rules with ``grudge``; return the (source, destination) pairs dropped."""
        if not self._installed:
            self.install()
        self.heal()
        pairs = sorted({(a, b) for a, others in grudge.items() for b in others}
                       | {(b, a) for a, others in grudge.items() for b in others})
        for a, b in pairs:
            run("-w", "-A", self.chain, "-s", self.addresses[a], "-d", self.addresses[b], "-j", "DROP")
            if a in self.cgroups:
                run("-w", "-A", self.chain, "-m", "cgroup", "--path", self.cgroups[a], "-d", self.addresses[b],
                     "-j", "DROP")
        return pairs

    def heal(self) -> None:
        """Remove every rule (keep the chain)."""
        if self._installed:
            run("-w", "-F", self.chain)

    def remove(self) -> None:
        """Delete the chain and its jump. Safe to call twice."""
        delete_chain(self.chain)
        self._installed = False


TABLES = ("filter", "nat")
"""The tables a run's chains live in: filter for drops and resets, nat for links sent through a proxy."""


def add_jump(table: str, chain: str) -> None:
    """Create ``chain`` in ``table`` and jump to it first thing in OUTPUT, the jump tagged with our pid."""
    run("-w", "-t", table, "-N", chain, check=False)
    if not _jumps(table, chain):
        run("-w", "-t", table, "-I", "OUTPUT", "-m", "comment", "--comment", f"{OWNER_COMMENT}{os.getpid()}",
             "-j", chain)


def _output_jumps(table: str) -> list[list[str]]:
    """The rules of ``table``'s OUTPUT chain that jump to a Fencepost chain, as ``iptables -S`` prints
    them after ``-A OUTPUT``."""
    out = run("-w", "-t", table, "-S", "OUTPUT", check=False).stdout
    rules = [shlex.split(line)[2:] for line in out.splitlines() if line.startswith("-A OUTPUT ")]
    return [r for r in rules if "-j" in r and r[r.index("-j") + 1].startswith(CHAIN_PREFIX)]


def _jumps(table: str, chain: str) -> list[list[str]]:
    return [r for r in _output_jumps(table) if r[r.index("-j") + 1] == chain]


def _owner(rule: Sequence[str]) -> int | None:
    """The pid in a jump's ``fencepost-pid=`` comment, or None (a jump made before owners were noted)."""
    for i, word in enumerate(rule[:-1]):
        if word == "--comment" and rule[i + 1].startswith(OWNER_COMMENT):
            digits = rule[i + 1][len(OWNER_COMMENT):]
            return int(digits) if digits.isdigit() else None
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def delete_chain(chain: str) -> None:
    """Remove the jumps to ``chain`` from OUTPUT and delete the chain, in every table, ignoring what is
    already gone."""
    if shutil.which("iptables") is None:
        return
    for table in TABLES:
        for rule in _jumps(table, chain):
            run("-w", "-t", table, "-D", "OUTPUT", *rule, check=False)
        run("-w", "-t", table, "-F", chain, check=False)
        run("-w", "-t", table, "-X", chain, check=False)


def reap_dead_chains() -> list[str]:
    """Delete the chains whose owner is gone: every jump to them names a pid that no longer runs, or no
    pid at all. A live run's chains are left alone. Returns the chains removed; [] where iptables
    cannot be used."""
    if why_unavailable() is not None:
        return []
    owners: dict[str, set[int | None]] = {}
    for table in TABLES:
        for rule in _output_jumps(table):
            owners.setdefault(rule[rule.index("-j") + 1], set()).add(_owner(rule))
    dead = sorted(c for c, pids in owners.items() if not any(p is not None and _alive(p) for p in pids))
    for chain in dead:
        delete_chain(chain)
    return dead


def leftover_chains() -> list[str]:
    """Chains a Fencepost run created and did not remove (in any table)."""
    if shutil.which("iptables") is None or os.geteuid() != 0:
        return []
    out = "\n".join(run("-w", "-t", table, "-S", check=False).stdout for table in TABLES)
    return sorted({line.split()[1] for line in out.splitlines()
                   if line.startswith("-N ") and line.split()[1].startswith(CHAIN_PREFIX)})
