"""PostgreSQL's adapter: the plugin that lets Fencepost test a PostgreSQL primary with streaming standbys.

:mod:`.plugin` (the nodes, readiness, the primary), :mod:`.client` (list-append and rw-register through
psycopg 3, with the outcome of each SQLSTATE), :mod:`.sql` (setup statements), :mod:`.client_partition`
(clients cut off from a node), :mod:`.recipes` (its known-unsafe modes) and :mod:`.bench` (the client's
throughput against a bare psycopg loop). The node launcher is the separate, standard-library-only package
:mod:`fencepost_postgresql_node`. Registered under the ``fencepost.systems`` entry point as
``postgresql``; the framework never imports it.
"""

from fencepost_postgresql.plugin import PostgresPlugin, plugin

__all__ = ["PostgresPlugin", "plugin"]
