"""PostgreSQL passes the plugin conformance kit and the transactional one."""

from __future__ import annotations

import pytest

from fencepost.testing import SystemConformance, TransactionalConformance
from tests.plugins.postgresql.kit import WHY_NOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY_NOT is not None, reason=f"PostgreSQL: {WHY_NOT}")]


class TestPostgres(SystemConformance):
    """Every check of the kit, against a primary and two standbys on the local backend."""

    system = "postgresql"


class TestPostgresTransactions(TransactionalConformance):
    """The transactional client contract, on real transactions."""

    system = "postgresql"
