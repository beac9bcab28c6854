"""Alembic environment: async, on asyncpg, with the same URL logic as the application.

The URL comes from `-x url=...`, or the config attribute ``url`` (set by ``db.migrate``), or the settings
(DATABASE_URL, else the embedded server). Migrations are raw SQL (``op.execute``): the schema is plain
PostgreSQL + pgvector and we keep no ORM models.
"""

from __future__ import annotations

import asyncio

import asyncpg
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from alembic import context
from db.pool import asyncpg_dsn, database_url
from db.settings import get_settings

config = context.config


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or config.attributes.get("url")
    if url:
        return url
    return asyncio.run(database_url(get_settings()))


def run_migrations_offline() -> None:
    context.configure(url="postgresql://", literal_binds=True, dialect_name="postgresql")
    with context.begin_transaction():
        context.run_migrations()


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_online(url: str) -> None:
    dsn = asyncpg_dsn(url)
    engine = create_async_engine(
        "postgresql+asyncpg://", async_creator=lambda: asyncpg.connect(dsn), poolclass=NullPool
    )
    async with engine.connect() as conn:
        await conn.run_sync(_run)
        await conn.commit()
    await engine.dispose()


def run_migrations_online() -> None:
    url = _url()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_run_online(url))
    else:  # called from async code through db.migrate, which runs us in a worker thread
        raise RuntimeError("alembic env must not run inside an event loop; use db.migrate.upgrade()")


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
