"""Process start-up shared by every entry point: settings, database URL, migrations, pool.

``open_runtime`` gives an entry point (``medbot run``, ``medbot worker``, each CLI command) one object holding
the process's resources; ``close`` ends it (or ``async with await open_runtime(...) as runtime:``). The
services built on it — embedder, LLM client, searcher, chat service, verification — come from the composition
root, ``bot.wiring``, once per runtime (kept in ``extras``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from db import migrate
from db.pool import create_pool, database_url
from db.settings import Settings

log = logging.getLogger("medbot.runtime")


@dataclass
class Runtime:
    settings: Settings
    url: str
    pool: asyncpg.Pool
    extras: dict[str, Any] = field(default_factory=dict)

    async def close(self) -> None:
        await self.pool.close()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def open_runtime(settings: Settings, *, migrate_schema: bool = True, pool_size: int = 10) -> Runtime:
    url = await database_url(settings)
    if migrate_schema:
        await migrate.upgrade(url)
    pool = await create_pool(url, max_size=pool_size)
    log.info("runtime.ready llm=%s embedder=%s", settings.llm_enabled, settings.embedding_backend)
    return Runtime(settings=settings, url=url, pool=pool)
