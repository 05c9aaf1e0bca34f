"""Mutation testing of a system under test: ``fencepost mutate``.

A system names the modules that hold its protocol code (:class:`harness.plugin_api.Mutable`).
Mutants of those modules come from cosmic-ray (the ``mutate`` extra: ``pip install 'fencepost[mutate]'``);
this package only enumerates them (:mod:`.mutants`), applies one at a time to a scratch copy of the
system's code folders (:mod:`.scratch`), runs ``fencepost test`` against it in a child process
(:mod:`.runner`), classifies it (:mod:`.classify`: caught, missed, broken at start, unknown, or
equivalent as reviewed in the system's file, :mod:`.equivalents`) and sums up the campaign
(:mod:`.summary`: the score per module, detection power, the campaign page, the final JSON line).

The checkout is never mutated: only scratch copies under ``$TMPDIR/fencepost-mutation`` change, and
they are removed on exit and, after a SIGKILL, by the next ``fencepost mutate``.
"""
