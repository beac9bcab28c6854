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
    suggestions: list[str] = field(default_factory=list)  # the buttons shown under the reply


@dataclass(slots=True)
class MemoryRead:
    """A conversation's memory as a caller read it for the flow (``shared["memory_read"]``, see LoadMemory):
    the last turns, the summary, and whether the conversation already had an answer from the KB."""

    turns: list[Turn]
    summary: str = ""
    answered: bool = False


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors of ``dim`` dimensions.

    ``name`` identifies the model that makes the vectors (``engine.embedding.identity``: backend, model,
    dimension, fingerprint); it is stored with every vector and keys the embedding cache. An embedder whose
    name needs a round trip (a server's probe) has an async ``open()`` that settles it
    (``engine.embedding.model_name``).
    """

    name: str
    dim: int

    async def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    async def embed_query(self, text: str) -> np.ndarray: ...


class EmbeddingCache(Protocol):
    """Embeddings already computed, keyed by (model name, sha256 of the text)."""

    async def get_many(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]: ...

    async def put_many(self, model: str, items: dict[str, np.ndarray]) -> None: ...


class ModelRegistry(Protocol):
    """Probes of the embedding models seen behind each server model name (``engine.embedding``)."""

    async def fingerprint(self, base: str, probe: np.ndarray, new: str, same: float) -> str:
        """The fingerprint of an earlier probe of ``base`` with cosine ≥ ``same`` to ``probe``, else ``new``
        (recorded with the probe)."""
        ...


class KBStore(Protocol):
    """What retrieval needs from the KB storage."""

    async def kb_version(self, role: str) -> int: ...

    async def load_entries(self, role: str) -> list[KBEntry]: ...

    async def load_vectors(self, role: str, model: str) -> tuple[int, int]:
        """Make ``dense_search`` of ``role`` use the vectors of ``model`` only (after ``load_entries``);
        returns (active entries with a vector of ``model``, active entries)."""
        ...

    async def dense_search(self, role: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Entry ids of active entries of ``role`` with cosine similarity, best first (vectors of the model
        given to ``load_vectors`` only)."""
        ...


class MemoryStore(Protocol):
    """Conversation memory: the last turns and a running summary."""

    async def recent_turns(self, conversation_id: int, limit: int = 3) -> list[Turn]: ...

    async def summary(self, conversation_id: int) -> str: ...
