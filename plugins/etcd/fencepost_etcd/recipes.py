"""etcd's known-unsafe modes, each with the test that exposes it.

- ``serializable-reads``: reads served by whichever member the client asks, from its own state, without a
  quorum (etcd's documented ``--consistency=s``). A member cut off from the majority keeps answering reads
  while the others accept writes: stale reads, which the linearizability checker finds.
- ``lock``: etcd's lock is a key on a lease. A holder whose member stalls longer than the lease's time to
  live loses the lock without knowing, and its write, arriving after the pause, overwrites the next
  holder's: a lost update (etcd's documentation and Jepsen's 2020 analysis both say a lease-based lock
  cannot guarantee mutual exclusion). Nothing is switched on in etcd: the lock workload is the unsafe mode.
"""

from __future__ import annotations

from fencepost import Bug, Recipe

BUGS: dict[str, Bug] = {
    "serializable-reads": Bug(
        "serializable-reads", "reads are served by the member asked, from its own state, without a quorum "
                              "(etcd's serializable reads: documented as possibly stale)",
        Recipe("register", ("partition",), 60.0, 5.0,
               "a member cut off from the majority keeps serving reads while the others take writes; the "
               "linearizability checker finds the stale reads. Thirty workers keep about ten clients on the "
               "cut-off member, where each read between its writes' 4 s timeouts is stale",
               settings={"concurrency": 30}, targets={"partition": ("one", "leader", "halves")})),
    "lock": Bug(
        "lock", "etcd's lock on a lease does not give mutual exclusion: a holder paused past the lease's time "
                "to live loses the lock without knowing (the lock workload; documented by etcd and Jepsen)",
        Recipe("lock", ("pause",), 60.0, 3.0,
               "members are paused for 1.5-4.5 s, often longer than the lock's 2 s lease: a client stuck in a paused "
               "member loses the lock, the next holder adds, and the stuck write lands after it and "
               "overwrites it; the mutual-exclusion checker names two holders that read the same revision, "
               "and the set checker sees the lost add",
               targets={"pause": ("one", "minority")}, clean_twin=False)),
}
"""Mode name -> the mode and its recipe."""
