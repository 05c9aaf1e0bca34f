"""PostgreSQL's known-unsafe modes, each with the test that exposes it and the checker that sees it.

The clean mode runs every transaction at SERIALIZABLE on the primary, and is checked as strict-serializable.

- ``repeatable-read``: transactions at REPEATABLE READ, which PostgreSQL implements as snapshot isolation.
  Two transactions that read each other's keys and append to different ones both commit: write skew
  (G2-item) when checked as serializable; the same history checked as snapshot-isolation is valid.
- ``read-committed``: transactions at READ COMMITTED: each statement sees a newer snapshot, so one
  transaction's two reads straddle another's commit (read skew, G-single) and appends based on stale reads
  interleave; checked as serializable.
- ``standby-reads``: transactions that only read run on a hot standby. Replication is asynchronous, so a
  standby answers from a slightly older state, much older while a partition cuts it from the primary: a read
  that began after an append was acknowledged misses it, a real-time anomaly under strict-serializable,
  while the history stays serializable.
- ``async-commit``: ``synchronous_commit = off``: a commit is acknowledged before its WAL is flushed. A power
  loss of the primary drops the last acknowledged transactions; reads before the loss saw them and reads
  after it do not (incompatible orders, and appends missing from the final reads). The clean mode under the
  same fault loses nothing.
"""

from __future__ import annotations

from fencepost import Bug, Recipe

SERIALIZABLE = {"options": {"consistency": "serializable"}}
"""Check the history as serializable (the isolation modes' anomalies are not only real-time ones)."""

BUGS: dict[str, Bug] = {
    "repeatable-read": Bug(
        "repeatable-read", "transactions run at REPEATABLE READ: snapshot isolation, which allows write skew",
        Recipe("list-append", ("pause",), 30.0, 5.0,
               "no fault is needed: concurrent transactions on a few hot keys read each other's keys and append "
               "to different ones; checked as serializable the txn checker finds G2-item (write skew), and "
               "checked as snapshot-isolation the same history is valid", settings=SERIALIZABLE,
               targets={"pause": ("one",)})),
    "read-committed": Bug(
        "read-committed", "transactions run at READ COMMITTED: each statement sees a newer snapshot",
        Recipe("list-append", ("pause",), 30.0, 5.0,
               "no fault is needed: a transaction's reads straddle other transactions' commits; checked as "
               "serializable the txn checker finds G-single (read skew) and lost updates",
               settings=SERIALIZABLE, targets={"pause": ("one",)})),
    "standby-reads": Bug(
        "standby-reads", "read-only transactions run on a hot standby, which replicates asynchronously",
        Recipe("list-append", ("partition",), 30.0, 4.0,
               "a standby cut off from the primary keeps answering reads from its old state; a read that began "
               "after an append was acknowledged misses it: the txn checker finds real-time anomalies under "
               "strict-serializable", targets={"partition": ("one",)})),
    "async-commit": Bug(
        "async-commit", "synchronous_commit = off: commits are acknowledged before their WAL is flushed",
        Recipe("list-append", ("lose-unsynced",), 40.0, 4.0,
               "the primary loses power: the transactions it acknowledged but had not flushed are gone; reads "
               "before the loss saw their appends and the final reads do not, which the txn checker reports",
               targets={"lose-unsynced": ("leader",)})),
}
"""Mode name -> the mode and its recipe."""
