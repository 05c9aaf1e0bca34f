"""The reference system's white-box checkers: they judge its own event logs, state dumps and admin records.

Each answers "unknown" without the evidence it reads, which only this system writes, so they come with
the system (:meth:`harness.systems.reference.plugin.ReferencePlugin.checkers`), never with every run.
"""

from __future__ import annotations

from harness.checker import Checker


def white_box_checkers() -> list[Checker]:
    """Amnesia, config-cas, redundancy, commit-epoch, topology-guards, leader-completeness, convergence,
    replica-state, ensemble-changes and migrations."""
    from harness.systems.reference.checkers.amnesia import AmnesiaChecker
    from harness.systems.reference.checkers.commit_epoch import CommitEpochChecker
    from harness.systems.reference.checkers.config_cas import ConfigCasChecker
    from harness.systems.reference.checkers.convergence import ConvergenceChecker
    from harness.systems.reference.checkers.ensemble_changes import EnsembleChangesChecker
    from harness.systems.reference.checkers.leader_completeness import LeaderCompletenessChecker
    from harness.systems.reference.checkers.migrations import MigrationsChecker
    from harness.systems.reference.checkers.redundancy import RedundancyChecker
    from harness.systems.reference.checkers.replica_state import ReplicaStateChecker
    from harness.systems.reference.checkers.topology_guards import TopologyGuardsChecker

    return [AmnesiaChecker(), ConfigCasChecker(), RedundancyChecker(), CommitEpochChecker(),
            TopologyGuardsChecker(), LeaderCompletenessChecker(), ConvergenceChecker(), ReplicaStateChecker(),
            EnsembleChangesChecker(), MigrationsChecker()]
