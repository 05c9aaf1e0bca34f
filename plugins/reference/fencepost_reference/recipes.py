"""Each injectable bug of the reference system, with its recommended test: the workload and faults that
expose it, and for how long.

``fencepost test --bug NAME`` with neither ``--workload`` nor ``--nemesis`` runs the bug's recipe, and the
detection matrix (:mod:`harness.bug_matrix`) runs every recipe over several seeds, with the bug and
without it. The pairs were chosen by measurement; the README's matrix gives each one's detection rate.
"""

from __future__ import annotations

from fencepost import Bug, Recipe
from system.bugs import BUGS

RECIPES: dict[str, Recipe] = {
    "ack-before-fsync": Recipe("register", ("lose-unsynced",), 60, 2.0,
                               "nodes power-lose entries they acknowledged; the amnesia checker sees "
                               "acknowledged writes missing from the final state"),
    "metadata-no-fsync": Recipe("register", ("lose-unsynced",), 60, 2.0,
                                "a power loss rolls a node's epoch back; the amnesia checker sees the epoch go "
                                "down"),
    "forget-epoch-on-tombstone": Recipe("register", ("membership",), 40, 3.0,
                                        "moves and contracts delete replicas; the amnesia checker sees the "
                                        "tombstone report no epoch where the replica held one (rule 6)",
                                        targets={"membership": ("move-replica", "contract")}),
    "copy-overwrites-epoch": Recipe("register", ("copy-failover",), 60, 8.0,
                                    "a replica moves onto the spare node and its copy is slowed between download "
                                    "and merge while the tablet's leader is killed: the copying replica adopts "
                                    "the new leader's epoch, and a merge that takes the downloaded epoch lowers "
                                    "it, which the amnesia checker reads from the node's events (rule 2)",
                                    settings={"nodes": 4}),
    "no-uuid-check": Recipe("log", ("wipe", "kill"), 40, 3.0,
                            "a wiped node rejoins under its old identity; the amnesia checker's identity rule "
                            "and lost appends show it"),
    "leader-not-highest-head": Recipe("log", ("failover",), 40, 3.0,
                                      "a follower lags and the leader dies: the election picks the lagging "
                                      "node and truncates acknowledged appends, which the amnesia and log "
                                      "checkers report lost",
                                      targets={"failover": ("lagging-follower",)}),
    "commit-prior-epoch": Recipe("register", ("kill",), 30, 1.5,
                                 "the leader of the one tablet dies under heavy load, so the followers hold "
                                 "entries above the commit index they know; the new leader counts a follower's "
                                 "confirmation of such an older-epoch entry and commits it before its own no-op, "
                                 "which the commit-epoch checker reads from the leader's commit events (at 200 "
                                 "ops/s over four tablets the window was open in only half the seeds)",
                                 settings={"options": {"tablets": 1}, "rate": 1000.0, "concurrency": 20},
                                 targets={"kill": ("leader",)}),
    "fence-current-ensemble-only": Recipe("register", ("stalled-swap",), 60, 6.0,
                                          "a swap stalls after the leader applied it and the leader is cut off "
                                          "with the new node; an election that fences only the old ensemble "
                                          "elects a second leader whose newer-epoch head later wins over the "
                                          "writes the first leader committed with the new node, which the amnesia "
                                          "and leader-completeness checkers report",
                                          settings={"nodes": 4}),
    "count-pre-voter-acks": Recipe("register", ("catch-up-partition",), 40, 3.0,
                                   "a replica is added and, as it catches up, the leader and it are cut off "
                                   "from the other voters; counting its acks commits writes no voter majority "
                                   "holds, and the voters' new leader lacks them (linearizability, amnesia)",
                                   settings={"nodes": 4}),
    "contract-below-commit": Recipe("register", ("lagging-contract",), 40, 3.0,
                                    "a replica is removed while the follower that stays is cut off and "
                                    "behind; applying the contract at once leaves committed entries on the "
                                    "leader alone, which the redundancy checker reads from the leader's log"),
    "stale-leader-reads": Recipe("register", ("partition",), 60, 6.0,
                                 "the leader is cut off from its followers and the operator but not from "
                                 "clients; the clients whose home it is keep reading from it after the "
                                 "new leader took writes, and the linearizability checker finds the stale "
                                 "reads (windows of 3-9 s: the election and a client timeout must fit; "
                                 "60 s holds three or four)",
                                 targets={"partition": ("leader-alone",)}),
    "gap-ack": Recipe("register", ("lossy-link",), 40, 5.0,
                      "a leader's link to one follower loses single batches while its other follower is cut "
                      "off, then the leader dies: a follower that acknowledges past a lost batch lets the "
                      "leader commit entries only it holds, which the amnesia and leader-completeness "
                      "checkers report lost (Oxia #1239)"),
    "stale-copy-session": Recipe("register", ("cancelled-copy",), 40, 3.0,
                                 "a migration is cancelled while its copy hangs on a cut link; the copy lands "
                                 "after the barrier closed its session, and the topology-guards checker finds "
                                 "the replica made READY under a closed session",
                                 settings={"nodes": 4}),
    "no-cas-config-change": Recipe("register", ("config-race",), 30, 3.0,
                                   "two admins change one tablet's placement at once, naming the same "
                                   "committed config id; both apply, and the config-cas checker sees a change "
                                   "applied over a config its caller never saw"),
    "become-leader-before-followers": Recipe("log", ("failover",), 40, 3.0,
                                             "a follower lags, the leader dies and the other follower is "
                                             "slow: the first fenced node leads without a fence majority and "
                                             "truncates acknowledged appends",
                                             targets={"failover": ("lagging-follower-slow-peer",)}),
}


def recipe(bug: str) -> Recipe:
    """The recipe for ``bug``.

    Raises:
        KeyError: no such bug (the message lists the known ones).
    """
    if bug not in RECIPES:
        raise KeyError(f"no recipe for bug {bug!r}; known: {', '.join(sorted(RECIPES))}")
    return RECIPES[bug]


def missing_recipes() -> list[str]:
    """Bugs in the system's registry without a recipe (a test keeps this empty)."""
    return sorted(set(BUGS) - set(RECIPES))


def bugs() -> dict[str, Bug]:
    """Every bug of :data:`system.bugs.BUGS` that has a recipe, with it."""
    return {name: Bug(name, what, RECIPES[name]) for name, what in BUGS.items() if name in RECIPES}
