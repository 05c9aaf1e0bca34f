"""Benchmarks run by ``fencepost bench NAME``; each ends its output with one JSON line of figures."""
