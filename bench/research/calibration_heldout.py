"""The calibration refitted with the blind held-out sets' messages as rows, chosen across sets (issue 21, tenth
round; research: the product's coefficients are printed, not written).

RQ and RQ2 (``bench/data/retrieval_heldout*``) were measured once each; like the triage's held-out sets once
measured, they may now be learnt from. Three kinds of rows, each the top hit of one search with the calibration
features of ``calibration.FEATURES`` plus, under ``_``-prefixed keys, what the product's decision also reads (the
message's length ``_words``, ``_adapted`` when the search used the query adapter and so ``hybrid_adapted`` decided
it, the raw leg scores ``_sparse`` / ``_dense`` and ``_unknown_words`` for the off-topic cap and the bare-subject
rule, ``_p`` the product's probability today):

- ``dev-hybrid``: faq-val's dev half, every shape, searched without the query adapter (the rows the ``hybrid`` set
  was fitted on, ``retrieval_calibration_fit.collect``);
- ``dev-adapted``: the same, searched with an adapter that never saw the message
  (``query_adapter_crossfit.cross_fitted``: the rows ``hybrid_adapted`` was fitted on);
- ``heldout``: RQ and RQ2 on the question-style shapes, through the production search (the shipped adapter never saw
  them), runs ``answerable`` (as typed), ``unanswerable`` (their entries removed), and on ``questions`` the same two
  with every mark removed (``nodiac`` / ``unanswerable_nodiac``); and once more without the adapter (``--no-adapter``
  rows, what ``hybrid`` alone would read on the long ones).

    PYTHONPATH=$PWD python -m bench.research.calibration_heldout collect [--what heldout,dev-hybrid,dev-adapted]
    PYTHONPATH=$PWD python -m bench.research.calibration_heldout fit [--variants JSON]  # the cross-set table
    PYTHONPATH=$PWD python -m bench.research.calibration_heldout final    # the chosen variant's coefficients

``fit`` judges each variant (``VARIANTS``; ``fit_variant`` for the keys) across sets: RQ by a fit on dev + RQ2, RQ2
by a fit on dev + RQ (held-out rows weighted ``held``; 0: dev alone, so both sets are unseen), each dev shape by a
fit without it, each at the product's threshold 0.5 through the product's decision (``product_p``: the set that
decided the search, the bare-subject floor, the off-topic cap). One JSON line per variant, cells answered /
precision when answered / false answers.

Eleventh round (``bench/retrieval_shapes_results.md``, "Eleventh round"): with RQ3 collected too, each blind set is
judged by a fit on faq-val dev + the other two (``loso``; ``fit_loso`` for the kinds: refits with the sets weighted
equally, ``set_weights``; Platt and isotonic maps of the ninth round's logit), with Brier and log-loss besides the
decision's figures (``judge``), and the choice itself is made without the judged set (``nested``):

    PYTHONPATH=$PWD python -m bench.research.calibration_heldout loso [--variants JSON] > loso.jsonl
    PYTHONPATH=$PWD python -m bench.research.calibration_heldout markdown < loso.jsonl  # the results table
    PYTHONPATH=$PWD python -m bench.research.calibration_heldout nested
    PYTHONPATH=$PWD python -m bench.research.calibration_heldout reliability  # the ninth round's, per set

Rows are written to ``--dir`` (default /tmp/ret10-rows), one JSON file per kind.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from bench.bench_retrieval_heldout import HELD_OUT_SETS, load_held_out
from bench.bench_retrieval_heldout import SHAPES as HELD_SHAPES
from bench.research import retrieval_calibration_fit as calfit
from bench.research.agreement_features import recording
from bench.research.query_adapter_crossfit import calibration_rows, cross_fitted
from bench.retrieval_shapes import DiskCachedEmbedder, build_shapes, run_queries, without
from engine.retrieval import calibration
from engine.retrieval.calibration import ADAPTED_MODE
from engine.retrieval.search import RankedHit, SearchResult

ROWS = Path("/tmp/ret10-rows")
# The blind sets rows are collected from and fitted on. RQ6 is not among them on purpose: it judges the fourteenth
# round (measured once by the lead at the merge), so no row of it is collected, fitted or looked at here (RQ5
# joined in the fourteenth round, after it had judged the thirteenth).
FIT_SETS = ("RQ", "RQ2", "RQ3", "RQ4", "RQ5")
# The sets shipped before the tenth round (the "shipped" and "keep_hybrid" variants), for the before/after table: the
# tenth round's were not shipped, so these are the product's own, read before ``product_p`` swaps any in.
# Written out since the twelfth round changed the product's (its features padded with zeros for the twelfth
# round's, ``NINTH_FEATURES`` being the ones the ninth round read).
NINTH_FEATURES = calibration.FEATURES[:11]
_NINTH = {
    "hybrid": (-6.753, 4.52, 4.685, -0.115, -0.067, -1.549, 10.873, 3.226, 3.146, -5.129, 0.636, 2.97),
    ADAPTED_MODE: (-7.381, 3.866, 5.648, -0.603, 0.088, -2.291, 15.61, 2.734, 3.445, -4.681, 0.611, 0.0),
}
NINTH_ROUND = {m: c + (0.0,) * (len(calibration.FEATURES) + 1 - len(c)) for m, c in _NINTH.items()}
# The twelfth round's candidate features as recorded (``separation_features``) -> the product's names.
RECORDED_AS = {
    "num_match": "x_num_match",
    "num_conflict": "x_num_conflict",
    "sparse_rank": "x_srank",
    "dense_rank": "x_drank",
    "entry_cov_gap": "x_ecov_gap",
    "query_cov_gap": "x_qcov_gap",
}
LONG = 20  # words: the query adapter's gate (``search.LEARNED_MIN_WORDS``), so the set that decides


def features(res: SearchResult) -> dict[str, float]:
    """The top hit's calibration features and the product's other decision inputs (``_``-prefixed)."""
    hit = res.hits[0] if res.hits else None
    if not isinstance(hit, RankedHit):
        return {}
    return {
        **hit.features,
        "_words": float(res.query_words),
        "_adapted": float(hit.coefficients == ADAPTED_MODE),
        "_sparse": float(hit.sparse_score),
        "_dense": float(hit.dense_score),
        "_unknown_words": float(res.unknown_words),
        "_p": float(hit.raw_score),
    }


async def collect_heldout(adapter: bool) -> list[dict[str, object]]:
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    rows: list[dict[str, object]] = []
    for set_name in FIT_SETS:
        answerable, unanswerable = load_held_out(HELD_OUT_SETS[set_name])
        for name in HELD_SHAPES:
            entries = built[name].entries
            removed = without(entries, {q.gold for q in unanswerable})
            runs = [
                ("answerable", entries, answerable, False),
                ("unanswerable", removed, unanswerable, False),
            ]
            if name == "questions":
                runs += [
                    ("nodiac", entries, answerable, True),
                    ("unanswerable_nodiac", removed, unanswerable, True),
                ]
            for run, kb, qs, strip in runs:
                outcomes = await run_queries(
                    kb, qs, embedder, strip=strip, collect=features, query_adapter=adapter
                )
                rows += [
                    {
                        "set": set_name,
                        "shape": name,
                        "run": run,
                        "right": o.rank == 1,
                        "qid": o.query_id,
                        "features": o.features,
                    }
                    for o in outcomes
                    if o.features
                ]
                print(
                    f"{set_name} {name}/{run} adapter={adapter}: {len(outcomes)}", file=sys.stderr, flush=True
                )
    return rows


def collect(what: list[str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    # the twelfth and fourteenth rounds' candidate features too, under x_ keys (the probability unchanged)
    with recording():
        _collect(what, out)


def _collect(what: list[str], out: Path) -> None:
    for kind in what:
        path = out / f"{kind}.json"
        if kind == "heldout":
            rows = asyncio.run(collect_heldout(adapter=True))
        elif kind == "heldout-noadapter":
            rows = asyncio.run(collect_heldout(adapter=False))
        elif kind == "dev-hybrid":
            rows = asyncio.run(calfit.collect("hybrid", features=features))  # the decision inputs too
        elif kind == "dev-adapted":
            rows = calibration_rows(cross_fitted(DiskCachedEmbedder(), features))
        else:
            raise SystemExit(f"unknown kind {kind}")
        path.write_text(json.dumps(rows))
        print(f"{kind}: {len(rows)} rows -> {path}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------- fit

SETS = FIT_SETS  # the blind sets a fit may read (RQ6, which judges the fourteenth round, is not one)
DEV_SHAPES = ("questions", "questions_kw", "noisy_kw", "answers_only", "full", "mix", "self")


def load(out: Path) -> dict[str, list[dict[str, object]]]:
    """Every kind of rows, held-out rows keyed by set: their fitting group is (set/shape, run)."""
    rows = {kind: json.loads((out / f"{kind}.json").read_text()) for kind in ("dev-hybrid", "dev-adapted")}
    for kind in ("heldout", "heldout-noadapter"):
        rows[kind] = json.loads((out / f"{kind}.json").read_text())
        for r in rows[kind]:
            r["group_shape"] = f"{r['set']}/{r['shape']}"
    for kind_rows in rows.values():  # rows recorded before the product had the twelfth round's features
        for r in kind_rows:
            f = r["features"]
            for name, recorded in RECORDED_AS.items():
                if name not in f and f:
                    f[name] = f.get(recorded, 0.0)
    return rows


def weights(
    rows: list[dict[str, object]], unanswerable: float, held: float, held_unans: str, wrong: float = 1.0
) -> np.ndarray:
    """Each (shape, run) group weighs the same (``retrieval_calibration_fit.row_weights``), unanswerable runs
    times ``unanswerable``, answerable searches whose top entry is wrong times ``wrong``; held-out groups times ``held``, and their unanswerable runs (60 messages against 400)
    either as a whole group ("group") or by their size relative to the set's answerable run ("size")."""
    groups = [(str(r.get("group_shape", r["shape"])), str(r["run"])) for r in rows]
    sizes: dict[tuple[str, str], int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    w = []
    for r, g in zip(rows, groups, strict=True):
        x = len(rows) / (len(sizes) * sizes[g])
        if g[1].startswith("unanswerable"):
            x *= unanswerable
        elif not r["right"]:
            x *= wrong
        if "set" in r:
            x *= held
            if held_unans == "size" and g[1].startswith("unanswerable"):
                x *= sizes[g] / sizes[(g[0], "answerable")]
        w.append(x)
    return np.array(w)


def fit_set(
    rows: list[dict[str, object]],
    c: float,
    unanswerable: float,
    held: float,
    held_unans: str,
    wrong: float = 1.0,
) -> tuple[float, ...]:
    x, y, _ = calfit._matrix(rows)
    model = LogisticRegression(C=c, max_iter=5000).fit(
        x, y, sample_weight=weights(rows, unanswerable, held, held_unans, wrong)
    )
    return (round(float(model.intercept_[0]), 3), *(round(float(b), 3) for b in model.coef_[0]))


def product_p(coefs: dict[str, tuple[float, ...]], rows: list[dict[str, object]]) -> np.ndarray:
    """The product's probability of each row's top hit (``calibration.probability``: the set that decided it,
    the bare-subject floor, the off-topic cap) with these coefficient sets in place of the shipped ones."""
    saved = dict(calibration.COEFFICIENTS)
    calibration.COEFFICIENTS.update(coefs)
    try:
        out = []
        for r in rows:
            f = r["features"]  # type: ignore[index]
            out.append(
                calibration.probability(
                    ADAPTED_MODE if f["_adapted"] else "hybrid",
                    f,
                    unknown_words=int(f["_unknown_words"]),
                    sparse=f["_sparse"],
                    dense=f["_dense"],
                    query_words=int(f["_words"]),
                )
            )
    finally:
        calibration.COEFFICIENTS.clear()
        calibration.COEFFICIENTS.update(saved)
    return np.array(out)


def figures(
    p: np.ndarray, rows: list[dict[str, object]], runs: tuple[str, str] = ("answerable", "unanswerable")
) -> dict[str, float]:
    """Answered share and precision on the answerable run, false answers on the unanswerable one."""
    idx = [i for i, r in enumerate(rows) if r["run"] == runs[0]]
    un = [i for i, r in enumerate(rows) if r["run"] == runs[1]]
    ans = [i for i in idx if p[i] >= calibration.DEFAULT_THRESHOLD]
    return {
        "answered": len(ans) / max(1, len(idx)),
        "precision": float(np.mean([rows[i]["right"] for i in ans])) if ans else 0.0,
        "false": float(np.mean([p[i] >= calibration.DEFAULT_THRESHOLD for i in un])) if un else 0.0,
        "n_ans": len(ans),
    }


def cell(f: dict[str, float]) -> str:
    return f"{f['answered']:.3f}/{f['precision']:.3f}/{f['false']:.3f}"


def fit_variant(
    rows: dict[str, list[dict[str, object]]],
    variant: dict[str, object],
    dev_keep: Callable[[dict[str, object]], bool] = lambda r: True,
    held_keep: Callable[[dict[str, object]], bool] = lambda r: True,
) -> dict[str, tuple[float, ...]]:
    """The ``hybrid`` and ``hybrid_adapted`` sets of one variant, fitted on the dev rows ``dev_keep`` keeps and the
    held-out rows ``held_keep`` keeps."""
    c = float(variant.get("c", 3.0))
    u_h = float(variant.get("u_hybrid", 0.8))
    u_a = float(variant.get("u_adapted", 1.0))
    held = float(variant.get("held", 1.0))
    how = str(variant.get("held_unans", "group"))
    h_rows = str(variant.get("hybrid_held_rows", "heldout-noadapter"))
    decided = bool(variant.get("decided_only", False))
    wrong = float(variant.get("wrong", 1.0))
    wrong_h = float(variant.get("wrong_hybrid", wrong))
    keep_hybrid = bool(variant.get("keep_hybrid", False))  # only hybrid_adapted refitted
    if variant.get("shipped"):
        return dict(NINTH_ROUND)
    hy = [r for r in rows["dev-hybrid"] if dev_keep(r)]
    ad = [r for r in rows["dev-adapted"] if dev_keep(r)]
    if held > 0:
        hy += [
            r for r in rows[h_rows] if held_keep(r) and (h_rows != "heldout" or not r["features"]["_adapted"])
        ]
        ad += [r for r in rows["heldout"] if held_keep(r)]
    if decided:  # each set fitted only on the messages it decides (by length)
        hy = [r for r in hy if r["features"]["_words"] < LONG]
        ad = [r for r in ad if r["features"]["_words"] >= LONG]
    hybrid = NINTH_ROUND["hybrid"] if keep_hybrid else fit_set(hy, c, u_h, held, how, wrong_h)
    return {"hybrid": hybrid, ADAPTED_MODE: fit_set(ad, c, u_a, held, how, wrong)}


def evaluate(rows: dict[str, list[dict[str, object]]], variant: dict[str, object]) -> dict[str, str]:
    """Cross-set figures of one variant: each held-out set judged by a fit on dev + the other set, each dev shape
    by a fit without it (+ both held-out sets)."""
    out: dict[str, str] = {}

    def fitted(dev_keep, held_keep) -> dict[str, tuple[float, ...]]:
        return fit_variant(rows, variant, dev_keep, held_keep)

    for s in SETS:
        coefs = fitted(lambda r: True, lambda r, s=s: r["set"] != s)
        test = [r for r in rows["heldout"] if r["set"] == s]
        p = product_p(coefs, test)
        for shape in HELD_SHAPES:
            idx = [i for i, r in enumerate(test) if r["shape"] == shape]
            sub = [test[i] for i in idx]
            out[f"{s} {shape}"] = cell(figures(p[idx], sub))
            if shape == "questions":
                out[f"{s} nodiac"] = cell(figures(p[idx], sub, ("nodiac", "unanswerable_nodiac")))
    for shape in DEV_SHAPES:
        coefs = fitted(lambda r, shape=shape: r["shape"] != shape, lambda r: True)
        test = [r for r in rows["dev-adapted"] if r["shape"] == shape]
        out[f"dev {shape}"] = cell(figures(product_p(coefs, test), test))
    return out


VARIANTS: list[dict[str, object]] = [
    {"name": "ninth round's coefficients (dev in sample)", "shipped": True},
    {"name": "dev only: the shipped recipe refitted (unanswerable 0.8 / 1.0)", "held": 0.0},
    {"name": "pooled: held-out groups as dev's", "held": 1.0},
    {"name": "pooled: held-out groups x0.5", "held": 0.5},
    {"name": "pooled: held-out unanswerables by their size", "held": 1.0, "held_unans": "size"},
    {
        "name": "pooled, each set on the lengths it decides, unanswerable 1.2 / 1.4",
        "held": 1.0,
        "decided_only": True,
        "hybrid_held_rows": "heldout",
        "u_hybrid": 1.2,
        "u_adapted": 1.4,
    },
    {"name": "dev only, unanswerable 1.2 / 1.4", "held": 0.0, "u_hybrid": 1.2, "u_adapted": 1.4},
    {"name": "dev only, unanswerable 1.6 / 1.8", "held": 0.0, "u_hybrid": 1.6, "u_adapted": 1.8},
    {"name": "dev only, wrong answers x2", "held": 0.0, "wrong": 2.0},
    {
        "name": "dev only, wrong x2, unanswerable 1.2 / 1.4",
        "held": 0.0,
        "wrong": 2.0,
        "u_hybrid": 1.2,
        "u_adapted": 1.4,
    },
    {
        "name": "pooled x0.5, wrong x2, unanswerable 1.2 / 1.4",
        "held": 0.5,
        "hybrid_held_rows": "heldout",
        "wrong": 2.0,
        "u_hybrid": 1.2,
        "u_adapted": 1.4,
    },
    {
        "name": "ninth round's hybrid, adapted refitted: wrong x2, unanswerable 1.4",
        "keep_hybrid": True,
        "held": 0.0,
        "wrong": 2.0,
        "u_adapted": 1.4,
    },
    {
        "name": "dev only, wrong x2, unanswerable 0.8 / 1.4 (chosen)",
        "held": 0.0,
        "wrong": 2.0,
        "u_adapted": 1.4,
    },
    {
        "name": "dev only, wrong x2 / x2.5, unanswerable 0.8 / 1.0",
        "held": 0.0,
        "wrong_hybrid": 2.0,
        "wrong": 2.5,
    },
]

CHOSEN = VARIANTS[-2]


# ------------------------------------------------------------------ eleventh round: leave one blind set out

# The features' length buckets (``short``: a chat line; the query adapter's gate decides the set above it).
SHORT_BUCKET = 16
PRIOR_UNANSWERABLE = 0.8


def _z(coef: tuple[float, ...], rows: list[dict[str, object]]) -> np.ndarray:
    x, _, _ = calfit._matrix(rows)
    return coef[0] + x @ np.array(coef[1:])


def _mode(r: dict[str, object]) -> str:
    return ADAPTED_MODE if r["features"]["_adapted"] else "hybrid"  # type: ignore[index]


def _short(r: dict[str, object]) -> float:
    return float(r["features"]["_words"] < SHORT_BUCKET)  # type: ignore[index]


def extra_value(r: dict[str, object], name: str) -> float:
    """A twelfth-round candidate feature of a row (``separation_features``; 0 when the row lacks it): a recorded
    ``x_`` key, or a derived one: ``sib`` (``x_own - x_rival``), ``num`` (``x_num_match - x_num_conflict``),
    ``rival_only`` (the rival's own words said and none of the candidate's), ``short`` (under ``SHORT_BUCKET``
    words), ``tiny`` (under 8 words); ``a*b`` multiplies two of them."""
    if "*" in name:
        a, b = name.split("*", 1)
        return extra_value(r, a) * extra_value(r, b)
    f = r["features"]  # type: ignore[index]
    if name == "sib":
        return float(f.get("x_own", 0.0) - f.get("x_rival", 0.0))
    if name == "num":
        return float(f.get("x_num_match", 0.0) - f.get("x_num_conflict", 0.0))
    if name == "rival_only":
        return float(f.get("x_rival", 0.0) > 0 and f.get("x_own", 0.0) == 0 and f.get("x_own_any", 0.0) > 0)
    if name == "short":
        return _short(r)
    if name == "tiny":
        return float(f["_words"] < 8)
    return float(f.get(name, 0.0))


def set_weights(
    rows: list[dict[str, object]], unanswerable: float, held: float, wrong: float = 1.0
) -> np.ndarray:
    """Fitting weights with every blind set counting the same: dev's (shape, run) groups each weigh the same (as
    ``retrieval_calibration_fit``); the blind sets together weigh ``held`` times dev's total, split equally among
    the sets in the fit, and inside a set each (shape, run) group the same. Unanswerable runs times
    ``unanswerable`` (dev's and the sets' alike), answerable searches with a wrong top entry times ``wrong``."""
    dev = [i for i, r in enumerate(rows) if "set" not in r]
    w = np.zeros(len(rows))
    total_dev = float(len(dev)) if dev else float(len(rows))
    parts: list[tuple[list[int], float]] = [(dev, total_dev)] if dev else []
    sets = sorted({str(r["set"]) for r in rows if "set" in r})
    for s in sets:
        parts.append(([i for i, r in enumerate(rows) if r.get("set") == s], held * total_dev / len(sets)))
    for idx, total in parts:
        groups: dict[tuple[str, str], list[int]] = {}
        for i in idx:
            groups.setdefault((str(rows[i]["shape"]), str(rows[i]["run"])), []).append(i)
        mult = {g: (unanswerable if g[1].startswith("unanswerable") else 1.0) for g in groups}
        norm = sum(mult.values())
        for g, members in groups.items():
            for i in members:
                x = total * mult[g] / norm / len(members)
                if not g[1].startswith("unanswerable") and not rows[i]["right"]:
                    x *= wrong
                w[i] = x
    return w


def fit_loso(
    rows: dict[str, list[dict[str, object]]], variant: dict[str, object], keep_sets: set[str]
) -> dict:
    """One variant fitted on faq-val dev and the blind sets in ``keep_sets``. Returns ``{"coefs": {mode:
    tuple}, "short": {mode: beta}, "iso": {mode: IsotonicRegression}}`` (the last two only for those variants).

    Kinds: ``refit`` (logistic regression of every feature, C ``c``, unanswerable ``u_hybrid`` / ``u_adapted``,
    the blind sets weighing ``held`` times dev, ``short``: a bucket feature for messages under ``SHORT_BUCKET``
    words); ``platt`` (``sigmoid(a + b * z)`` of the ninth round's logit ``z``, per set of coefficients, fitted on
    the blind sets' rows it decides, plus dev's when ``held`` is finite: the recalibrated coefficients are the
    ninth round's times b, the intercept a + b * b0); ``isotonic`` (the same rows, a monotone map of the
    product's probability; research only, it is no coefficient set)."""
    kind = str(variant.get("kind", "refit"))
    if kind == "shipped":
        return {"coefs": dict(NINTH_ROUND)}
    c = float(variant.get("c", 3.0))
    held = float(variant.get("held", 1.0))
    wrong = float(variant.get("wrong", 1.0))
    u = {"hybrid": float(variant.get("u_hybrid", 0.8)), ADAPTED_MODE: float(variant.get("u_adapted", 1.0))}
    held_rows = [r for r in rows["heldout"] if r["set"] in keep_sets]
    out: dict = {"coefs": {}, "short": {}, "iso": {}}
    for mode in ("hybrid", ADAPTED_MODE):
        if mode in variant.get("keep", ()):  # this set stays the ninth round's
            out["coefs"][mode] = NINTH_ROUND[mode]
            continue
        mine = [r for r in held_rows if _mode(r) == mode]
        if kind == "offset":
            # Twelfth round: the ninth round's logit kept (rescaled, ``sigmoid(a + b * z + sum(beta * extra))``)
            # and only the ``extra`` features' weights fitted, on the refit's rows and weights.
            dev = rows["dev-hybrid"] if mode == "hybrid" else rows["dev-adapted"]
            if variant.get("dev_drop"):
                dev = [r for r in dev if r["shape"] != variant["dev_drop"]]
            sets = rows["heldout-noadapter"] if mode == "hybrid" else rows["heldout"]
            fit_rows = list(dev) + ([r for r in sets if r["set"] in keep_sets] if held > 0 else [])
            base = NINTH_ROUND[mode]
            extra = list(variant.get("extra", ()))
            x = np.column_stack([_z(base, fit_rows), [[extra_value(r, n) for n in extra] for r in fit_rows]])
            y = np.array([bool(r["right"]) for r in fit_rows])
            model = LogisticRegression(C=c, max_iter=5000).fit(
                x, y, sample_weight=set_weights(fit_rows, u[mode], held, wrong)
            )
            a, b = float(model.intercept_[0]), float(model.coef_[0][0])
            out["coefs"][mode] = (a + b * base[0], *(b * v for v in base[1:]))
            out.setdefault("extra", {})[mode] = {
                name: float(beta) for name, beta in zip(extra, model.coef_[0][1:], strict=True)
            }
            continue
        if kind == "refit":
            # As the tenth round: ``hybrid`` on every search without the adapter, ``hybrid_adapted`` on every
            # search with one (dev cross-fitted, the sets through the shipped adapter).
            dev = (
                []
                if variant.get("no_dev")
                else rows["dev-hybrid"]
                if mode == "hybrid"
                else rows["dev-adapted"]
            )
            sets = rows["heldout-noadapter"] if mode == "hybrid" else rows["heldout"]
            if variant.get("dev_drop"):  # a dev shape left out (judged on it)
                dev = [r for r in dev if r["shape"] != variant["dev_drop"]]
            fit_rows = list(dev) + ([r for r in sets if r["set"] in keep_sets] if held > 0 else [])
            x, y, _ = calfit._matrix(fit_rows)
            x = x[:, : len(NINTH_FEATURES)]  # the ninth round's features, then ``extra``
            extra = list(variant.get("extra", ()))  # twelfth round: candidate features (``extra_value``)
            if extra:
                x = np.column_stack([x, [[extra_value(r, n) for n in extra] for r in fit_rows]])
            if variant.get("short"):
                x = np.column_stack([x, [_short(r) for r in fit_rows]])
            model = LogisticRegression(C=c, max_iter=5000).fit(
                x, y, sample_weight=set_weights(fit_rows, u[mode], held, wrong)
            )
            n = len(NINTH_FEATURES)
            pad = (0.0,) * (len(calibration.FEATURES) - n)
            out["coefs"][mode] = (float(model.intercept_[0]), *(float(b) for b in model.coef_[0][:n]), *pad)
            if extra:
                out.setdefault("extra", {})[mode] = {
                    name: float(b) for name, b in zip(extra, model.coef_[0][n : n + len(extra)], strict=True)
                }
            if variant.get("short"):
                out["short"][mode] = float(model.coef_[0][-1])
            continue
        base = NINTH_ROUND[mode]
        fit_rows = list(mine)
        if variant.get("with_dev"):
            fit_rows += rows["dev-hybrid"] if mode == "hybrid" else rows["dev-adapted"]
        y = np.array([bool(r["right"]) for r in fit_rows])
        w = set_weights(fit_rows, u[mode], held if variant.get("with_dev") else 1.0, wrong)
        if variant.get("natural"):  # the sets' own mix of answerable and unanswerable messages
            w = np.ones(len(fit_rows))
        if kind == "platt":
            z = _z(base, fit_rows)
            xs = np.column_stack([z, [_short(r) for r in fit_rows]]) if variant.get("short") else z[:, None]
            model = LogisticRegression(C=c, max_iter=5000).fit(xs, y, sample_weight=w)
            a, b = float(model.intercept_[0]), float(model.coef_[0][0])
            out["coefs"][mode] = (a + b * base[0], *(b * v for v in base[1:]))
            if variant.get("short"):
                out["short"][mode] = float(model.coef_[0][1])
        elif kind == "isotonic":
            out["coefs"][mode] = base
            p = product_p(dict(NINTH_ROUND), fit_rows)
            out["iso"][mode] = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(
                p, y, sample_weight=w
            )
        else:
            raise SystemExit(f"unknown kind {kind}")
    return out


def loso_p(fitted: dict, rows: list[dict[str, object]]) -> np.ndarray:
    """The product's probability (``product_p``) with a fitted variant, its short-bucket term added to the
    intercept of the messages under ``SHORT_BUCKET`` words, its isotonic map applied after the product's rules."""
    coefs = fitted["coefs"]
    short = fitted.get("short") or {}
    extra = fitted.get("extra") or {}
    if not short and not extra:
        p = product_p(coefs, rows)
    else:
        p = np.zeros(len(rows))
        for i, r in enumerate(rows):
            m = _mode(r)
            cf = coefs[m]
            shift = short.get(m, 0.0) * _short(r)
            shift += sum(b * extra_value(r, name) for name, b in extra.get(m, {}).items())
            cf = (cf[0] + shift, *cf[1:])
            p[i] = product_p({**coefs, m: cf}, [r])[0]
    iso = fitted.get("iso") or {}
    if iso:
        p = np.array(
            [iso[_mode(r)].predict([p[i]])[0] if _mode(r) in iso else p[i] for i, r in enumerate(rows)]
        )
    return p


def judge(p: np.ndarray, rows: list[dict[str, object]]) -> dict[str, float]:
    """A left-out set's figures over its three shapes (typed messages): answered share, precision when answered
    and false answers pooled over the shapes, the lowest precision and highest false-answer rate of one shape,
    Brier and log-loss over its answerable and unanswerable searches (p against "the top entry is right"), and
    the same answered / precision / false answers on the unmarked run of ``questions``."""
    res: dict[str, float] = {}
    typed = [i for i, r in enumerate(rows) if r["run"] in ("answerable", "unanswerable")]
    ans = [i for i in typed if rows[i]["run"] == "answerable"]
    un = [i for i in typed if rows[i]["run"] == "unanswerable"]
    took = [i for i in ans if p[i] >= calibration.DEFAULT_THRESHOLD]
    res["answered"] = len(took) / len(ans)
    res["precision"] = float(np.mean([rows[i]["right"] for i in took])) if took else 0.0
    res["false"] = float(np.mean([p[i] >= calibration.DEFAULT_THRESHOLD for i in un]))
    per = [
        figures(
            p[[i for i in typed if rows[i]["shape"] == s]], [rows[i] for i in typed if rows[i]["shape"] == s]
        )
        for s in HELD_SHAPES
    ]
    res["min_precision"] = min(f["precision"] for f in per)
    res["max_false"] = max(f["false"] for f in per)
    y = np.array([float(rows[i]["right"]) for i in typed])
    q = np.clip(p[typed], 1e-6, 1 - 1e-6)
    res["brier"] = float(np.mean((q - y) ** 2))
    res["logloss"] = float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))
    # The same with the prior the fits assume (``PRIOR_UNANSWERABLE``: the unanswerable run weighs 0.8 of the
    # answerable one) instead of the sets' 60 of 460: both are reported, neither is "the" base rate of a clinic.
    un_w = PRIOR_UNANSWERABLE * len(ans) / max(1, len(un))
    w = np.array([un_w if rows[i]["run"] == "unanswerable" else 1.0 for i in typed])
    res["brier_prior"] = float(np.sum(w * (q - y) ** 2) / np.sum(w))
    res["logloss_prior"] = float(-np.sum(w * (y * np.log(q) + (1 - y) * np.log(1 - q))) / np.sum(w))
    # Separation, whatever the operating point (diagnosis only): the AUC of p over the same searches, and the
    # answered share an oracle threshold chosen on the set itself would reach at precision 0.92.
    res["auc"] = float(roc_auc_score(y, q))
    qa, ya = p[ans], np.array([float(rows[i]["right"]) for i in ans])
    order = np.argsort(-qa)
    prec = np.cumsum(ya[order]) / np.arange(1, len(ans) + 1)
    ok = np.nonzero(prec >= 0.92)[0]
    res["answered_at_092"] = float((ok.max() + 1) / len(ans)) if len(ok) else 0.0
    nd = [i for i, r in enumerate(rows) if r["run"] in ("nodiac", "unanswerable_nodiac")]
    f = figures(p[nd], [rows[i] for i in nd], ("nodiac", "unanswerable_nodiac"))
    res["nodiac_answered"], res["nodiac_precision"], res["nodiac_false"] = (
        f["answered"],
        f["precision"],
        f["false"],
    )
    return res


