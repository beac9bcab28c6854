"""The asyncpg connection pool, with pgvector's codec and JSON codecs registered on every connection.

``database_url()`` resolves where the data lives: ``DATABASE_URL`` when set, else the embedded server
(started or joined on demand). Everything that needs the database goes through ``create_pool``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector

from db.embedded import ensure_server_async
from db.settings import Settings

log = logging.getLogger("medbot.db")

# What a lost, restarting or restarted server looks like to a client: a statement that failed with one of these
# never reached (or never finished on) the server, and an idempotent one can be tried again on a fresh connection.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,  # admin shutdown, crash shutdown, cannot connect now
    asyncpg.InterfaceError,  # "connection is closed"
    # "cannot switch to state 11; another operation is in progress": the protocol of a connection whose socket
    # was cut mid-statement (seen when the outbox drainer's connections are terminated during a send).
    asyncpg.InternalClientError,
)


async def database_url(settings: Settings) -> str:
    """The PostgreSQL URL to use: ``DATABASE_URL`` or the embedded server's."""
    if settings.database_url:
        return settings.database_url
    explicit = "medbot_data_dir" in settings.model_fields_set
    return await ensure_server_async(settings.medbot_data_dir, explicit=explicit)


def asyncpg_dsn(url: str) -> str:
    """asyncpg wants a plain ``postgresql://`` DSN; accept SQLAlchemy-style driver suffixes too."""
    for prefix in ("postgresql+asyncpg://", "postgres+asyncpg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url


async def _init_connection(conn: asyncpg.Connection) -> None:
    try:
        await register_vector(conn)
    except ValueError:  # extension not created yet (before the first migration)
        pass
    for typ in ("json", "jsonb"):
        await conn.set_type_codec(typ, encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


# Session defaults sent in the startup packet (no round trip): any HNSW scan (guideline chunks, ad hoc
# queries) keeps reading the graph until its filter has found enough rows, with a candidate list wide enough
# for recall. db.kb's own HNSW search sets these per transaction as well.
SESSION_SETTINGS = {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "400"}


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Connection reset on release to the pool: nothing beyond asyncpg's own rollback of an open transaction.

    asyncpg's default sends ``pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`` on every release,
    a round trip per borrowed connection, about a third of a chat message's database calls. This code leaves
    no such state behind: session settings come only from the startup packet, nothing LISTENs or keeps
    cursors, and every advisory lock is released by ``db.locks.unlock``, which terminates the connection
    when it cannot.
    """


async def create_pool(url: str, *, min_size: int = 1, max_size: int = 10, **kwargs: Any) -> asyncpg.Pool:
    """A pool whose connections understand ``vector`` and JSON columns."""
    kwargs.setdefault("server_settings", SESSION_SETTINGS)
    pool = await asyncpg.create_pool(
        asyncpg_dsn(url),
        min_size=min_size,
        max_size=max_size,
        init=_init_connection,
        reset=_keep_session,
        **kwargs,
    )
    assert pool is not None
    return pool
