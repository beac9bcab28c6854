"""Answer groups: does a near-duplicate runner-up cost answers? (issue 21, ninth round; research, not the product.)

faq-val is a forum FAQ: many entries ask the same thing. Every margin feature of the calibration (``lead``,
the leg gaps, ``agree``) reads a runner-up that says what the top entry says as a rival, so the bot may
decline where either entry would have served. This script measures how often that happens and whether
calibration features computed over *answer groups* instead of entries answer more at the same precision.

Equivalence of two entries (``equivalent``): the cosine of their stored passage vectors (the vectors the KB
keeps for the dense leg, ``passage_text(question, answer)``), at least ``--cut``. It is computed from the KB
alone, never from the message, and means the same on any KB shape: two entries whose stored texts the
embedder reads as the same.

Rows: every shape's dev queries searched by ``KBSearch`` with an adapter that never saw the message
(``query_adapter_crossfit.cross_fitted``), answerable, unanswerable and unmarked runs, as round 8's
``calibration_features``; each row keeps the top ``TOP`` hits' codes and fused scores besides the top hit's
calibration features (``--rows``, searched when the file is missing).

    PYTHONPATH=$PWD python -m bench.research.answer_groups pairs  [--cut 0.975]  # step 1: how often, 30 pairs
    PYTHONPATH=$PWD python -m bench.research.answer_groups fit    [--cut 0.975]  # step 2: group features refitted
    PYTHONPATH=$PWD python -m bench.research.answer_groups heldout               # RQ's wrong answers, read once
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench.research import retrieval_calibration_fit as calfit
from bench.research.query_adapter_crossfit import calibration_rows, cross_fitted
from bench.retrieval_shapes import QUESTION_STYLE, SHAPES, DiskCachedEmbedder, build_shapes
from engine.embedding import passage_text
from engine.retrieval import search as search_module
from engine.retrieval.calibration import COEFFICIENTS, DEFAULT_THRESHOLD, FEATURES
from engine.retrieval.search import SearchResult

LONG = 20  # the adapter's (and hybrid_adapted's) message length
TOP = 10


class FusedScores:
    """The fused scores of the last search's ranked candidates (``search.candidate_features`` wrapped: it is
    handed the fused ranking), so that a row can keep the top hits' absolute fused scores."""

    def __init__(self) -> None:
        self.last: list[float] = []
        features = search_module.candidate_features

        def remember(index, ranked, i, entry, query, mode):  # type: ignore[no-untyped-def]
            if i == 0:
                self.last = [float(f.score) for f in ranked[:TOP]]
            return features(index, ranked, i, entry, query, mode)

        search_module.candidate_features = remember  # type: ignore[assignment]


FUSED: FusedScores | None = None


def collect(res: SearchResult) -> dict[str, object]:
    if not res.hits:
        return {}
    out: dict[str, object] = dict(getattr(res.hits[0], "features", {}) or {})
    out["_words"] = float(res.query_words)
    out["_codes"] = [h.entry.code for h in res.hits[:TOP]]
    out["_fused"] = list(FUSED.last) if FUSED is not None else []
    out["_sparse"] = [h.sparse_score for h in res.hits[:TOP]]
    out["_dense"] = [h.dense_score for h in res.hits[:TOP]]
    return out


def load_rows(path: Path) -> list[dict]:
    if not path.is_file():
        global FUSED
        FUSED = FusedScores()
        raw = cross_fitted(DiskCachedEmbedder(), collect)  # type: ignore[arg-type]
        gold = {
            (name, run, o.query_id): o.gold
            for name, runs in raw.items()
            for run, out in runs.items()
            for o in out
        }
        rows = calibration_rows(raw)
        keys = [
            (name, run, o.query_id)
            for name, runs in raw.items()
            for run, out in runs.items()
            for o in out
            if o.features
        ]
        for r, key in zip(rows, keys, strict=True):
            r["query_id"], r["_gold"] = key[2], gold[key]
        path.write_text(json.dumps(rows))
    return json.loads(path.read_text())


# ---------------------------------------------------------------------------------------- equivalence


