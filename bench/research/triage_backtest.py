"""Backtest of triage's second opinion on every blind pair measured so far: how to choose the model and its threshold.

Each round froze the rules and model at a commit and measured the next pair of blind sets once there (docs/triage.md).
The pairs are now dev sets, but what the rules *at each freeze* made of them is still exactly recoverable: this script
checks each freeze commit out in a temporary git worktree, runs its rules on its pair (and on faq-val), and keeps,
per message, whether the rules flagged it and whether the model would be asked (rules silent, not a general question).
Then it fits the *current* model code on the training data *as it was at that freeze* (read with ``git show``) and
scores the pair with it. So every figure is on messages the model never learnt from and rules never tuned on, over
17 freezes and 35 blind sets (24,000+ messages), instead of the one pair a round spends.

The product's verdict at threshold t is: rules, or (model asked and P >= t); "a/b" is threshold a, or b when the
rules spoke of a category and set it aside (negated, past, mild, excluded). Printed per variant and threshold:
recall, emergencies the model rescued of those the rules missed, false alarms on the pairs' ordinary messages, and
how many of faq-val's 1,326 real forum messages would be flagged (summed over freezes).

``--embeddings`` adds variants over multilingual-e5-small sentence vectors (the product's own embedder, run locally):
a logistic regression on the vectors alone, the mean and the max of its probability with the TF-IDF model's, and one
regression over TF-IDF features and vectors together. Embedding the 37,000 texts takes 15-25 minutes on 2 cores.

    python -m bench.research.triage_backtest [--embeddings] [--thresholds 0.7,0.75,0.8,0.85,0.9]

Results: printed, and written to ``bench/results/triage_backtest.json``. Per-freeze work is cached in
``.medbot/eval-cache/triage-backtest/`` (delete it to start over).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from engine.embedding import LlamaCppEmbedder
from engine.textmodel import LinearTextModel
from engine.triage import DOUBT_MIN_WORDS, NEVER_DOUBTED, default_rules
from engine.triage.augment import augmented
from engine.triage.evaluation import load_labelled
from engine.triage.model import AUGMENT, TOL, C
from engine.triage.normalize import normalize

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".medbot" / "eval-cache" / "triage-backtest"
RESULTS = ROOT / "bench" / "results" / "triage_backtest.json"
FAQ_VAL = ROOT.parent / "shared" / "eval" / "faq-val" / "queries.jsonl"
# (freeze commit, the blind pair measured once there: their files now)
FREEZES = [
    ("9f46c17", ["dev17", "dev18"]),
    ("ffa4af4", ["dev19", "dev20"]),
    ("6c46241", ["dev21", "dev22"]),
    ("6f52c53", ["dev23", "dev24"]),
    ("5f8f2e7", ["dev25", "dev26"]),
    ("963ea90", ["dev27", "dev28"]),
    ("540c506", ["dev29", "dev30"]),
    ("7987cc8", ["dev31", "dev32"]),
    ("390bedf", ["dev33", "dev34"]),
    ("c811995", ["dev35", "dev36"]),
    ("9012c40", ["dev37", "dev38"]),
    ("297c41d", ["dev39", "dev40"]),
    ("63d4b56", ["dev41", "dev42"]),
    ("221815c", ["dev43", "dev44"]),
    ("6e279cc", ["dev45", "dev46"]),
    ("aa52924", ["dev47", "dev48", "dev49", "dev50"]),
    ("74e4ce0", ["dev51", "dev52"]),
    ("8551619", ["dev53", "dev54", "dev55", "dev56"]),
    ("7a8fb21", ["dev57", "dev58"]),
    ("6713972", ["dev59", "dev60"]),
    ("a4e5f3a", ["dev61", "dev62"]),
    ("961ba9e", ["dev63", "dev64"]),
    ("adce391", ["dev65", "dev66"]),
    ("cb9d4e2", ["dev67", "dev68"]),
    ("b9de2fc", ["dev69", "dev70"]),
    ("dca1f11", ["dev71", "dev72"]),
    ("dc1e034", ["dev73", "dev74"]),
    ("a5675ef", ["dev75", "dev76", "dev77", "dev78"]),
    ("ba25799", ["dev79", "dev80"]),
    ("2635803", ["dev81", "dev82"]),
    ("aab700b", ["dev83", "dev84", "dev85", "dev86"]),
    ("0be8e99", ["dev87", "dev88", "dev89", "dev90"]),
    ("734e560", ["dev91", "dev92", "dev93", "dev94"]),
    ("f860529", ["dev95", "dev96", "dev97", "dev98", "dev99", "dev100", "dev101", "dev102"]),
    ("e54a414", ["dev103", "dev104", "dev105", "dev106"]),
    ("7fa6389", ["dev107", "dev108", "dev109", "dev110"]),
    ("6e6056d", ["dev111", "dev112", "dev113", "dev114"]),
    ("7b029ca", ["dev115", "dev116", "dev117", "dev118"]),
    ("3ec1157", ["dev119", "dev120", "dev121", "dev122"]),
    ("53e66a0", ["dev123", "dev124", "dev125", "dev126"]),
    ("3496066", ["dev127", "dev128", "dev129", "dev130"]),
    ("ff5fbf1", ["dev131", "dev132", "dev133", "dev134"]),
    ("4fc269e", ["dev135", "dev136", "dev137", "dev138"]),
    ("b9ea67f", ["dev139", "dev140", "dev141", "dev142"]),
    ("a5f5c85", ["dev143", "dev144", "dev145", "dev146"]),
    ("190c10d", ["dev147", "dev148", "dev149", "dev150"]),
    ("cf44248", ["dev151", "dev152", "dev153", "dev154"]),
    ("27ce7ae", ["dev155", "dev156", "dev157", "dev158"]),
    ("27ce7ae", ["dev159", "dev160", "dev161", "dev162"]),
    ("8f8d5b8", ["dev163", "dev164", "dev165", "dev166"]),
    ("b1b5781", ["dev167", "dev168", "dev169", "dev170"]),
    ("b1b5781", ["dev171", "dev172", "dev173", "dev174"]),
    ("b1b5781", ["dev175", "dev176", "dev177", "dev178"]),
    ("2eefd2c", ["dev179", "dev180", "dev181", "dev182"]),
    ("2eefd2c", ["dev187", "dev188", "dev189", "dev190"]),
    ("73c8c30", ["dev183", "dev184", "dev185", "dev186"]),
    ("08d1aa3", ["dev191", "dev192", "dev193", "dev194"]),
    ("9a3f65a", ["dev195", "dev196", "dev197", "dev198"]),
    ("ea60fdd", ["dev199", "dev200", "dev201", "dev202"]),
    ("08d1aa3", ["dev203", "dev204", "dev205", "dev206"]),
    ("dab52fd", ["dev207", "dev208", "dev209", "dev210", "dev211", "dev212", "dev213", "dev214"]),
]
# Run inside a checkout of a freeze, with that checkout first on the path: its own rules and model.
AT_FREEZE = """
import json, sys
from engine.triage import default_model, default_rules
from engine.triage.numbers import glucose_hits
from engine.triage.rules import match
texts = json.load(open(sys.argv[1]))
rules = default_rules(); model = default_model(); model.warm_up(wait=True)
out = []
for text in texts:
    found = match(text, rules, glucose_hits(text, rules.glucose))
    rule = bool(found.categories)
    asked = not rule and not found.general_question
    p = model.probability(text) if asked else None
    out.append({"rule": rule, "asked": asked, "p": p, "spoken_of": bool(found.topics), "cats": list(found.categories)})
