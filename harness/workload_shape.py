"""The default campaign's workload shape: how many client workers, at what rate, for a cluster of ``n`` nodes.

The faults find a bug only where clients are: a stale read shows on the node cut off from the others only if
some worker reads there while the others take writes, and a lost write only if the keys written before a
crash are read after it. So, in the default campaign, for every system alike:

- **Workers per node.** :data:`WORKERS_PER_NODE` workers for each data node. The harness tells each worker's
  client which worker it serves (:class:`harness.protocols.WorkerBound`), and a client that listens binds
  worker ``i`` to node ``i mod n`` (the reference store's and etcd's do), as Jepsen binds its threads: every node
  serves clients at all times, also the one a fault cut off, and a worker reopened after a timeout goes back
  to its node, where a stale leader or a cut-off follower keeps serving. With two workers on a node, both are
  often stuck in timed-out writes at once (half of the register's operations write), and the node is read by
  nobody for a whole window; with four, all four are stuck about one time in sixteen. Four also spans the
  nodes with each key: the register workload shares a key among four consecutive workers, so each key is read
  and written through every node of a cluster of up to four nodes, and through four nodes of a larger one.
- **Rate.** :data:`RATE_PER_WORKER` operations a second for each worker: the command line's default, 200 over
  10 workers, per worker. A fault window lasts half to one and a half times the interval (1.5 s at the
  least, by default), in which each node's workers may issue ``4 x 20 x 1.5 = 120`` operations, half of them
  reads: the limit is the system's latency, never the rate, so every window sees operations, reads among
  them, on every node that answers.

``--concurrency`` and ``--rate`` on the command line win (the rate follows the workers given), as does a
recipe's own shape; a system's ``default_settings`` do not set them.
"""

from __future__ import annotations

WORKERS_PER_NODE = 4
"""Client workers per data node in the default campaign."""
RATE_PER_WORKER = 20.0
"""Target operations a second per worker in the default campaign (their sum is the test's ``rate``)."""


def default_workers(nodes: int) -> int:
    """The default campaign's ``concurrency`` for a cluster of ``nodes`` data nodes."""
    return WORKERS_PER_NODE * max(1, nodes)


def default_rate(workers: int) -> float:
    """The default campaign's ``rate`` for ``workers`` client workers (the shape's, or those given)."""
    return RATE_PER_WORKER * max(1, workers)
