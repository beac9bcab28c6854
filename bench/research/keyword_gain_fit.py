"""Fit the weight of the ``keyword_gain`` calibration feature (``engine/retrieval/calibration.py``) alone, on
the DEV half of faq-val's shapes, every other coefficient kept as it is (seventh round,
``bench/retrieval_shapes_results.md``).

``keyword_gain`` is the coverage a keyword phrase that names the entry in words its title lacks adds over the
title's own coverage (``SparseIndex.keyword_coverage``). Rows are the calibration fit's
(``retrieval_calibration_fit.collect``: every shape, answerable and unanswerable runs, weighted as that fit
weights them); the model is the current coefficient set with one more term, ``z = z_now + b * keyword_gain``,
``b`` fitted by weighted, L2-penalised logistic likelihood (sklearn's objective and ``C``). Only rows with a
gain move, so every shape without such keywords keeps its figures. Prints ``b`` with all shapes, with each shape
left out (the shape left out is measured with the ``b`` the others gave), and the decision figures per shape at
the default threshold for ``b`` = 0 and the fitted one.

    python -m bench.research.keyword_gain_fit                 # collect (cached in .medbot/eval-cache) + fit
    python -m bench.research.keyword_gain_fit --recollect
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import numpy as np

from bench.research.retrieval_calibration_fit import _matrix, collect
from bench.retrieval_shapes import CACHE
from engine.retrieval.calibration import COEFFICIENTS, DEFAULT_THRESHOLD, FEATURES

FEATURE = "keyword_gain"


def _parts(mode: str, rows: list[dict[str, object]], unanswerable: float) -> tuple[np.ndarray, ...]:
    x, y, w = _matrix(rows, unanswerable)
    coef = np.array(COEFFICIENTS[mode])
    j = FEATURES.index(FEATURE)
    base = coef[0] + x @ coef[1:] - coef[1 + j] * x[:, j]  # the model without the feature
    return base, x[:, j], y.astype(float), w


def fit_b(base: np.ndarray, g: np.ndarray, y: np.ndarray, w: np.ndarray, c: float) -> float:
    """argmin 0.5 b^2 + C sum w * logloss(sigmoid(base + b g), y), by Newton's method."""
    b = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-(base + b * g)))
        grad = b + c * float(np.sum(w * (p - y) * g))
        hess = 1 + c * float(np.sum(w * p * (1 - p) * g * g))
        step = grad / hess
        b -= step
        if abs(step) < 1e-9:
            break
    return b


def decisions(rows: list[dict[str, object]], z: np.ndarray, threshold: float) -> dict[str, str]:
    out = {}
    p = 1 / (1 + np.exp(-z))
    for name in dict.fromkeys(str(r["shape"]) for r in rows):
        ans = [i for i, r in enumerate(rows) if r["shape"] == name and r["run"] == "answerable"]
        un = [i for i, r in enumerate(rows) if r["shape"] == name and r["run"] == "unanswerable"]
        yes = [i for i in ans if p[i] >= threshold]
        prec = float(np.mean([rows[i]["right"] for i in yes])) if yes else 0.0
        false = float(np.mean([p[i] >= threshold for i in un])) if un else 0.0
        out[name] = f"{len(yes) / max(1, len(ans)):.3f}/{prec:.3f}/{false:.3f}"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--recollect", action="store_true")
    ap.add_argument(
        "--c", type=float, default=3.0, help="the fit's C (hybrid was fitted with 3, sparse with 1)"
    )
    ap.add_argument("--unanswerable-weight", type=float, default=0.8)
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    args = ap.parse_args()
    path = CACHE / f"keyword-gain-rows-{args.mode}.json"
    if args.recollect or not path.exists():
        rows = asyncio.run(collect(args.mode))
        path.write_text(json.dumps(rows))
    rows = json.loads(path.read_text())
    base, g, y, w = _parts(args.mode, rows, args.unanswerable_weight)
    with_gain = {
        name: int(sum(1 for r in rows if r["shape"] == name and r["features"].get(FEATURE, 0) > 0))
        for name in dict.fromkeys(str(r["shape"]) for r in rows)
    }
    print(f"rows with a gain, per shape: {with_gain}")
    b = fit_b(base, g, y, w, args.c)
    print(f"{args.mode}: b = {b:.3f} (all shapes)")
    for name in with_gain:
        keep = np.array([r["shape"] != name for r in rows])
        sub = [r for r, k in zip(rows, keep, strict=True) if k]
        bs, gs, ys, ws = _parts(args.mode, sub, args.unanswerable_weight)
        b_out = fit_b(bs, gs, ys, ws, args.c)
        idx = np.flatnonzero(~keep)
        left = [rows[i] for i in idx]
        print(
            f"  without {name}: b = {b_out:.3f}; on {name} (answered/precision/false): "
            f"{decisions(left, base[idx], args.threshold)[name]} -> "
            f"{decisions(left, base[idx] + b_out * g[idx], args.threshold)[name]}"
        )
    print("answered/precision/false at b = 0:", decisions(rows, base, args.threshold))
    print(f"answered/precision/false at b = {b:.3f}:", decisions(rows, base + b * g, args.threshold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
