"""KBSearch: the production retrieval path used by RetrieveFromKB and ``medbot eval retrieval``.

One search: clean the message (``engine.text.clean_query``), score it on the role's in-memory sparse index,
embed it (an unmarked message gets its marks back from the KB's own spelling first, see
``engine.text.DiacriticRestorer``; with ``NEAR_SPELLING_K`` set, off by default, in the spelling of the entries
the sparse leg found for it first, and then embedded after the sparse leg instead of beside it; with
``UNSURE_BELOW`` set, off by default, where the restorer is unsure of a word the text with that word's second
reading is embedded too and the mean of the two vectors searched) and ask
the store for its nearest entries (pgvector in production), fuse the two lists
(``fusion.fuse``), lower a top-window entry whose title's number conflicts with the message's ("2 tuổi" for
"con 2 tháng") when the top one does (``numbers.rerank``; the trace's ``features["numbers"]`` marks a move), and
calibrate (``calibration.probability``) so ``SearchResult.score`` is the estimated
probability that the top hit is right. A message of ``fusion.LEARNED_MIN_WORDS`` words or more is searched in the
dense leg with its vector moved by the query adapter (``query_adapter``: towards the short FAQ question a long
story means) when switched on (``query_adapter``: the QUERY_ADAPTER setting, on in the product) and the running
model has one, and calibrated with that search's own coefficients
(``calibration.ADAPTED_MODE``); the trace and other roles' searches get the unmoved vector. ``extra_queries`` (the LLM's rag_questions, a follow-up's context) are
searched the same way and merged by taking, per entry, its best fused score (CombMAX).

Each process keeps one sparse index per role and rebuilds it when ``store.kb_version(role)`` changes (an
import in any process bumps the version in the database). The version is checked at most once per
``version_check_seconds`` per role, and once per message inside the medical flow (``one_kb_check_per_message``:
read as the message comes in, by ``prefetch``, while the message's other reads run); the rebuild runs in a
worker thread so the event loop keeps serving.

``prefetch`` starts the query embedding of a message that will probably be searched before the search itself
(``engine.embedding.CachedEmbedder.prefetch_queries``): the search embeds exactly the same text and finds it
done or on its way.

Vectors of one model only: the dense leg reads the vectors made by the running embedder's model
(``engine.embedding.model_name``) and nothing else. While some active entries of a role have no vector of
that model (the model was just changed and the backfill job is re-embedding the KB in the background), the
role is answered by the sparse leg alone, with its own calibration, and the log says so; the role is
checked again every ``DENSE_RECHECK_SECONDS`` and whenever its KB version changes (the backfill bumps it when
the role is complete). The same happens when the embedder fails (an embedding server down): that search and
every search of the next ``DENSE_RECHECK_SECONDS`` use the sparse leg alone, so a dead server costs one
timeout, not one per question.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.embedding import model_name
from engine.retrieval import numbers
from engine.retrieval.adaptation import RoleCalibration, kb_fingerprint
from engine.retrieval.calibration import ADAPTED_MODE, FEATURES, dense_feature, probability
from engine.retrieval.fusion import (
    DENSE_WEIGHT,
    DENSE_WEIGHT_NO_DIACRITICS,
    LEARNED_DENSE_WEIGHT,
    LEARNED_MIN_WORDS,
    Fused,
    fuse,
)
from engine.retrieval.query_adapter import QueryAdapter, adapter_for
from engine.retrieval.sparse import SparseIndex, entry_fields, entry_title, spelling_fields
from engine.text import DiacriticRestorer, NearSpelling, clean_query, fold, has_diacritics, split_words
from engine.types import Embedder, Hit, KBEntry, KBStore

log = logging.getLogger("medbot.retrieval")

MODES = ("hybrid", "sparse", "dense")
# Messages of fusion.LEARNED_MIN_WORDS words or more; shorter ones use "score". "score" and "rrf" for comparison
# (bench/research/retrieval_ranking_ablation.py, bench/research/retrieval_fusion_research.py).
FUSION_METHOD = "learned"
# ``numbers.rerank`` after fusion (a close runner-up whose number agrees with the message above a top entry whose
# title's number conflicts), and its window and fused-score margin.
NUMBER_RERANK = True
NUMBER_WINDOW = numbers.WINDOW
NUMBER_MARGIN = numbers.MARGIN
DENSE_RECHECK_SECONDS = 30.0
# An unmarked message whose restoration has a word the restorer is less sure of than this (the share of the KB's
# spellings in that word's context that agree with its choice, ``DiacriticRestorer.readings``) is embedded twice,
# as restored and with each such word's second reading, and searched with the mean vector; None (the default):
# the restored text alone. 0.8 lowers the no-diacritics loss on faq-val dev and on every blind set RQ-RQ5 but
# embeds almost every long unmarked message twice (their search time about doubles: p95 +81 %), over the issue's
# +50 % latency budget, and on the blind judge RQ6 it raised the loss (0.015 -> 0.022): off. Fifteenth round of
# ``bench/retrieval_shapes_results.md``.
UNSURE_BELOW: float | None = None
# An unmarked message is restored in the spelling of the sparse leg's first this many entries for it before the
# KB-wide spelling (the sparse leg folds marks, so it finds them as well unmarked), and embedded once the sparse
# leg has them; None (the default): the KB-wide restoration alone. 20 lowers the no-diacritics loss pooled over
# the blind sets RQ-RQ6 (0.0179 -> 0.0142) and on faq-val dev (0.0171 -> 0.0128) at no measurable latency, but
# loses unmarked messages on RQ6 (3 of 400) and no setting tried gains on every set (each set left out in turn:
# -1 message net over the seven): off. Sixteenth round of ``bench/retrieval_shapes_results.md``.
NEAR_SPELLING_K: int | None = None
CALIBRATION_RECHECK_SECONDS = 30.0  # how often a role's stored calibration is read again
# How long a message typed without diacritics waits for its KB's spelling restorer, built in the background once
# per KB version (milliseconds for a clinic's KB, seconds for 100,000 entries): embedded unrestored, the e5 model
# reads it poorly (the first unmarked message after a start-up got a worse answer than the same message later).
RESTORER_WAIT_SECONDS = 2.0


@dataclass(slots=True)
class RankedHit(Hit):
    """A hit with the calibration features that gave its probability (``calibration.FEATURES``), so the
    trace shows why an entry was or was not answered."""

    features: dict[str, float] = field(default_factory=dict)
    raw_score: float = 0.0  # the global model's probability, before the role's own adjustment
    calibration: str = "global"  # "global", or "role" when the role's re-estimated adjustment applied
    # the coefficient set that gave the probability (``calibration.COEFFICIENTS``: "hybrid_adapted" when the
    # dense leg searched with the query adapter's vector)
    coefficients: str = ""

    def trace(self) -> dict[str, Any]:
        return {
            **Hit.trace(self),
            "raw_score": round(self.raw_score, 4),
            "calibration": self.calibration,
            "coefficients": self.coefficients,
            "features": {k: round(v, 3) for k, v in self.features.items()},
        }


def _coverage(part: dict[str, float], whole: set[str]) -> float:
    """idf-weighted share of ``part``'s words found in ``whole`` (0 when ``part`` weighs nothing)."""
    total = sum(part.values())
    return sum(w for word, w in part.items() if word in whole) / total if total > 0 else 0.0


