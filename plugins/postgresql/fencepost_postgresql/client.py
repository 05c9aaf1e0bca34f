"""The PostgreSQL plugin's client: the list-append and rw-register workloads' transactions through psycopg 3.

One connection per worker and node it uses, in autocommit mode, so the client sends ``BEGIN``, each micro-op
and ``COMMIT`` itself and knows which of them the server has seen. A connection that fails is dropped and
opened again at the next transaction. Every transaction runs at the mode's isolation level on the primary;
in the ``standby-reads`` mode a transaction that only reads runs on the worker's standby instead, at
REPEATABLE READ (a hot standby offers nothing stronger).

Tables: list-append ``la (k int primary key, v text)``, the list as comma-separated values, an append an
upsert that concatenates; rw-register ``rw (k int primary key, v int)``, a write an upsert.

Outcomes, with the SQLSTATE codes:

- ``COMMIT`` returned success: ``ok``, with what each read saw.
- a serialization failure (``40001``, which also covers a hot standby's "conflict with recovery") or a
  deadlock (``40P01``), before or at ``COMMIT``: ``fail``; the server aborted the transaction.
- any other error before ``COMMIT`` was sent (a refused or lost connection, a timeout, a server error):
  ``fail``. Nothing was committed: the server rolls back a transaction whose session ends uncommitted.
- an error the server reports for ``COMMIT`` itself (it has a SQLSTATE): ``fail``, the commit was refused.
- the connection lost, or the time up, while ``COMMIT`` was under way: ``info``; it may have committed.
- a transaction that only reads: ``fail`` whatever happened, since it changed nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

import psycopg
from psycopg import errors

from fencepost import ClusterView, Invocation, Outcome
from fencepost_postgresql.plugin import PRIMARY
from fencepost_postgresql.sql import conninfo

ABORTS = (errors.SerializationFailure, errors.DeadlockDetected)
"""Errors that mean the server aborted the transaction (40001, 40P01)."""
STATEMENTS = {
    ("list-append", "append"): "INSERT INTO la AS t (k, v) VALUES (%s, %s) "
                               "ON CONFLICT (k) DO UPDATE SET v = t.v || ',' || excluded.v",
    ("list-append", "r"): "SELECT v FROM la WHERE k = %s",
    ("rw-register", "w"): "INSERT INTO rw AS t (k, v) VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
    ("rw-register", "r"): "SELECT v FROM rw WHERE k = %s",
}
"""Each workload's micro-op -> its statement."""


class PostgresClient:
    """One worker's client.

    Args:
        workload: list-append or rw-register.
        isolation: the isolation level on the primary (SERIALIZABLE, REPEATABLE READ, READ COMMITTED).
        standby_reads: run read-only transactions on the worker's standby.
        timeout: seconds for one transaction, connecting included.
    """

    _homes = itertools.count()

    def __init__(self, workload: str, isolation: str, *, standby_reads: bool = False, timeout: float = 5.0) -> None:
        if workload not in ("list-append", "rw-register"):
            raise ValueError(f"the postgresql client runs list-append and rw-register, not {workload!r}")
        self.workload = workload
        self.isolation = isolation
        self.standby_reads = standby_reads
        self.timeout = timeout
        self._worker: int | None = None
        self._cluster: ClusterView | None = None
        self._standby: str | None = None
        self._conns: dict[str, psycopg.AsyncConnection[Any]] = {}

    def bind(self, worker: int) -> None:
        """Serve ``worker``: its standby is standby ``worker`` mod the number of standbys."""
        self._worker = worker

    async def open(self, cluster: ClusterView) -> None:
        """Pick this worker's standby; connections open at the first transaction that needs them."""
        self._cluster = cluster
        standbys = [n for n in cluster.nodes() if n != PRIMARY]
        index = self._worker if self._worker is not None else next(self._homes)
        self._standby = standbys[index % len(standbys)] if standbys else None

    async def invoke(self, op: Invocation) -> Outcome:
        """Run one transaction (see the module's docstring for the outcomes)."""
        if op.f != "txn":
            raise ValueError(f"unknown function {op.f!r}: this workload's client runs txn")
        read_only = all(m[0] == "r" for m in op.value)
        node = self._standby if self.standby_reads and read_only and self._standby else PRIMARY
        level = "REPEATABLE READ" if node != PRIMARY else self.isolation
        committing = False
        try:
            async with asyncio.timeout(self.timeout):
                conn = await self._connection(node)
                await conn.execute(f"BEGIN ISOLATION LEVEL {level}{' READ ONLY' if read_only else ''}")
                done = [await self._micro_op(conn, m) for m in op.value]
                committing = True
                await conn.execute("COMMIT")
            return Outcome("ok", done)
        except ABORTS as e:
            await self._after_error(node, e)
            return Outcome("fail", op.value, f"{e.sqlstate}: {first_line(e)}")
        except (psycopg.Error, OSError, TimeoutError) as e:
            await self._after_error(node, e)
            why = f"{getattr(e, 'sqlstate', None) or type(e).__name__}: {first_line(e)}"
            definite = isinstance(e, psycopg.Error) and e.sqlstate is not None
            if committing and not read_only and not definite:
                return Outcome("info", None, f"{node}: commit under way: {why}")
            return Outcome("fail", op.value, f"{node}: {why}")

    async def _micro_op(self, conn: psycopg.AsyncConnection[Any], m: list[Any]) -> list[Any]:
        f, k, v = m
        statement = STATEMENTS.get((self.workload, f))
        if statement is None:
            raise ValueError(f"{self.workload} has no micro-op {f!r}")
        if f != "r":
            await conn.execute(statement, (k, str(v) if self.workload == "list-append" else v))
            return [f, k, v]
        cur = await conn.execute(statement, (k,))
        row = await cur.fetchone()
        value = row[0] if row else None
        if self.workload == "list-append":
            return ["r", k, [int(x) for x in value.split(",")] if value else []]
        return ["r", k, value]

    async def _connection(self, node: str) -> psycopg.AsyncConnection[Any]:
        conn = self._conns.get(node)
        if conn is None or conn.closed:
            assert self._cluster is not None, "open the client first"
            conn = await psycopg.AsyncConnection.connect(conninfo(self._cluster.address(node)), autocommit=True)
            self._conns[node] = conn
        return conn

    async def _after_error(self, node: str, e: BaseException) -> None:
        """Roll back on a connection the server still answers (it reported the error); else drop it."""
        conn = self._conns.get(node)
        if conn is None:
            return
        if isinstance(e, psycopg.Error) and e.sqlstate is not None and not conn.closed:
            with contextlib.suppress(psycopg.Error, OSError, TimeoutError):
                async with asyncio.timeout(self.timeout):
                    await conn.execute("ROLLBACK")
                return
        self._conns.pop(node, None)
        await close_quietly(conn)

    async def close(self) -> None:
        """Close every connection."""
        conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            await close_quietly(conn)


async def close_quietly(conn: psycopg.AsyncConnection[Any]) -> None:
    """Close ``conn`` within a second, whatever state its server or the network left it in."""
    with contextlib.suppress(psycopg.Error, OSError, TimeoutError):
        async with asyncio.timeout(1.0):
            await conn.close()


def first_line(e: BaseException) -> str:
    """An error's first line (psycopg's messages continue with context lines)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
