"""The reference replicated, sharded store that Fencepost tests (standard library only)."""
