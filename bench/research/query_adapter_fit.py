"""Build ``engine/retrieval/query_adapter.npz``, the dense leg's query adapter (``engine.retrieval.query_adapter``),
from ``../shared/eval/faq-val``:

    PYTHONPATH=$PWD MEDBOT_EVAL_DIR=/work/main/.medbot python -m bench.research.query_adapter_fit

Fitted on the DEV half only (``bench.retrieval_shapes.split_of``: 702 pairs), so the test half stays a blind
measure: each dev message's e5 query vector (the cleaned message, as ``KBSearch`` embeds it) against its gold
question's passage vector, ridge regression of the move ``P - Q`` with penalty ``LAMBDA``, applied with
``SCALE``; both chosen by 5-fold cross-validation within dev (``bench.research.query_adapter_ablation``,
results in ``bench/retrieval_shapes_results.md``). Vectors come from the evaluation cache (``.medbot/eval-cache``); an unmarked message is restored from
the ``questions`` KB's spelling first, as search does; a text not cached is embedded with the product's llama.cpp backend.

The file holds two maps (fifth round, ``bench.research.query_adapter_nodiac``): ``weights`` fitted on the
messages as typed, for messages with diacritics, and ``weights_unmarked`` fitted on the same messages with
every mark removed and then restored as search restores them, for messages typed without (their vector is
that of the restored text, which the typed map moved less well: no-diacritics loss on dev 0.011 -> 0.007).
"""

from __future__ import annotations

import sys

import numpy as np

from bench.research.query_adapter_ablation import ridge
from bench.retrieval_shapes import DiskCachedEmbedder, Pair, build_shapes, load_faq
from engine.embedding import passage_text
from engine.retrieval import query_adapter
from engine.retrieval.sparse import SparseIndex
from engine.text import clean_query, has_diacritics, strip_diacritics

LAMBDA = 10.0
SCALE = 1.0


def dev_vectors(
    embedder: DiskCachedEmbedder, strip: bool = False
) -> tuple[list[Pair], np.ndarray, np.ndarray]:
    """The dev pairs, their messages' query vectors and their gold questions' passage vectors (normalised);
    ``strip``: the messages with every diacritic removed first (then restored, as search does)."""
    corpus, pairs = load_faq()
    dev = [x for x in pairs if x.split == "dev"]
    # As KBSearch embeds a message: cleaned, and an unmarked one restored from the KB's spelling.
    restorer = SparseIndex(build_shapes()["questions"].entries).build_restorer()
    texts = [clean_query(strip_diacritics(x.message) if strip else x.message) for x in dev]
    q = embedder.query_vectors([t if has_diacritics(t) else restorer.restore(t) for t in texts])
    p = embedder.passage_vectors([passage_text(corpus[x.code], "") for x in dev])
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    p = p / np.linalg.norm(p, axis=1, keepdims=True)
    return dev, q, p


def main() -> int:
    embedder = DiskCachedEmbedder()
    dev, q, p = dev_vectors(embedder)
    _, q_bare, _ = dev_vectors(embedder, strip=True)
    w = ridge(LAMBDA, residual=True)(q, p, p, np.arange(len(dev)))
    w_bare = ridge(LAMBDA, residual=True)(q_bare, p, p, np.arange(len(dev)))
    query_adapter.save(query_adapter.ADAPTER_FILE, w, SCALE, embedder.name, unmarked=w_bare)
    adapter = query_adapter.read(query_adapter.ADAPTER_FILE)
    assert adapter is not None
    before = float(np.mean(np.sum(q * p, axis=1)))
    after = float(np.mean([adapter.apply(v) @ g for v, g in zip(q, p, strict=True)]))
    print(
        f"{query_adapter.ADAPTER_FILE}: {len(dev)} dev pairs, lambda {LAMBDA:g}, scale {SCALE:g}, "
        f"model {embedder.name}; mean cosine message-gold {before:.3f} -> {after:.3f} (in-sample)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
