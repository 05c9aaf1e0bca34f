"""The PostgreSQL client's outcomes against a real server: each says truly whether the transaction committed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest
from fencepost_postgresql.client import PostgresClient
from fencepost_postgresql.sql import conninfo, query

from harness.protocols import Invocation
from tests.plugins.postgresql.kit import WHY_NOT, postgres

pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY_NOT is not None, reason=f"PostgreSQL: {WHY_NOT}")]


def txn(*mops: list[object]) -> Invocation:
    return Invocation("txn", value=[list(m) for m in mops])


def test_each_outcome_says_what_happened(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with postgres(tmp_path) as cluster:
            primary = cluster.address("n1")
            client = PostgresClient("list-append", "SERIALIZABLE", timeout=2.0)
            await client.open(cluster)
            try:
                done = await client.invoke(txn(["append", 1, 5], ["append", 1, 6], ["r", 1, None]))
                assert done.type == "ok" and done.value == [["append", 1, 5], ["append", 1, 6], ["r", 1, [5, 6]]]

                # A row lock held elsewhere: the append waits, the time runs out before COMMIT is sent.
                holder = await psycopg.AsyncConnection.connect(conninfo(primary))
                await holder.execute("UPDATE la SET v = v WHERE k = 1")
                blocked = await client.invoke(txn(["append", 1, 7]))
                assert blocked.type == "fail", blocked
                await holder.rollback()

                # COMMIT that never returns: a synchronous standby that does not exist holds every commit.
                await query(primary, "ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
                await query(primary, "SELECT pg_reload_conf()")
                await asyncio.sleep(0.5)
                held = await client.invoke(txn(["append", 5, 1]))
                assert held.type == "info" and "commit under way" in (held.error or ""), held
                await query(primary, "ALTER SYSTEM RESET synchronous_standby_names")
                await query(primary, "SELECT pg_reload_conf()")
                await asyncio.sleep(0.5)
                # It did commit: the client's info was right not to say fail.
                assert (await query(primary, "SELECT v FROM la WHERE k = 5")) == [("1",)]
                await holder.close()
            finally:
                await client.close()

    asyncio.run(scenario())


def test_a_serialization_failure_is_fail_and_changes_nothing(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with postgres(tmp_path) as cluster:
            primary = cluster.address("n1")
            client = PostgresClient("list-append", "SERIALIZABLE", timeout=5.0)
            await client.open(cluster)
            other = await psycopg.AsyncConnection.connect(conninfo(primary), autocommit=True)
            try:
                # Write skew: each reads the key the other appends to. `other` commits first; the client's
                # transaction, which read key 2 before `other` appended to it, must be refused.
                await other.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
                await other.execute("SELECT v FROM la WHERE k = 1")
                started = asyncio.Event()

                async def commit_other() -> None:
                    await started.wait()
                    await other.execute("INSERT INTO la VALUES (2, '1') ON CONFLICT (k) DO UPDATE SET v = la.v || ',1'")
                    await other.execute("COMMIT")

                class Slow(PostgresClient):
                    async def _micro_op(self, conn, m):
                        out = await super()._micro_op(conn, m)
                        if m[0] == "r":
                            started.set()
                            await asyncio.sleep(0.5)
                        return out

                slow = Slow("list-append", "SERIALIZABLE", timeout=5.0)
                await slow.open(cluster)
                outcome, _ = await asyncio.gather(slow.invoke(txn(["r", 2, None], ["append", 1, 1])), commit_other())
                await slow.close()
                assert outcome.type == "fail" and "40001" in (outcome.error or ""), outcome
                assert await query(primary, "SELECT v FROM la WHERE k = 1") == []
            finally:
                await other.close()
                await client.close()

    asyncio.run(scenario())
