"""Exact top-k cosine search over vectors held in memory: the one implementation of it.

``db.stores.PgKBStore`` keeps one ``VectorIndex`` per small role (a copy of the role's vectors taken from
PostgreSQL when the engine reloads the role) and the benchmarks' in-memory store (``bench.memory_store``) one
per role too. A matrix-vector product: ~0.3 ms at 10,000 entries of 384 dimensions, on one BLAS thread: with
the library's default (one thread per core) the product waits for its slowest thread, and on a small shared
machine where another process holds a core that wait turned 0.5 ms into 7 ms at the median of ``bench_ask``.
One thread sums in another order than two: similarities move by a float32 rounding step (3e-8 at most over
the bench's vectors), which changed none of the bench's 300 answers.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import ThreadpoolController

_THREADS = ThreadpoolController()


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` (float32) with every row scaled to unit length (zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if len(matrix) == 0:
        return matrix
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


class VectorIndex:
    """Ids and their vectors (rows aligned with ``ids``), searched exactly by cosine similarity."""

    def __init__(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        self.ids = np.asarray(ids)
        self.matrix = unit_rows(matrix)

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` ids whose vectors are most cosine-similar to ``vector``, with the similarity, best first
        (ties in row order)."""
        if len(self.ids) == 0 or k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        with _THREADS.limit(limits=1):
            similarity = self.matrix @ (query / max(float(np.linalg.norm(query)), 1e-12))
        top = np.argpartition(-similarity, k - 1)[:k] if k < len(self.ids) else np.arange(len(self.ids))
        top = top[np.argsort(-similarity[top], kind="stable")]
        return [(int(self.ids[i]), float(similarity[i])) for i in top]
