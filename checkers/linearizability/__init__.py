"""A Porcupine-class linearizability checker: search, fast paths, and explained counterexamples."""

from checkers.linearizability.checker import CheckResult, PartitionVerdict, check_calls, check_partition

__all__ = ["CheckResult", "PartitionVerdict", "check_calls", "check_partition"]
