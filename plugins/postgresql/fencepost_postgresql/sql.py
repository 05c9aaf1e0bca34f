"""Short administrative statements against one PostgreSQL node, with bounded waits (setup and checks)."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg

CONNECT_TIMEOUT_S = 3
STATEMENT_TIMEOUT_S = 5.0


class Unreachable(Exception):
    """The node did not answer, or refused the statement."""


def conninfo(address: tuple[str, int], **extra: Any) -> str:
    """The libpq connection string for the node at ``address`` (trust authentication as ``postgres``)."""
    host, port = address
    return psycopg.conninfo.make_conninfo(host=host, port=port, user="postgres", dbname="postgres",
                                          connect_timeout=CONNECT_TIMEOUT_S, **extra)


async def query(address: tuple[str, int], statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of one autocommitted statement (none for a statement that returns none).

    Raises:
        Unreachable: the node did not answer within the timeouts, or the statement failed.
    """
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT_S + STATEMENT_TIMEOUT_S):
            conn = await psycopg.AsyncConnection.connect(conninfo(address), autocommit=True)
            try:
                cur = await conn.execute(statement, params)
                return await cur.fetchall() if cur.description else []
            finally:
                await conn.close()
    except (psycopg.Error, OSError, TimeoutError) as e:
        raise Unreachable(f"{address[0]}:{address[1]}: {str(e).strip() or type(e).__name__}") from None


async def execute(address: tuple[str, int], statement: str) -> None:
    """Run one autocommitted statement (see :func:`query`)."""
    await query(address, statement)


async def streaming(primary: tuple[str, int]) -> set[str]:
    """The standbys that stream from the primary now, by slot (node) name."""
    rows = await query(primary, "SELECT slot_name FROM pg_replication_slots WHERE active")
    return {str(r[0]) for r in rows}
