"""Checkers: linearizability, amnesia safety, durability, white-box invariants and perf."""
