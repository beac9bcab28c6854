"""Ranking research for issue 21 (not the product): fusion variants over the two legs' candidate lists, on the
KB shapes of ``bench/retrieval_shapes.py``. Choices are made on DEV; the chosen variant then goes into the
product code and ``bench/bench_retrieval_shapes.py`` measures it on TEST.

Each (shape, split) query's legs are computed once with the production pieces (``clean_query``, the role's
``SparseIndex``, the restorer, the cached embedder, exact cosine) and cached in
``.medbot/eval-cache/legs-<shape>-<split>.npz``; every variant is then pure numpy over those lists.

    python -m bench.research.retrieval_fusion_research [--split dev]
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import sys
from collections.abc import Callable

import numpy as np

from bench.retrieval_shapes import CACHE, SHAPES, DiskCachedEmbedder, Shape, build_shapes
from engine.embedding import passage_text
from engine.retrieval.sparse import SparseIndex, entry_title
from engine.text import clean_query, fold, has_diacritics

DEPTH = 100


_SENTENCE = re.compile(r"[^.?!]*[.?!]?")
_ASKING = re.compile(
    r"\?|\b(?:khong|sao|gi|nao|bao nhieu|co nen|duoc khong|the nao|tai sao|vi sao|lam gi|co phai)\b"
)


def focus(text: str) -> str:
    """The message followed by its asking sentences again (a question mark or an interrogative), so the
    sparse leg weighs what is asked above the story around it."""
    asking = [
        m.group(0)
        for m in _SENTENCE.finditer(text)
        if m.group(0).strip() and _ASKING.search(fold(m.group(0)))
    ]
    return f"{text} {' '.join(asking)}" if asking else text


def legs(
    shape: Shape,
    split: str,
    embedder: DiskCachedEmbedder,
    sparse_text: Callable[[str], str] | None = None,
    tag: str = "",
) -> list[dict[str, np.ndarray]]:
    path = CACHE / f"legs-{shape.name}-{split}{tag}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    index = SparseIndex(shape.entries)
    restorer = index.build_restorer()
    vectors = embedder.passage_vectors([passage_text(e.question, e.answer) for e in shape.entries])
    gold_pos = {e.code: i for i, e in enumerate(shape.entries)}
    out = []
    for q in shape.queries[split]:
        text = clean_query(q.text)
        scores = index.scores(sparse_text(text) if sparse_text else text)
        marked = text if has_diacritics(text) else restorer.restore(text)
        dense = vectors @ embedder.query_vectors([marked])[0]
        s_top = np.argsort(-scores, kind="stable")[:DEPTH]
        d_top = np.argsort(-dense, kind="stable")[:DEPTH]
        words = set(index.syllable_weights(fold(text)))
        cov = {}
        for p in set(map(int, s_top[:50])) | set(map(int, d_top[:50])):
            title = index.syllable_weights(fold(entry_title(shape.entries[p])))
            total = sum(title.values())
            cov[p] = sum(v for w, v in title.items() if w in words) / total if total else 0.0
        out.append(
            {
                "cov": cov,
                "gold": gold_pos[q.gold],
                "s_pos": s_top,
                "s": scores[s_top],
                "d_pos": d_top,
                "d": dense[d_top],
                "s_all_at_d": scores[d_top],
                "d_all_at_s": dense[s_top],
                "marked": has_diacritics(text),
            }
        )
    path.write_bytes(pickle.dumps(out))
    return out


def _norm(x: np.ndarray, n: int) -> np.ndarray:
    top, floor = x[0], x[min(n, len(x)) - 1]
    return np.clip((x - floor) / (top - floor), 0, None) if top > floor else np.ones_like(x)


def fuse_minmax(
    q: dict[str, np.ndarray], w_dense: float, n: int = 50, w_nodiac: float | None = None
) -> np.ndarray:
    """The product's score fusion (per-leg min-max against the N-th candidate); returns positions best first."""
    w = w_dense if q["marked"] or w_nodiac is None else w_nodiac
    cand: dict[int, float] = {}
    s_top, d_top = q["s"][0], q["d"][0]
    s_floor, d_floor = q["s"][min(n, len(q["s"])) - 1], q["d"][min(n, len(q["d"])) - 1]
    ns = lambda v: max(0.0, (v - s_floor) / (s_top - s_floor)) if s_top > s_floor else 1.0  # noqa: E731
    nd = lambda v: max(0.0, (v - d_floor) / (d_top - d_floor)) if d_top > d_floor else 1.0  # noqa: E731
    dense_n = dict(zip(map(int, q["d_pos"][:n]), q["d"][:n], strict=True))
    sparse_n = dict(zip(map(int, q["s_pos"][:n]), q["s"][:n], strict=True))
    for pos, d, s in zip(q["d_pos"][:n], q["d"][:n], q["s_all_at_d"][:n], strict=True):
        cand[int(pos)] = (1 - w) * (ns(s) if s > 0 else 0.0) + w * nd(d)
    for pos in sparse_n:
        if pos not in dense_n:
            cand[pos] = (1 - w) * ns(sparse_n[pos])
    return np.array(sorted(cand, key=lambda p: -cand[p]))


