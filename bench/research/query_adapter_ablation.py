"""Learned query-side adapter for the dense leg, and a reranker over both legs' candidates (issue 21, fourth
round; research, not the product): can the LEGS put the gold entry in the top 10 more often?

Everything runs on the DEV half of the KB shapes of ``bench/retrieval_shapes.py`` with k-fold
cross-validation WITHIN dev (folds by a hash of the faq-val query id, the same fold for a message in every
shape), so that no figure is measured on a message whose pair was used to fit it.

1. Adapter. The e5 query vector ``q`` of a message is moved, ``q' = normalise(q + a * W q)``, before the
   cosine with the (unchanged) passage vectors. ``W`` is fitted on the training folds' (message vector, gold
   question passage vector) pairs:

   - ``ridge``: ``W = argmin ||Q W - P||^2 + lam ||W||^2`` (the map predicts the gold question's vector);
   - ``ridge-res``: the same on the residual ``P - Q`` (the map predicts the move);
   - ``lowrank-k``: ``ridge`` truncated to its top-k singular directions;
   - ``ce``: a full-KB softmax (cross-entropy over every entry of the ``questions`` KB, temperature
     ``TAU``) of the adapted cosine, ``W`` by L-BFGS from 0 with an L2 penalty ``mu ||W||^2``: the map
     learns to rank, not to regress.

   Gated variants apply it only to messages of >= 20 words (as the learned fusion is), so short questions,
   chat turns and the self-supervised shape keep their ranking. The leg matrices are those of
   ``retrieval_ranking_ablation`` (cached under ``.medbot/eval-cache/rank-*``), the fusion is its ``final``
   (the production fusion); only the dense matrix is recomputed from the cached vectors.

2. Reranker. Over the union of both legs' top 50 (as ``KBSearch`` pools candidates): per candidate each
   leg's rank and score, its min-max score, the gap to the leg's best, the production fusion score and rank,
   title coverage and the message length; a gradient-boosted classifier (sklearn
   ``HistGradientBoostingClassifier``) trained on the training folds of the three question-style shapes,
   ``full`` and ``answers_only`` together; the held-out fold's candidates re-sorted by its probability.

    PYTHONPATH=$PWD MEDBOT_EVAL_DIR=/work/main/.medbot python -m bench.research.query_adapter_ablation \
        [--rerank] [--only PREFIX,...]

Prints P@1 / hit@10 per shape and the no-diacritics loss (P@1 ``questions`` - P@1 ``questions~nodiac``).
Results and the decision: ``bench/retrieval_shapes_results.md`` ("Query adapter for the dense leg, reranker").
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from sklearn.ensemble import HistGradientBoostingClassifier

from bench.research.retrieval_ranking_ablation import (
    SPLIT,
    Counts,
    Data,
    _minmax,
    final,
    load,
    metrics,
    title_coverage,
)
from bench.retrieval_shapes import DiskCachedEmbedder, build_shapes
from engine.embedding import passage_text
from engine.retrieval.sparse import SparseIndex
from engine.text import fold, split_words

SHAPES = ("questions", "questions_kw", "noisy_kw", "answers_only", "full", "mix")
FOLDS = 5
TAU = 30.0  # softmax temperature of the "ce" adapter (e5 cosines spread over ~0.1)
LONG = 20


def fold_of(query_id: str) -> int:
    """A dev message's fold (independent of the dev/test hash: another slice of the digest)."""
    return int(hashlib.sha256(query_id.encode()).hexdigest()[8:16], 16) % FOLDS


class Light:
    """What ``final`` reads from ``Extra``: message length and title coverage (idf - 1)."""

    def __init__(self, d: Data) -> None:
        c = Counts(d, ("syllable",))
        self.words = np.array([len(split_words(fold(t))) for t in d.texts])
        self.cov_strict = title_coverage(d, c, shift=1.0)


@dataclass
class Set:
    d: Data
    x: Light
    qv: np.ndarray  # normalised query vectors (as the dense leg embeds them)
    pv: np.ndarray  # normalised passage vectors of the shape's entries
    folds: np.ndarray
    long: np.ndarray


def build(names: list[str], embedder: DiskCachedEmbedder) -> dict[str, Set]:
    built = build_shapes()
    out: dict[str, Set] = {}
    for name in names:
        for strip in (False, True) if name == "questions" else (False,):
            shape = built[name]
            d = load(shape, embedder, strip=strip)
            restorer = SparseIndex(shape.entries).build_restorer() if not d.marked.all() else None
            texts = [
                t if m or restorer is None else restorer.restore(t)
                for t, m in zip(d.texts, d.marked, strict=True)
            ]
            qv = embedder.query_vectors(texts)
            qv = qv / np.linalg.norm(qv, axis=1, keepdims=True)
            pv = embedder.passage_vectors([passage_text(e.question, e.answer) for e in shape.entries])
            pv = pv / np.linalg.norm(pv, axis=1, keepdims=True)
            check = np.abs(qv @ pv.T - d.dense).max()
            assert check < 1e-3, f"{d.name}: dense matrix does not match the cached vectors ({check})"
            folds = np.array([fold_of(q.query_id.split("/")[0]) for q in shape.queries[SPLIT]])
            x = Light(d)
            out[d.name] = Set(d, x, qv, pv, folds, x.words >= LONG)
    return out


