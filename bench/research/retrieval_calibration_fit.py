"""Fit the KB-independent calibration (``engine/retrieval/calibration.py``) across the KB shapes of
``bench/retrieval_shapes.py``, on the DEV half of faq-val only.

For every shape, the dev queries are searched against the KB (answerable) and against the KB without their
gold entries (unanswerable: the top entry is wrong by construction); the top hit's calibration features and
whether it is right make one row. A logistic regression per mode is fitted with every (shape, run) group
weighted equally, so the 12k-entry shapes do not drown the small ones. Before the final fit, a
leave-one-shape-out check refits without each shape and reports, on that unseen shape, the precision when
answered and the answered share at the default threshold: the transfer the calibration is for.

    python -m bench.research.retrieval_calibration_fit              # collect (cached) + fit; prints COEFFICIENTS
    python -m bench.research.retrieval_calibration_fit --recollect  # search again (after a ranking change)

Rows are cached in .medbot/eval-cache/calibration-rows-<mode>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench.retrieval_shapes import CACHE, SHAPES, DiskCachedEmbedder, build_shapes, run_queries, without
from engine.retrieval.calibration import DEFAULT_THRESHOLD, FEATURES
from engine.retrieval.search import SearchResult


def _top_features(res: SearchResult) -> dict[str, float]:
    hit = res.hits[0] if res.hits else None
    return dict(getattr(hit, "features", {}) or {}) if hit is not None else {}


async def collect(
    mode: str,
    split: str = "dev",
    shapes: Sequence[str] = SHAPES,
    features: Callable[[SearchResult], dict[str, float]] = _top_features,
) -> list[dict[str, object]]:
    """Per search of ``split`` on ``shapes``: its group, whether the top entry is right, and ``features`` of it."""
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    rows: list[dict[str, object]] = []
    for name in shapes:
        shape = built[name]
        qs = shape.queries[split]
        runs = [
            ("answerable", shape.entries, False),
            ("unanswerable", without(shape.entries, {q.gold for q in qs}), False),
        ]
        if name == "questions":
            runs.append(("nodiac", shape.entries, True))
        for run, entries, strip in runs:
            outcomes = await run_queries(entries, qs, embedder, strip=strip, mode=mode, collect=features)
            for o in outcomes:
                if o.features:
                    rows.append({"shape": name, "run": run, "right": o.rank == 1, "features": o.features})
            print(f"{mode} {name}/{run}: {len(outcomes)} queries", file=sys.stderr, flush=True)
    return rows


# Extra weight of the self-supervised shape: short chat messages are most of a clinic's traffic, and faq-val has none.
SELF_WEIGHT = 1.0


def row_weights(
    rows: list[dict[str, object]], unanswerable: float = 1.0, self_weight: float | None = None
) -> np.ndarray:
    """Each row's fitting weight: every (shape, run) group weighs the same in all, the unanswerable runs times
    ``unanswerable``, the ``self`` shape times ``self_weight`` (``SELF_WEIGHT`` when None)."""
    self_weight = SELF_WEIGHT if self_weight is None else self_weight
    groups = [(r["shape"], r["run"]) for r in rows]
    sizes: dict[tuple[object, object], int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    return np.array(
        [
            len(rows)
            / (len(sizes) * sizes[g])
            * (unanswerable if g[1] == "unanswerable" else 1.0)
            * (self_weight if g[0] == "self" else 1.0)
            for g in groups
        ]
    )


def _matrix(
    rows: list[dict[str, object]], unanswerable: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([[float(r["features"].get(f, 0.0)) for f in FEATURES] for r in rows])  # type: ignore[union-attr]
    y = np.array([bool(r["right"]) for r in rows])
    return x, y, row_weights(rows, unanswerable)


def fit(rows: list[dict[str, object]], c: float = 1.0, unanswerable: float = 1.0) -> tuple[float, ...]:
    x, y, w = _matrix(rows, unanswerable)
    model = LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=w)
    return (round(float(model.intercept_[0]), 3), *(round(float(b), 3) for b in model.coef_[0]))


def predict(coef: tuple[float, ...], rows: list[dict[str, object]]) -> np.ndarray:
    x, _, _ = _matrix(rows)
    z = coef[0] + x @ np.array(coef[1:])
    return 1 / (1 + np.exp(-z))


def report(
    coef: tuple[float, ...], rows: list[dict[str, object]], threshold: float
) -> dict[str, dict[str, float]]:
    """Per shape: answered share and precision on answerable rows, false answers on unanswerable rows."""
    out: dict[str, dict[str, float]] = {}
    p = predict(coef, rows)
    for name in dict.fromkeys(str(r["shape"]) for r in rows):
        idx = [i for i, r in enumerate(rows) if r["shape"] == name and r["run"] == "answerable"]
        un = [i for i, r in enumerate(rows) if r["shape"] == name and r["run"] == "unanswerable"]
        ans = [i for i in idx if p[i] >= threshold]
        out[name] = {
            "answered": round(len(ans) / max(1, len(idx)), 3),
            "precision": round(float(np.mean([rows[i]["right"] for i in ans])) if ans else 0.0, 3),
            "false_answers": round(float(np.mean([p[i] >= threshold for i in un])) if un else 0.0, 3),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="hybrid,sparse")
    ap.add_argument("--recollect", action="store_true")
    ap.add_argument("--shapes", default="", help="search only these shapes again (after changing them)")
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    ap.add_argument(
        "--unanswerable-weight",
        type=float,
        default=0.8,
        help="weight of the unanswerable runs relative to the answerable ones (the prior of off-KB messages)",
    )
    ap.add_argument("--self-weight", type=float, default=SELF_WEIGHT)
    args = ap.parse_args()
    globals()["SELF_WEIGHT"] = args.self_weight
    fitted = {}
    for mode in args.modes.split(","):
        path = CACHE / f"calibration-rows-{mode}.json"
        if args.recollect or not path.is_file():
            path.write_text(json.dumps(asyncio.run(collect(mode))))
        rows = json.loads(path.read_text())
        if args.shapes:  # search these shapes again, keep the other rows
            fresh = asyncio.run(collect(mode, shapes=args.shapes.split(",")))
            rows = [r for r in rows if r["shape"] not in args.shapes.split(",")] + fresh
            path.write_text(json.dumps(rows))
        for held in SHAPES:
            train = [r for r in rows if r["shape"] != held]
            test = [r for r in rows if r["shape"] == held]
            print(
                f"{mode} leave-out {held}: {report(fit(train, args.c, args.unanswerable_weight), test, args.threshold)[held]}",
                file=sys.stderr,
            )
        fitted[mode] = fit(rows, args.c, args.unanswerable_weight)
        print(f"{mode} all dev: {json.dumps(report(fitted[mode], rows, args.threshold))}", file=sys.stderr)
    print(json.dumps(fitted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