class Equivalence:
    """Per shape, the stored passage vectors of every entry (and the gold of each query, to judge
    "equivalent" precision): ``cos(shape, a, b)``."""

    def __init__(self, embedder: DiskCachedEmbedder) -> None:
        self.shapes = build_shapes()
        self.vectors: dict[str, dict[str, np.ndarray]] = {}
        self.text: dict[str, dict[str, str]] = {}
        for name, shape in self.shapes.items():
            texts = [passage_text(e.question, e.answer) for e in shape.entries]
            v = embedder.passage_vectors(texts)
            v = v / np.linalg.norm(v, axis=1, keepdims=True)
            self.vectors[name] = {e.code: v[i] for i, e in enumerate(shape.entries)}
            self.text[name] = {e.code: texts[i] for i, e in enumerate(shape.entries)}

    def cos(self, shape: str, a: str, b: str) -> float:
        va, vb = self.vectors[shape].get(a), self.vectors[shape].get(b)
        return float(va @ vb) if va is not None and vb is not None else 0.0


# --------------------------------------------------------------------------------------- group features


def group_features(f: dict, shape: str, eq: Equivalence, cut: float) -> dict[str, float]:
    """The top entry's answer group among the top ``TOP`` hits (every hit equivalent to the top one):
    ``group_lead``, its fused score minus the first hit NOT in the group (the entry margin ``lead`` when the
    runner-up is not equivalent); ``group_share``, the group's share of the top hits' fused mass;
    ``group_size``, how many of the top hits the group holds; and ``group_sparse_gap`` / ``group_dense_gap``,
    the leg gaps to the best hit outside the group."""
    codes: list[str] = f.get("_codes", [])
    fused: list[float] = f.get("_fused", [])
    if not codes or len(fused) < len(codes):
        return {}
    same = [i == 0 or eq.cos(shape, codes[0], c) >= cut for i, c in enumerate(codes)]
    outside = [i for i, s in enumerate(same) if not s]
    first_out = outside[0] if outside else None
    lead = f.get("lead", 0.0)
    sp, de = f.get("_sparse", []), f.get("_dense", [])
    total = sum(max(0.0, x) for x in fused[: len(codes)])
    mass = sum(max(0.0, x) for x, s in zip(fused, same, strict=False) if s)
    out = {
        "group_lead": fused[0] - fused[first_out] if first_out is not None else max(lead, fused[0]),
        "group_share": mass / total if total > 0 else 1.0,
        "group_size": float(sum(same)),
        "sibling_second": float(len(same) > 1 and same[1]),
    }
    if first_out is not None and sp and de:
        out["group_sparse_gap"] = max(x for x, s in zip(sp, same, strict=False) if s) - max(
            sp[i] for i in outside
        )
        out["group_dense_gap"] = max(x for x, s in zip(de, same, strict=False) if s) - max(
            de[i] for i in outside
        )
    else:
        out["group_sparse_gap"] = f.get("sparse_gap", 0.0)
        out["group_dense_gap"] = f.get("dense_gap", 0.0)
    return out


# Variants: features added to ``hybrid_adapted`` (name: extra features, features replaced by the group ones).
VARIANTS: dict[str, tuple[list[str], dict[str, str]]] = {
    "refit, no new feature": ([], {}),
    "+ group_lead": (["group_lead"], {}),
    "+ group_share": (["group_share"], {}),
    "+ group_lead + group_share": (["group_lead", "group_share"], {}),
    "lead -> group_lead": ([], {"lead": "group_lead"}),
    "gaps -> group gaps": (
        [],
        {"lead": "group_lead", "sparse_gap": "group_sparse_gap", "dense_gap": "group_dense_gap"},
    ),
    "gaps -> group gaps + group_share": (
        ["group_share"],
        {"lead": "group_lead", "sparse_gap": "group_sparse_gap", "dense_gap": "group_dense_gap"},
    ),
    "+ sibling_second": (["sibling_second"], {}),
}