# ---------------------------------------------------------------------------------------------- adapters

Fit = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]  # (Q, P, all P, gold) -> W


def ridge(lam: float, residual: bool = False, rank: int = 0) -> Fit:
    def fit(q: np.ndarray, p: np.ndarray, _pv: np.ndarray, _gold: np.ndarray) -> np.ndarray:
        target = p - q if residual else p
        w = np.linalg.solve(q.T @ q + lam * np.eye(q.shape[1]), q.T @ target)
        if rank:
            u, s, vt = np.linalg.svd(w)
            w = (u[:, :rank] * s[:rank]) @ vt[:rank]
        return w

    return fit


def ce(mu: float, iters: int = 60) -> Fit:
    """W minimising the mean full-KB cross-entropy of TAU x cos(normalise(q + q W), p) plus mu ||W||^2."""

    def fit(q: np.ndarray, _p: np.ndarray, pv: np.ndarray, gold: np.ndarray) -> np.ndarray:
        n, dim = q.shape
        rows = np.arange(n)

        def f(flat: np.ndarray) -> tuple[float, np.ndarray]:
            w = flat.reshape(dim, dim)
            z = q + q @ w
            norm = np.linalg.norm(z, axis=1, keepdims=True)
            u = z / norm
            logits = TAU * (u @ pv.T)
            logits -= logits.max(1, keepdims=True)
            e = np.exp(logits)
            prob = e / e.sum(1, keepdims=True)
            loss = -np.log(prob[rows, gold] + 1e-12).mean() + mu * (w * w).sum()
            g_logits = prob
            g_logits[rows, gold] -= 1
            g_u = TAU * (g_logits @ pv) / n
            g_z = (g_u - u * (g_u * u).sum(1, keepdims=True)) / norm
            grad = q.T @ g_z + 2 * mu * w
            return float(loss), grad.ravel().astype(np.float64)

        res = minimize(f, np.zeros(dim * dim), jac=True, method="L-BFGS-B", options={"maxiter": iters})
        return res.x.reshape(dim, dim)

    return fit


def adapted_dense(s: Set, w: np.ndarray, a: float, gate: bool) -> np.ndarray:
    z = s.qv + a * (s.qv @ w)
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    dense = (z @ s.pv.T).astype(np.float32)
    if gate:
        dense = np.where(s.long[:, None], dense, s.d.dense)
    return dense


def cross_fitted(sets: dict[str, Set], fit: Fit, train_on: str = "questions") -> list[np.ndarray]:
    """Per fold, W fitted on the other folds' pairs of ``train_on`` (message vector -> gold passage vector)."""
    base = sets[train_on]
    out = []
    for k in range(FOLDS):
        tr = base.folds != k
        q = base.qv[tr]
        gold = base.d.gold[tr]
        out.append(fit(q, base.pv[gold], base.pv, gold))
    return out


def run_adapter(
    sets: dict[str, Set], ws: list[np.ndarray], a: float, gate: bool
) -> dict[str, tuple[float, float]]:
    res = {}
    for name, s in sets.items():
        dense = s.d.dense.copy()
        for k in range(FOLDS):
            rows = s.folds == k
            if not rows.any():
                continue
            sub = Set(s.d, s.x, s.qv[rows], s.pv, s.folds[rows], s.long[rows])
            sub.d = _rows(s.d, rows)
            dense[rows] = adapted_dense(sub, ws[k], a, gate)
        d2 = _with_dense(s.d, dense)
        res[name] = metrics(d2, final(d2, s.x))
    return res


def _rows(d: Data, rows: np.ndarray) -> Data:
    return Data(d.name, d.shape, d.sparse[rows], d.dense[rows], d.gold[rows], d.marked[rows], [])


def _with_dense(d: Data, dense: np.ndarray) -> Data:
    return Data(d.name, d.shape, d.sparse, dense, d.gold, d.marked, d.texts)


# ---------------------------------------------------------------------------------------------- reranker

POOL = 50


