"""The textbook anomalies as tiny histories, each with its clean twin, in list-append and rw-register form.

Keys are 1 (x) and 2 (y), and 3 and 4 where a cycle needs four. Unless a case says otherwise its transactions
overlap in real time (so only the data orders them) and run on different processes. ``ok_under`` lists the
oracle's models that allow the history; every other model the oracle decides prohibits it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.checkers.txn.oracle import MODELS
from tests.checkers.txn.oracle_histories import T, sequential

X, Y = 1, 2
ALL = frozenset(MODELS)
NONE: frozenset[str] = frozenset()
SI_FAMILY = frozenset({"snapshot-isolation", "strong-session-snapshot-isolation", "strong-snapshot-isolation"})
NOT_REALTIME = ALL - {"strict-serializable", "strong-serializable", "strong-snapshot-isolation"}
NOT_SESSION = NOT_REALTIME - {"strong-session-serializable", "strong-session-snapshot-isolation"}


@dataclass(frozen=True)
class Case:
    """One hand-written history and what is known about it.

    Attributes:
        name: the anomaly (or ``<anomaly> clean`` for its twin).
        workload: ``list-append`` or ``rw-register``.
        txns: the transactions.
        ok_under: the oracle's models that allow it.
        anomaly: the anomaly type the checker must find (None for a clean twin).
        involved: positions in ``txns`` of the transactions the anomaly must name.
        invalid: models under which the checker must call it invalid.
        valid: models under which the checker must call it valid.
    """

    name: str
    workload: str
    txns: list[T]
    ok_under: frozenset[str]
    anomaly: str | None = None
    involved: tuple[int, ...] = ()
    invalid: tuple[str, ...] = ()
    valid: tuple[str, ...] = ()
    edges: tuple[str, ...] = field(default=())
    """Edge types the anomaly's cycle must contain (each at least once)."""


def _concurrent(*txns: T) -> list[T]:
    return sequential(txns)


LA, RW = "list-append", "rw-register"
SER, STRICT, SI, RC, RU = "serializable", "strict-serializable", "snapshot-isolation", "read-committed", \
    "read-uncommitted"


