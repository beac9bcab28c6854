"""Twelfth round (issue 21): do the candidate separation features (``separation_features``) tell a right top entry
from a wrong one better, with each blind set of ``calibration_heldout.FIT_SETS`` left out in turn? Research.

Rows: ``python -m bench.research.calibration_heldout collect --dir /tmp/ret12-rows`` (records the ``x_`` features).
Each variant is a ``calibration_heldout.fit_loso`` refit (its ``extra`` features added as columns), fitted on faq-val
dev (+ ``self``) and the other sets, judged on the one left out through the product's decision (four sets in the
twelfth round, RQ-RQ5 since the fourteenth: ``agreement_fit``); the ninth round's shipped coefficients are the
baseline in every row. ``--dev``: each faq-val dev shape left out instead (fit on the other shapes + every set),
judged on its cross-fitted rows.

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
    NINTH_FEATURES,
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


def nested(rows: dict, extra: list[str], kind: str = "offset") -> dict[str, object]:
    """The unanswerable weights chosen without the judged set: for each set left out, every (``u_hybrid``,
    ``u_adapted``) of a grid is judged on each of the three other sets by a fit on dev + the remaining two; the
    pair whose pooled false answers there are at most the ninth round's, with precision at least the ninth
    round's on each, answering most (pooled), is chosen, fitted on dev + the three and judged on the one left
    out."""
    grid = [(uh, ua) for uh in (0.8, 1.0, 1.2) for ua in (1.0, 1.1, 1.2, 1.3, 1.4)]

    def variant(uh: float, ua: float) -> dict[str, object]:
        v: dict[str, object] = {"held": 1.0, "u_hybrid": uh, "u_adapted": ua, "extra": extra}
        if kind == "offset":
            v.update(kind="offset", c=100.0)
        return v

    def on(fitted: dict, s: str) -> dict[str, float]:
        test = [r for r in rows["heldout"] if r["set"] == s]
        p = loso_p(fitted, test)
        return {**judge(p, test), "auc_ans": auc_answerable(p, test)}

    base = {s: on({"coefs": dict(NINTH_ROUND)}, s) for s in FIT_SETS}
    out: dict[str, object] = {}
    for outer in FIT_SETS:
        inner = [t for t in FIT_SETS if t != outer]
        best: tuple[float, tuple[float, float]] | None = None
        for uh, ua in grid:
            got = {t: on(fit_loso(rows, variant(uh, ua), {u for u in inner if u != t}), t) for t in inner}
            ok = (
                all(got[t]["precision"] >= base[t]["precision"] for t in inner)
                and sum(got[t]["false"] for t in inner) <= sum(base[t]["false"] for t in inner) + 1e-9
            )
            answered = sum(got[t]["answered"] for t in inner)
            if (
                ok
                and answered >= sum(base[t]["answered"] for t in inner)
                and (best is None or answered > best[0])
            ):
                best = (answered, (uh, ua))
        if best is None:
            out[outer] = {"choice": "ninth round", **{k: round(v, 4) for k, v in base[outer].items()}}
            continue
        fig = on(fit_loso(rows, variant(*best[1]), set(inner)), outer)
        out[outer] = {"choice": best[1], **{k: round(v, 4) for k, v in fig.items()}}
    return out


# The recorded ``x_`` features and the product's names for them (``calibration.FEATURES``).
PRODUCT_NAMES = {
    "x_num_match": "num_match",
    "x_num_conflict": "num_conflict",
    "x_srank": "sparse_rank",
    "x_drank": "dense_rank",
    "x_ecov_gap": "entry_cov_gap",
    "x_qcov_gap": "query_cov_gap",
}


def final(rows: dict, variant: dict[str, object]) -> dict[str, list[float]]:
    """The variant fitted on dev + every set of ``FIT_SETS``, as the product's coefficient tuples (intercept, then
    one per name of the ninth round's features followed by ``PRODUCT_NAMES``' in order), rounded to 3 digits."""
    fitted = fit_loso(rows, variant, set(FIT_SETS))
    out = {}
    for mode, coefs in fitted["coefs"].items():
        extra = (fitted.get("extra") or {}).get(mode, {})
        out[mode] = [round(float(v), 3) for v in coefs[: len(NINTH_FEATURES) + 1]] + [
            round(float(extra.get(x, 0.0)), 3) for x in PRODUCT_NAMES
        ]
    return out


def table(lines: list[dict[str, object]], keys: tuple[str, ...]) -> str:
    """Markdown: one row per variant, one cell per left-out set (or dev shape): AUC on answerable searches /
    answered / precision when answered / false answers (/ Brier for the sets)."""
    cols = [k for k in lines[0] if k != "variant"]
    out = [
        "| variant | " + " | ".join(f"{c} left out" for c in cols) + " |",
        "| --- |" + " --- |" * len(cols),
    ]
    for d in lines:
        cells = [" / ".join(f"{d[c][k]:.3f}" for k in keys if k in d[c]) for c in cols]  # type: ignore[index]
        out.append(f"| {d['variant']['name']} | " + " | ".join(cells) + " |")  # type: ignore[index]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/ret12-rows"))
    ap.add_argument("--variants", default="")
    ap.add_argument("--dev", action="store_true")
    ap.add_argument("--final", default="", help="a JSON variant: its coefficients fitted on dev + every set")
    ap.add_argument(
        "--nested", default="", help="a JSON list of extra features: the nested choice of weights"
    )
    ap.add_argument("--table", action="store_true", help="print the markdown table of JSON lines on stdin")
    args = ap.parse_args()
    if args.table:
        lines = [json.loads(x) for x in sys.stdin if x.strip()]
        print(table(lines, ("auc_ans", "answered", "precision", "false", "brier")))
        return 0
    rows = load(args.dir)
    if args.final:
        print(json.dumps(final(rows, json.loads(args.final))))
        return 0
    if args.nested:
        print(json.dumps(nested(rows, json.loads(args.nested))))
        return 0
    for variant in json.loads(args.variants) if args.variants else VARIANTS:
        res = by_dev_shape(rows, variant) if args.dev else by_set(rows, variant)
        print(json.dumps({"variant": variant, **res}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
