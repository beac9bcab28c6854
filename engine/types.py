"""Shared data types and the small interfaces the engine declares for its stores.

The engine never talks SQL: `db/` implements these protocols (``db.stores``) and the channels pass the
objects in. Tests use the real implementations against the embedded PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np


@dataclass(slots=True)
class KBEntry:
    """One curated KB row (a doctor's question and answer) as the engine sees it."""

    id: int
    role: str
    code: str
    question: str
    answer: str
    topic: str = ""
    subtopic: str = ""
    keywords: list[str] = field(default_factory=list)
    explanation: str = ""
    urgent: bool = False  # tells the reader to seek care now: no routine closing line after it
    sample: bool = False  # MedBot's shipped sample, not yet reviewed by the clinic's doctors


@dataclass(slots=True)
class Hit:
    """One retrieved entry with its fused score and the per-leg evidence for the trace."""

    entry: KBEntry
    score: float  # fused, calibrated: estimated probability that this entry is the right one
    sparse_score: float = 0.0
    dense_score: float = 0.0
    sparse_rank: int | None = None
    dense_rank: int | None = None

    def trace(self) -> dict[str, Any]:
        return {
            "code": self.entry.code,
            "score": round(self.score, 4),
            "sparse": round(self.sparse_score, 4),
            "dense": round(self.dense_score, 4),
            "sparse_rank": self.sparse_rank,
            "dense_rank": self.dense_rank,
        }


@dataclass(slots=True)
class Turn:
    """One exchange of the conversation memory."""

    user_text: str
    bot_text: str
    input_type: str = ""
    citations: list[str] = field(default_factory=list)


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors of ``dim`` dimensions."""

    name: str  # model identity, part of the embedding cache key
    dim: int

    async def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    async def embed_query(self, text: str) -> np.ndarray: ...


class EmbeddingCache(Protocol):
    """Embeddings already computed, keyed by (model name, sha256 of the text)."""

    async def get_many(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]: ...

    async def put_many(self, model: str, items: dict[str, np.ndarray]) -> None: ...


class KBStore(Protocol):
    """What retrieval needs from the KB storage."""

    async def kb_version(self, role: str) -> int: ...

    async def load_entries(self, role: str) -> list[KBEntry]: ...

    async def dense_search(self, role: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Entry ids of active entries of ``role`` with cosine similarity, best first."""
        ...


class MemoryStore(Protocol):
    """Conversation memory: the last turns and a running summary."""

    async def recent_turns(self, conversation_id: int, limit: int = 3) -> list[Turn]: ...

    async def summary(self, conversation_id: int) -> str: ...