def loso(rows: dict[str, list[dict[str, object]]], variant: dict[str, object]) -> dict[str, object]:
    """Each blind set judged by the variant fitted on dev + the other two (rounded figures per set)."""
    out: dict[str, object] = {}
    for s in SETS:
        fitted = fit_loso(rows, variant, {t for t in SETS if t != s})
        test = [r for r in rows["heldout"] if r["set"] == s]
        out[s] = {k: round(v, 4) for k, v in judge(loso_p(fitted, test), test).items()}
    return out


LOSO_VARIANTS: list[dict[str, object]] = [
    {"name": "ninth round (shipped)", "kind": "shipped"},
    {"name": "refit, dev only (the shipped recipe)", "held": 0.0},
    {"name": "refit, sets x0.5", "held": 0.5},
    {"name": "refit, sets x1", "held": 1.0},
    {"name": "refit, sets x2", "held": 2.0},
    {"name": "refit, sets x1, C 1", "held": 1.0, "c": 1.0},
    {"name": "refit, sets x1, C 10", "held": 1.0, "c": 10.0},
    {"name": "refit, sets x1, unanswerable 1.0 / 1.0", "held": 1.0, "u_hybrid": 1.0, "u_adapted": 1.0},
    {"name": "refit, sets x1, unanswerable 1.2 / 1.4", "held": 1.0, "u_hybrid": 1.2, "u_adapted": 1.4},
    {"name": "refit, sets x1, unanswerable 0.6 / 0.8", "held": 1.0, "u_hybrid": 0.6, "u_adapted": 0.8},
    {"name": "refit, sets x1, short bucket", "held": 1.0, "short": True},
    {"name": "refit, sets only (no dev rows)", "held": 1.0, "no_dev": True},
    {"name": "refit hybrid_adapted only, sets x1", "held": 1.0, "keep": ["hybrid"]},
    {
        "name": "refit hybrid_adapted only, sets x1, unanswerable 1.1",
        "held": 1.0,
        "u_adapted": 1.1,
        "keep": ["hybrid"],
    },
    {"name": "Platt, sets (the fits' prior)", "kind": "platt", "c": 100.0},
    {"name": "Platt, sets + dev", "kind": "platt", "c": 100.0, "with_dev": True},
    {"name": "Platt, sets, short bucket", "kind": "platt", "c": 100.0, "short": True},
    {"name": "Platt, sets' own mix", "kind": "platt", "c": 100.0, "natural": True},
    {"name": "isotonic, sets (the fits' prior)", "kind": "isotonic"},
    {"name": "isotonic, sets' own mix", "kind": "isotonic", "natural": True},
]