def _cases() -> list[Case]:
    c: list[Case] = []
    # G0: write cycle. x's order says T0 before T1, y's says T1 before T0.
    c.append(Case("G0", LA, _concurrent(
        T(0, [["append", X, 1], ["append", Y, 1]]),
        T(1, [["append", X, 2], ["append", Y, 2]]),
        T(2, [["r", X, [1, 2]], ["r", Y, [2, 1]]]),
    ), NONE, "G0", (0, 1), (RU, RC, SI, SER, STRICT), (), ("ww",)))
    c.append(Case("G0 clean", LA, _concurrent(
        T(0, [["append", X, 1], ["append", Y, 1]]),
        T(1, [["append", X, 2], ["append", Y, 2]]),
        T(2, [["r", X, [1, 2]], ["r", Y, [1, 2]]]),
    ), ALL, valid=(STRICT,)))
    # rw-register: each transaction writes a key after reading the other's version of it.
    c.append(Case("G0", RW, _concurrent(
        T(0, [["w", X, 1], ["r", Y, 2], ["w", Y, 1]]),
        T(1, [["r", X, 1], ["w", X, 2], ["w", Y, 2]]),
    ), NONE, "G0", (0, 1), (RU, RC, SER), (), ("ww",)))
    c.append(Case("G0 clean", RW, _concurrent(
        T(0, [["w", X, 1], ["w", Y, 1]]),
        T(1, [["r", X, 1], ["w", X, 2], ["r", Y, 1], ["w", Y, 2]]),
    ), ALL, valid=(STRICT,)))

    # G1a: aborted read. An ok read sees a failed transaction's write; an info transaction's write may be seen.
    c.append(Case("G1a", LA, _concurrent(
        T(0, [["append", X, 1]], "fail"),
        T(1, [["r", X, [1]]]),
    ), NONE, "G1a", (0, 1), (RC, SI, SER, STRICT), (RU,)))
    c.append(Case("G1a clean", LA, _concurrent(
        T(0, [["append", X, 1]], "fail"),
        T(1, [["r", X, []]]),
    ), ALL, valid=(STRICT,)))
    c.append(Case("G1a info is not aborted", LA, _concurrent(
        T(0, [["append", X, 1]], "info"),
        T(1, [["r", X, [1]]]),
    ), ALL, valid=(STRICT,)))
    c.append(Case("G1a", RW, _concurrent(
        T(0, [["w", X, 1]], "fail"),
        T(1, [["r", X, 1]]),
    ), NONE, "G1a", (0, 1), (RC, SI, SER, STRICT), (RU,)))
    c.append(Case("G1a clean", RW, _concurrent(
        T(0, [["w", X, 1]], "fail"),
        T(1, [["r", X, None]]),
    ), ALL, valid=(STRICT,)))
    c.append(Case("G1a info is not aborted", RW, _concurrent(
        T(0, [["w", X, 1]], "info", end=None),
        T(1, [["r", X, 1]]),
    ), ALL, valid=(STRICT,)))

    # G1b: intermediate read. T1 sees T0's first append to x but not its second.
    c.append(Case("G1b", LA, _concurrent(
        T(0, [["append", X, 1], ["append", X, 2]]),
        T(1, [["r", X, [1]]]),
    ), NONE, "G1b", (0, 1), (RC, SI, SER, STRICT), (RU,)))
    c.append(Case("G1b clean", LA, _concurrent(
        T(0, [["append", X, 1], ["append", X, 2]]),
        T(1, [["r", X, [1, 2]]]),
    ), ALL, valid=(STRICT,)))
    c.append(Case("G1b", RW, _concurrent(
        T(0, [["w", X, 1], ["w", X, 2]]),
        T(1, [["r", X, 1]]),
    ), NONE, "G1b", (0, 1), (RC, SI, SER, STRICT), (RU,)))
    c.append(Case("G1b clean", RW, _concurrent(
        T(0, [["w", X, 1], ["w", X, 2]]),
        T(1, [["r", X, 2]]),
    ), ALL, valid=(STRICT,)))

    # G1c: circular information flow. Each reads the other's write.
    c.append(Case("G1c", LA, _concurrent(
        T(0, [["append", X, 1], ["r", Y, [1]]]),
        T(1, [["append", Y, 1], ["r", X, [1]]]),
    ), NONE, "G1c", (0, 1), (RC, SI, SER, STRICT), (RU,), ("wr",)))
    c.append(Case("G1c clean", LA, _concurrent(
        T(0, [["append", X, 1], ["r", Y, [1]]]),
        T(1, [["append", Y, 1], ["r", X, []]]),
        T(2, [["r", X, [1]], ["r", Y, [1]]]),
    ), ALL, valid=(STRICT,)))
    c.append(Case("G1c", RW, _concurrent(
        T(0, [["w", X, 1], ["r", Y, 1]]),
        T(1, [["w", Y, 1], ["r", X, 1]]),
    ), NONE, "G1c", (0, 1), (RC, SI, SER, STRICT), (RU,), ("wr",)))
    c.append(Case("G1c clean", RW, _concurrent(
        T(0, [["w", X, 1], ["r", Y, 1]]),
        T(1, [["w", Y, 1], ["r", X, None]]),
    ), ALL, valid=(STRICT,)))

    # G-single: read skew. T1 reads x before T0 and y after it.
    c.append(Case("G-single", LA, _concurrent(
        T(0, [["append", X, 1], ["append", Y, 1]]),
        T(1, [["r", X, []], ["r", Y, [1]]]),
        T(2, [["r", X, [1]]]),
    ), frozenset({RC}), "G-single", (0, 1), (SI, SER, STRICT, "repeatable-read"), (RC,),
         ("rw",)))
    c.append(Case("G-single clean", LA, _concurrent(
        T(0, [["append", X, 1], ["append", Y, 1]]),
        T(1, [["r", X, [1]], ["r", Y, [1]]]),
    ), ALL, valid=(STRICT,)))
    c.append(Case("G-single", RW, _concurrent(
        T(0, [["w", X, 1], ["w", Y, 1]]),
        T(1, [["r", X, None], ["r", Y, 1]]),
    ), frozenset({RC}), "G-single", (0, 1), (SI, SER, STRICT, "repeatable-read"), (RC,),
         ("rw",)))
    c.append(Case("G-single clean", RW, _concurrent(
        T(0, [["w", X, 1], ["w", Y, 1]]),
        T(1, [["r", X, 1], ["r", Y, 1]]),
    ), ALL, valid=(STRICT,)))

    # G2-item / write skew: each reads both keys empty and writes one. Snapshot isolation allows it.
    c.append(Case("G2-item", LA, [
        *_concurrent(
            T(0, [["r", X, []], ["r", Y, []], ["append", X, 1]]),
            T(1, [["r", X, []], ["r", Y, []], ["append", Y, 1]]),
        ),
        T(2, [["r", X, [1]], ["r", Y, [1]]], start=20, end=25),
    ], frozenset({RC}) | SI_FAMILY, "G2-item", (0, 1), (SER, STRICT, "repeatable-read"), (SI, RC), ("rw",)))
    c.append(Case("G2-item clean", LA, [
        *_concurrent(
            T(0, [["r", X, []], ["r", Y, []], ["append", X, 1]]),
            T(1, [["r", X, [1]], ["r", Y, []], ["append", Y, 1]]),
        ),
        T(2, [["r", X, [1]], ["r", Y, [1]]], start=20, end=25),
    ], ALL, valid=(STRICT,)))
    c.append(Case("G2-item", RW, _concurrent(
        T(0, [["r", X, None], ["r", Y, None], ["w", X, 1]]),
        T(1, [["r", X, None], ["r", Y, None], ["w", Y, 1]]),
    ), frozenset({RC}) | SI_FAMILY, "G2-item", (0, 1), (SER, STRICT, "repeatable-read"), (SI, RC), ("rw",)))
    c.append(Case("G2-item clean", RW, _concurrent(
        T(0, [["r", X, None], ["r", Y, None], ["w", X, 1]]),
        T(1, [["r", X, 1], ["r", Y, None], ["w", Y, 1]]),
    ), ALL, valid=(STRICT,)))
    # The classic write skew: two doctors on call, values set by an earlier transaction.
    c.append(Case("write skew", RW, sequential(
        [T(0, [["w", X, 1], ["w", Y, 1]])],
        [T(1, [["r", X, 1], ["r", Y, 1], ["w", X, 2]]), T(2, [["r", X, 1], ["r", Y, 1], ["w", Y, 2]])],
    ), frozenset({RC}) | SI_FAMILY, "G2-item", (1, 2), (SER, STRICT), (SI,), ("rw",)))
    c.append(Case("write skew clean", RW, sequential(
        [T(0, [["w", X, 1], ["w", Y, 1]])],
        [T(1, [["r", X, 1], ["r", Y, 1], ["w", X, 2]])],
        [T(2, [["r", X, 2], ["r", Y, 1], ["w", Y, 2]])],
    ), ALL, valid=(STRICT,)))
    c.append(Case("write skew", LA, sequential(
        [T(0, [["append", X, 1], ["append", Y, 1]])],
        [T(1, [["r", X, [1]], ["r", Y, [1]], ["append", X, 2]]),
         T(2, [["r", X, [1]], ["r", Y, [1]], ["append", Y, 2]])],
        [T(3, [["r", X, [1, 2]], ["r", Y, [1, 2]]])],
    ), frozenset({RC}) | SI_FAMILY, "G2-item", (1, 2), (SER, STRICT), (SI,), ("rw",)))

    # G-nonadjacent: a cycle whose two rw edges are not next to each other (T0 rw T1 wr T2 rw T3 wr T0). Snapshot
    # isolation prohibits it, as it does G-single; keys 3 and 4 join x and y.
    c.append(Case("G-nonadjacent", LA, [
        *_concurrent(
            T(0, [["r", X, []], ["r", 4, [1]]]),
            T(1, [["append", X, 1], ["append", Y, 1]]),
            T(2, [["r", Y, [1]], ["r", 3, []]]),
            T(3, [["append", 3, 1], ["append", 4, 1]]),
        ),
        T(4, [["r", X, [1]], ["r", 3, [1]]], start=20, end=25),
    ], frozenset({RC}), "G-nonadjacent", (0, 1, 2, 3), (SI, SER, "repeatable-read"), (RC,), ("rw", "wr")))
    c.append(Case("G-nonadjacent clean", LA, [
        *_concurrent(
            T(0, [["r", X, []], ["r", 4, [1]]]),
            T(1, [["append", X, 1], ["append", Y, 1]]),
            T(2, [["r", Y, [1]], ["r", 3, [1]]]),
            T(3, [["append", 3, 1], ["append", 4, 1]]),
        ),
        T(4, [["r", X, [1]], ["r", 3, [1]]], start=20, end=25),
    ], ALL, valid=(STRICT,)))
    c.append(Case("G-nonadjacent", RW, _concurrent(
        T(0, [["r", X, None], ["r", 4, 1]]),
        T(1, [["w", X, 1], ["w", Y, 1]]),
        T(2, [["r", Y, 1], ["r", 3, None]]),
        T(3, [["w", 3, 1], ["w", 4, 1]]),
    ), frozenset({RC}), "G-nonadjacent", (0, 1, 2, 3), (SI, SER, "repeatable-read"), (RC,), ("rw", "wr")))
    c.append(Case("G-nonadjacent clean", RW, _concurrent(
        T(0, [["r", X, None], ["r", 4, 1]]),
        T(1, [["w", X, 1], ["w", Y, 1]]),
        T(2, [["r", Y, 1], ["r", 3, 1]]),
        T(3, [["w", 3, 1], ["w", 4, 1]]),
    ), ALL, valid=(STRICT,)))

    # Lost update: both read x empty and both write it; one write is lost to the other's reader.
    c.append(Case("lost-update", LA, [
        *_concurrent(
            T(0, [["r", X, []], ["append", X, 1]]),
            T(1, [["r", X, []], ["append", X, 2]]),
        ),
        T(2, [["r", X, [1, 2]]], start=20, end=25),
    ], frozenset({RC}), "lost-update", (0, 1), (SI, SER, STRICT, "repeatable-read"), (RC,)))
    c.append(Case("lost-update clean", LA, [
        *_concurrent(
            T(0, [["r", X, []], ["append", X, 1]]),
            T(1, [["r", X, [1]], ["append", X, 2]]),
        ),
        T(2, [["r", X, [1, 2]]], start=20, end=25),
    ], ALL, valid=(STRICT,)))
    c.append(Case("lost-update", RW, _concurrent(
        T(0, [["r", X, None], ["w", X, 1]]),
        T(1, [["r", X, None], ["w", X, 2]]),
    ), frozenset({RC}), "lost-update", (0, 1), (SI, SER, STRICT, "repeatable-read"), (RC,)))
    c.append(Case("lost-update clean", RW, _concurrent(
        T(0, [["r", X, None], ["w", X, 1]]),
        T(1, [["r", X, 1], ["w", X, 2]]),
    ), ALL, valid=(STRICT,)))

    # Internal: a transaction does not see its own write.
    c.append(Case("internal", LA, _concurrent(
        T(0, [["append", X, 1], ["r", X, []]]),
    ), NONE, "internal", (0,), (SI, SER, STRICT)))
    c.append(Case("internal clean", LA, _concurrent(
        T(0, [["append", X, 1], ["r", X, [1]]]),
    ), ALL, valid=(STRICT,)))
    c.append(Case("internal", RW, _concurrent(
        T(0, [["w", X, 1], ["r", X, None]]),
    ), NONE, "internal", (0,), (SI, SER, STRICT)))
    c.append(Case("internal clean", RW, _concurrent(
        T(0, [["w", X, 1], ["r", X, 1]]),
    ), ALL, valid=(STRICT,)))

    # Stale read: T1 starts after T0 completed and misses its write. Only real time orders them.
    stale_la = sequential([T(0, [["append", X, 1]])], [T(1, [["r", X, []]])], [T(2, [["r", X, [1]]])])
    c.append(Case("G-single-realtime", LA, stale_la, NOT_REALTIME, "G-single-realtime", (0, 1),
                  (STRICT, "strong-snapshot-isolation"), (SER, SI), ("rw", "realtime")))
    c.append(Case("G-single-realtime clean", LA, sequential(
        [T(0, [["append", X, 1]])], [T(1, [["r", X, [1]]])]), ALL, valid=(STRICT,)))
    c.append(Case("G-single-realtime", RW, sequential([T(0, [["w", X, 1]])], [T(1, [["r", X, None]])]),
                  NOT_REALTIME, "G-single-realtime", (0, 1), (STRICT, "strong-snapshot-isolation"), (SER, SI),
                  ("rw", "realtime")))
    c.append(Case("G-single-realtime clean", RW, sequential([T(0, [["w", X, 1]])], [T(1, [["r", X, 1]])]),
                  ALL, valid=(STRICT,)))
    # The same on one process: the session models see it too.
    c.append(Case("G-single-process", LA, sequential(
        [T(0, [["append", X, 1]])], [T(0, [["r", X, []]])], [T(1, [["r", X, [1]]])]),
        NOT_SESSION, "G-single-process", (0, 1),
        ("strong-session-serializable", "strong-session-snapshot-isolation", STRICT), (SER, SI), ("rw", "process")))
    c.append(Case("G-single-process", RW, sequential([T(0, [["w", X, 1]])], [T(0, [["r", X, None]])]),
                  NOT_SESSION, "G-single-process", (0, 1),
                  ("strong-session-serializable", "strong-session-snapshot-isolation", STRICT), (SER, SI),
                  ("rw", "process")))
    return c


CASES = _cases()
