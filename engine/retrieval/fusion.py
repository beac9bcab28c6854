"""Fusion of the sparse and dense ranked lists into one ranking.

Default: normalised score fusion. Each leg's scores are rescaled per query against that leg's own candidate
list, ``(s - floor) / (top - floor)`` where ``floor`` is the score of the leg's last (N-th) candidate. That
makes the top of each leg 1 and "as good as a random tail candidate" 0, which matters for the dense leg whose
cosines sit in a narrow 0.8-0.93 band for every query, related or not. The fused score is the weighted sum,
so the size of a lead survives (rank fusion throws it away: on faq-val RRF fell short of the dense leg
alone).

An entry found by one leg only keeps its score from that leg and gets the floor (0) for the other; nothing is
dropped. The dense weight is lower when the query carries no diacritics: the dense leg then embeds a
restored spelling (``engine.text.DiacriticRestorer``), which is less reliable than what the patient typed,
while the folded sparse leg does not care. (faq-val, queries stripped of marks: dense alone P@1 0.07 without
restoration, 0.51 with it.)

``learned`` (used by ``KBSearch`` for messages of ``LEARNED_MIN_WORDS`` words or more) adds to that weighted sum
what a logistic model fitted on the candidate lists of six KB shapes (``bench/research/retrieval_fusion_research.py``,
dev half of faq-val, checked leave-one-shape-out) found worth keeping: a bonus for being first in a leg, and the
share of the entry's title found in the message (a question whose words are all in the message), weighted by idf
without its +1 smoothing so that function words every entry shares count for nothing. Its leg weights are the
model's, rescaled to sum to 1, and the same for messages with or without marks: lowering the dense weight for
unmarked messages (0.8 x, as ``score`` does) is what doubled the no-diacritics loss when this fusion was first
tried (dev: P@1 of stripped messages 0.604 at 0.8 x, 0.607 at 1 x, 0.594 at 0.6 x; ablation in
``bench/retrieval_shapes_results.md``, "Ranking ablation", by ``bench/research/retrieval_ranking_ablation.py``).

``rrf`` (reciprocal rank fusion) is kept for comparison in the research script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Dense leg weight in the fused score (the sparse leg gets the rest), for queries with and without marks.
DENSE_WEIGHT = 0.5
DENSE_WEIGHT_NO_DIACRITICS = 0.4
RRF_K = 60
# method "learned": leg weights (hybrid, with or without marks), first-in-leg bonuses and the
# title-coverage weight, from `python -m bench.research.retrieval_fusion_research` (weights 4.684, 3.791, 0.388, 0.583,
# 2.559 divided by 4.684 + 3.791).
LEARNED_DENSE_WEIGHT = 0.447
LEARNED_TOP_BONUS = {"sparse": 0.046, "dense": 0.069}
LEARNED_COVERAGE = 0.302
# ``KBSearch`` uses "learned" for messages of at least this many words and "score" for shorter ones. The model
# was fitted on, and helps on, long messages (faq-val's are 84 words at the median), where a cosine over the
# whole message dilutes a KB question it contains word for word; for a short message both legs already compare
# it with the titles directly, the title-coverage term only rewards the title that repeats its one subject
# word ("trẻ" in "Răng sâu có tự lành được không? còn trẻ con thì sao?"), and the first-in-leg bonuses widen
# the lead the bare-subject rule of the calibration reads (fitted on "score" leads).
LEARNED_MIN_WORDS = 20


@dataclass(slots=True)
class Fused:
    """One candidate after fusion, with its per-leg evidence (ranks are 1-based, None when not listed)."""

    entry_id: int
    score: float
    sparse_score: float = 0.0
    dense_score: float = 0.0
    sparse_rank: int | None = None
    dense_rank: int | None = None


def _normalise(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    top, floor = scores[0], scores[-1]
    span = top - floor
    if span <= 1e-9:
        return [1.0 for _ in scores]
    return [(s - floor) / span for s in scores]


def fuse(
    sparse: Sequence[tuple[int, float]],
    dense: Sequence[tuple[int, float]],
    *,
    dense_weight: float = DENSE_WEIGHT,
    method: str = "score",
    sparse_extra: dict[int, float] | None = None,
    coverage: dict[int, float] | None = None,
) -> list[Fused]:
    """Fuse two (entry id, score) lists, each best first, into one list best first.

    ``sparse_extra`` gives the sparse score of dense candidates that are not in the sparse list (the in-memory
    index scores any entry for free); they are rescaled with the sparse list's top and floor, never below 0.
    With ``dense_weight`` 0 or 1 the result is one leg's order (the other leg only adds candidates behind).
    """
    out: dict[int, Fused] = {}
    for rank, (eid, score) in enumerate(sparse, 1):
        out[eid] = Fused(eid, 0.0, sparse_score=score, sparse_rank=rank)
    for rank, (eid, score) in enumerate(dense, 1):
        f = out.setdefault(eid, Fused(eid, 0.0))
        f.dense_score, f.dense_rank = score, rank
    w_sparse = 1.0 - dense_weight
    if method == "rrf":
        for f in out.values():
            if f.sparse_rank is not None:
                f.score += w_sparse / (RRF_K + f.sparse_rank)
            if f.dense_rank is not None:
                f.score += dense_weight / (RRF_K + f.dense_rank)
    elif method in ("score", "learned"):
        ns = dict(zip((e for e, _ in sparse), _normalise([s for _, s in sparse]), strict=True))
        nd = dict(zip((e for e, _ in dense), _normalise([s for _, s in dense]), strict=True))
        if sparse_extra and len(sparse) > 1:
            top, floor = sparse[0][1], sparse[-1][1]
            for eid, score in sparse_extra.items():
                if eid in out and eid not in ns:
                    out[eid].sparse_score = score
                    ns[eid] = max(0.0, (score - floor) / (top - floor)) if top > floor else 0.0
        for f in out.values():
            f.score = w_sparse * ns.get(f.entry_id, 0.0) + dense_weight * nd.get(f.entry_id, 0.0)
        if method == "learned" and sparse and dense:
            top_s, top_d = sparse[0][1], dense[0][1]
            for f in out.values():
                f.score += LEARNED_TOP_BONUS["sparse"] * (f.sparse_score >= top_s)
                f.score += LEARNED_TOP_BONUS["dense"] * (f.dense_rank is not None and f.dense_score >= top_d)
                f.score += LEARNED_COVERAGE * (coverage or {}).get(f.entry_id, 0.0)
    else:
        raise ValueError(f"unknown fusion method {method!r}")
    # Ties (e.g. one leg only) are broken by the better leg rank, then by id for determinism.
    return sorted(
        out.values(),
        key=lambda f: (-f.score, min(f.sparse_rank or 10**9, f.dense_rank or 10**9), f.entry_id),
    )