def fuse_z(q: dict[str, np.ndarray], w_dense: float, n: int = 100) -> np.ndarray:
    """z-scores of each leg over its own top-n, summed with weights (all candidates scored on both legs)."""
    cands = np.unique(np.concatenate([q["s_pos"][:n], q["d_pos"][:n]]))
    s = dict(zip(map(int, q["s_pos"]), q["s"], strict=True)) | dict(
        zip(map(int, q["d_pos"]), q["s_all_at_d"], strict=True)
    )
    d = dict(zip(map(int, q["d_pos"]), q["d"], strict=True)) | dict(
        zip(map(int, q["s_pos"]), q["d_all_at_s"], strict=True)
    )
    zs = lambda v: (v - q["s"][:n].mean()) / (q["s"][:n].std() + 1e-9)  # noqa: E731
    zd = lambda v: (v - q["d"][:n].mean()) / (q["d"][:n].std() + 1e-9)  # noqa: E731
    score = {int(p): (1 - w_dense) * zs(s[int(p)]) + w_dense * zd(d[int(p)]) for p in cands}
    return np.array(sorted(score, key=lambda p: -score[p]))


def evaluate(
    qs: list[dict[str, np.ndarray]], ranker: Callable[[dict[str, np.ndarray]], np.ndarray]
) -> dict[str, float]:
    p1 = mrr = hit = 0.0
    for q in qs:
        order = list(ranker(q)[:10])
        if q["gold"] in order:
            r = order.index(q["gold"]) + 1
            p1 += r == 1
            mrr += 1 / r
            hit += 1
    n = max(1, len(qs))
    return {"p@1": round(p1 / n, 4), "mrr@10": round(mrr / n, 4), "hit@10": round(hit / n, 4)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--focus", action="store_true", help="sparse leg on focus(message)")
    args = ap.parse_args()
    embedder = DiskCachedEmbedder()
    built = build_shapes()
    transform, tag = (focus, "-focus") if args.focus else (None, "")
    data = {name: legs(built[name], args.split, embedder, transform, tag) for name in args.shapes.split(",")}
    variants: dict[str, Callable[[dict[str, np.ndarray]], np.ndarray]] = {
        "minmax w.5/.4 n50 (today)": lambda q: fuse_minmax(q, 0.5, 50, 0.4),
        "minmax w.5 n100": lambda q: fuse_minmax(q, 0.5, 100, 0.4),
        "minmax w.6/.5 n50": lambda q: fuse_minmax(q, 0.6, 50, 0.5),
        "minmax w.4/.3 n50": lambda q: fuse_minmax(q, 0.4, 50, 0.3),
        "z w.5 n100": lambda q: fuse_z(q, 0.5, 100),
        "z w.6 n100": lambda q: fuse_z(q, 0.6, 100),
        "z w.4 n100": lambda q: fuse_z(q, 0.4, 100),
        "z w.5 n50": lambda q: fuse_z(q, 0.5, 50),
        "sparse only": lambda q: q["s_pos"],
        "dense only": lambda q: q["d_pos"],
    }
    table = {v: {name: evaluate(qs, fn) for name, qs in data.items()} for v, fn in variants.items()}
    for v, row in table.items():
        print(f"{v:<28}" + "".join(f"{name}={r['p@1']:.3f}/{r['hit@10']:.3f}  " for name, r in row.items()))
    print(json.dumps(table), file=sys.stderr)
    learned_research(data)
    return 0


# ---------------------------------------------------------------------------------------------- learned fusion

LEARNED = ("ns", "nd", "zs", "zd", "s_top1", "d_top1", "entry_cov")


def candidate_table(q: dict[str, np.ndarray], n: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Positions and per-candidate features (``LEARNED``) of the union of both legs' top-n."""
    s = dict(zip(map(int, q["s_pos"]), q["s"], strict=True)) | dict(
        zip(map(int, q["d_pos"]), q["s_all_at_d"], strict=True)
    )
    d = dict(zip(map(int, q["d_pos"]), q["d"], strict=True)) | dict(
        zip(map(int, q["s_pos"]), q["d_all_at_s"], strict=True)
    )
    cands = np.unique(np.concatenate([q["s_pos"][:n], q["d_pos"][:n]]))
    s_top, s_floor = q["s"][0], q["s"][n - 1]
    d_top, d_floor = q["d"][0], q["d"][n - 1]
    rows = []
    for p in cands:
        sv, dv = s[int(p)], d[int(p)]
        rows.append(
            [
                max(0.0, (sv - s_floor) / (s_top - s_floor)) if s_top > s_floor else 1.0,
                max(0.0, (dv - d_floor) / (d_top - d_floor)) if d_top > d_floor else 1.0,
                (sv - q["s"][:n].mean()) / (q["s"][:n].std() + 1e-9),
                (dv - q["d"][:n].mean()) / (q["d"][:n].std() + 1e-9),
                float(sv >= s_top),
                float(dv >= d_top),
                float(q["cov"].get(int(p), 0.0)) if "cov" in q else 0.0,
            ]
        )
    return cands, np.array(rows)


def learned_research(data: dict[str, list[dict[str, np.ndarray]]]) -> None:
    from sklearn.linear_model import LogisticRegression

    tables = {name: [candidate_table(q) for q in qs] for name, qs in data.items()}

    def fit(names: list[str]) -> np.ndarray:
        xs, ys, ws = [], [], []
        for name in names:
            for q, (cands, x) in zip(data[name], tables[name], strict=True):
                y = cands == q["gold"]
                if not y.any():
                    continue
                xs.append(x)
                ys.append(y)
                ws.append(np.full(len(y), 1.0 / (len(data[name]) * len(y))))
        model = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced").fit(
            np.vstack(xs), np.concatenate(ys), sample_weight=np.concatenate(ws) * 1e4
        )
        return model.coef_[0]

    def rank(name: str, w: np.ndarray) -> dict[str, float]:
        orders = iter([cands[np.argsort(-(x @ w), kind="stable")] for cands, x in tables[name]])
        return evaluate(data[name], lambda q: next(orders))

    for held in data:
        w = fit([n for n in data if n != held])
        print(f"learned (without {held}) on {held}: {rank(held, w)}  w={np.round(w, 2).tolist()}")
    w = fit(list(data))
    print(f"learned (all) weights {dict(zip(LEARNED, np.round(w, 3).tolist(), strict=True))}")


if __name__ == "__main__":
    sys.exit(main())
