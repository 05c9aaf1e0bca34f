"""The master: the catalog of nodes and tablets, the join procedure, the admin API and the policy loop.

Run: ``python -m system.master --metadata URL --cluster-file F --host H --port P --data DIR
[--replication R] [--dead-after S] [--bug NAME]...``

It owns these records in the metadata store (the operator only reads them):
- ``identity``: ``{"cluster_id"}``, written once;
- ``members/<member>``: one per node UUID ever accepted: ``member`` (its id in ensembles: the process
  name for its first incarnation, ``name~k`` for later ones), ``name``, ``uuid``, ``host``, ``port``,
  ``state`` (none, bootstrapping, normal, decommissioning, left; a left member is never removed);
- ``placement/<t>``: ``{"up", "rf", "config_id"}``: the up set (the master's desired replicas), the
  desired replica count and the committed config id every config change must name.

The operator's ``shards/<t>`` records hold the acting set (the ensemble) and any migration in flight.

Modules: :mod:`.catalog` (records, join), :mod:`.admin` (admin API), :mod:`.policy` (the loop),
:mod:`.server` (RPC dispatch and process).
"""
