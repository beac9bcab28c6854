"""Twelfth round (issue 21): do the candidate separation features (``separation_features``) tell a right top entry
from a wrong one better, with each blind set of ``calibration_heldout.FIT_SETS`` left out in turn? Research.

Rows: ``python -m bench.research.calibration_heldout collect --dir /tmp/ret12-rows`` (records the ``x_`` features).
Each variant is a ``calibration_heldout.fit_loso`` refit (its ``extra`` features added as columns), fitted on faq-val
dev (+ ``self``) and three sets, judged on the fourth through the product's decision; the ninth round's shipped
coefficients are the baseline in every row. ``--dev``: each faq-val dev shape left out instead (fit on the other
shapes + the four sets), judged on its cross-fitted rows.

    PYTHONPATH=$PWD python -m bench.research.separation_fit [--dir DIR] [--variants JSON] [--dev]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from bench.research.calibration_heldout import (
    DEV_SHAPES,
    FIT_SETS,
    NINTH_ROUND,
    figures,
    fit_loso,
    judge,
    load,
    loso_p,
)

VARIANTS: list[dict[str, object]] = [
    {"name": "ninth round (shipped)", "kind": "shipped"},
    {"name": "refit, sets x1 (no new feature)", "held": 1.0},
    {"name": "+ sib", "held": 1.0, "extra": ["sib"]},
    {"name": "+ own, rival", "held": 1.0, "extra": ["x_own", "x_rival"]},
    {"name": "+ own, rival, any", "held": 1.0, "extra": ["x_own", "x_rival", "x_own_any", "x_rival_any"]},
    {"name": "+ num match/conflict", "held": 1.0, "extra": ["x_num_match", "x_num_conflict"]},
    {"name": "+ leg ranks", "held": 1.0, "extra": ["x_srank", "x_drank"]},
    {"name": "+ dense2", "held": 1.0, "extra": ["x_dense2"]},
    {"name": "+ cov gaps", "held": 1.0, "extra": ["x_ecov_gap", "x_qcov_gap"]},
    {"name": "+ sib, sib*short", "held": 1.0, "extra": ["sib", "sib*short"]},
    {
        "name": "+ all",
        "held": 1.0,
        "extra": [
            "x_own",
            "x_rival",
            "x_num_match",
            "x_num_conflict",
            "x_srank",
            "x_drank",
            "x_dense2",
            "x_ecov_gap",
            "x_qcov_gap",
        ],
    },
]


def auc_answerable(p: np.ndarray, rows: list[dict[str, object]]) -> float:
    """AUC of p for "the top entry is right" over the answerable (typed) searches only."""
    idx = [i for i, r in enumerate(rows) if r["run"] == "answerable"]
    y = np.array([bool(rows[i]["right"]) for i in idx])
    return float(roc_auc_score(y, p[idx]))


def by_set(rows: dict, variant: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for s in FIT_SETS:
        fitted = fit_loso(rows, variant, {t for t in FIT_SETS if t != s})
        test = [r for r in rows["heldout"] if r["set"] == s]
        p = loso_p(fitted, test)
        j = judge(p, test)
        j["auc_ans"] = auc_answerable(p, test)
        out[s] = {k: round(v, 4) for k, v in j.items()}
        if fitted.get("extra"):
            out[s]["extra"] = {m: {k: round(v, 3) for k, v in e.items()} for m, e in fitted["extra"].items()}
    return out


def by_dev_shape(rows: dict, variant: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for shape in DEV_SHAPES:
        v = dict(variant)
        if v.get("kind") != "shipped":
            v["dev_drop"] = shape
        fitted = (
            fit_loso(rows, v, set(FIT_SETS)) if v.get("kind") != "shipped" else {"coefs": dict(NINTH_ROUND)}
        )
        test = [r for r in rows["dev-adapted"] if r["shape"] == shape]
        p = loso_p(fitted, test)
        f = figures(p, test)
        f["auc_ans"] = auc_answerable(p, test)
        out[shape] = {k: round(float(x), 4) for k, x in f.items()}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/ret12-rows"))
    ap.add_argument("--variants", default="")
    ap.add_argument("--dev", action="store_true")
    args = ap.parse_args()
    rows = load(args.dir)
    for variant in json.loads(args.variants) if args.variants else VARIANTS:
        res = by_dev_shape(rows, variant) if args.dev else by_set(rows, variant)
        print(json.dumps({"variant": variant, **res}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
