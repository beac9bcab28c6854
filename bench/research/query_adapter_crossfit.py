"""The query adapter (``engine.retrieval.query_adapter``) through the production search, cross-fitted within
the DEV half (research, not the product): per fold of ``query_adapter_ablation.fold_of``, an adapter fitted as
``query_adapter_fit`` does on the other four folds' pairs is installed in place of the shipped file, every
shape's dev queries are searched by ``KBSearch`` (as ``bench_retrieval_shapes``: answerable, unanswerable,
and ``questions`` without diacritics), and only that fold's queries are kept. So every dev figure below is
measured with an adapter that never saw the message.

Prints the per-shape table with the calibration in ``engine/retrieval/calibration.py`` and writes the top
hits' calibration rows (the format of ``retrieval_calibration_fit``, plus ``_words``, the message's length) to
``--rows``, then fits a hybrid set on them (leave-one-shape-out report, then all of dev) with ``--c`` /
``--unanswerable-weight``: with ``--unanswerable-weight 0.9`` the printed coefficients are
``calibration.COEFFICIENTS["hybrid_adapted"]`` (the product applies them only to the adapted searches; the
comparison with ``hybrid`` for the others is in ``bench/retrieval_shapes_results.md``).

    PYTHONPATH=$PWD MEDBOT_EVAL_DIR=/work/main/.medbot python -m bench.research.query_adapter_crossfit \
        [--none]   # --none: the same harness without any adapter (the baseline)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.research import retrieval_calibration_fit as calfit
from bench.research.query_adapter_ablation import FOLDS, fold_of, ridge
from bench.research.query_adapter_fit import LAMBDA, SCALE, dev_vectors
from bench.retrieval_shapes import (
    SHAPES,
    DiskCachedEmbedder,
    QueryOutcome,
    evaluate_shapes,
    false_answer_rate,
    format_table,
    ranking_metrics,
)
from engine.retrieval import query_adapter
from engine.retrieval.calibration import DEFAULT_THRESHOLD
from engine.retrieval.search import SearchResult

SHIPPED_FILE = query_adapter.ADAPTER_FILE


def _features(res: SearchResult) -> dict[str, float]:
    """The top hit's calibration features and the message's length (``_words``: which set decides it)."""
    feats = calfit._top_features(res)
    return {**feats, "_words": float(res.query_words)} if feats else feats


def _fold(o: QueryOutcome) -> int:
    return fold_of(o.query_id.split("/")[0])


def table_of(raw: dict[str, dict[str, list[QueryOutcome]]], threshold: float) -> dict[str, dict[str, float]]:
    table = {}
    for name, runs in raw.items():
        row = ranking_metrics(runs["answerable"], threshold)
        row["false_answers"] = false_answer_rate(runs["unanswerable"], threshold)
        if "nodiac" in runs:
            row["nodiac_loss"] = round(row["p@1"] - ranking_metrics(runs["nodiac"], threshold)["p@1"], 4)
        table[name] = row
    return table


def cross_fitted(
    embedder: DiskCachedEmbedder,
    collect: Callable[[SearchResult], dict[str, float]],
    *,
    none: bool = False,
    typed_only: bool = False,
    shapes: Sequence[str] = SHAPES,
) -> dict[str, dict[str, list[QueryOutcome]]]:
    """Every shape's dev outcomes (runs as ``evaluate_shapes``), each searched with an adapter fitted on the
    other folds (``none``: no adapter; ``typed_only``: one map for every message), ``collect`` read from each
    search; ``shapes``: only these."""
    raw: dict[str, dict[str, list[QueryOutcome]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if not none:
            dev, q, p = dev_vectors(embedder)
            _, q_bare, _ = dev_vectors(embedder, strip=True)
            folds = np.array([fold_of(x.query_id) for x in dev])
        for k in range(1 if none else FOLDS):
            if none:
                query_adapter.ADAPTER_FILE = Path(tmp) / "absent.npz"
            else:
                tr = folds != k
                w = ridge(LAMBDA, residual=True)(q[tr], p[tr], p, np.arange(int(tr.sum())))
                w_bare = None
                if not typed_only:  # the second map, for messages typed without marks
                    w_bare = ridge(LAMBDA, residual=True)(q_bare[tr], p[tr], p, np.arange(int(tr.sum())))
                query_adapter.ADAPTER_FILE = Path(tmp) / f"fold{k}.npz"
                query_adapter.save(query_adapter.ADAPTER_FILE, w, SCALE, embedder.name, unmarked=w_bare)
            query_adapter._shipped.cache_clear()
            _, part = asyncio.run(
                evaluate_shapes(
                    "dev",
                    DEFAULT_THRESHOLD,
                    shapes=shapes,
                    embedder=embedder,
                    collect=collect,
                    log=lambda s: None,
                    query_adapter=not none,
                )
            )
            for name, runs in part.items():
                for run, outcomes in runs.items():
                    keep = outcomes if none else [o for o in outcomes if _fold(o) == k]
                    raw.setdefault(name, {}).setdefault(run, []).extend(keep)
            print(f"fold {k} done", file=sys.stderr, flush=True)
    query_adapter.ADAPTER_FILE = SHIPPED_FILE
    query_adapter._shipped.cache_clear()
    return raw


def calibration_rows(
    raw: dict[str, dict[str, list[QueryOutcome]]],
    runs: Sequence[str] = ("answerable", "unanswerable", "nodiac"),
) -> list[dict[str, object]]:
    """The searches' outcomes as calibration rows (``retrieval_calibration_fit``'s format): shape, run, whether the
    top entry was right, and the collected features; only the ``runs`` named (the fits' own: not the seventeenth
    round's "unanswerable_twins", which ``bench.research.twin_calibration`` reads)."""
    return [
        {"shape": name, "run": run, "right": o.rank == 1, "features": o.features}
        for name, by_run in raw.items()
        for run, outcomes in by_run.items()
        if run in runs
        for o in outcomes
        if o.features
    ]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--none", action="store_true", help="no adapter at all (the baseline through this harness)"
    )
    ap.add_argument(
        "--typed-only", action="store_true", help="one map for every message (the fourth round's adapter)"
    )
    ap.add_argument("--rows", type=Path, default=Path("/tmp/query-adapter-calibration-rows.json"))
    ap.add_argument("--c", type=float, default=3.0)
    ap.add_argument("--unanswerable-weight", type=float, default=0.8)
    args = ap.parse_args()
    raw = cross_fitted(DiskCachedEmbedder(), _features, none=args.none, typed_only=args.typed_only)
    print("with the calibration in calibration.py:")
    print(format_table(table_of(raw, DEFAULT_THRESHOLD)))
    rows = calibration_rows(raw)
    args.rows.write_text(json.dumps(rows))
    for held in SHAPES:
        train = [r for r in rows if r["shape"] != held]
        test = [r for r in rows if r["shape"] == held]
        rep = calfit.report(calfit.fit(train, args.c, args.unanswerable_weight), test, DEFAULT_THRESHOLD)[
            held
        ]
        print(f"leave-out {held}: {rep}")
    coef = calfit.fit(rows, args.c, args.unanswerable_weight)
    print(f"refit (C {args.c:g}, unanswerable weight {args.unanswerable_weight:g}): {json.dumps(coef)}")
    print(f"all dev: {json.dumps(calfit.report(coef, rows, DEFAULT_THRESHOLD))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