def matrix(rows: list[dict], extra: Sequence[str], swap: dict[str, str]) -> np.ndarray:
    return np.array(
        [
            [float(r["features"].get(swap.get(n, n), 0.0)) for n in FEATURES]
            + [float(r["features"].get(n, 0.0)) for n in extra]
            for r in rows
        ]
    )


def fit(
    rows: list[dict],
    extra: Sequence[str],
    swap: dict[str, str],
    c: float,
    unanswerable: float,
    equiv: bool = False,
) -> np.ndarray:
    """``equiv``: a top entry equivalent to the gold counts as right (also on the unanswerable run, where the
    gold is removed and an equivalent sibling stays)."""
    x = matrix(rows, extra, swap)
    y = np.array([bool(r["right"] or (equiv and r["_top_equiv"])) for r in rows])
    w = calfit.row_weights(rows, unanswerable, self_weight=1.0)
    model = LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=w)
    return np.concatenate([model.intercept_, model.coef_[0]])


def decide(rows: list[dict], extra: Sequence[str], swap: dict[str, str], coef: np.ndarray) -> np.ndarray:
    """The product's decision: the fitted set for 20+ words, today's ``hybrid`` for the others (neither the
    off-topic cap nor the bare-subject rule, which do not act on faq-val's long messages)."""
    long = 1 / (1 + np.exp(-(coef[0] + matrix(rows, extra, swap) @ coef[1:])))
    base = np.array(COEFFICIENTS["hybrid"])
    short = 1 / (1 + np.exp(-(base[0] + matrix(rows, [], {}) @ base[1:])))
    words = np.array([float(r["features"].get("_words", 0.0)) for r in rows])
    return np.where(words >= LONG, long, short)


def report(rows: list[dict], p: np.ndarray, shape: str) -> tuple[float, float, float, float, float]:
    """answered, precision strict, precision equivalent, false answers strict, false answers equivalent."""
    ans = [i for i, r in enumerate(rows) if r["shape"] == shape and r["run"] == "answerable"]
    un = [i for i, r in enumerate(rows) if r["shape"] == shape and r["run"] == "unanswerable"]
    said = [i for i in ans if p[i] >= DEFAULT_THRESHOLD]
    strict = float(np.mean([rows[i]["right"] for i in said])) if said else 0.0
    equiv = float(np.mean([rows[i]["right"] or rows[i]["_top_equiv"] for i in said])) if said else 0.0
    false = [i for i in un if p[i] >= DEFAULT_THRESHOLD]
    return (
        len(said) / max(1, len(ans)),
        strict,
        equiv,
        len(false) / max(1, len(un)),
        sum(not rows[i]["_top_equiv"] for i in false) / max(1, len(un)),
    )


def paired(rows: list[dict], before: np.ndarray, after: np.ndarray) -> str:
    """Messages answered by one decision and not the other, by outcome (strict)."""
    t = DEFAULT_THRESHOLD
    ans = [i for i, r in enumerate(rows) if r["run"] == "answerable"]
    un = [i for i, r in enumerate(rows) if r["run"] == "unanswerable"]

    def count(idx: list[int], right: bool | None, gained: bool) -> int:
        return sum(
            (after[i] >= t) != (before[i] >= t)
            and (after[i] >= t) == gained
            and (right is None or bool(rows[i]["right"]) == right)
            for i in idx
        )

    return (
        f"+{count(ans, True, True)}/-{count(ans, True, False)}/+{count(ans, False, True)}/-{count(ans, False, False)}"
        f"; +{count(un, None, True)}/-{count(un, None, False)}"
    )


def cell(x: tuple[float, ...]) -> str:
    return f"{x[0]:.3f}/{x[1]:.3f}/{x[3]:.3f} (eq {x[2]:.3f}/{x[4]:.3f})"


# ----------------------------------------------------------------------------------------------- main


def prepare(rows: list[dict], eq: Equivalence, cut: float) -> None:
    for r in rows:
        f = r["features"]
        f.update(group_features(f, r["shape"], eq, cut))
        codes = f.get("_codes", [])
        r["_top_equiv"] = bool(codes) and eq.cos(r["shape"], codes[0], r["_gold"]) >= cut


