"""Fencepost harness: test lifecycle, histories, the run store, the CLI and the pytest plugin."""