json.dump(out, open(sys.argv[2], "w"))
"""


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def jsonl(text: str) -> list[dict]:
    """The rows of a JSON-lines file read from git (``git show``)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def faq_texts() -> list[str]:
    return [q["query"] for q in load_labelled(FAQ_VAL)]


def training_rows(commit: str) -> list[dict]:
    names = git("ls-tree", "--name-only", f"{commit}:engine/triage/data").split()
    rows: list[dict] = []
    for name in names:
        if name.endswith(".jsonl"):
            rows += jsonl(git("show", f"{commit}:engine/triage/data/{name}"))
    return rows


def pair_rows(sets: list[str]) -> list[dict]:
    return [
        row for name in sets for row in load_labelled(ROOT / "engine" / "triage" / "data" / f"{name}.jsonl")
    ]


def flagged(
    frozen: dict,
    p: float,
    threshold: tuple[float, float],
    veto: float = 0.0,
    never_doubted: frozenset[str] = NEVER_DOUBTED,
    words: int = 0,
    doubt_min_words: int = DOUBT_MIN_WORDS,
) -> bool:
    """The product's verdict: the freeze's rules (unless the model's P is under ``veto``, no category they found is
    in ``never_doubted`` and the message has at least ``doubt_min_words`` words), or the model asked and sure enough
    (``threshold[1]`` when the rules spoke of a category and set it aside, else ``threshold[0]``)."""
    doubted = p < veto and not set(frozen.get("cats", ())) & never_doubted and words >= doubt_min_words
    return (frozen["rule"] and not doubted) or (frozen["asked"] and p >= threshold[frozen["spoken_of"]])


