"""Backends run the system under test: ``local`` (child processes, the default) and ``docker``."""