def _only_in(index: SparseIndex, absent: Collection[int], folded: str) -> set[str]:
    """The words of a folded message that only the ``absent`` entries use (document frequency 1, the highest
    idf): a KB without those entries does not know them."""
    rarest = math.log((1 + len(index)) / 2) + 1
    theirs: set[str] = set()
    for eid in absent:
        pos = index.position.get(eid)
        if pos is not None:
            theirs.update(split_words(" ".join(entry_fields(index.entries[pos]).values())))
    weights = index.syllable_weights(folded)
    return {w for w, v in weights.items() if v > 0 and abs(v - rarest) < 1e-3 and w in theirs}


def candidate_features(
    index: SparseIndex, ranked: Sequence[Fused], i: int, entry: KBEntry, query: dict[str, float], mode: str
) -> dict[str, float]:
    """The calibration features (``calibration.FEATURES``) of ``ranked[i]`` for a query whose folded words
    and idf are ``query``."""
    cand = ranked[i]
    others = [f for j, f in enumerate(ranked) if j != i]
    fields = set(split_words(" ".join(entry_fields(entry).values())))
    known = {w: v for w, v in query.items() if v > 0}
    pos = index.position[entry.id]
    entry_cov = index.title_coverage(pos, set(query))
    feats = {
        "lead": cand.score - max((f.score for f in others), default=0.0),
        "sparse_gap": cand.sparse_score - max((f.sparse_score for f in others), default=0.0),
        "dense_gap": cand.dense_score - max((f.dense_score for f in others), default=0.0)
        if mode != "sparse"
        else 0.0,
        "agree": float(mode == "hybrid" and cand.sparse_rank == 1 and cand.dense_rank == 1),
        "sparse_excess": cand.sparse_score - index.null_sparse if mode != "dense" else 0.0,
        "dense": dense_feature(cand.dense_score),
        "entry_cov": entry_cov,
        "query_cov": _coverage(known, fields),
        "unknown": (len(query) - len(known)) / len(query) if query else 0.0,
        "no_question": float(not entry.question.strip()),
        "keyword_gain": max(0.0, index.keyword_coverage(pos, set(query)) - entry_cov),
    }
    assert set(feats) == set(FEATURES)
    return feats


