"""The calibration refitted with same-question twins in its labels (issue 21, seventeenth round; research: the
coefficients are printed, not written).

faq-val's KB is a forum FAQ with many entries that ask the same question in other words
(``bench/data/faq_val_same_question.tsv``, judged by annotators who read only the corpus). The shipped calibration
was fitted on rows where (a) an answerable search counts right only when its top entry is the gold (a twin of the
gold at the top counts wrong) and (b) an unanswerable search removes the gold only, its twins left in the KB. The
*twin-aware* labels here: (a) right when the top is the gold or a twin of it, (b) the unanswerable rows from the run
with the golds' twins removed too (``evaluate_shapes``' "unanswerable_twins"; ``self``, built on the sample KB, has
no twins and keeps its run).

Rows (``collect``, one JSON file per kind under ``--dir``), each the top hit of one search with the decision inputs
of ``calibration_heldout.features`` plus its gold, its top entry and both labels:

- ``dev-hybrid``: faq-val's dev half, every shape, searched without the query adapter (what ``hybrid`` is fitted on);
- ``dev-adapted``: the same, each searched with an adapter fitted on the other folds
  (``query_adapter_crossfit.cross_fitted``: what ``hybrid_adapted`` is fitted on, and the product's path on dev);
- ``heldout``: the blind sets RQ-RQ7 through the production search (typed messages; runs answerable, unanswerable,
  and unanswerable_twins from each set's ``same_question.tsv``). RQ8 is never read: it judges the round.

``fit`` refits by the shipped recipe (logistic regression, C 3, every (shape, run) group weighted equally,
unanswerable runs 0.8 in ``hybrid`` and 1.0 in ``hybrid_adapted``) on dev alone, ``keyword_gain`` kept at its shipped
weight (it was fitted alone, every other weight kept: ``keyword_gain_fit``), with strict or twin-aware labels, and
judges through the product's decision (``calibration_heldout.product_p``) each dev shape by a fit without it (on its
cross-fitted rows) and each blind set (unseen by every fit) at p >= 0.5: answered share, precision when answered
strict and twin-aware, false answers with one entry removed and with the twins removed too.

    PYTHONPATH=$PWD python -m bench.research.twin_calibration collect --dir /tmp/ret17-rows [--what dev-hybrid,...]
    PYTHONPATH=$PWD python -m bench.research.twin_calibration fit --dir /tmp/ret17-rows [--variants JSON] > fit.jsonl
    PYTHONPATH=$PWD python -m bench.research.twin_calibration markdown < fit.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from bench.bench_retrieval_heldout import HELD_OUT_SETS, load_held_out, load_twins
from bench.bench_retrieval_heldout import SHAPES as HELD_SHAPES
from bench.research import retrieval_calibration_fit as calfit
from bench.research.calibration_heldout import NINTH_ROUND, features, product_p
from bench.research.query_adapter_crossfit import cross_fitted
from bench.retrieval_shapes import (
    SHAPES,
    DiskCachedEmbedder,
    QueryOutcome,
    build_shapes,
    evaluate_shapes,
    load_twin_map,
    right_or_twin,
    run_queries,
    without,
)
from engine.retrieval import calibration
from engine.retrieval.calibration import ADAPTED_MODE, DEFAULT_THRESHOLD, FEATURES

# The blind sets read here: RQ8 judges the round and is never collected.
SETS = ("RQ", "RQ2", "RQ3", "RQ4", "RQ5", "RQ6", "RQ7")
KINDS = ("dev-hybrid", "dev-adapted", "heldout")
KEYWORD_GAIN = FEATURES.index("keyword_gain")


def _row(
    o: QueryOutcome, shape: str, run: str, twins: dict[str, set[str]], **extra: object
) -> dict[str, object]:
    return {
        **extra,
        "shape": shape,
        "run": run,
        "qid": o.query_id,
        "gold": o.gold,
        "top": o.top,
        "right": o.rank == 1,
        "right_twin": right_or_twin(o, twins),
        "features": o.features,
    }


def dev_rows(
    raw: dict[str, dict[str, list[QueryOutcome]]], twins: dict[str, set[str]]
) -> list[dict[str, object]]:
    return [
        _row(o, shape, run, twins)
        for shape, runs in raw.items()
        for run, outs in runs.items()
        for o in outs
        if o.features
    ]


async def heldout_rows() -> list[dict[str, object]]:
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    rows: list[dict[str, object]] = []
    for set_name in SETS:
        folder = HELD_OUT_SETS[set_name]
        answerable, unanswerable = load_held_out(folder)
        named = load_twins(folder)
        gone = {q.gold for q in unanswerable}
        for name in HELD_SHAPES:
            entries = built[name].entries
            runs = [
                ("answerable", entries, answerable),
                ("unanswerable", without(entries, gone), unanswerable),
                ("unanswerable_twins", without(entries, gone | named), unanswerable),
            ]
            for run, kb, qs in runs:
                outs = await run_queries(kb, qs, embedder, collect=features, query_adapter=True)
                rows += [_row(o, name, run, {}, set=set_name) for o in outs if o.features]
            print(f"{set_name} {name}", file=sys.stderr, flush=True)
    return rows


def collect(what: list[str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    twins = load_twin_map()
    for kind in what:
        if kind == "dev-hybrid":
            _, raw = asyncio.run(
                evaluate_shapes(
                    "dev", DEFAULT_THRESHOLD, collect=features, log=lambda s: print(s, file=sys.stderr)
                )
            )
            rows = dev_rows(raw, twins)
        elif kind == "dev-adapted":
            rows = dev_rows(cross_fitted(DiskCachedEmbedder(), features), twins)
        elif kind == "heldout":
            rows = asyncio.run(heldout_rows())
        else:
            raise SystemExit(f"unknown kind {kind}")
        (out / f"{kind}.json").write_text(json.dumps(rows))
        print(f"{kind}: {len(rows)} rows", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------- fit


def training_rows(rows: list[dict[str, object]], labels: str) -> list[dict[str, object]]:
    """The rows a fit reads, ``right`` set by ``labels``: "strict" (the shipped: the gold only; the unanswerable run
    with one entry removed) or "twins" (the gold or a twin; the unanswerable run with the twins removed too, on the
    shapes that have one); "twins_answerable" / "twins_unanswerable": one of the two changes alone."""
    if labels == "strict":
        return [r for r in rows if r["run"] in ("answerable", "unanswerable", "nodiac")]
    relabel = labels in (
        "twins",
        "twins_answerable",
    )  # a twin at the top of an answerable search counts right
    swap = labels in ("twins", "twins_unanswerable")  # the unanswerable run with the twins removed too
    has_twin_run = {str(r["shape"]) for r in rows if r["run"] == "unanswerable_twins"} if swap else set()
    out = []
    for r in rows:
        run = str(r["run"])
        if run == "unanswerable" and r["shape"] in has_twin_run:
            continue
        if run == "unanswerable_twins" and swap:
            out.append({**r, "run": "unanswerable"})
        elif run in ("answerable", "nodiac"):
            out.append({**r, "right": r["right_twin"]} if relabel else r)
        elif run == "unanswerable":
            out.append(r)
    return out


def fit_mode(rows: list[dict[str, object]], c: float, unanswerable: float, mode: str) -> tuple[float, ...]:
    """The recipe's logistic regression with ``keyword_gain`` left out and kept at its shipped weight."""
    x, y, w = calfit._matrix(rows, unanswerable)
    keep = [j for j in range(len(FEATURES)) if j != KEYWORD_GAIN]
    model = LogisticRegression(C=c, max_iter=5000).fit(x[:, keep], y, sample_weight=w)
    coef = [round(float(b), 3) for b in model.coef_[0]]
    coef.insert(KEYWORD_GAIN, calibration.COEFFICIENTS[mode][1 + KEYWORD_GAIN])
    return (round(float(model.intercept_[0]), 3), *coef)


