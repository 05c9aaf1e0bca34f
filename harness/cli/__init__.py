"""The ``fencepost`` command line: one module per subcommand."""