def nested(rows: dict[str, list[dict[str, object]]]) -> dict[str, object]:
    """The choice itself made without the judged set: for each set left out, every refit of a grid (sets x0.5 /
    1 / 2, unanswerable 0.8 / 1.0 / 1.2 for ``hybrid`` and 1.0-1.3 for ``hybrid_adapted``, or ``hybrid`` kept) is
    judged on each of the two other sets by a fit on dev + the third; the one that answers at least as much with
    precision at least and false answers at most the ninth round's on both, answering most, is chosen (else the
    ninth round's), fitted on dev + both and judged on the set left out."""

    def on(fitted: dict, s: str) -> dict[str, float]:
        test = [r for r in rows["heldout"] if r["set"] == s]
        return judge(loso_p(fitted, test), test)

    grid: list[dict[str, object]] = []
    for held, uh, ua, keep in itertools.product(
        (0.5, 1.0, 2.0), (0.8, 1.0, 1.2), (1.0, 1.1, 1.2, 1.3), (False, True)
    ):
        if not keep or uh == 0.8:
            grid.append({"held": held, "u_hybrid": uh, "u_adapted": ua, "keep": ["hybrid"] if keep else []})
    base = {s: on({"coefs": dict(NINTH_ROUND)}, s) for s in SETS}
    out: dict[str, object] = {}
    for outer in SETS:
        inner = [t for t in SETS if t != outer]
        winners = []
        for v in grid:
            got = {t: on(fit_loso(rows, v, {u for u in inner if u != t}), t) for t in inner}
            if all(
                got[t]["answered"] >= base[t]["answered"]
                and got[t]["precision"] >= base[t]["precision"]
                and got[t]["false"] <= base[t]["false"]
                for t in inner
            ):
                winners.append((sum(got[t]["answered"] for t in inner), v))
        choice = max(winners, key=lambda w: w[0])[1] if winners else {"kind": "shipped"}
        fig = on(fit_loso(rows, choice, set(inner)), outer)
        out[outer] = {"winners": len(winners), "choice": choice, **{k: round(v, 4) for k, v in fig.items()}}
    return out