def at_freeze(commit: str, texts: list[str]) -> list[dict]:
    """The rules' verdict and the frozen model's probability for each text, computed in a checkout of ``commit``."""
    cached = CACHE / f"at_{commit}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        git("worktree", "add", "-q", "--detach", str(tree), commit)
        try:
            (Path(tmp) / "in.json").write_text(json.dumps(texts, ensure_ascii=False))
            subprocess.run(
                [sys.executable, "-c", AT_FREEZE, str(Path(tmp) / "in.json"), str(cached)],
                cwd=tree,
                env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                check=True,
            )
        finally:
            git("worktree", "remove", "--force", str(tree))
    return json.loads(cached.read_text())


def embed_all(texts: list[str]) -> dict[str, np.ndarray]:
    """multilingual-e5-small query vectors for every text, cached (``--embeddings`` only)."""
    path = CACHE / "vectors.npz"
    known: dict[str, np.ndarray] = {}
    if path.exists():
        data = np.load(path, allow_pickle=True)
        known = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))
    missing = sorted(set(texts) - set(known))
    if missing:
        embedder = LlamaCppEmbedder(ROOT / ".medbot")
        vectors = []
        for i in range(0, len(missing), 64):
            vectors.append(asyncio.run(embedder.embed_queries(missing[i : i + 64])))
            print(f"  embedded {min(i + 64, len(missing))}/{len(missing)}", file=sys.stderr, flush=True)
        known.update(zip(missing, np.vstack(vectors), strict=True))
        np.savez(path, texts=np.array(list(known), dtype=object), vectors=np.vstack(list(known.values())))
    return known


