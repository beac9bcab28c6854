"""The composition root, first layer: a process's resources, each built once per :class:`Runtime`.

An entry point (``medbot run`` in ``bot.main``, ``medbot worker`` in ``bot.worker.cli``, each command of
``bot.cli``) opens a runtime — settings, database URL (the embedded server started when needed), migrations,
pool — and takes from it, through the functions here, the shared infrastructure:

* :func:`embedder_for` — the configured embedder behind the database embedding cache: one per process, so the
  Telegram dispatcher, the worker's jobs, imports and the verifier share its model and query cache;
* :func:`llm_for` — the LLM client, or None offline;
* :func:`job_context` — what the worker's jobs receive.

The application services built on these (searcher, engine, chat service, verification) come from the second
layer, ``bot.wiring``. The split keeps ``medbot worker`` and the import commands from loading the chat engine
(scikit-learn) they never use. Channels and features never build any of this themselves: they receive it.
``close`` ends a runtime (or ``async with await open_runtime(...) as runtime:``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import asyncpg

from db import migrate
from db.job_context import JobContext
from db.pool import create_pool, database_url
from db.settings import Settings
from db.worker_settings import WorkerSettings
from engine.embedding import CachedEmbedder
from engine.llm import LLMClient, LLMConfig
from kb_import.embedders import make_cached_embedder

log = logging.getLogger("medbot.runtime")
T = TypeVar("T")


@dataclass
class Runtime:
    settings: Settings
    url: str
    pool: asyncpg.Pool
    extras: dict[str, Any] = field(default_factory=dict)  # what ``once`` built, by name

    def once(self, key: str, build: Callable[[], T]) -> T:
        """``extras[key]``, built by ``build`` on first use: how every shared service is built only once."""
        if key not in self.extras:
            self.extras[key] = build()
        return self.extras[key]  # type: ignore[no-any-return]

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


def llm_client(settings: Settings) -> LLMClient | None:
    """The LLM client when OPENAI_API_KEY is set, else None (offline mode)."""
    if not settings.llm_enabled:
        return None
    assert settings.openai_api_key is not None
    return LLMClient(
        LLMConfig(
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value(),
            model=settings.openai_model,
            timeout=settings.llm_timeout,
        )
    )


def llm_for(runtime: Runtime) -> LLMClient | None:
    """The runtime's LLM client (None offline), built once."""
    return runtime.once("llm", lambda: llm_client(runtime.settings))


def embedder_for(runtime: Runtime) -> CachedEmbedder:
    """The configured embedder behind the database embedding cache (one per runtime)."""
    return runtime.once("embedder", lambda: make_cached_embedder(runtime.settings, runtime.pool))


def job_context(runtime: Runtime, worker: WorkerSettings, *, manual: bool = False) -> JobContext:
    """What the worker's jobs receive: the pool, the settings and the runtime's embedder (built on first use,
    so a worker whose embedding backend is misconfigured still runs every job that does not embed)."""
    return JobContext(
        pool=runtime.pool,
        settings=runtime.settings,
        worker=worker,
        manual=manual,
        embedder_factory=lambda: embedder_for(runtime),
    )
