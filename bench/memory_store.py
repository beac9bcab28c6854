"""An in-memory KBStore with brute-force cosine search, for ``bench_retrieval_speed`` and the research scripts.

The product's store is PostgreSQL + pgvector (``db/``); this one measures the search path and ranking
quality without a database. Dense search is exact (``engine.vector_index``, as the product's store for small roles), so it is an upper bound on what HNSW returns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.types import KBEntry
from engine.vector_index import VectorIndex


class MemoryKBStore:
    """KBStore over a list of entries and their passage vectors (rows aligned with ``entries``)."""

    def __init__(self, entries: Sequence[KBEntry], vectors: np.ndarray, version: int = 1) -> None:
        self.entries = list(entries)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.ids = np.array([e.id for e in self.entries], dtype=np.int64)
        self.roles = np.array([e.role for e in self.entries])
        self.version = version
        self._indexes: dict[str, VectorIndex] = {}  # built on a role's first search

    async def kb_version(self, role: str) -> int:
        return self.version

    async def load_entries(self, role: str) -> list[KBEntry]:
        return [e for e in self.entries if e.role == role]

    async def load_vectors(self, role: str, model: str) -> tuple[int, int]:
        n = int(np.count_nonzero(self.roles == role))
        return n, n  # one vector per entry, all of one model

    async def dense_search(self, role: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        index = self._indexes.get(role)
        if index is None:
            rows = np.flatnonzero(self.roles == role)
            index = self._indexes[role] = VectorIndex(self.ids[rows], self.vectors[rows])
        return index.nearest(vector, k)
