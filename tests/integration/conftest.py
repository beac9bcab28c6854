"""Fixtures shared by the integration tests: the offline embedder, loaded once, behind the real PostgreSQL cache;
``http``, a client of the clinic console served on a free port with the clinic's admin and clinician accounts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from db.stores import PgEmbeddingCache
from engine.embedding import CachedEmbedder, E5Embedder
from tests.console_support import add_staff, console_server


@pytest.fixture(scope="session")
def e5() -> E5Embedder:
    return E5Embedder()


@pytest.fixture
def embedder(db: asyncpg.Pool, e5: E5Embedder) -> CachedEmbedder:
    return CachedEmbedder(e5, PgEmbeddingCache(db))


@pytest.fixture
async def http(db: asyncpg.Pool, db_url: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The console (``tests.console_support.console_server``) with ``ADMIN`` and ``CLINICIAN``, no one signed in;
    its data folder (``MEDBOT_DATA_DIR``) is the test's ``tmp_path / "data"``."""
    await add_staff(db)
    async with (
        console_server(db, db_url, data_dir=tmp_path / "data") as url,
        httpx.AsyncClient(base_url=url, timeout=60, follow_redirects=False) as client,
    ):
        yield client