@dataclass(slots=True)
class SearchResult:
    """Hits best first, the calibrated top score (0 when nothing found), timings in ms, the cleaned query.

    ``lead`` is the top candidate's fused score minus the next one's (a calibration feature, kept for the
    trace and for refitting the calibration).
    """

    hits: list[Hit]
    score: float
    timings: dict[str, float] = field(default_factory=dict)
    query_used: str = ""
    lead: float = 0.0
    mode: str = ""  # the mode actually used (hybrid falls back to sparse while the dense leg is unavailable)
    calibration: dict[str, Any] = field(default_factory=dict)  # the role's adjustment applied, if any
    unknown_words: int = 0  # calibration inputs of the message (its words no entry uses, its length)
    query_words: int = 0
    # cleaned text → the query vector the dense leg used: another role's search of the same message can
    # reuse it (``search(vectors=...)``) instead of embedding the message again
    vectors: dict[str, Any] = field(default_factory=dict)


# The KB version checks of the message being answered, per role (``one_kb_check_per_message``).
_MESSAGE_CHECKS: ContextVar[dict[str, asyncio.Future[SparseIndex]] | None] = ContextVar(
    "medbot_kb_checks", default=None
)


@contextmanager
def one_kb_check_per_message() -> Iterator[None]:
    """Within this block (one message through the medical flow) each role's KB version is checked once: the
    first search or prefetch checks it, the later ones use the index as of that check (``KBSearch.index``)."""
    token = _MESSAGE_CHECKS.set({})
    try:
        yield
    finally:
        _MESSAGE_CHECKS.reset(token)


def _freeze_long_lived(*_: object) -> None:
    """Move everything alive now (a large KB's entries and index) out of the cyclic GC's reach: otherwise
    every full collection walks those objects and adds tens of ms to whichever search triggers it."""
    gc.collect()
    gc.freeze()


@dataclass(slots=True)
class _RoleIndex:
    version: int
    index: SparseIndex
    checked_at: float
    dense_ready: bool = False  # every active entry has a vector of the running model
    dense_checked_at: float = 0.0
    model: str | None = None  # the running embedder's model (when known)
    fingerprint: str = ""  # adaptation.kb_fingerprint of the indexed entries
    calibration: RoleCalibration | None = None  # the role's stored calibration, when it matches this KB
    calibration_checked_at: float = float("-inf")
    restoring: asyncio.Future[DiacriticRestorer] | None = None  # the diacritic restorer being built


