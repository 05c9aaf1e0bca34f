"""The reference system's white-box checkers: they judge its own event logs, state dumps and admin records.

Each answers "unknown" without the evidence it reads, which only this system writes, so they come with
the system (:meth:`harness.systems.reference.plugin.ReferencePlugin.checkers`), never with every run.
"""

from __future__ import annotations

from harness.checker import Checker


def white_box_checkers() -> list[Checker]:
    """Amnesia, admin-api, config-cas, redundancy, commit-epoch, fencing, topology-guards,
    leader-completeness, convergence, replica-state, log-matching, ensemble-changes, migrations, self-race,
    stale-refusals and contract-retry."""
    from harness.systems.reference.checkers.admin_api import AdminApiChecker
    from harness.systems.reference.checkers.amnesia import AmnesiaChecker
    from harness.systems.reference.checkers.commit_epoch import CommitEpochChecker
    from harness.systems.reference.checkers.config_cas import ConfigCasChecker
    from harness.systems.reference.checkers.contract_retry import ContractRetryChecker
    from harness.systems.reference.checkers.convergence import ConvergenceChecker
    from harness.systems.reference.checkers.ensemble_changes import EnsembleChangesChecker
    from harness.systems.reference.checkers.fencing import FencingChecker
    from harness.systems.reference.checkers.leader_completeness import LeaderCompletenessChecker
    from harness.systems.reference.checkers.log_matching import LogMatchingChecker
    from harness.systems.reference.checkers.migrations import MigrationsChecker
    from harness.systems.reference.checkers.redundancy import RedundancyChecker
    from harness.systems.reference.checkers.replica_state import ReplicaStateChecker
    from harness.systems.reference.checkers.self_race import SelfRaceChecker
    from harness.systems.reference.checkers.stale_refusals import StaleRefusalsChecker
    from harness.systems.reference.checkers.topology_guards import TopologyGuardsChecker

    return [AmnesiaChecker(), AdminApiChecker(), ConfigCasChecker(), RedundancyChecker(), CommitEpochChecker(),
            FencingChecker(), TopologyGuardsChecker(), LeaderCompletenessChecker(), ConvergenceChecker(),
            ReplicaStateChecker(), LogMatchingChecker(), EnsembleChangesChecker(), MigrationsChecker(),
            SelfRaceChecker(), StaleRefusalsChecker(), ContractRetryChecker()]