def fit_variant(
    hy: list[dict[str, object]], ad: list[dict[str, object]], variant: dict[str, object]
) -> dict[str, tuple[float, ...]]:
    if variant.get("shipped"):
        return dict(NINTH_ROUND)
    labels = str(variant.get("labels", "strict"))
    c = float(variant.get("c", 3.0))
    return {
        "hybrid": fit_mode(training_rows(hy, labels), c, float(variant.get("u_hybrid", 0.8)), "hybrid"),
        ADAPTED_MODE: fit_mode(
            training_rows(ad, labels), c, float(variant.get("u_adapted", 1.0)), ADAPTED_MODE
        ),
    }


def judge(coefs: dict[str, tuple[float, ...]], rows: list[dict[str, object]]) -> dict[str, float]:
    """At p >= 0.5 through the product's decision: answered share, precision strict / twin-aware on the answerable
    run, false answers on the unanswerable runs (one entry removed / twins removed too)."""
    p = product_p(coefs, rows) >= DEFAULT_THRESHOLD
    ans = [i for i, r in enumerate(rows) if r["run"] == "answerable"]
    done = [i for i in ans if p[i]]
    out = {
        "n": len(ans),
        "answered": len(done) / max(1, len(ans)),
        "precision": float(np.mean([rows[i]["right"] for i in done])) if done else 0.0,
        "precision_twins": float(np.mean([rows[i]["right_twin"] for i in done])) if done else 0.0,
        "n_answered": len(done),
    }
    y = [bool(rows[i]["right"]) for i in ans]
    if 0 < sum(y) < len(y):  # separation of right from wrong tops among the answerable searches
        out["auc"] = float(roc_auc_score(y, product_p(coefs, [rows[i] for i in ans])))
    for run, key in (("unanswerable", "false"), ("unanswerable_twins", "false_twins")):
        idx = [i for i, r in enumerate(rows) if r["run"] == run]
        if idx:
            out[key] = float(np.mean(p[idx]))
            out[f"n_{key}"] = int(np.sum(p[idx]))
            out[f"n_{run}"] = len(idx)
    return out