def reliability(rows: dict[str, list[dict[str, object]]]) -> dict[str, list[str]]:
    """The ninth round's probability per bin on each set (typed messages, the three shapes): mean p, the share
    right with the unanswerable run weighing ``PRIOR_UNANSWERABLE`` of the answerable one (the fits' prior), and
    the share right in the sets' own mix (60 unanswerable of 460)."""
    out: dict[str, list[str]] = {}
    for s in SETS:
        test = [r for r in rows["heldout"] if r["set"] == s and r["run"] in ("answerable", "unanswerable")]
        p = product_p(dict(NINTH_ROUND), test)
        y = np.array([float(r["right"]) for r in test])
        n_ans = sum(r["run"] == "answerable" for r in test)
        un_w = PRIOR_UNANSWERABLE * n_ans / (len(test) - n_ans)
        w = np.array([un_w if r["run"] == "unanswerable" else 1.0 for r in test])
        out[s] = []
        for lo, hi in ((0.0, 0.1), (0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)):
            m = (p >= lo) & (p < hi)
            out[s].append(
                f"{lo:.1f}-{min(hi, 1.0):.1f}: n {int(m.sum())}, p {np.average(p[m], weights=w[m]):.2f}, right "
                f"{np.average(y[m], weights=w[m]):.2f} (prior) / {y[m].mean():.2f} (sets' mix)"
            )
    return out


