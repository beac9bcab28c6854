"""PostgreSQL implementations of the stores the engine declares in ``engine.types``."""

from __future__ import annotations

import asyncpg
import numpy as np

from db import calibrations, conversations, embedding_cache, embedding_models, kb
from engine.retrieval.adaptation import RoleCalibration
from engine.types import KBEntry, Turn
from engine.vector_index import VectorIndex


class PgKBStore:
    """``engine.types.KBStore`` on the ``kb_entries`` table.

    Dense search: a role of up to ``kb.EXACT_SEARCH_MAX`` entries (every clinic KB we know of) is searched
    exactly in memory (``engine.vector_index``), on a copy of its vectors taken when the engine (re)loads the role's entries: a
    matrix-vector product, ~0.3 ms at 10,000 entries against ~8 ms for the same exact scan in PostgreSQL,
    and one round trip less per question (at most 23 MB per role). Larger roles go to pgvector's HNSW index.
    PostgreSQL stays the store: the copy is rebuilt whenever the KB version changes, like the TF-IDF index.
    Only vectors of the model given to ``load_vectors`` are searched; before that call, none.
    """

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._sizes: dict[str, int] = {}  # entries per role at the last load, to pick the search plan
        self._vectors: dict[str, VectorIndex] = {}  # role -> its vectors in memory (small roles)
        self._models: dict[str, str] = {}  # role -> the model whose vectors dense_search reads

    async def kb_version(self, role: str) -> int:
        return await kb.version(self.pool, role)

    async def load_entries(self, role: str) -> list[KBEntry]:
        entries = await kb.active_entries(self.pool, role)
        self._sizes[role] = len(entries)
        self._vectors.pop(role, None)
        self._models.pop(role, None)
        return entries

    async def load_vectors(self, role: str, model: str) -> tuple[int, int]:
        size = self._sizes.get(role)
        if size is None:
            size = await kb.count_active(self.pool, role)
            self._sizes[role] = size
        if size <= kb.EXACT_SEARCH_MAX:
            index = VectorIndex(*await kb.active_vectors(self.pool, role, model))
            self._vectors[role] = index
            have = len(index)
        else:
            self._vectors.pop(role, None)
            have = await kb.count_vectors(self.pool, role, model)
        self._models[role] = model
        return have, size

    async def role_calibration(self, role: str) -> RoleCalibration | None:
        """The role's re-estimated calibration (``db.calibrations``), None when never measured."""
        return await calibrations.load(self.pool, role)

    async def dense_search(self, role: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        model = self._models.get(role)
        if model is None:
            return []
        held = self._vectors.get(role)
        if held is None:
            return await kb.dense_search(
                self.pool, role, vector, k, model=model, role_size=self._sizes.get(role)
            )
        return held.nearest(vector, k)


class PgEmbeddingCache:
    """``engine.types.EmbeddingCache`` on the ``embedding_cache`` table."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def get_many(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        return await embedding_cache.get_many(self.pool, model, hashes)

    async def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        await embedding_cache.put_many(self.pool, model, items)


class PgModelRegistry:
    """``engine.types.ModelRegistry`` on the ``embedding_models`` table."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def fingerprint(self, base: str, probe: np.ndarray, new: str, same: float) -> str:
        return await embedding_models.fingerprint(self.pool, base, probe, new, same)


class PgMemoryStore:
    """``engine.types.MemoryStore``: the last turns and the summary of a conversation."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def recent_turns(self, conversation_id: int, limit: int = 3) -> list[Turn]:
        rows = await conversations.recent_messages(self.pool, conversation_id, limit * 2)
        return pair_turns(rows, limit)

    async def load(self, conversation_id: int, limit: int = 3) -> tuple[list[Turn], str, bool]:
        """``recent_turns`` (with the suggestions shown under each reply), ``summary`` and whether the
        conversation already had an answer from the KB, in one round trip (LoadMemory uses it when a store
        has it)."""
        rows, summary, answered = await conversations.memory(self.pool, conversation_id, limit * 2)
        return pair_turns(rows, limit), summary, answered

    async def summary(self, conversation_id: int) -> str:
        return await conversations.get_summary(self.pool, conversation_id)


def pair_turns(rows: list[dict], limit: int) -> list[Turn]:
    """Messages oldest first → the last ``limit`` (question, answer) turns."""
    turns: list[Turn] = []
    pending: dict | None = None
    for row in rows:
        if row["direction"] == "in":
            pending = row
        elif pending is not None:
            turns.append(
                Turn(
                    user_text=pending["text"],
                    bot_text=row["text"],
                    input_type=row["input_type"] or "",
                    citations=list(row["citations"] or []),
                    suggestions=list(row.get("suggestions") or []),
                )
            )
            pending = None
    return turns[-limit:]
