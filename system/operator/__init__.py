"""The operator: failure detection, leader elections by fencing, and reconfigurations.

Run: ``python -m system.operator --id op1 --metadata sqlite:///DIR/meta.db --nodes n1=127.0.0.2:7001,...
--tablets 4 --replication 3 --host 127.0.0.1 --port 7100 --data DIR [--bug NAME]... [--crash-at POINT]...``

- ``--nodes``: every node the operator may use, ``id=host:port`` comma separated.
- ``--tablets``/``--replication``: used only when the metadata store is empty (first start).
- ``--host``/``--port``: its own RPC address (``routing`` for clients, ``reconfig`` and ``status``).
- ``--data``: where its event log ``operator-<id>.jsonl`` goes.
- ``--stall-timeout``: seconds an election or reconfiguration recorded in the metadata may sit
  unchanged before this operator takes it over (another operator may be running it).
- ``--crash-at``: test hook; the process exits abruptly at that point (see ``CRASH_POINTS``).

Modules: :mod:`.control` (the loop, heartbeats, RPC), :mod:`.election`, :mod:`.reconfig`,
:mod:`.shards` (metadata records).
"""