def scores(
    train: list[dict],
    texts: dict[str, list[str]],
    vectors: dict[str, np.ndarray] | None,
    c: float = C,
    augment: float = 0.0,
) -> dict:
    """P(emergency) of each variant for each group of texts, fitted on ``train`` (``augment``: see ``augmented``)."""
    if augment:  # the product's augmentation (engine/triage/augment.py) at this fraction
        train = augmented(train, augment)
    words = default_rules().words
    norm = {
        t: normalize(t, words).text
        for t in {r["text"] for r in train} | {t for g in texts.values() for t in g}
    }
    y = np.array([bool(r["emergency"]) for r in train])
    train_texts = [norm[r["text"]] for r in train]
    out: dict[str, dict[str, np.ndarray]] = {}
    with threadpool_limits(1):
        model = LinearTextModel(train_texts, list(y), c=c, class_weight="balanced", char_min_df=2, tol=TOL)
        col = model.classes.index(True)
        out["tfidf"] = {g: model.proba([norm[t] for t in ts])[:, col] for g, ts in texts.items()}
        if vectors is not None:
            train_v = np.vstack([vectors[r["text"]] for r in train])
            mu, sd = train_v.mean(0), train_v.std(0) + 1e-6
            group_v = {g: (np.vstack([vectors[t] for t in ts]) - mu) / sd for g, ts in texts.items()}
            lr = LogisticRegression(class_weight="balanced", max_iter=3000, tol=1e-6).fit(
                (train_v - mu) / sd, y
            )
            out["e5"] = {g: lr.predict_proba(v)[:, 1] for g, v in group_v.items()}
            out["mean(tfidf,e5)"] = {g: (out["tfidf"][g] + out["e5"][g]) / 2 for g in texts}
            out["max(tfidf,e5)"] = {g: np.maximum(out["tfidf"][g], out["e5"][g]) for g in texts}
            features = model.pipeline.named_steps["features"]

            def joint(ts: list[str], v: np.ndarray) -> sp.csr_matrix:
                return sp.hstack([features.transform([norm[t] for t in ts]), sp.csr_matrix(0.05 * v)]).tocsr()

            both = LogisticRegression(class_weight="balanced", max_iter=3000, tol=1e-6)
            both.fit(joint([r["text"] for r in train], (train_v - mu) / sd), y)
            out["tfidf+e5 features"] = {
                g: both.predict_proba(joint(ts, group_v[g]))[:, 1] for g, ts in texts.items()
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embeddings", action="store_true", help="add multilingual-e5-small variants (slow)")
    parser.add_argument(
        "--thresholds",
        default="0.7,0.75,0.8,0.85,0.9,0.95,0.8/0.9,0.75/0.9",
        help="comma-separated; 'a/b': a, or b when the rules spoke of a category and set it aside",
    )
    parser.add_argument(
        "--vetoes",
        default="0",
        help="comma-separated: a rules flag stands only when the model's P is at least this (0: always)",
    )
    parser.add_argument(
        "--augment",
        type=float,
        default=AUGMENT,
        help="the share of each class's training rows learnt again with a neutral sentence (the product's: "
        "model.AUGMENT; 0 for none; not with --embeddings)",
    )
    parser.add_argument("--c", type=float, default=C, help="the regression's C (the product's: model.C)")
    parser.add_argument(
        "--never-doubted",
        default="",
        help="comma-separated categories added to the product's NEVER_DOUBTED (a veto never sets them aside)",
    )
    parser.add_argument(
        "--doubt-min-words",
        default=str(DOUBT_MIN_WORDS),
        help="comma-separated: the doubt applies only to messages of at least this many words (the product's: "
        "DOUBT_MIN_WORDS)",
    )
    args = parser.parse_args()
    if args.augment and args.embeddings:
        parser.error("--augment fits the TF-IDF model only (the added texts have no vectors)")
    never_doubted = NEVER_DOUBTED | {c for c in args.never_doubted.split(",") if c}
    vetoes = [float(v) for v in args.vetoes.split(",")]
    min_words = [int(v) for v in args.doubt_min_words.split(",")]
    thresholds = [tuple(float(v) for v in (x.split("/") * 2)[:2]) for x in args.thresholds.split(",")]
    CACHE.mkdir(parents=True, exist_ok=True)
    faq = faq_texts()
    per_freeze = []
    for commit, sets in FREEZES:
        started = time.perf_counter()
        train, pair = training_rows(commit), pair_rows(sets)
        frozen = at_freeze(commit, [r["text"] for r in pair] + faq)
        per_freeze.append((commit, train, pair, frozen[: len(pair)], frozen[len(pair) :]))
        print(
            f"{commit}: {len(train)} training rows, pair {'+'.join(sets)} ({len(pair)}), "
            f"{time.perf_counter() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    vectors = None
    if args.embeddings:
        every = {r["text"] for _, train, pair, _, _ in per_freeze for r in train + pair} | set(faq)
        vectors = embed_all(sorted(every))
    totals: dict[tuple[str, tuple[float, float], float, int], dict[str, int]] = {}
    # the emergencies a doubt would lose
    vetoed: dict[tuple[str, tuple[float, float], float, int], list[str]] = {}
    faq_words = [len(text.split()) for text in faq]  # a message's length in words, for the doubt's minimum
    for commit, train, pair, frozen_pair, frozen_faq in per_freeze:
        pair_words = [len(row["text"].split()) for row in pair]
        variant_scores = scores(
            train, {"pair": [r["text"] for r in pair], "faq": faq}, vectors, args.c, args.augment
        )
        # the frozen model itself, as measured at the time: the check that this backtest reproduces history
        variant_scores["as frozen"] = {
            "pair": np.array([v["p"] or 0.0 for v in frozen_pair]),
            "faq": np.array([v["p"] or 0.0 for v in frozen_faq]),
        }
        for name, groups in variant_scores.items():
            # the frozen model was asked only when the rules were silent: no P to veto with
            for t, veto, least in (
                (t, veto, least)
                for t in thresholds
                for veto in (vetoes if name != "as frozen" else [0.0])
                for least in (min_words if name != "as frozen" else [0])
            ):
                key = (name, t, veto, least)
                tot = totals.setdefault(key, dict(emergencies=0, caught=0, rules=0, ordinary=0, fa=0, faq=0))
                for row, v, p, n in zip(pair, frozen_pair, groups["pair"], pair_words, strict=True):
                    shown = flagged(v, p, t, veto, never_doubted, n, least)
                    if row["emergency"]:
                        tot["emergencies"] += 1
                        tot["caught"] += shown
                        tot["rules"] += v["rule"]
                        if v["rule"] and not shown:
                            vetoed.setdefault(key, []).append(row["text"])
                    else:
                        tot["ordinary"] += 1
                        tot["fa"] += shown
                tot["faq"] += sum(
                    flagged(v, p, t, veto, never_doubted, n, least)
                    for v, p, n in zip(frozen_faq, groups["faq"], faq_words, strict=True)
                )
        print(f"{commit}: fitted", file=sys.stderr, flush=True)
    rows = []
    print(f"{len(FREEZES)} freezes; product = rules at the freeze, or the model asked and P >= threshold")
    print(
        f"{'variant':22} {'thr':>9} {'veto':>5} {'words':>5} {'recall':>17} {'rescued':>11} {'false alarms':>17} {'faq-val flags':>13}"
    )
    for (name, t, veto, least), tot in totals.items():
        missed_by_rules = tot["emergencies"] - tot["rules"]
        rescued = tot["caught"] - tot["rules"]
        label = f"{t[0]:.2f}" if t[0] == t[1] else f"{t[0]:.2f}/{t[1]:.2f}"
        row = dict(
            variant=name,
            threshold=label,
            veto=veto,
            doubt_min_words=least,
            **tot,
            recall=tot["caught"] / tot["emergencies"],
            false_alarm_rate=tot["fa"] / tot["ordinary"],
            faq_flags_per_freeze=tot["faq"] / len(FREEZES),
        )
        rows.append(row)
        print(
            f"{name:22} {label:>9} {veto:5.2f} {least:5} {tot['caught']:5}/{tot['emergencies']} {row['recall']:.4f} "
            f"{rescued:4}/{missed_by_rules:<4} {tot['fa']:5}/{tot['ordinary']} {row['false_alarm_rate']:.4f} "
            f"{row['faq_flags_per_freeze']:13.1f}"
        )
    results = (
        RESULTS
        if args.augment == AUGMENT
        else RESULTS.with_name(f"triage_backtest_augment{args.augment:g}.json")
    )
    results.parent.mkdir(parents=True, exist_ok=True)
    for (name, t, veto, least), texts in vetoed.items():
        print(
            f"\n{name} {t} veto {veto} (messages of {least}+ words): {len(texts)} emergencies the rules caught "
            "would be lost",
            file=sys.stderr,
        )
        for text in texts[:40]:
            print(f"  {text}", file=sys.stderr)
    results.write_text(
        json.dumps({"freezes": [c for c, _ in FREEZES], "rows": rows}, indent=1, default=lambda o: o.item())
    )


if __name__ == "__main__":
    main()