def candidates(
    s: Set, dense: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per query the union of both legs' top POOL: (query index, entry index, features, label)."""
    d = s.d if dense is None else _with_dense(s.d, dense)
    fused = final(d, s.x)
    ms, md = _minmax(d.sparse, POOL), _minmax(d.dense, POOL)
    qi, ei, feats, labels = [], [], [], []
    for i in range(len(d.gold)):
        top_s = np.argsort(-d.sparse[i], kind="stable")[:POOL]
        top_d = np.argsort(-d.dense[i], kind="stable")[:POOL]
        pool = np.union1d(top_s, top_d)
        rank_s = np.full(d.sparse.shape[1], POOL + 1.0)
        rank_s[top_s] = np.arange(1, POOL + 1)
        rank_d = np.full(d.sparse.shape[1], POOL + 1.0)
        rank_d[top_d] = np.arange(1, POOL + 1)
        order = np.argsort(-fused[i, pool], kind="stable")
        rank_f = np.empty(len(pool))
        rank_f[order] = np.arange(1, len(pool) + 1)
        f = np.column_stack(
            [
                np.log(rank_s[pool]),
                np.log(rank_d[pool]),
                np.log(rank_f),
                d.sparse[i, pool],
                d.dense[i, pool],
                d.sparse[i, pool] - d.sparse[i].max(),
                d.dense[i, pool] - d.dense[i].max(),
                ms[i, pool],
                md[i, pool],
                fused[i, pool],
                fused[i, pool] - fused[i, pool].max(),
                s.x.cov_strict[i, pool],
                np.full(len(pool), np.log1p(s.x.words[i])),
                np.full(len(pool), float(d.marked[i])),
            ]
        )
        qi.append(np.full(len(pool), i))
        ei.append(pool)
        feats.append(f)
        labels.append(pool == d.gold[i])
    return np.concatenate(qi), np.concatenate(ei), np.vstack(feats), np.concatenate(labels)


def rerank(
    sets: dict[str, Set], train_shapes: tuple[str, ...], params: dict
) -> dict[str, tuple[float, float]]:

    pools = {name: candidates(s) for name, s in sets.items()}
    res = {}
    scored = {name: np.zeros(len(p[0])) for name, p in pools.items()}
    for k in range(FOLDS):
        xs, ys = [], []
        for name in train_shapes:
            qi, _, f, y = pools[name]
            tr = sets[name].folds[qi] != k
            xs.append(f[tr])
            ys.append(y[tr])
        clf = HistGradientBoostingClassifier(random_state=21, **params).fit(np.vstack(xs), np.concatenate(ys))
        for name, (qi, _, f, _) in pools.items():
            te = sets[name].folds[qi] == k
            if te.any():
                scored[name][te] = clf.predict_proba(f[te])[:, 1]
    for name, (qi, ei, _, _) in pools.items():
        s = sets[name]
        mat = np.full(s.d.sparse.shape, -1.0)
        fused = final(s.d, s.x)
        # Entries outside the pool keep their fused order below every pooled one.
        mat[:] = -2.0 + fused / (np.abs(fused).max() + 1e-9)
        mat[qi, ei] = scored[name]
        res[name] = metrics(s.d, mat)
    return res


# ---------------------------------------------------------------------------------------------- main


def show(label: str, res: dict[str, tuple[float, float]]) -> None:
    loss = res["questions"][0] - res["questions~nodiac"][0] if "questions~nodiac" in res else float("nan")
    cells = "".join(f"{p1:>9.3f}/{hit:.3f}" for p1, hit in res.values())
    print(f"{label:<44}{cells}  {loss:.4f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated variant name prefixes")
    ap.add_argument("--rerank", action="store_true")
    args = ap.parse_args()
    t = time.perf_counter()
    sets = build(list(SHAPES), DiskCachedEmbedder(offline=True))
    print(f"loaded in {time.perf_counter() - t:.0f}s", file=sys.stderr, flush=True)
    print(f"{'variant':<44}" + "".join(f"{n:>18}" for n in sets) + "  nodiac.loss")
    show("production (final fusion)", {n: metrics(s.d, final(s.d, s.x)) for n, s in sets.items()})
    show("dense leg alone", {n: metrics(s.d, s.d.dense) for n, s in sets.items()})
    want = [p for p in args.only.split(",") if p]

    def on(label: str) -> bool:
        return not want or any(label.startswith(p) for p in want)

    fits: dict[str, Fit] = {}
    for lam in (1.0, 10.0, 100.0):
        fits[f"ridge lam {lam:g}"] = ridge(lam)
    for lam in (1.0, 3.0, 10.0, 30.0, 100.0):
        fits[f"ridge-res lam {lam:g}"] = ridge(lam, residual=True)
    for rank in (16, 64):
        fits[f"lowrank-{rank} lam 10"] = ridge(10.0, rank=rank)
    fits["ce mu 0.001"] = ce(1e-3)
    scales = {"ridge-res": (0.5, 1.0, 1.5, 2.0), "ce": (0.5, 1.0, 1.5)}
    for label, fit in fits.items():
        if not on(label):
            continue
        t = time.perf_counter()
        ws = cross_fitted(sets, fit)
        print(f"# {label}: fitted in {time.perf_counter() - t:.0f}s", file=sys.stderr, flush=True)
        for a in scales.get(label.split()[0], (0.25, 0.5, 1.0)):
            for gate in (False, True):
                show(f"{label}, a {a:g}{', >=20 words' if gate else ''}", run_adapter(sets, ws, a, gate))
    if args.rerank:
        shapes = ("questions", "questions_kw", "noisy_kw", "full", "answers_only")
        for params in (
            {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15},
            {"max_iter": 400, "learning_rate": 0.03, "max_leaf_nodes": 31, "l2_regularization": 1.0},
        ):
            show(f"rerank GBDT {params['max_iter']}/{params['max_leaf_nodes']}", rerank(sets, shapes, params))
    return 0


if __name__ == "__main__":
    sys.exit(main())
