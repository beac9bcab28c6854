"""Retrieval on several KB shapes (issue 21): P@1, MRR@10, hit@10, answered share, precision when answered
and false answers on unanswerable queries per shape, on the TEST half of faq-val (see
``bench/retrieval_shapes.py`` for the shapes and the split), at the default answer threshold.

Prints a table and writes bench/results/retrieval_shapes.json. Skipped when faq-val is not there. The first
run embeds ~17k texts (minutes on a small machine; cached under .medbot/eval-cache afterwards).

``--per-kb``: also the per-KB re-estimation of the calibration (``engine/retrieval/adaptation.py``): each
shape's KB is treated as a role and re-estimated from itself (its self-supervised rows, cached by
``bench/research/retrieval_adaptation_reference.py``), and the same searches are decided with and without
its adjustment (answered share, precision when answered, false answers on unanswerables).

    python -m bench retrieval_shapes            # what `make bench` runs
    python -m bench.bench_retrieval_shapes --split dev --threshold 0.6
    python -m bench.bench_retrieval_shapes --per-kb
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import sys
from pathlib import Path

from bench.research.retrieval_adaptation_reference import all_rows
from bench.retrieval_shapes import (
    DATA,
    SHAPES,
    QueryOutcome,
    add_query_adapter_option,
    evaluate_shapes,
    false_answer_rate,
    format_table,
    ranking_metrics,
)
from engine.retrieval import adaptation
from engine.retrieval.calibration import ADAPTED_MODE, DEFAULT_THRESHOLD, probability
from engine.retrieval.search import SearchResult


def decision_inputs(res: SearchResult) -> dict[str, float]:
    """What the probability of the top entry was computed from, to decide again with another adjustment."""
    if not res.hits:
        return {}
    top = res.hits[0]
    return {
        **dict(getattr(top, "features", {}) or {}),
        "_unknown": res.unknown_words,
        "_words": res.query_words,
        "_sparse": top.sparse_score,
        "_dense": top.dense_score,
        "_hybrid": float(res.mode == "hybrid"),
        # decided by the query adapter's own coefficient set (a long message's adapted search)
        "_adapted": float(getattr(top, "coefficients", "") == ADAPTED_MODE),
    }


def rescored(outcomes: list[QueryOutcome], cal: adaptation.RoleCalibration) -> list[QueryOutcome]:
    out = []
    for o in outcomes:
        f = o.features
        if not f:
            out.append(o)
            continue
        mode = "hybrid" if f["_hybrid"] else "sparse"
        feats = {k: v for k, v in f.items() if not k.startswith("_")}
        # as KBSearch: the role's adjustment of the search's mode, on the coefficient set that decided it
        p = probability(
            ADAPTED_MODE if f.get("_adapted") else mode,
            feats,
            unknown_words=int(f["_unknown"]),
            sparse=f["_sparse"],
            dense=f["_dense"],
            query_words=int(f["_words"]),
            adjust=cal.for_mode(mode, cal.embedding_model),
        )
        out.append(QueryOutcome(o.query_id, o.gold, o.rank, p, o.top, f))
    return out


def per_kb(
    raw: dict[str, dict[str, list[QueryOutcome]]], threshold: float, prior: float
) -> dict[str, dict[str, float]]:
    """Per shape: the decision with the global calibration and with the shape's own re-estimation."""
    rows = asyncio.run(all_rows(tuple(raw)))
    reference = adaptation.load_reference()
    table: dict[str, dict[str, float]] = {}
    for name, runs in raw.items():
        # every shape's KB has at least 166 entries: the size gate never applies here
        cal = adaptation.estimate(
            name, "", rows[name], n_entries=166, reference=reference, prior_weight=prior
        )
        row: dict[str, float] = {}
        for label, outs in (("global", runs), ("per_kb", {k: rescored(v, cal) for k, v in runs.items()})):
            m = ranking_metrics(outs["answerable"], threshold)
            row[f"{label}_answered"] = m["answered"]
            row[f"{label}_precision"] = m["precision_answered"]
            row[f"{label}_false"] = false_answer_rate(outs["unanswerable"], threshold)
        for mode, adj in cal.params.items():
            row[f"{mode}_a"], row[f"{mode}_b"] = round(adj.a, 3), round(adj.b, 3)
        table[name] = row
    return table


def format_per_kb(table: dict[str, dict[str, float]]) -> str:
    head = (
        f"{'shape':<14}"
        + "".join(f"{h:>22}" for h in ("answered", "precision answered", "false answers"))
        + f"{'hybrid a / b':>16}"
    )
    lines = [head, f"{'':<14}" + f"{'global -> per-KB':>22}" * 3]
    for name, r in table.items():
        cells = "".join(
            f"{r[f'global_{k}']:>12.3f} -> {r[f'per_kb_{k}']:.3f}" for k in ("answered", "precision", "false")
        )
        lines.append(f"{name:<14}{cells}{r.get('hybrid_a', 1):>9.2f} / {r.get('hybrid_b', 0):+.2f}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test"), default="test")
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--per-kb", action="store_true", help="also the per-KB re-estimation (see above)")
    ap.add_argument(
        "--outcomes",
        type=Path,
        help="with --per-kb: pickle of the searches' outcomes, read when it exists (deciding again with other "
        "settings searches nothing), written otherwise",
    )
    add_query_adapter_option(ap)
    ap.add_argument("--prior", type=float, default=adaptation.PRIOR_WEIGHT, help="its shrinkage, in rows")
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "retrieval_shapes.json"
    )
    args = ap.parse_args(sys.argv[1:])
    if not (DATA / "corpus.jsonl").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    if args.outcomes and args.outcomes.is_file():
        table, raw = pickle.loads(args.outcomes.read_bytes())
    else:
        table, raw = asyncio.run(
            evaluate_shapes(
                args.split,
                args.threshold,
                shapes=args.shapes.split(","),
                log=lambda m: print(m, file=sys.stderr),
                collect=decision_inputs if args.per_kb else None,
                query_adapter=args.query_adapter,
            )
        )
        if args.outcomes:
            args.outcomes.write_bytes(pickle.dumps((table, raw)))
    print(f"split={args.split} threshold={args.threshold}")
    print(format_table(table))
    result: dict[str, object] = {
        "split": args.split,
        "threshold": args.threshold,
        "query_adapter": args.query_adapter,
        "shapes": table,
    }
    if args.per_kb:
        adapted = per_kb(raw, args.threshold, args.prior)
        print(f"\nper-KB re-estimation of the calibration (prior {args.prior:g} rows)")
        print(format_per_kb(adapted))
        result["per_kb"] = adapted
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