class KBSearch:
    """Hybrid search over the KB of each role (see the module docstring)."""

    def __init__(
        self,
        store: KBStore,
        embedder: Embedder | None,
        *,
        k: int = 7,
        candidates: int = 50,
        version_check_seconds: float = 1.0,
        query_adapter: bool = False,
    ) -> None:
        self.store = store
        # Whether long messages search the dense leg with the query adapter (settings.query_adapter).
        self.query_adapter = query_adapter
        self.embedder = embedder
        self.k = k
        self.candidates = candidates  # per leg, before fusion
        self.version_check_seconds = version_check_seconds
        self._indexes: dict[str, _RoleIndex] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._checking: dict[str, asyncio.Future[SparseIndex]] = {}  # a version check in flight, per role
        self._background: set[asyncio.Task[object]] = set()
        self._embed_failed_at = float("-inf")  # when the embedder last failed (monotonic)

    def _adapter(self, role: str) -> QueryAdapter | None:
        """The query adapter for the role's vectors, when switched on and fitted for their model."""
        if not self.query_adapter:
            return None
        state = self._indexes.get(role)
        return adapter_for(state.model if state else None)

    async def index(self, role: str) -> SparseIndex:
        """The role's sparse index, rebuilt first if the KB version changed since the last check.

        Inside ``one_kb_check_per_message`` (the medical flow) the role's version is checked once per message,
        by its first call (``prefetch`` as the message comes in), and every later call of the message uses the
        index as of that check (a message is answered from one KB version, with one round trip). A check of
        the role already in flight (a concurrent message's) is joined instead of starting another."""
        checks = _MESSAGE_CHECKS.get()
        mine = checks.get(role) if checks is not None else None
        if mine is not None and not (mine.done() and (mine.cancelled() or mine.exception() is not None)):
            return await asyncio.shield(mine)
        now = time.monotonic()
        current = self._indexes.get(role)
        if current is not None and now - current.checked_at < self.version_check_seconds:
            return current.index
        checking = self._checking.get(role) or self._start_check(role)
        if checks is not None:
            checks[role] = checking
        return await asyncio.shield(checking)

    def _start_check(self, role: str) -> asyncio.Future[SparseIndex]:
        task = asyncio.ensure_future(self._check(role))
        self._checking[role] = task

        def done(t: asyncio.Future[SparseIndex]) -> None:
            if self._checking.get(role) is t:
                del self._checking[role]
            if not t.cancelled():
                t.exception()  # a failure reaches every waiter; none may be left (a prefetch's own check)

        task.add_done_callback(done)
        return task

    async def _check(self, role: str) -> SparseIndex:
        lock = self._locks.setdefault(role, asyncio.Lock())
        async with lock:
            current = self._indexes.get(role)
            if current is not None and time.monotonic() - current.checked_at < self.version_check_seconds:
                return current.index  # another task refreshed it while we waited
            version = await self.store.kb_version(role)
            if current is not None and current.version == version:
                current.checked_at = time.monotonic()
                if (
                    not current.dense_ready
                    and time.monotonic() - current.dense_checked_at >= DENSE_RECHECK_SECONDS
                ):
                    await self._load_dense(role, current)
                if time.monotonic() - current.calibration_checked_at >= CALIBRATION_RECHECK_SECONDS:
                    await self._load_calibration(role, current)  # one measured since (worker, CLI)
                return current.index
            entries = await self.store.load_entries(role)
            index = await asyncio.to_thread(SparseIndex, entries)
            built = _RoleIndex(version, index, time.monotonic())
            built.fingerprint = await asyncio.to_thread(kb_fingerprint, entries)
            await self._load_dense(role, built)
            await self._load_calibration(role, built)
            self._indexes[role] = built
            # Until the restorer is ready, unmarked queries wait for it a little (``_await_restorer``), then are
            # embedded as typed.
            task = asyncio.create_task(asyncio.to_thread(index.build_restorer))
            built.restoring = task
            self._background.add(task)
            task.add_done_callback(_freeze_long_lived)
            task.add_done_callback(self._background.discard)
            _freeze_long_lived()
            return index

    async def _load_calibration(self, role: str, state: _RoleIndex) -> None:
        """The role's re-estimated calibration (``engine.retrieval.adaptation``) when the store keeps one and it
        was measured on exactly these entries; else the global model."""
        state.calibration_checked_at = time.monotonic()
        loader = getattr(self.store, "role_calibration", None)  # stores without calibrations: the bench's
        if loader is None:
            return
        try:
            cal = await loader(role)
        except Exception as exc:
            log.warning(
                "retrieval.calibration_unreadable role=%s error=%s: the global calibration", role, exc
            )
            return
        if cal is not None and cal.params and cal.fingerprint == state.fingerprint:
            state.calibration = cal
            log.info(
                "retrieval.calibration role=%s params=%s",
                role,
                {m: a.to_dict() for m, a in cal.params.items()},
            )
        else:
            state.calibration = None

    def set_calibration(self, role: str, calibration: RoleCalibration | None) -> None:
        """Use ``calibration`` for ``role`` (after its index is built) whatever the store says: the bench."""
        self._indexes[role].calibration = calibration
        self._indexes[role].calibration_checked_at = float("inf")

    async def fingerprint(self, role: str) -> str:
        await self.index(role)
        return self._indexes[role].fingerprint

    def version(self, role: str) -> int:
        """The KB version of the role's current index (0 before its first search)."""
        current = self._indexes.get(role)
        return current.version if current else 0

    def dense_model(self, role: str) -> str | None:
        current = self._indexes.get(role)
        return current.model if current and current.dense_ready else None

    async def _load_dense(self, role: str, state: _RoleIndex) -> None:
        """Point the store's dense search of ``role`` at the running model's vectors; note whether they cover
        the role (else the sparse leg answers alone)."""
        state.dense_checked_at = time.monotonic()
        if self.embedder is None:  # built without one (a calibration after an import without embeddings)
            state.dense_ready = False
            return
        try:
            model = await model_name(self.embedder)
            state.model = model
            have, total = await self.store.load_vectors(role, model)
        except Exception as exc:
            state.dense_ready = False
            log.warning("retrieval.dense_off role=%s error=%s: the sparse leg answers alone", role, exc)
            return
        was = state.dense_ready
        state.dense_ready = have >= total
        if not state.dense_ready:
            log.warning(
                "retrieval.dense_waiting role=%s model=%s vectors=%s/%s: the sparse leg answers alone until "
                "the embedding backfill has embedded the rest with this model",
                role,
                model,
                have,
                total,
            )
        elif not was and total:
            log.info("retrieval.dense_ready role=%s model=%s vectors=%s", role, model, have)

    def dense_ready(self, role: str) -> bool:
        """Whether searches of ``role`` use the dense leg now (as of the last index check)."""
        current = self._indexes.get(role)
        return bool(current and current.dense_ready)

    async def ready(self, role: str) -> None:
        """Wait until the role's index and its diacritic restorer are built (warm-up, eval, tests)."""
        index = await self.index(role)
        if index.restorer is None and (building := self._restoring(role, index)) is not None:
            await asyncio.wait({building})  # the build under way (never cancelled here)
        if index.restorer is None:
            await asyncio.to_thread(index.build_restorer)

    def _restoring(self, role: str, index: SparseIndex) -> asyncio.Future[DiacriticRestorer] | None:
        """The background build of ``index``'s diacritic restorer, when the role's current index is ``index``."""
        state = self._indexes.get(role)
        return state.restoring if state is not None and state.index is index else None

    async def _await_restorer(self, role: str, index: SparseIndex, texts: Sequence[str]) -> None:
        """A message typed without diacritics waits up to ``RESTORER_WAIT_SECONDS`` for the restorer being built
        for its KB, so that it is embedded with the KB's spelling back; a timeout only means it is embedded as
        typed this once (the build goes on)."""
        if index.restorer is not None or all(has_diacritics(t) for t in texts):
            return
        building = self._restoring(role, index)
        if building is not None and not building.done():
            await asyncio.wait({building}, timeout=RESTORER_WAIT_SECONDS)

    def prefetch(self, role: str, queries: Sequence[str]) -> None:
        """Start embedding ``queries`` (messages as ``search`` will be given them) in the background, so that
        a search of them a moment later finds the vector ready or on its way (``CachedEmbedder``): the flow
        calls it as soon as it knows a text will probably be searched, before the reads and checks that do
        not need the vector. Nothing is searched and nothing changes what a search returns: the search
        embeds exactly the same text and only finds it done sooner. Uses the role's index as it stands (no
        version check: a search after a KB change embeds its own text if the spelling restorer changed it).
        The role's KB version check starts too (``index``), so the search finds it answered. No embedding
        when the dense leg is off for the role or the embedder cannot prefetch."""
        checks = _MESSAGE_CHECKS.get()
        state = self._indexes.get(role)
        if (
            checks is not None
            and role not in checks
            and (state is None or time.monotonic() - state.checked_at >= self.version_check_seconds)
        ):  # the message's version check too, while its other reads run
            checks[role] = self._checking.get(role) or self._start_check(role)
        prefetch = getattr(self.embedder, "prefetch_queries", None)
        if (
            prefetch is None
            or state is None
            or len(state.index) == 0
            or not state.dense_ready
            or time.monotonic() - self._embed_failed_at < DENSE_RECHECK_SECONDS
        ):
            return
        texts = [t for c in (clean_query(q) for q in queries) if c for t in _embedding_texts(state.index, c)]
        if texts:
            prefetch(texts)

    async def search(
        self,
        role: str,
        query: str,
        extra_queries: Sequence[str] = (),
        k: int | None = None,
        mode: str = "hybrid",
        exclude: Collection[str] = (),
        absent: Collection[int] = (),
        vectors: Mapping[str, Any] | None = None,
    ) -> SearchResult:
        """Search the role's KB. ``exclude``: KB codes to leave out before ranking and calibration (a
        follow-up question wants something other than the answer just given). ``absent``: entry ids searched
        as if the KB did not have them, removed from both legs before fusion (the self-supervised
        calibration's unanswerable queries, ``engine.retrieval.adaptation``). ``vectors``: the
        ``SearchResult.vectors`` of an earlier search of the same message (another role's): those query
        vectors are reused, and a message with none (that search ran without the dense leg) is searched by the
        sparse leg alone, so the message is never embedded twice. An unmarked message's vector keeps the
        diacritics the first role's KB gave it back."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        given: dict[str, Any] = dict(vectors or {})
        k = self.k if k is None else k
        timings = {"clean": 0.0, "sparse": 0.0, "embed": 0.0, "dense": 0.0, "fuse": 0.0}
        t0 = time.perf_counter()
        index = await self.index(role)
        if mode == "hybrid" and (
            not self.dense_ready(role) or time.monotonic() - self._embed_failed_at < DENSE_RECHECK_SECONDS
        ):
            mode = "sparse"  # no complete set of vectors of the running model, or the embedder just failed
        timings["index"] = (time.perf_counter() - t0) * 1000
        texts = [q for q in (clean_query(query), *(clean_query(x) for x in extra_queries)) if q]
        if vectors is not None and mode != "sparse" and any(t not in given for t in texts):
            mode = "sparse"  # reusing an earlier search's vectors and one is missing: none is computed now
        timings["clean"] = (time.perf_counter() - t0) * 1000 - timings["index"]
        if not texts or len(index) == 0:
            return SearchResult([], 0.0, timings, texts[0] if texts else "")
        if mode != "sparse" and vectors is None:
            await self._await_restorer(role, index, texts)

        try:
            best, sparse_scores = await self._search_all(role, index, texts, mode, timings, absent, given)
        except _DenseFailed:
            mode = "sparse"  # the embedder failed: the whole search again with the sparse leg alone
            best, sparse_scores = await self._search_all(role, index, texts, mode, timings, absent, given)

        t = time.perf_counter()
        if exclude:
            best = {
                i: f
                for i, f in best.items()
                if i in index.position and index.entries[index.position[i]].code not in exclude
            }
        ranked = sorted(best.values(), key=lambda f: -f.score)
        # A close runner-up whose title agrees with the message's number ("2 tháng") above a top entry whose
        # title states another ("2 tuổi"): ``numbers.rerank``.
        moved, former_top = 0, ranked[0].entry_id if ranked else None
        if NUMBER_RERANK and len(ranked) > 1:
            titles = [
                entry_title(index.entries[index.position[f.entry_id]]) if f.entry_id in index.position else ""
                for f in ranked[:NUMBER_WINDOW]
            ]
            ranked, moved = numbers.rerank(
                ranked, texts[0], titles, window=NUMBER_WINDOW, margin=NUMBER_MARGIN
            )
        # words no entry uses, or none writes as the message does (``SparseIndex.misspelled``): the off-topic guard
        unknown = index.unknown_count(texts[0])
        chat = index.chat_words(texts[0])  # function words the KB lacks: neither known nor unknown
        query_words = {w: v for w, v in index.syllable_weights(fold(texts[0])).items() if w not in chat}
        if absent:  # as a KB without them would see the message
            gone = _only_in(index, absent, fold(texts[0]))
            unknown += len(gone)
            query_words = {w: 0.0 if w in gone else v for w, v in query_words.items()}
        n_words = len(split_words(fold(texts[0])))
        state = self._indexes.get(role)
        role_cal = state.calibration if state is not None and state.index is index else None
        adjust = role_cal.for_mode(mode, state.model if state else None) if role_cal else None
        # A long message's dense leg searched with the adapted vector: its own coefficient set.
        adapted = mode == "hybrid" and n_words >= LEARNED_MIN_WORDS and self._adapter(role) is not None
        cal_mode = ADAPTED_MODE if adapted else mode
        hits: list[Hit] = []
        for i, cand in enumerate(ranked[:k]):
            pos = index.position.get(cand.entry_id)
            if pos is None:
                continue
            entry = index.entries[pos]
            if entry.role != role:  # defence in depth: the store already filters by role
                continue
            if cand.sparse_rank is None and cand.sparse_score > 0 and cand.entry_id in sparse_scores:
                # A dense-only candidate: its rank in the full sparse ranking, for the trace.
                all_scores = sparse_scores[cand.entry_id]
                cand.sparse_rank = int(np.count_nonzero(all_scores > cand.sparse_score)) + 1
            feats = candidate_features(index, ranked, i, entry, query_words, mode)
            if moved:  # for the trace only (the probability reads ``calibration.FEATURES``)
                mark = 1.0 if i == 0 else -1.0 if cand.entry_id == former_top else 0.0
                trace_feats = {**feats, "numbers": mark}
            else:
                trace_feats = feats
            evidence = {
                "unknown_words": unknown,
                "sparse": cand.sparse_score,
                "dense": cand.dense_score,
                "query_words": n_words,
            }
            raw = probability(cal_mode, feats, **evidence)
            p = raw if adjust is None else probability(cal_mode, feats, adjust=adjust, **evidence)
            if hits:  # below every entry ranked above it, so that the order and the scores always agree
                p = min(p, hits[-1].score * 0.99)
            hits.append(
                RankedHit(
                    entry=entry,
                    score=p,
                    sparse_score=cand.sparse_score,
                    dense_score=cand.dense_score,
                    sparse_rank=cand.sparse_rank,
                    dense_rank=cand.dense_rank,
                    features=trace_feats,
                    raw_score=raw,
                    calibration="role" if adjust is not None else "global",
                    coefficients=cal_mode,
                )
            )
        timings["fuse"] += (time.perf_counter() - t) * 1000
        timings = {name: round(ms, 2) for name, ms in timings.items()}
        lead = ranked[0].score - (ranked[1].score if len(ranked) > 1 else 0.0) if ranked else 0.0
        calibration = (
            {"source": "role", **adjust.to_dict(), "kb_version": role_cal.kb_version}
            if adjust and role_cal
            else {}
        )
        used = {t: given[t] for t in texts if t in given} if mode != "sparse" else {}
        return SearchResult(
            hits,
            hits[0].score if hits else 0.0,
            timings,
            texts[0],
            lead,
            mode,
            calibration,
            unknown,
            n_words,
            used,
        )

    async def _embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """The query vector of ``_embedding_texts``: one text's vector, or the renormalised mean of the vectors
        of a restored message and its alternative reading (asked for in one model call where the embedder
        batches prefetched queries)."""
        if len(texts) == 1:
            return await self.embedder.embed_query(texts[0])
        prefetch = getattr(self.embedder, "prefetch_queries", None)
        if prefetch is not None:
            prefetch(list(texts))
        vectors = [np.asarray(await self.embedder.embed_query(t), dtype=np.float32) for t in texts]
        mean = np.mean(vectors, axis=0)
        return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)

    def _start_embedding(self, texts: Sequence[str]) -> asyncio.Future[np.ndarray]:
        """``_embed_query(texts)`` started as a task (the caller awaits it)."""
        return asyncio.ensure_future(self._embed_query(texts))

    async def _search_all(
        self,
        role: str,
        index: SparseIndex,
        texts: list[str],
        mode: str,
        timings: dict[str, float],
        absent: Collection[int] = (),
        vectors: dict[str, Any] | None = None,
    ) -> tuple[dict[int, Fused], dict[int, np.ndarray]]:
        """Every text searched; per entry its best fused candidate and the sparse scores it came with.
        ``vectors``: query vectors already known (used, not recomputed); the ones computed are added."""
        best: dict[int, Fused] = {}
        sparse_scores: dict[int, np.ndarray] = {}  # entry id -> sparse scores of the query it came from
        for text in texts:
            fused, scores = await self._search_one(role, index, text, mode, timings, absent, vectors)
            for cand in fused:
                if cand.entry_id not in best or cand.score > best[cand.entry_id].score:
                    best[cand.entry_id] = cand
                    if scores is not None:
                        sparse_scores[cand.entry_id] = scores
        return best, sparse_scores

    async def _search_one(
        self,
        role: str,
        index: SparseIndex,
        text: str,
        mode: str,
        timings: dict[str, float],
        absent: Collection[int] = (),
        vectors: dict[str, Any] | None = None,
    ) -> tuple[list[Fused], np.ndarray | None]:
        n = self.candidates
        embedding: asyncio.Future[np.ndarray] | None = None
        near = False  # restored from the sparse leg's candidates: embedded once the sparse leg has them
        known = vectors.get(text) if vectors is not None and mode != "sparse" else None
        if known is not None:  # this message's vector from an earlier search (another role's)
            t_embed = time.perf_counter()
            embedding = asyncio.get_running_loop().create_future()
            embedding.set_result(known)
        elif mode != "sparse" and self.embedder is not None and not (near := _near_first(index, text)):
            t_embed = time.perf_counter()
            # Started first: the model runs in a thread without the GIL while the sparse leg scores here
            # (the yield lets the task hand the text to that thread before the sparse leg holds the loop).
            embedding = self._start_embedding(_embedding_texts(index, text))
            await asyncio.sleep(0)
        sparse: list[tuple[int, float]] = []
        scores: np.ndarray | None = None
        if mode != "dense":
            t = time.perf_counter()
            try:
                if absent:  # words only the absent entries use cannot score in a KB without them
                    gone = _only_in(index, absent, fold(text))
                    scores = index.scores(" ".join(w for w in split_words(fold(text)) if w not in gone))
                else:
                    scores = index.scores(text)
                for eid in absent:
                    if eid in index.position:
                        scores[index.position[eid]] = 0.0
                sparse = index.top(scores, n)
            except BaseException:
                if embedding is not None:
                    embedding.cancel()
                raise
            timings["sparse"] += (time.perf_counter() - t) * 1000
        if near:
            t_embed = time.perf_counter()
            embedding = self._start_embedding(_embedding_texts(index, text, [eid for eid, _ in sparse]))
        dense: list[tuple[int, float]] = []
        if embedding is not None:
            try:
                vector = await embedding
            except Exception as exc:
                if mode != "hybrid":
                    raise
                self._embed_failed_at = time.monotonic()
                log.warning(
                    "retrieval.embed_failed role=%s error=%s: the sparse leg alone for %.0f s",
                    role,
                    exc,
                    DENSE_RECHECK_SECONDS,
                )
                raise _DenseFailed from exc
            # wall time, overlapping the sparse leg
            timings["embed"] += (time.perf_counter() - t_embed) * 1000
            if vectors is not None:
                vectors[text] = vector
            t = time.perf_counter()
            adapter = self._adapter(role)
            if adapter is not None and len(split_words(fold(text))) >= LEARNED_MIN_WORDS:
                # A long message moved towards the FAQ question it means (by the unmarked map when it was
                # typed without diacritics: its vector is that of the restored text).
                vector = adapter.apply(vector, marked=has_diacritics(text))
            dense = await self.store.dense_search(role, vector, n + len(absent))
            if absent:
                dense = [(eid, score) for eid, score in dense if eid not in absent][:n]
            timings["dense"] += (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        long_message = len(split_words(fold(text))) >= LEARNED_MIN_WORDS
        method = (
            FUSION_METHOD if mode == "hybrid" and (long_message or FUSION_METHOD != "learned") else "score"
        )
        if mode == "sparse":
            weight = 0.0
        elif mode == "dense":
            weight = 1.0
        else:
            if method == "learned":
                weight = LEARNED_DENSE_WEIGHT  # the same with or without marks (see fusion.py)
            else:
                weight = DENSE_WEIGHT if has_diacritics(text) else DENSE_WEIGHT_NO_DIACRITICS
        extra: dict[int, float] = {}
        if scores is not None:
            for eid, _ in dense:
                pos = index.position.get(eid)
                if pos is not None:
                    extra[eid] = float(scores[pos])
        coverage: dict[int, float] = {}
        if method == "learned":
            cands = [
                (eid, index.position[eid])
                for eid in {e for e, _ in sparse} | {e for e, _ in dense}
                if eid in index.position
            ]
            values = index.informative_coverage([p for _, p in cands], fold(text))
            coverage = {eid: float(v) for (eid, _), v in zip(cands, values, strict=True)}
        fused = fuse(sparse, dense, dense_weight=weight, sparse_extra=extra, method=method, coverage=coverage)
        timings["fuse"] += (time.perf_counter() - t) * 1000
        return fused, scores


def _near_first(index: SparseIndex, text: str) -> bool:
    """Whether ``text``'s restoration reads the sparse leg's candidates (``NEAR_SPELLING_K``)."""
    return NEAR_SPELLING_K is not None and index.restorer is not None and not has_diacritics(text)


def _restore_near(restorer: DiacriticRestorer, index: SparseIndex, text: str, near: Sequence[int]) -> str:
    """``text`` restored in the spelling of the entries ``near`` (the sparse leg's first ``NEAR_SPELLING_K``
    for it) before the KB's (``DiacriticRestorer.restore_near``: their bigrams, then the KB's, then their
    syllables, then the KB's)."""
    fields = (
        f
        for eid in near[:NEAR_SPELLING_K]
        if eid in index.position
        for f in spelling_fields(index.entries[index.position[eid]])
    )
    return restorer.restore_near(text, NearSpelling((f, 1.0) for f in fields), context_first=True)


def _embedding_texts(index: SparseIndex, text: str, near: Sequence[int] | None = None) -> tuple[str, ...]:
    """What the model embeds for a cleaned query (the vector is their mean): the embedding model reads unmarked
    Vietnamese poorly, so an unmarked message gets the KB's own spelling back (``engine.text.DiacriticRestorer``)
    once it is ready; with ``NEAR_SPELLING_K`` set, the spelling of the sparse leg's first entries for it first
    (``near``: their ids in the sparse leg's order; searched here when not given); where the restorer is unsure
    of a word (``UNSURE_BELOW``), the text with that word's second reading too."""
    restorer = index.restorer
    if restorer is None or has_diacritics(text):
        return (text,)
    if NEAR_SPELLING_K is not None:
        if near is None:
            near = [eid for eid, _ in index.search(text, NEAR_SPELLING_K)]
        return (_restore_near(restorer, index, text, near),)
    if UNSURE_BELOW is None:
        return (restorer.restore(text),)
    restored, alternative = restorer.restore_both(text, UNSURE_BELOW)
    return (restored,) if alternative is None else (restored, alternative)


class _DenseFailed(Exception):
    """The query could not be embedded; the search falls back to the sparse leg."""