def pairs(rows: list[dict], eq: Equivalence, cut: float, read: int, seed: int) -> None:
    """Step 1: how often the top two (top five) hits are equivalent, per shape and run; ``read`` pairs at the
    cut printed for reading (top entry, runner-up, their cosine)."""
    print(f"cut {cut}: share of searches whose runner-up (any of hits 2-5) is equivalent to the top hit")
    for shape in SHAPES:
        for run in ("answerable", "unanswerable"):
            sel = [r for r in rows if r["shape"] == shape and r["run"] == run and r["features"].get("_codes")]
            if not sel:
                continue
            two = np.mean([r["features"]["sibling_second"] for r in sel])
            five = np.mean(
                [
                    r["features"]["group_size"] > 1
                    and any(
                        eq.cos(shape, r["features"]["_codes"][0], c) >= cut
                        for c in r["features"]["_codes"][1:5]
                    )
                    for r in sel
                ]
            )
            gold_sib = np.mean([r["_top_equiv"] and not r["right"] for r in sel])
            print(
                f"  {shape}/{run}: n {len(sel)}, 2nd equivalent {two:.3f}, any of top 5 {five:.3f}, "
                f"top wrong but equivalent to the gold {gold_sib:.3f}"
            )
    # The mechanism's ceiling: with the shipped decision, the declined searches whose runner-up is equivalent to
    # the top entry; answering all of them, how many are right (strict / equivalent), how many unanswerable
    # searches would be answered too.
    p = decide(rows, [], {}, np.array(COEFFICIENTS["hybrid_adapted"]))
    print(
        "ceiling (shipped decision): declined with an equivalent runner-up -> right strict / equivalent; "
        "unanswerable declined with one; P(top right) with / without an equivalent runner-up"
    )
    for shape in SHAPES:
        a = [i for i, r in enumerate(rows) if r["shape"] == shape and r["run"] == "answerable"]
        u = [i for i, r in enumerate(rows) if r["shape"] == shape and r["run"] == "unanswerable"]
        sib = [i for i in a if rows[i]["features"].get("sibling_second")]
        low = [i for i in sib if p[i] < DEFAULT_THRESHOLD]
        u_low = [i for i in u if rows[i]["features"].get("sibling_second") and p[i] < DEFAULT_THRESHOLD]
        with_sib = np.mean([rows[i]["right"] for i in sib]) if sib else 0.0
        without = np.mean([rows[i]["right"] for i in a if i not in set(sib)])
        print(
            f"  {shape}: {len(low)} of {len(a)} declined with one -> {sum(rows[i]['right'] for i in low)} / "
            f"{sum(rows[i]['right'] or rows[i]['_top_equiv'] for i in low)} right; unanswerable {len(u_low)} of "
            f"{len(u)}; P(right) {with_sib:.3f} with (n {len(sib)}) / {without:.3f} without"
        )
    cosines = []
    for r in rows:
        codes = r["features"].get("_codes", [])
        if r["run"] == "answerable" and len(codes) > 1:
            cosines.append(eq.cos(r["shape"], codes[0], codes[1]))
    print(
        "quantiles of the top-two cosine (answerable):",
        np.round(np.quantile(cosines, [0.5, 0.75, 0.9, 0.95, 0.99]), 3),
    )
    # pairs to read: question-style, top two, cosine just at or above the cut (the hardest to call)
    pool = []
    for r in rows:
        codes = r["features"].get("_codes", [])
        if r["shape"] == "questions" and r["run"] == "answerable" and len(codes) > 1:
            c = eq.cos("questions", codes[0], codes[1])
            if c >= cut:
                pool.append((c, codes[0], codes[1]))
    pool = sorted(set(pool))
    random.Random(seed).shuffle(pool)
    for c, a, b in sorted(pool[:read]):
        print(f"{c:.3f} | {eq.text['questions'][a]} | {eq.text['questions'][b]}")


