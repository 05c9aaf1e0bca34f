"""The reference system's white-box checkers: they judge its own event logs, state dumps and admin records.

Each answers "unknown" without the evidence it reads, which only this system writes, so they come with
the system (:meth:`fencepost_reference.plugin.ReferencePlugin.checkers`), never with every run.
"""

from __future__ import annotations

from fencepost import Checker


def white_box_checkers() -> list[Checker]:
    """Amnesia, admin-api, config-cas, redundancy, commit-epoch, fencing, topology-guards,
    leader-completeness, convergence, replica-state, log-matching, ensemble-changes, migrations, self-race,
    stale-refusals and contract-retry."""
    from fencepost_reference.checkers.admin_api import AdminApiChecker
    from fencepost_reference.checkers.amnesia import AmnesiaChecker
    from fencepost_reference.checkers.commit_epoch import CommitEpochChecker
    from fencepost_reference.checkers.config_cas import ConfigCasChecker
    from fencepost_reference.checkers.contract_retry import ContractRetryChecker
    from fencepost_reference.checkers.convergence import ConvergenceChecker
    from fencepost_reference.checkers.ensemble_changes import EnsembleChangesChecker
    from fencepost_reference.checkers.fencing import FencingChecker
    from fencepost_reference.checkers.leader_completeness import LeaderCompletenessChecker
    from fencepost_reference.checkers.log_matching import LogMatchingChecker
    from fencepost_reference.checkers.migrations import MigrationsChecker
    from fencepost_reference.checkers.redundancy import RedundancyChecker
    from fencepost_reference.checkers.replica_state import ReplicaStateChecker
    from fencepost_reference.checkers.self_race import SelfRaceChecker
    from fencepost_reference.checkers.stale_refusals import StaleRefusalsChecker
    from fencepost_reference.checkers.topology_guards import TopologyGuardsChecker

    return [AmnesiaChecker(), AdminApiChecker(), ConfigCasChecker(), RedundancyChecker(), CommitEpochChecker(),
            FencingChecker(), TopologyGuardsChecker(), LeaderCompletenessChecker(), ConvergenceChecker(),
            ReplicaStateChecker(), LogMatchingChecker(), EnsembleChangesChecker(), MigrationsChecker(),
            SelfRaceChecker(), StaleRefusalsChecker(), ContractRetryChecker()]
