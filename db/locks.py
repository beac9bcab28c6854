"""PostgreSQL advisory locks: per-chat ordering, per-role import serialisation, worker leadership.

Session-level locks outlive the block that took them if the unlock never runs, and pooled connections are
not reset on release (``db.pool``), so every unlock goes through ``unlock``: when it cannot complete
(cancelled, connection error) the connection is terminated, and the server drops its locks with it (an
error is then logged, not raised: nothing is held any more; a cancellation still propagates). A
connection the server has already ended (a restart, a network cut) is detached from the block by the pool;
its session and locks are gone, so there is nothing to release.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

log = logging.getLogger("medbot.db.locks")


def lock_key(namespace: str, name: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_lock`` from a namespace and a name."""
    digest = hashlib.blake2b(f"{namespace}:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@asynccontextmanager
async def advisory_lock(pool: asyncpg.Pool, namespace: str, name: str) -> AsyncIterator[asyncpg.Connection]:
    """Hold a session-level advisory lock for the block, on a connection the block may use."""
    key = lock_key(namespace, name)
    async with pool.acquire() as conn:
        await lock(conn, key)
        try:
            yield conn
        finally:
            await unlock(conn, key)


async def lock(conn: asyncpg.Connection, *keys: int) -> None:
    """Take session-level locks in the order given (waiting for each), or drop the connection: cancelled
    while waiting, a lock may have been granted meanwhile, and only ending the session frees it."""
    try:
        for key in keys:
            await conn.execute("SELECT pg_advisory_lock($1)", key)
    except BaseException:
        _terminate(conn)
        raise


async def unlock(conn: asyncpg.Connection, *keys: int) -> None:
    """Release session-level locks (all of this session's when no key is given), or drop the connection."""
    if _ended(conn):
        return
    try:
        if keys:
            for key in keys:
                await conn.execute("SELECT pg_advisory_unlock($1)", key)
        else:
            await conn.execute("SELECT pg_advisory_unlock_all()")
    except Exception as exc:  # ending the session releases its locks all the same
        log.warning("locks.unlock_failed error=%r (connection dropped instead)", exc)
        _terminate(conn)
    except BaseException:
        _terminate(conn)
        raise


def _ended(conn: asyncpg.Connection) -> bool:
    """True when the session is over: closed, or detached by the pool because the server ended it."""
    try:
        return conn.is_closed()
    except asyncpg.InterfaceError:  # "connection has been released back to the pool"
        return True


def _terminate(conn: asyncpg.Connection) -> None:
    try:
        conn.terminate()
    except asyncpg.InterfaceError:  # already detached by the pool: its connection is gone
        pass


async def try_advisory_lock(conn: asyncpg.Connection, namespace: str, name: str) -> bool:
    """Take a session-level lock without waiting; True when this connection now holds it."""
    return bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", lock_key(namespace, name)))
