"""An Elle-class checker for transactional histories (list-append and rw-register).

It infers a dependency graph (ww, wr and rw edges from the data, plus process or real-time order when the models
checked need them), finds the shortest cycle of each anomaly class in each strongly connected component, finds
the anomalies that need no cycle (G1a, G1b, internal, ...), and judges them against consistency models with Elle's
names. See docs/transactions.md.

    from checkers.txn import check_txn
    result = check_txn(ops, "list-append", ["serializable"], source="history.jsonl")
"""

from checkers.txn.checker import TxnChecker, check_txn
from checkers.txn.errors import MalformedTxn
from checkers.txn.models import ANOMALY_TYPES, CONSISTENCY_MODELS, UnknownModel

__all__ = ["ANOMALY_TYPES", "CONSISTENCY_MODELS", "MalformedTxn", "TxnChecker", "UnknownModel", "check_txn"]
