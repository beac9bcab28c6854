"""The embedder the settings choose (``EMBEDDING_BACKEND``), built the same way for every process.

The bot, the worker, the CLI and the verifier all get theirs here, behind the PostgreSQL embedding cache and
the model registry (``db.stores``), so they all store and search vectors under the same model name.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from db.settings import Settings
from db.stores import PgEmbeddingCache, PgModelRegistry
from engine.embedding import CachedEmbedder, make_embedder
from engine.llm import openai_client
from engine.types import Embedder


def embedding_client(settings: Settings) -> Any:
    """The ``openai`` client for ``EMBEDDING_BASE_URL`` (or ``OPENAI_BASE_URL``), or None when no endpoint is
    configured at all (then the openai backend cannot start, and says so)."""
    base_url = settings.embedding_base_url or settings.openai_base_url
    key = settings.embedding_api_key or settings.openai_api_key
    if base_url is None and key is None:
        return None
    api_key = key.get_secret_value() if key is not None else "none"  # local servers take any key
    return openai_client(base_url, api_key, settings.embedding_timeout, max_retries=1)


def make_inner_embedder(settings: Settings) -> Embedder:
    """The configured embedder itself (no cache): for the verifier and benchmarks."""
    client = embedding_client(settings) if settings.embedding_backend == "openai" else None
    return make_embedder(
        settings.embedding_backend,
        openai_client=client,
        model=settings.embedding_model,
        data_dir=settings.medbot_data_dir,
        query_prefix=settings.embedding_query_prefix,
        passage_prefix=settings.embedding_passage_prefix,
    )


def make_cached_embedder(settings: Settings, pool: asyncpg.Pool) -> CachedEmbedder:
    """The configured embedder behind the database embedding cache and model registry."""
    return CachedEmbedder(
        make_inner_embedder(settings), PgEmbeddingCache(pool), registry=PgModelRegistry(pool)
    )
