"""Fixtures shared by the KB import tests: the offline embedder, loaded once, behind the real PostgreSQL cache."""

from __future__ import annotations

import asyncpg
import pytest

from db.stores import PgEmbeddingCache
from engine.embedding import CachedEmbedder, E5Embedder


@pytest.fixture(scope="session")
def e5() -> E5Embedder:
    return E5Embedder()


@pytest.fixture
def embedder(db: asyncpg.Pool, e5: E5Embedder) -> CachedEmbedder:
    return CachedEmbedder(e5, PgEmbeddingCache(db))