def heldout_wrong(eq: Equivalence, shape: str = "questions_kw") -> None:
    """After the round's choices and the one measurement of RQ only: its answered-wrong messages on ``shape`` and
    its false answers on the unanswerable ones, each with the top entry's cosine to the gold (the equivalence
    measure), the gold's rank and the message's length, to be read by mechanism."""
    import asyncio

    from bench.bench_retrieval_heldout import load_held_out
    from bench.retrieval_shapes import run_queries, without

    answerable, unanswerable = load_held_out()
    entries = eq.shapes[shape].entries
    embedder = DiskCachedEmbedder()
    texts = {q.query_id: q.text for q in answerable + unanswerable}
    for run, queries, kb in (
        ("answered wrong", answerable, entries),
        ("false answer", unanswerable, without(entries, {q.gold for q in unanswerable})),
    ):
        out = asyncio.run(run_queries(kb, queries, embedder, query_adapter=True))
        wrong = [o for o in out if o.top and o.score >= DEFAULT_THRESHOLD and o.rank != 1]
        print(f"{shape}, {run}: {len(wrong)} of {len(out)}")
        for o in wrong:
            words = len(texts[o.query_id].split())
            print(
                f"  {o.query_id} p {o.score:.2f} gold rank {o.rank} cos {eq.cos(shape, o.top, o.gold):.3f} "
                f"{words} words\n    message: {texts[o.query_id]}\n    gold: {eq.text[shape][o.gold][:150]}"
                f"\n    top:  {eq.text[shape][o.top][:150]}"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=("collect", "pairs", "fit", "heldout"))
    ap.add_argument("--rows", type=Path, default=Path("/tmp/answer-group-rows.json"))
    ap.add_argument("--cut", type=float, default=0.975)  # read: 24 of 30 pairs interchangeable (0.95: 12)
    ap.add_argument("--read", type=int, default=30)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--c", type=float, default=3.0)
    ap.add_argument("--unanswerable-weight", type=float, default=1.0)
    ap.add_argument("--variants", default="", help="';'-separated names of VARIANTS (default all)")
    ap.add_argument(
        "--equivalent-labels", action="store_true", help="fit with an equivalent top counted right"
    )
    args = ap.parse_args()
    rows = load_rows(args.rows)
    if args.step == "collect":
        return 0
    eq = Equivalence(DiskCachedEmbedder())
    prepare(rows, eq, args.cut)
    if args.step == "heldout":
        heldout_wrong(eq)
        return 0
    if args.step == "pairs":
        pairs(rows, eq, args.cut, args.read, args.seed)
        return 0
    shapes = [s for s in SHAPES if any(r["shape"] == s for r in rows)]
    names = args.variants.split(";") if args.variants else list(VARIANTS)
    print(
        "cells: answered / strict precision / strict false answers (eq: equivalent precision / false answers)"
    )
    shipped = np.array(COEFFICIENTS["hybrid_adapted"])
    p = decide(rows, [], {}, shipped)
    print("shipped | in sample | " + " | ".join(f"{s} {cell(report(rows, p, s))}" for s in shapes))
    for name in names:
        extra, swap = VARIANTS[name]
        loo, moved = [], []
        for held in shapes:
            train = [r for r in rows if r["shape"] != held]
            held_rows = [r for r in rows if r["shape"] == held]
            coef = fit(train, extra, swap, args.c, args.unanswerable_weight, args.equivalent_labels)
            p_held = decide(held_rows, extra, swap, coef)
            loo.append(f"{held} {cell(report(held_rows, p_held, held))}")
            base = decide(held_rows, [], {}, fit(train, [], {}, args.c, args.unanswerable_weight))
            moved.append(f"{held} {paired(held_rows, base, p_held)}")
        print(f"{name} | left out | " + " | ".join(loo))
        q = [float(x.split()[1].split("/")[0]) for x in loo if x.split()[0] in QUESTION_STYLE]
        print(f"    question-style answered (mean of left-out) {np.mean(q):.3f}")
        print(
            "    against the refit without group features (answerable run: +right/-right/+wrong/-wrong; "
            "unanswerable: +false/-false): " + " | ".join(moved)
        )
        coef = fit(rows, extra, swap, args.c, args.unanswerable_weight)
        print(f"    all-dev coefficients: {np.round(coef, 3).tolist()}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