def markdown(lines: list[dict[str, object]]) -> str:
    """The leave-one-set-out table: per set left out, answered / precision / false answers, Brier / log-loss."""
    head = "| variant | " + " | ".join(f"{s} left out" for s in SETS) + " |"
    out = [head, "| --- |" + " --- |" * len(SETS)]
    for d in lines:
        cells = []
        for s in SETS:
            f = d[s]  # type: ignore[index]
            cells.append(
                f"{f['answered']:.3f} / {f['precision']:.3f} / {f['false']:.3f} · {f['brier']:.3f} / {f['logloss']:.3f}"
            )
        out.append(f"| {d['variant']['name']} | " + " | ".join(cells) + " |")  # type: ignore[index]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "command", choices=("collect", "fit", "final", "loso", "nested", "markdown", "reliability")
    )
    ap.add_argument("--what", default="heldout,dev-hybrid,dev-adapted,heldout-noadapter")
    ap.add_argument("--dir", type=Path, default=ROWS)
    ap.add_argument("--variants", default="", help="a JSON list of variants (default: VARIANTS)")
    args = ap.parse_args()
    if args.command == "collect":
        collect(args.what.split(","), args.dir)
        return 0
    if args.command == "markdown":  # reads loso's JSON lines on stdin
        print(markdown([json.loads(line) for line in sys.stdin if line.strip()]))
        return 0
    rows = load(args.dir)
    if args.command == "reliability":
        print(json.dumps(reliability(rows), indent=1, ensure_ascii=False))
        return 0
    if args.command == "nested":
        print(json.dumps(nested(rows)))
        return 0
    if args.command == "loso":
        for variant in json.loads(args.variants) if args.variants else LOSO_VARIANTS:
            print(json.dumps({"variant": variant, **loso(rows, variant)}), flush=True)
        return 0
    if args.command == "final":
        print(json.dumps(fit_variant(rows, CHOSEN)))
        return 0
    for variant in json.loads(args.variants) if args.variants else VARIANTS:
        print(json.dumps({"variant": variant, **evaluate(rows, variant)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