VARIANTS = [
    {"name": "shipped", "shipped": True},
    {"name": "refit strict (the recipe)", "labels": "strict"},
    {"name": "refit twin-aware", "labels": "twins"},
]


def evaluate(rows: dict[str, list[dict[str, object]]], variant: dict[str, object]) -> dict[str, object]:
    """Each dev shape judged by a fit without it (on its cross-fitted rows), each blind set by the fit on all of dev."""
    hy, ad = rows["dev-hybrid"], rows["dev-adapted"]
    out: dict[str, object] = {"variant": variant}
    dev: dict[str, dict[str, float]] = {}
    for shape in SHAPES:
        coefs = fit_variant(
            [r for r in hy if r["shape"] != shape], [r for r in ad if r["shape"] != shape], variant
        )
        dev[shape] = judge(coefs, [r for r in ad if r["shape"] == shape])
    out["dev"] = dev
    coefs = fit_variant(hy, ad, variant)
    out["coefficients"] = coefs
    held = rows.get("heldout", [])
    sets: dict[str, dict[str, dict[str, float]]] = {}
    for s in dict.fromkeys(str(r["set"]) for r in held):
        per = {
            sh: judge(coefs, [r for r in held if r["set"] == s and r["shape"] == sh]) for sh in HELD_SHAPES
        }
        pooled = judge(coefs, [r for r in held if r["set"] == s])
        sets[s] = {**per, "all3": pooled}
    if held:
        sets["pooled"] = {sh: judge(coefs, [r for r in held if r["shape"] == sh]) for sh in HELD_SHAPES}
    out["sets"] = sets
    return out


def _cell(f: dict[str, float], twins: bool) -> str:
    parts = [f"{f['answered']:.3f}", f"{f['precision']:.3f}"]
    if twins:
        parts.append(f"{f['precision_twins']:.3f}")
    parts.append(f"{f.get('false', 0.0):.3f}")
    if "false_twins" in f:
        parts.append(f"{f['false_twins']:.3f}")
    return " / ".join(parts)


def markdown(lines: list[dict[str, object]]) -> str:
    """The dev table (each shape left out: answered / precision strict / twin-aware / false answers one removed /
    twins removed) and the blind sets' (answered / precision strict / false answers / with twins removed)."""
    out = []
    dev_shapes = list(lines[0]["dev"])  # type: ignore[arg-type]
    out.append("| variant | " + " | ".join(dev_shapes) + " |")
    out.append("| --- |" + " --- |" * len(dev_shapes))
    for line in lines:
        dev = line["dev"]  # type: ignore[index]
        out.append(
            f"| {line['variant']['name']} | " + " | ".join(_cell(dev[s], True) for s in dev_shapes) + " |"
        )  # type: ignore[index]
    for shape in (*HELD_SHAPES, "all3"):
        sets = [s for s in lines[0]["sets"] if shape in lines[0]["sets"][s]]  # type: ignore[index,operator]
        if not sets:
            continue
        out.append("")
        out.append(f"| {shape} | " + " | ".join(sets) + " |")
        out.append("| --- |" + " --- |" * len(sets))
        for line in lines:
            cells = [_cell(line["sets"][s][shape], False) for s in sets]  # type: ignore[index]
            out.append(f"| {line['variant']['name']} | " + " | ".join(cells) + " |")  # type: ignore[index]
    return "\n".join(out)


def load(out: Path) -> dict[str, list[dict[str, object]]]:
    return {
        kind: json.loads((out / f"{kind}.json").read_text())
        for kind in KINDS
        if (out / f"{kind}.json").is_file()
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("collect", "fit", "markdown"))
    ap.add_argument("--dir", type=Path, default=Path("/tmp/ret17-rows"))
    ap.add_argument("--what", default=",".join(KINDS))
    ap.add_argument("--variants", default="", help="JSON list of variants (default: VARIANTS)")
    args = ap.parse_args()
    if args.command == "collect":
        collect(args.what.split(","), args.dir)
        return 0
    if args.command == "markdown":  # the fit's output on stdin
        print(markdown([json.loads(line) for line in sys.stdin if line.strip()]))
        return 0
    rows = load(args.dir)
    for variant in json.loads(args.variants) if args.variants else VARIANTS:
        print(json.dumps(evaluate(rows, variant)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
